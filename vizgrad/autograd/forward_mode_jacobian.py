"""``jacobian(..., strategy="forward-mode")``: one JVP per input element.

Column ``k`` of input ``j``'s block is the tangent of every output when input ``j``
carries the unit tangent ``e_k`` (the other inputs carry none).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import forward_ad as fwAD


def forward_jacobian(func: Callable, inputs: Any, strict: bool) -> Any:
    """The Jacobian of ``func`` at ``inputs`` built column by column with forward AD."""
    from ..core.factory import eye, zeros, zeros_like
    from ..ops import stack
    from .functional import _as_tuple, _check_requires_grad, _tuple_postprocess

    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    inputs = tuple(x.detach() for x in inputs)
    columns: list[list[list]] = []  # [input][output][element]
    outputs: tuple = ()
    is_outputs_tuple = False
    for j, x in enumerate(inputs):
        per_output: list[list] = []
        basis = eye(x.numel(), dtype=x.dtype)
        for k in range(x.numel()):
            unit = basis[k]
            with fwAD.dual_level():
                duals = tuple(fwAD.make_dual(inp, unit.reshape(tuple(inp.shape)))
                              if i == j else inp for i, inp in enumerate(inputs))
                result = func(*duals)
                is_outputs_tuple, outputs = _as_tuple(
                    result, "outputs of the user-provided function", "jacobian")
                tangents = [fwAD.unpack_dual(out).tangent for out in outputs]
            if not per_output:
                per_output = [[] for _ in outputs]
            for index, (out, tangent) in enumerate(zip(outputs, tangents)):
                if tangent is None:
                    if strict:
                        raise RuntimeError(f"Output {index} of the user-provided function is "
                                           f"independent of input {j}. This is not allowed "
                                           "in strict mode.")
                    tangent = zeros_like(out)
                per_output[index].append(tangent.detach())
        if not per_output:  # an empty input: outputs still needed for the shapes
            is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the "
                                                  "user-provided function", "jacobian")
            per_output = [[] for _ in outputs]
        columns.append(per_output)
    if strict:
        _check_requires_grad(outputs, "outputs", False)
    result = []
    for index, out in enumerate(outputs):
        row = []
        for j, x in enumerate(inputs):
            parts = columns[j][index]
            shape = tuple(out.shape) + tuple(x.shape)
            if parts:  # element k's tangent is column k: stack last, then shape
                block = stack([p.reshape(-1) for p in parts], -1).reshape(shape)
            else:
                block = zeros(shape, dtype=x.dtype)
            row.append(block)
        result.append(tuple(row))
    return _tuple_postprocess(tuple(result), (is_outputs_tuple, is_inputs_tuple))
