"""Issue 12: pictures that explain themselves.

The key of marks (1), no colliding labels and verbatim names (2, checked on the SVG
geometry of the gallery pictures), named intermediate tensors (3), big graphs with
modules (4), gradient statistics kept during any backward (6), "+N more" (10).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import vizgrad as vg
from tests.render import programs
from tests.render.svg_geometry import crossed_titles, overlapping_labels, text_boxes
from vizgrad import nn
from vizgrad.render import build_view, dot_binary
from vizgrad.render.legend import key_rows

needs_dot = pytest.mark.skipif(dot_binary() is None, reason="Graphviz `dot` not installed")
ROOT = Path(__file__).resolve().parents[2]


def _svg_texts(dot) -> list[str]:  # noqa: ANN001 - graphviz.Digraph
    return [box.text for box in text_boxes(dot.pipe(format="svg").decode())]


# -- 1. the key ----------------------------------------------------------------------

def test_key_lists_only_the_marks_present() -> None:
    plain = build_view(vg.ones(3, requires_grad=True).exp().sum())
    meanings = " | ".join(row.meaning for row in key_rows(plain))
    assert "backward op" in meanings and "leaf tensor" in meanings and "output" in meanings
    for absent in ("freed", "module", "dotted", "saved for backward", "input of an op"):
        assert absent not in meanings, absent
    rich = build_view(programs.view_inplace(), show_saved=True, show_attrs=True)
    meanings = " | ".join(row.meaning for row in key_rows(rich))
    assert "dotted arrow: a view of the base" in meanings
    saved = build_view(programs.custom_function(), show_saved=True)
    assert "saved for backward" in " | ".join(row.meaning for row in key_rows(saved))
    cat = build_view(programs.concat_split())
    rows = {row.sample: row.meaning for row in key_rows(cat)}
    ins = [sample for sample in rows if sample.startswith("in ")]
    assert ins and rows[ins[0]].startswith("into that input")
    assert any(sample.startswith("out ") for sample in rows)
    assert any(re.fullmatch(r"\(\d+, \d+\)", sample) for sample in rows)  # a shape sample


@needs_dot
def test_key_is_drawn_and_legend_false_leaves_it_out() -> None:
    loss = programs.concat_split()
    texts = _svg_texts(vg.make_dot(loss))
    assert "key" in texts and "backward op (a grad_fn)" in texts
    assert "out 2 → (4, 2) → in 0" in texts  # the slot notation the key explains
    bare = vg.make_dot(programs.concat_split(), legend=False)
    assert "legend" not in bare.source and "key" not in _svg_texts(bare)
    # the gradient scale is part of the same key
    x = vg.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    assert "gradient norm" in _svg_texts(vg.make_dot(x * 2, show_grad=True))


# -- 2. collisions and names, on the gallery pictures -----------------------------------

@pytest.fixture(scope="module")
def gallery_pictures(tmp_path_factory) -> list[Path]:  # noqa: ANN001 - pytest fixture
    from vizgrad.cli.gallery import build_gallery, find_gallery

    out = tmp_path_factory.mktemp("gallery")
    report = build_gallery(find_gallery(), out)
    assert all(entry.ok for entry in report.entries), [e.message for e in report.entries]
    return [entry.picture for entry in report.entries]


@pytest.mark.slow
@needs_dot
def test_gallery_labels_never_touch(gallery_pictures) -> None:  # noqa: ANN001
    """No two labels' boxes come within 3 px (``(256, 32) → 1.0(10, 32) → 2.0`` was two
    edge labels touching across an edge), measured from the SVG's text positions."""
    for picture in gallery_pictures:
        boxes = text_boxes(picture)
        assert len(boxes) > 10
        near = [(a.text, b.text) for a, b in overlapping_labels(boxes)]
        near += [(a.text, b.text) for i, a in enumerate(boxes) for b in boxes[i + 1:]
                 if a.owner != b.owner and a.overlaps(b, slack=-3.0)]
        assert not near, f"{picture.name}: {near[:5]}"


@pytest.mark.slow
@needs_dot
def test_gallery_cluster_titles_are_not_crossed(gallery_pictures) -> None:  # noqa: ANN001
    clustered = 0
    for picture in gallery_pictures:
        titles = [box for box in text_boxes(picture) if box.group == "cluster"]
        clustered += bool(titles)
        crossed = [(title.text, edge) for title, edge in crossed_titles(picture)]
        assert not crossed, f"{picture.name}: {crossed}"
    assert clustered >= 3  # cnn, lstm, attention draw module boxes


@pytest.mark.slow
@needs_dot
def test_gallery_names_appear_verbatim(gallery_pictures) -> None:  # noqa: ANN001
    """Every parameter name (``weight_hh_l0``, ``in_proj_weight``) is one SVG text, with
    its underscores: the full name, or inside its module's box the name past the box's
    path (``lstm · LSTM`` holds ``weight_hh_l0``; issue 28), the full one its tooltip."""
    names, drawn = set(), set()
    for picture in gallery_pictures:
        texts = {box.text for box in text_boxes(picture)}
        svg = picture.read_text()
        for name in re.findall(r'xlink:title="leaf ([^&"]+)&#10;', svg):
            names.add(name)
            parts = name.split(".")
            shown = [".".join(parts[k:]) for k in range(len(parts))
                     if ".".join(parts[k:]) in texts]
            assert shown, f"{picture.name}: {name!r} not drawn verbatim"
            drawn.update(shown)
    assert {"lstm.weight_hh_l0", "block.attn.in_proj_weight"} <= names
    assert {"weight_hh_l0", "in_proj_weight"} <= drawn


# -- 3. named intermediate tensors -------------------------------------------------------

@needs_dot
def test_named_intermediate_tensors_are_drawn_on_their_op() -> None:
    x = vg.ones(2, 3, requires_grad=True)
    hidden = (x * 2).tanh()
    hidden.name = "hidden"
    parts = vg.split(hidden, 1, dim=1)
    parts[1].name = "second"
    loss = (parts[0].sum() + parts[1].sum() + parts[2].sum())
    view = build_view(loss)
    tanh = next(n for n in view.nodes if n.title == "TanhBackward0")
    split = next(n for n in view.nodes if n.title.startswith("Split"))
    assert tanh.lines == ["→ hidden"] and split.lines == ["out 1 → second"]
    assert tanh.details["named"] == {"0": "hidden"}
    texts = _svg_texts(vg.make_dot(loss))
    assert "→ hidden" in texts and "out 1 → second" in texts
    assert "the op's output is the tensor of that name (tensor.name = ...)" in texts
    assert vg.tensor([1.0], name="given").name == "given"  # Tensor(..., name=) too


# -- 4. big graphs with modules ---------------------------------------------------------

class _Stack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cell = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x: vg.Tensor) -> vg.Tensor:
        for _ in range(30):
            x = self.cell(x).tanh()
        return self.head(x)


def test_big_graph_with_modules_is_boxed_with_a_note() -> None:
    vg.manual_seed(0)
    loss = _Stack()(vg.ones(2, 4)).sum()
    view = build_view(loss)
    assert len(vg.graph.walk(loss).nodes) > vg.render.view.BIG_GRAPH
    # issue 28: each of the 30 calls of ``cell`` is its own box, in call order
    assert [c.label for c in view.clusters] == ["head"] + [
        f"cell#{k}" for k in range(30, 1, -1)] + ["cell"]
    assert any("collapse='scope' (vizgrad render --collapse" in note for note in view.notes)
    unboxed = build_view(loss, cluster=None)  # an explicit choice wins; the hint stays
    assert not unboxed.clusters and "--collapse" in " ".join(unboxed.notes)
    small = build_view(nn.Linear(4, 1)(vg.ones(2, 4)).sum())
    assert not small.clusters and not small.notes


def test_render_prints_the_option_that_helps(tmp_path) -> None:  # noqa: ANN001
    from tests.cli.conftest import cli

    script = tmp_path / "deep.py"
    script.write_text("import vizgrad\nimport vizgrad.nn as nn\nvizgrad.manual_seed(0)\n"
                      "cell = nn.Linear(4, 4)\nx = vizgrad.ones(2, 4)\n"
                      "for _ in range(40):\n    x = cell(x).tanh()\n"
                      "loss = x.sum()\nloss.backward()\n")
    result = cli("render", "-o", tmp_path / "g.dot", script)
    assert result.exit_code == 0, result.output
    assert "note: " in result.stderr and "--collapse" in result.stderr
    assert "subgraph cluster_" in (tmp_path / "g.dot").read_text()


# -- 6. gradient statistics during any backward -----------------------------------------

def test_keep_grad_stats_switch_and_context() -> None:
    from vizgrad.debug import is_keeping_grad_stats, keep_grad_stats

    assert not is_keeping_grad_stats()
    x = vg.tensor(np.arange(3, dtype=np.float32), requires_grad=True)
    with keep_grad_stats():
        assert is_keeping_grad_stats()
        loss = ((x * 2).exp()).sum()
        loss.backward()
    assert not is_keeping_grad_stats()
    exp = loss.grad_fn.next_functions[0][0]
    stats = exp.metadata["vizgrad.grad"]
    np.testing.assert_allclose(stats["norm"], np.sqrt(3.0), rtol=4 * np.finfo(np.float32).eps)
    mul = exp.next_functions[0][0]
    expected = np.linalg.norm(np.exp(2 * np.arange(3.0)))
    np.testing.assert_allclose(mul.metadata["vizgrad.grad"]["norm"], expected, rtol=1e-6)
    keep_grad_stats()  # the global switch
    try:
        again = (x * 3).sum()
        again.backward()
        assert "vizgrad.grad" in again.grad_fn.metadata
    finally:
        keep_grad_stats(False)
    assert not is_keeping_grad_stats()
    plain = (x * 4).sum()
    plain.backward()
    assert "vizgrad.grad" not in plain.grad_fn.metadata  # off: nothing kept


def test_show_grad_says_when_interior_stats_are_missing() -> None:
    x = vg.ones(3, requires_grad=True)
    loss = (x.exp() * 2).sum()
    loss.backward()
    view = build_view(loss, show_grad=True)
    note = " ".join(view.notes)
    assert "3 of 3 ops have no gradient statistics" in note
    assert "vizgrad.debug.keep_grad_stats()" in note
    with vg.debug.keep_grad_stats():
        loss = (x.exp() * 2).sum()
        loss.backward()
    view = build_view(loss, show_grad=True)
    assert "no gradient statistics" not in " ".join(view.notes)
    assert all("grad" in n.details for n in view.nodes if n.kind == "op")


# -- 10. collapsed op lists -------------------------------------------------------------

def test_collapsed_scope_says_how_many_more_and_pluralises() -> None:
    x = vg.ones(2, 2, requires_grad=True)
    with vg.scope("many"):
        y = ((((((((x.exp().tanh().sin().cos()) * 2).abs() + 1).sqrt()).log()).sigmoid())
              .relu()).sum())
    with vg.scope("one"):
        z = y * 3
    view = build_view(z, collapse="scope")
    many = next(n for n in view.nodes if n.title == "many")
    one = next(n for n in view.nodes if n.title == "one")
    assert len(many.rows) == 7 and many.rows[-1][0].startswith("+")
    hidden = sum(1 for _ in many.details["ops"]) - 6
    assert many.rows[-1] == (f"+{hidden} more", f"{hidden} op" + "s" * (hidden != 1))
    assert one.lines == ["1 op"] and many.lines[0].endswith(" ops, 1 leaf")
