"""Op-table rows on zero-dim tensors: every elementwise op again, with 0-d inputs.

NumPy gives a NumPy scalar (not a 0-d array) for math on 0-d arrays; these rows
catch any op whose forward or backward then goes wrong (``relu`` on a 0-d tensor
crashed in backward).  Each row is derived from the op's own row (same function,
domain and torch call) with every input made 0-d, so it runs through gradcheck,
second order, the torch oracle and the strict backend like any other row; a few
rows mix a 0-d tensor with a dimensioned one (broadcasting from 0-d).
``test_zero_dim.py`` checks that every elementwise Function has a row here.
"""

from __future__ import annotations

import dataclasses

import numpy as np

import vizgrad as vg

from . import cases_core, cases_library
from .optable import Arg, OpCase

A = Arg

# The elementwise rows (by name) of the other tables, and the modules whose Functions
# are elementwise (every one must have a zero-dim row: test_zero_dim.py).
SOURCES = (
    "add", "add_alpha", "sub_alpha", "add_scalar", "sub", "rsub", "mul", "div", "rdiv", "neg",
    "pow_scalar", "pow_fractional", "pow_tensor", "rpow", "exp", "log", "tanh", "sigmoid",
    "tanh_backward", "sigmoid_backward", "relu", "where", "clone", "to_float32", "zero_",
    "fill_", "add_", "mul_", "relu_",
    "abs", "sqrt", "rsqrt", "square", "expm1", "log1p", "log2", "erf", "sin", "cos", "tan",
    "reciprocal", "sign", "sign_node", "floor", "floor_node", "ceil", "round", "round_decimals",
    "clamp", "clamp_min", "clip_max", "clamp_tensors", "clamp_tensor_min_above_max",
    "clamp_tensor_min_only", "clamp_tensor_max_only", "clamp_", "maximum", "minimum",
    "max_binary", "leaky_relu", "elu", "elu_inplace", "gelu", "gelu_tanh", "silu", "softplus",
    "mul_scalar",
)
ELEMENTWISE_MODULES = ("arithmetic", "elementwise", "activations", "bounds", "copying")
# Functions of those modules that work along a dim (softmax), not element by element.
NOT_ELEMENTWISE = ("Softmax", "LogSoftmax")


def _zero_dim(arg: Arg) -> Arg:
    values = None if arg.values is None else np.asarray(arg.values).flat[0]
    return dataclasses.replace(arg, shape=(), values=values)


def _derive(case: OpCase) -> OpCase:
    return dataclasses.replace(case, name=f"{case.name}_0d",
                               args=[_zero_dim(a) for a in case.args])


_BY_NAME = {c.name: c for c in cases_core.CASES + cases_library.CASES}
CASES = [_derive(_BY_NAME[name]) for name in SOURCES]

CASES += [
    # relu's derived row sits below zero; this one above it (the reported crash).
    OpCase("relu_0d_positive", lambda a: a.relu(), [A((), values=1.5)], ("Relu",),
           lambda a: a.relu(), "ReluBackward0"),
    # A 0-d tensor meeting a dimensioned one: broadcast forward, summed back in backward.
    OpCase("mul_0d_by_vector", lambda a, b: a * b, [A(()), A((3,))], ("Mul",),
           lambda a, b: a * b),
    OpCase("add_vector_and_0d", lambda a, b: a + b, [A((2, 3)), A(())], ("Add",),
           lambda a, b: a + b),
    OpCase("div_0d_by_vector", lambda a, b: a / b, [A(()), A((3,), 0.5, 2.0)], ("Div",),
           lambda a, b: a / b),
    OpCase("pow_vector_to_0d", lambda a, b: a ** b, [A((3,), 0.5, 2.0), A(())],
           ("PowTensor",), lambda a, b: a ** b),
    OpCase("maximum_0d_vector", lambda a, b: vg.maximum(a, b) if isinstance(a, vg.Tensor)
           else __import__("torch").maximum(a, b), [A(()), A((4,))], ("Maximum",),
           lambda a, b: __import__("torch").maximum(a, b)),
    OpCase("where_0d_and_vector", lambda a, b: _where(a, b), [A(()), A((4,))], ("Where",),
           lambda a, b: _where(a, b)),
]


CASES += [
    OpCase("addcmul_0d", lambda a, b, c: a.addcmul(b, c, value=0.5), [A(()), A(()), A(())],
           ("Addcmul",), lambda a, b, c: a.addcmul(b, c, value=0.5)),
    OpCase("addcdiv_0d", lambda a, b, c: a.addcdiv(b, c, value=2.0),
           [A(()), A(()), A((), 0.5, 2.0)], ("Addcdiv",),
           lambda a, b, c: a.addcdiv(b, c, value=2.0)),
    OpCase("copy_0d", lambda a, b: (a * 1.0).copy_(b), [A(()), A(())], ("Copy",),
           lambda a, b: (a * 1.0).copy_(b)),
    OpCase("normal_0d", lambda a: _seeded(a, "normal_"), [A(())], ("Normal",), None),
    OpCase("uniform_0d", lambda a: _seeded(a, "uniform_"), [A(())], ("Uniform",), None),
]


def _seeded(a, method):
    vg.manual_seed(0)  # the draw repeats on each gradcheck call: keep the forward a function
    out = a * 1.0
    getattr(out, method)()
    return out + a


def _where(a, b):
    if isinstance(a, vg.Tensor):
        return vg.where(b.array > 0, a, b)
    import torch

    return torch.where(b > 0, a, b)
