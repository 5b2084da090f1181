"""``make_dot``'s fast path (``render/plain.py``) writes, byte for byte, what the general
path (``to_dot(build_view(...))``) writes, and is taken exactly when the picture is
plain; otherwise it gives up and leaves the builder as it found it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import vizgrad as vg
from tests.render import programs
from vizgrad.render import ViewBuilder, build_view, to_dot
from vizgrad.render.plain import plain_dot, plain_options
from vizgrad.render.view import RenderOptions

#: Options a plain picture may have (each set is tried on every graph).
OPTION_SETS = [
    {}, {"edge_labels": False}, {"show_dtype": False}, {"legend": False},
    {"theme": "dark", "rankdir": "LR", "size": "12,12", "dpi": 96}, {"cluster": None},
    {"cluster": "scope"}, {"max_nodes": None}, {"max_nodes": 10},
]


def _both(roots, **options) -> tuple[str | None, str]:
    """(the fast path's DOT or None, the general path's DOT) of one picture."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # folded pictures warn
        builder = ViewBuilder(roots, RenderOptions.make(**options))
        fast = plain_dot(builder)
        if fast is None:  # gave up: the builder must still build the general picture
            assert not builder.view.nodes and not builder.multi_in and not builder.multi_out
            assert to_dot(builder.build()).source == to_dot(
                build_view(roots, **options)).source
        general = to_dot(build_view(roots, **options)).source
        drawn = vg.make_dot(roots, **options).source
    assert drawn == general
    return (None if fast is None else fast.source), general


def _shared_weight(uses: int) -> vg.Tensor:
    """A parameter used ``uses`` times: more than 32 arrows are thinned (hubs.py)."""
    w = vg.tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    y = vg.tensor(np.ones(3, dtype=np.float32))
    for _ in range(uses):
        y = y * w
    return y.sum()


def _named_output() -> vg.Tensor:
    x = vg.tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    hidden = x.exp()
    hidden.name = "hidden"
    return hidden.sum()


def _split_roots() -> dict:
    x = vg.tensor(np.ones((4, 6), dtype=np.float32), requires_grad=True)
    a, b, c = vg.split(x * 2.0, 2, dim=1)
    return {"a": a, "c": c}


PLAIN = {
    "concat_split": programs.concat_split,  # list inputs and outputs: in 1[2], out 0[1]
    "view_inplace": programs.view_inplace,  # a view's base (dotted arrow), CopySlices
    # a custom Function without its saved tensors (drawn by default: not plain)
    "custom_function_unsaved": lambda: (programs.custom_function(), {"show_saved": False}),
    "double_backward": programs.double_backward,
    "chain": lambda: programs.chain(40),
    "wide": lambda: programs.wide(40),  # one node with 40 inputs
    "shared_32": lambda: _shared_weight(32),  # 32 arrows: not thinned yet
    "several_roots": lambda: {"a": programs.chain(3), "b": programs.wide(3)},
    "split_roots": _split_roots,  # a node with several drawn outputs: out 1 on its arrows
    "node_root": lambda: programs.chain(3).grad_fn,  # a grad_fn: no output box
    "long_chain": lambda: programs.chain(600),  # over 500 boxes: edge text as xlabel
}
NOT_PLAIN = {
    "scopes": lambda: programs.mlp()[0],  # module boxes
    "shared_33": lambda: _shared_weight(33),  # thinned, with a note
    "named_output": _named_output,  # an "→ hidden" line
    "custom_function": programs.custom_function,  # its saved tensors, drawn by default
}


@pytest.mark.parametrize("options", OPTION_SETS, ids=str)
@pytest.mark.parametrize("name", sorted(PLAIN))
def test_plain_pictures_take_the_fast_path_and_match(name: str, options: dict) -> None:
    roots = PLAIN[name]()
    if isinstance(roots, tuple):  # a graph drawn plain under an option of its own
        roots, own = roots
        options = {**options, **own}
    fast, general = _both(roots, **options)
    if "Folded for readability" in general:  # more boxes than max_nodes
        assert fast is None
    else:
        assert fast == general


@pytest.mark.parametrize("name", sorted(NOT_PLAIN))
def test_other_pictures_take_the_general_path(name: str) -> None:
    fast, _ = _both(NOT_PLAIN[name]())
    assert fast is None


def test_freed_saved_tensors_take_the_general_path() -> None:
    loss = programs.chain(3).tanh().sum()  # tanh saves its output
    assert _both(loss)[0] is not None
    loss.backward()
    fast, general = _both(loss)
    assert fast is None and "dashed" in general


def test_params_names_leaves_on_the_fast_path() -> None:
    w = vg.tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    fast, general = _both((w * 2.0).sum(), params={"weight": w})
    assert fast == general
    assert "weight" in fast


def test_only_plain_options_are_tried() -> None:
    assert plain_options(RenderOptions.make())
    for option, value in [("show_attrs", True), ("show_saved", True), ("show_stack", True),
                          ("collapse", "scope"), ("show_grad", True), ("show_memory", True),
                          ("highlight", 0), ("focus", 0)]:
        assert not plain_options(RenderOptions.make(**{option: value}))


def _torch_graph(name: str):
    import torch

    x = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
    if name == "split":  # several outputs: out 0, out 1, out 2
        a, b, c = x.split(2, dim=1)
        return (a * b + c).sum()
    base = x.clone()  # views modified in place: CopySlices, AsStridedBackward
    base[:, 1:].mul_(2)
    return base.exp().sum()


@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("name", ["mlp", "cnn", "lstm", "attention", "split", "views"])
def test_pytorch_graphs_match(name: str, backward: bool) -> None:
    pytest.importorskip("torch")
    from tests.torch import helpers

    made = {"mlp": helpers.mlp_loss, "cnn": helpers.cnn_loss, "lstm": helpers.lstm_loss,
            "attention": helpers.attention_loss}
    if name in made:
        loss, model = made[name]()
        params = dict(model.named_parameters())
    else:
        loss, params = _torch_graph(name), None
    if backward:
        loss.backward()
    for options in ({"max_nodes": None}, {"edge_labels": False, "max_nodes": None}):
        fast, general = _both(loss, params=params, **options)
        if backward:  # saved tensors freed: dashed borders
            assert fast is None and "dashed" in general
        else:
            assert fast == general
