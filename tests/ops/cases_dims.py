"""Op-table rows with negative and defaulted dims: PyTorch saves ``dim`` as the user gave
it (``sum(-1)`` saves ``(-1,)``, ``var()`` a ``None`` correction), and
``tests/compat/test_op_saved_values.py`` compares the saved values of every row with
torch's, so these rows catch an op that saves the normalized axis instead."""

from __future__ import annotations

import numpy as np

import vizgrad as vg

from .optable import Arg, OpCase

A = Arg
X = A((2, 3, 4))
INDEX = A((2, 3, 2), 0, 4, requires_grad=False, dtype="int64")
PICK = A((2,), values=[3, 0], requires_grad=False, dtype="int64")


def _torch():
    import torch

    return torch


def same(name, fn, args, covers, node_name=None, **options):
    """A row whose vizgrad and torch calls are the same code (``fn(lib, *tensors)``)."""
    return OpCase(name, lambda *t: fn(vg, *t), args, covers, lambda *t: fn(_torch(), *t),
                  node_name, **options)


def _distinct():
    """Values with no ties along the last dim (sort/topk/max gradients are unambiguous)."""
    return np.random.default_rng(3).permutation(24).reshape(2, 3, 4) / 4.0


DISTINCT = A((2, 3, 4), values=_distinct())

CASES = [
    same("sum_dim_negative", lambda L, a: a.sum(-1), [X], ("SumDim",), "SumBackward1"),
    same("sum_dims_negative", lambda L, a: a.sum((-1, 0), keepdim=True), [X], ("SumDim",)),
    same("sum_all_keepdim", lambda L, a: a.sum(None, keepdim=True), [X], ("SumDim",)),
    same("mean_dims_negative", lambda L, a: a.mean((-1, -2)), [X], ("MeanDim",),
         "MeanBackward1"),
    same("var_dim_negative", lambda L, a: a.var(-1), [X], ("Var",)),
    same("var_unbiased_false", lambda L, a: a.var(unbiased=False), [X], ("Var",)),
    same("std_dims_correction", lambda L, a: a.std((-1, 0), correction=2), [X], ("Std",)),
    same("std_all", lambda L, a: a.std(), [X], ("Std",)),
    same("logsumexp_dims_negative", lambda L, a: a.logsumexp((-1, 0)), [X], ("Logsumexp",)),
    same("prod_dim_negative", lambda L, a: a.prod(-1), [A((2, 3, 4), 0.5, 1.5)],
         ("ProdDim",), "ProdBackward1"),
    same("norm_dim_negative", lambda L, a: a.norm(dim=-1), [X], ("Norm",)),
    same("norm_inf_dims_negative", lambda L, a: a.norm(p=float("inf"), dim=(-1, 0)),
         [DISTINCT], ("Norm",)),
    same("amax_dim_negative", lambda L, a: a.amax(-1), [DISTINCT], ("Amax",)),
    same("amin_dims_negative", lambda L, a: a.amin((-1, 0)), [DISTINCT], ("Amin",)),
    same("amax_all_default", lambda L, a: a.amax(), [DISTINCT], ("Amax",)),
    same("max_dim_negative", lambda L, a: a.max(-1)[0], [DISTINCT], ("MaxDim",),
         "MaxBackward0"),
    same("min_dim_negative_keepdim", lambda L, a: a.min(-2, keepdim=True)[0], [DISTINCT],
         ("MinDim",), "MinBackward0"),
    same("softmax_dim_negative", lambda L, a: a.softmax(-2), [X], ("Softmax",)),
    same("log_softmax_dim_negative", lambda L, a: a.log_softmax(-1), [X], ("LogSoftmax",)),
    same("cumsum_dim_negative", lambda L, a: a.cumsum(-1), [X], ("Cumsum",)),
    same("cumprod_dim_negative", lambda L, a: a.cumprod(-2), [A((2, 3, 4), 0.5, 1.5)],
         ("Cumprod",)),
    same("sort_dim_negative", lambda L, a: a.sort(-1)[0], [DISTINCT], ("Sort",)),
    same("topk_dim_negative", lambda L, a: a.topk(2, -2)[0], [DISTINCT], ("Topk",)),
    same("gather_dim_negative", lambda L, a, i: a.gather(-1, i), [X, INDEX], ("Gather",)),
    same("index_select_dim_negative", lambda L, a, i: a.index_select(-1, i), [X, PICK],
         ("IndexSelect",)),
    same("scatter_value_dim_negative", lambda L, a, i: a.scatter(-1, i[..., :1], 1.5),
         [X, INDEX], ("ScatterValue",)),
    same("scatter_add_dim_negative", lambda L, a, i, s: a.scatter_add(-1, i, s),
         [X, INDEX, A((2, 3, 2))], ("ScatterAdd",)),
    same("index_add_dim_negative", lambda L, a, i, s: a.index_add(-1, i, s),
         [X, PICK, A((2, 3, 2))], ("IndexAdd",)),
    same("select_dim_negative", lambda L, a: a.select(-1, -2), [X], ("Select",),
         "SelectBackward0"),
    same("permute_dims_negative", lambda L, a: a.permute(-1, 0, 1), [X], ("Permute",)),
    same("flip_dims_negative", lambda L, a: a.flip((-1, 0)), [X], ("Flip",)),
    same("roll_dims_negative", lambda L, a: a.roll((1, 2), (-1, 0)), [X], ("Roll",)),
    same("roll_flat_int", lambda L, a: a.roll(5), [X], ("Roll",)),
    same("transpose_dims_negative", lambda L, a: a.transpose(-1, 0), [X], ("Transpose",)),
    same("unsqueeze_dim_negative", lambda L, a: a.unsqueeze(-2), [X], ("Unsqueeze",)),
    same("squeeze_dim_negative", lambda L, a: a.squeeze(-3), [A((2, 1, 4))], ("SqueezeDim",)),
    same("narrow_dim_negative", lambda L, a: a.narrow(-1, 1, 2), [X], ("Slice",)),
    same("cat_dim_negative", lambda L, a, b: L.cat([a, b], -1), [X, X], ("Cat",)),
    same("split_dim_negative", lambda L, a: a.split(3, -1)[1], [X], ("Split",)),
]
