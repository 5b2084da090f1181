"""Shared helpers for the nn tests: copy torch weights into vizgrad modules and compare."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import vizgrad

from ..tolerance import assert_close


def copy_weights(vmodule: Any, tmodule: torch.nn.Module) -> None:
    """Copy every torch parameter and buffer into the vizgrad module of the same path."""
    vparams = dict(vmodule.named_parameters())
    tparams = dict(tmodule.named_parameters())
    assert sorted(vparams) == sorted(tparams), (sorted(vparams), sorted(tparams))
    for name, tparam in tparams.items():
        assert vparams[name].shape == tuple(tparam.shape), name
        vparams[name].array[...] = tparam.detach().numpy()
    vbuffers = dict(vmodule.named_buffers())
    for name, tbuffer in tmodule.named_buffers():
        vbuffers[name].array[...] = tbuffer.detach().numpy()


def _flatten(value: Any) -> list:
    if value is None:
        return []
    if isinstance(value, (tuple, list)):
        return [item for part in value for item in _flatten(part)]
    return [value]


def to_numpy(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    return value.detach().numpy()


def compare_module(vmodule: Any, tmodule: torch.nn.Module, inputs: list, *,
                   grad_inputs: tuple[int, ...] | None = None, kwargs: dict | None = None,
                   steps: int = 4, seed: int = 0) -> tuple:
    """Run both modules on the same inputs and compare outputs, input and parameter grads.

    ``inputs`` are NumPy arrays; float ones require grad unless ``grad_inputs`` says
    which ones do. Returns ``(vizgrad outputs, torch outputs)``.

    Tolerances follow ``tests.tolerance``: ``steps`` dependent stages (a layer is a few:
    matmul, bias, activation, a reduction; a transformer block more) on values the size
    of the largest input, weight, upstream gradient or result, since the gradients of
    normalising layers cancel to far below the terms they are summed from.
    """
    kwargs = kwargs or {}
    copy_weights(vmodule, tmodule)
    if grad_inputs is None:
        grad_inputs = tuple(i for i, a in enumerate(inputs)
                            if isinstance(a, np.ndarray) and a.dtype.kind == "f")
    vin, tin = [], []
    for i, array in enumerate(inputs):
        if not isinstance(array, np.ndarray):
            vin.append(array)
            tin.append(array)
            continue
        vin.append(vizgrad.tensor(array, requires_grad=i in grad_inputs))
        tin.append(torch.tensor(array, requires_grad=i in grad_inputs))
    vout = vmodule(*vin, **{k: _v(v) for k, v in kwargs.items()})
    tout = tmodule(*tin, **{k: _t(v) for k, v in kwargs.items()})
    vflat, tflat = _flatten(vout), _flatten(tout)
    assert len(vflat) == len(tflat)
    rng = np.random.default_rng(seed)
    vloss, tloss = None, None
    magnitudes = [np.abs(a).max() for a in inputs if isinstance(a, np.ndarray)
                  and a.dtype.kind == "f" and a.size]
    magnitudes += [np.abs(p.detach().numpy()).max() for p in tmodule.parameters() if p.numel()]
    for v, t in zip(vflat, tflat):
        assert v.shape == tuple(t.shape), (v.shape, tuple(t.shape))
        expected = to_numpy(t)
        if expected.size and expected.dtype.kind == "f":
            magnitudes.append(np.abs(expected).max())
        assert_close(to_numpy(v), expected, steps=steps, scale=max(magnitudes, default=1.0))
        if not (t.requires_grad and v.requires_grad):
            continue
        upstream = rng.standard_normal(v.shape).astype(np.float32)
        magnitudes.append(np.abs(upstream).max() if upstream.size else 0.0)
        vterm = (v * vizgrad.tensor(upstream)).sum()
        tterm = (t * torch.tensor(upstream)).sum()
        vloss = vterm if vloss is None else vloss + vterm
        tloss = tterm if tloss is None else tloss + tterm
    if tloss is not None:
        vloss.backward()
        tloss.backward()

        def check_grad(mine: np.ndarray, reference: np.ndarray, what: str) -> None:
            scale = max(magnitudes + [np.abs(reference).max() if reference.size else 0.0])
            assert_close(mine, reference, steps=steps, scale=scale, err_msg=what)

        for i in grad_inputs:
            check_grad(vin[i].grad.numpy(), tin[i].grad.numpy(), f"input {i} grad")
        vparams = dict(vmodule.named_parameters())
        for name, tparam in tmodule.named_parameters():
            if tparam.grad is None:
                assert vparams[name].grad is None, name
                continue
            check_grad(vparams[name].grad.numpy(), tparam.grad.numpy(), f"grad of {name}")
    return vout, tout


def _v(value: Any) -> Any:
    return vizgrad.tensor(value) if isinstance(value, np.ndarray) else value


def _t(value: Any) -> Any:
    return torch.tensor(value) if isinstance(value, np.ndarray) else value


def randn(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
