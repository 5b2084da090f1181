"""uint16, uint32 and uint64: PyTorch 2.13's barebones unsigned dtypes, compared with torch.

PyTorch makes them, casts to and from them, and runs a few kernels on them (mul, div,
eq/ne, sum/prod/cumsum to int64, sort, unique, bitwise and/or/xor, views, cat, indexing,
where); most others raise ``NotImplementedError: "add_stub" not implemented for 'UInt16'``,
and they promote with floating dtypes only. Each call below runs on both libraries: the
same values and dtype, or the same error in the same words.
"""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")

CALLS = {
    # what PyTorch runs
    "mul": lambda L, a: a * a, "mul_int": lambda L, a: a * 70000, "div": lambda L, a: a / a,
    "mul_float": lambda L, a: a * 1.5,
    "mul_float_tensor": lambda L, a: a * L.tensor([1.5, 2.0, 3.0]),
    "mul_int_0d": lambda L, a: a * L.tensor(2), "eq": lambda L, a: a == a,
    "ne": lambda L, a: a != 2,
    "sum": lambda L, a: a.sum(), "sum_dim": lambda L, a: a.reshape(3, 1).sum(0),
    "prod": lambda L, a: a.prod(), "cumsum": lambda L, a: a.cumsum(0),
    "sort": lambda L, a: a.sort()[0], "unique": lambda L, a: L.unique(a),
    "and": lambda L, a: a & a, "or": lambda L, a: a | a, "xor": lambda L, a: a ^ a,
    "cat": lambda L, a: L.cat([a, a]), "stack": lambda L, a: L.stack([a, a]),
    "index": lambda L, a: a[L.tensor([0, 2])], "slice": lambda L, a: a[1:],
    "reshape": lambda L, a: a.reshape(3, 1), "t": lambda L, a: a.reshape(3, 1).t(),
    "clone": lambda L, a: a.clone(), "fill_": lambda L, a: a.clone().fill_(2),
    "zeros_like": lambda L, a: L.zeros_like(a), "ones": lambda L, a: L.ones(2, dtype=a.dtype),
    "full": lambda L, a: L.full((2,), 7, dtype=a.dtype),
    "where": lambda L, a: L.where(a == 1, a, a),
    "float": lambda L, a: a.float(), "long": lambda L, a: a.long(), "to_from_float":
        lambda L, a: L.tensor([-1.0, 3.7]).to(a.dtype), "roll": lambda L, a: a.roll(1),
    "repeat": lambda L, a: a.repeat(2),
    "index_select_2d": lambda L, a: a.reshape(3, 1).index_select(0, L.tensor([1])),
    "sqrt": lambda L, a: a.sqrt(),
    # what PyTorch refuses: no kernel
    "add": lambda L, a: a + a, "add_int": lambda L, a: a + 1, "sub": lambda L, a: a - a,
    "rsub": lambda L, a: 1 - a, "neg": lambda L, a: -a, "abs": lambda L, a: a.abs(),
    "floordiv": lambda L, a: a // a, "mod": lambda L, a: a % a, "mod_int": lambda L, a: a % 2,
    "fmod": lambda L, a: a.fmod(a), "lt": lambda L, a: a < a, "le": lambda L, a: a <= 1,
    "gt": lambda L, a: a > 1, "ge": lambda L, a: a >= a, "max": lambda L, a: a.max(),
    "min": lambda L, a: a.min(), "max_dim": lambda L, a: a.max(0), "min_dim": lambda L, a: a.min(0),
    "amax": lambda L, a: a.amax(0), "amin": lambda L, a: a.amin(0),
    "argmax": lambda L, a: a.argmax(),
    "argmin": lambda L, a: a.argmin(), "not": lambda L, a: ~a, "lshift": lambda L, a: a << 1,
    "rshift": lambda L, a: a >> 1, "clamp": lambda L, a: a.clamp(0, 2),
    "clamp_tensor": lambda L, a: a.clamp(a, a), "pow": lambda L, a: a ** 2,
    "maximum": lambda L, a: L.maximum(a, a), "minimum": lambda L, a: L.minimum(a, a),
    "dot": lambda L, a: a @ a, "mm": lambda L, a: a.reshape(3, 1) @ a.reshape(1, 3),
    "mv": lambda L, a: a.reshape(1, 3) @ a, "arange": lambda L, a: L.arange(3, dtype=a.dtype),
    "sign": lambda L, a: a.sign(), "flip": lambda L, a: a.flip(0),
    "gather": lambda L, a: a.gather(0, L.tensor([0])), "topk": lambda L, a: a.topk(1)[0],
    "nonzero": lambda L, a: a.nonzero(), "kthvalue": lambda L, a: a.kthvalue(1)[0],
    "median": lambda L, a: a.median(), "trace": lambda L, a: a.reshape(3, 1).trace(),
    "tril": lambda L, a: a.reshape(3, 1).tril(),
    "masked_fill": lambda L, a: a.masked_fill(a == 1, 0),
    # in place, as out of place
    "add_": lambda L, a: a.clone().add_(1), "mul_": lambda L, a: a.clone().mul_(2),
    "neg_": lambda L, a: a.clone().neg_(), "clamp_": lambda L, a: a.clone().clamp_(0, 1),
    "iadd": lambda L, a: a.clone().__iadd__(a), "imul": lambda L, a: a.clone().__imul__(a),
    # promotion: with floating dtypes only
    "promote_int64": lambda L, a: a * L.tensor([1, 2, 3]),
    "promote_uint8": lambda L, a: a * L.tensor([1, 2, 3], dtype=L.uint8),
    "promote_bool": lambda L, a: a * L.tensor([True, False, True]),
    "promote_types": lambda L, a: L.promote_types(a.dtype, L.int64),
    "promote_types_float": lambda L, a: L.promote_types(a.dtype, L.float16),
}


def _outcome(lib, dtype, call):
    a = lib.tensor([1, 2, 3], dtype=getattr(lib, dtype))
    try:
        result = call(lib, a)
    except Exception as error:  # noqa: BLE001 - the error itself is compared
        return type(error).__name__, str(error).splitlines()[0]
    if not isinstance(result, (vg.Tensor, torch.Tensor)):
        return "dtype", str(result).replace("torch.", "")
    return str(result.dtype).replace("torch.", ""), np.asarray(result.tolist()).tolist()


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_barebones_unsigned_as_torch(name, dtype):
    assert _outcome(vg, dtype, CALLS[name]) == _outcome(torch, dtype, CALLS[name])


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_dtypes_and_casts(dtype):
    assert str(getattr(vg, dtype)) == dtype == str(getattr(torch, dtype)).removeprefix("torch.")
    x = vg.tensor([1.5, 2.5], requires_grad=True)
    cast = x.to(dtype)
    assert cast.grad_fn is None and not cast.requires_grad and str(cast.dtype) == dtype
    with pytest.raises(RuntimeError, match="require"):
        vg.tensor([1], dtype=dtype).requires_grad_()
