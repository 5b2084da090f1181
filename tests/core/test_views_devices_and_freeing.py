"""Audit of issue 2 points that had no test of their own.

Multi-output views (``chunk``, ``unbind``, ``split``, also through ``__setitem__``)
refuse in-place writes as PyTorch's do; ``concat`` is ``cat``; ``Tensor.to(device=...)``
names the gpu extra; saved arrays are released as soon as their node has run, not at
the end of backward.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vizgrad as vg


def leaf(shape=(4, 2)):
    return vg.tensor(np.ones(shape), requires_grad=True)


MULTI_OUTPUT = {
    "split": lambda t: t.split(2),
    "chunk": lambda t: t.chunk(2),
    "unbind": lambda t: t.unbind(0),
}


@pytest.mark.parametrize("op", sorted(MULTI_OUTPUT))
def test_multi_output_views_refuse_inplace_writes_like_pytorch(op):
    make = MULTI_OUTPUT[op]
    with pytest.raises(RuntimeError):  # the oracle: PyTorch refuses too
        make(torch.ones(4, 2, requires_grad=True) * 1.0)[0].mul_(2.0)
    outputs = make(leaf() * 1.0)
    with pytest.raises(RuntimeError, match="clone"):
        outputs[0].mul_(2.0)
    with pytest.raises(RuntimeError, match="clone"):
        outputs[0][0] = 5.0
    with pytest.raises(RuntimeError, match="clone"):
        outputs[1].zero_()
    # the suggested fix works
    fixed = outputs[0].clone()
    fixed.mul_(2.0)
    fixed.sum().backward()


def test_concat_is_cat_with_pytorch_node_name():
    assert vg.concat is vg.cat
    a, b = leaf((1, 2)), leaf((2, 2))
    out = vg.concat([a, b], dim=0)
    assert out.grad_fn.name() == "CatBackward0" == torch.cat(
        [torch.ones(1, 2, requires_grad=True), torch.ones(2, 2)]).grad_fn.name()
    assert len(out.grad_fn.next_edges) == 1 and len(out.grad_fn.next_edges[0]) == 2


def test_to_device_keyword_cuda_names_the_gpu_extra(monkeypatch):
    from vizgrad.core import backend

    monkeypatch.setattr(backend, "_cupy", None)
    monkeypatch.setattr(backend, "_cupy_checked", True)
    for make in (lambda: vg.ones(2).to(device="cuda"), lambda: vg.ones(2).to(device="cuda:0")):
        with pytest.raises(backend.BackendUnavailableError, match=r"vizgrad\[gpu\]"):
            make()
    assert vg.ones(2).to(device="cpu").device == "cpu"


def test_a_cupy_array_made_before_any_cuda_tensor_is_recognised(monkeypatch):
    """CuPy loads on the first "cuda" device; an array the user made with CuPy can
    reach vizgrad first (``vizgrad.tensor(cupy.ones(3))``), and must not be read as
    an unknown object (NumPy's implicit conversion, which CuPy refuses)."""
    import sys
    import types

    from vizgrad.core import backend
    fake = types.ModuleType("cupy")
    device_array = type("ndarray", (), {"__module__": "cupy._core.core"})
    fake.ndarray = device_array
    monkeypatch.setitem(sys.modules, "cupy", fake)
    for name in ("_cupy", "_cupy_checked", "ARRAY_TYPES"):
        monkeypatch.setattr(backend, name, getattr(backend, name))
    monkeypatch.setattr(backend, "_cupy", None)
    monkeypatch.setattr(backend, "_cupy_checked", False)
    monkeypatch.setattr(backend, "_ARRAY_MODULES", dict(backend._ARRAY_MODULES))
    monkeypatch.setattr(backend, "_DEVICE_OF", dict(backend._DEVICE_OF))
    array = device_array()

    assert backend.is_array(array)
    assert backend.array_module(array) is fake


def test_saved_arrays_are_released_as_soon_as_their_node_has_run():
    x = leaf((3,))
    first = x.exp()  # saves its result
    second = first.exp()  # saves its result too
    seen = {}

    def check(grads):
        # ``second``'s node ran before ``first``'s: its saved arrays are already gone
        # while backward is still running.
        seen["second_freed"] = second.grad_fn.freed
        seen["first_freed"] = first.grad_fn.freed

    first.grad_fn.register_prehook(check)
    second.sum().backward()
    assert seen == {"second_freed": True, "first_freed": False}
    assert first.grad_fn.freed


def test_paddle_stop_gradient_freezes_a_parameter_and_guards_non_leaves():
    from vizgrad import nn

    layer = nn.Linear(2, 1)
    layer.weight.stop_gradient = True  # Paddle's spelling of requires_grad = False
    assert not layer.weight.requires_grad
    out = layer(vg.ones(1, 2)).sum()
    out.backward()
    assert layer.weight.grad is None and layer.bias.grad is not None
    y = leaf((2,)) * 2.0
    with pytest.raises(RuntimeError, match="detach"):
        y.stop_gradient = True
    assert y.detach().stop_gradient and not y.stop_gradient
