"""Shape errors say what PyTorch says ("mat1 and mat2 shapes cannot be multiplied (5x16
and 32x3)"), as a RuntimeError like PyTorch's (``ShapeError`` is a ValueError too), then
the op, its inputs and the user's line -- never NumPy's gufunc wording."""

from __future__ import annotations

import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")

CASES = {
    "matmul 2-D": lambda L: L.ones(5, 16) @ L.ones(32, 3),
    "matmul with grad": lambda L: L.ones(5, 16, requires_grad=True) @ L.ones(32, 3),
    "mm": lambda L: L.mm(L.ones(5, 16), L.ones(32, 3)),
    "matmul 1-D": lambda L: L.ones(3) @ L.ones(4),
    "matmul vector-matrix": lambda L: L.ones(3) @ L.ones(4, 2),
    "matmul batched": lambda L: L.ones(2, 5, 16) @ L.ones(2, 32, 3),
    "matmul batch-matrix": lambda L: L.ones(2, 5, 16) @ L.ones(32, 3),
    "matmul batch-vector": lambda L: L.ones(2, 5, 16) @ L.ones(3),
    "matmul batches differ": lambda L: L.ones(2, 5, 16) @ L.ones(3, 16, 3),
    "bmm": lambda L: L.bmm(L.ones(2, 5, 16), L.ones(3, 16, 3)),
    "bmm 2-D": lambda L: L.bmm(L.ones(5, 16), L.ones(3, 16, 3)),
    "mv": lambda L: L.mv(L.ones(5, 16), L.ones(3)),
    "linear": lambda L: L.nn.functional.linear(L.ones(5, 16), L.ones(3, 32)),
    "linear bias": lambda L: L.nn.functional.linear(L.ones(5, 16), L.ones(3, 16), L.ones(4)),
    "add": lambda L: L.ones(3) + L.ones(2),
    "mul broadcast": lambda L: L.ones(2, 3) * L.ones(4, 1, 2),
    "sub broadcast": lambda L: L.ones(5, 1, 3) - L.ones(2, 4),
    "view": lambda L: L.ones(6).view(4),
    "reshape": lambda L: L.ones(6).reshape(-1, 4),
    "reshape two -1": lambda L: L.ones(6).reshape(2, -1, -1),
    "cat sizes": lambda L: L.cat([L.ones(2, 3), L.ones(2, 4)]),
    "cat dims": lambda L: L.cat([L.ones(2, 3), L.ones(2, 4, 1)]),
    "stack": lambda L: L.stack([L.ones(2, 3), L.ones(2, 4)]),
    "pad reflect": lambda L: L.nn.functional.pad(L.ones(1, 3), (3, 0), mode="reflect"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_shape_errors_in_pytorchs_words(name):
    with pytest.raises(RuntimeError) as theirs:
        CASES[name](torch)
    with pytest.raises(RuntimeError) as mine:
        CASES[name](vg)
    assert str(mine.value).startswith(str(theirs.value)), (str(mine.value), str(theirs.value))
    assert isinstance(mine.value, ValueError)  # as vizgrad's shape errors always were
    assert "gufunc" not in str(mine.value) and mine.value.__cause__ is None


MORE = {
    "expand": lambda L: L.ones(4).expand(5, 3),
    "expand fewer dims": lambda L: L.ones(2, 3).expand(3),
    "repeat": lambda L: L.ones(2, 3).repeat(2),
    "permute length": lambda L: L.ones(2, 3).permute(0),
    "permute duplicate": lambda L: L.ones(2, 3).permute(0, 0),
    "split 0": lambda L: L.ones(4).split(0),
    "one_hot too large": lambda L: L.nn.functional.one_hot(L.tensor([5]), 3),
    "one_hot negative": lambda L: L.nn.functional.one_hot(L.tensor([-1]), 3),
    "narrow past the end": lambda L: L.ones(4).narrow(0, 2, 5),
}


@pytest.mark.parametrize("name", list(MORE))
def test_more_shape_errors_in_pytorchs_words(name):
    with pytest.raises(RuntimeError) as theirs:
        MORE[name](torch)
    with pytest.raises(RuntimeError) as mine:
        MORE[name](vg)
    assert str(mine.value).startswith(str(theirs.value)), (str(mine.value), str(theirs.value))
    assert isinstance(mine.value, ValueError)
