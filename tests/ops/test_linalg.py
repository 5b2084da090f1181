"""``vizgrad.linalg`` beyond the op table (tests/ops/cases_linalg.py): PyTorch's errors
and their words (``LinAlgError`` for singular and indefinite inputs), the result types,
the gradient conventions of the decompositions (gauge-invariant losses, only the values
used), saved names and the aliases."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(31)
SQUARE = RNG.standard_normal((3, 3))
SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
NOT_PD = np.array([[1.0, 2.0], [2.0, 1.0]])


def _both(fn, *arrays):
    """``fn`` on vizgrad and on torch: (their error or None, our error or None)."""
    errors = []
    for lib in (torch, vg):
        tensors = [lib.tensor(a) for a in arrays]
        try:
            fn(lib, *tensors)
            errors.append(None)
        except Exception as error:  # noqa: BLE001 - compared below
            errors.append(error)
    return errors


@pytest.mark.parametrize("name, fn, arrays", [
    ("inv_singular", lambda L, a: L.linalg.inv(a), [np.zeros((3, 3))]),
    ("inv_singular_batch", lambda L, a: L.linalg.inv(a), [np.stack([np.eye(3), SINGULAR])]),
    ("inv_not_square", lambda L, a: L.linalg.inv(a), [np.ones((3, 4))]),
    ("inv_vector", lambda L, a: L.linalg.inv(a), [np.ones(3)]),
    ("inv_integer", lambda L, a: L.linalg.inv(a), [np.eye(3, dtype=np.int64)]),
    ("det_not_square", lambda L, a: L.linalg.det(a), [np.ones((3, 4))]),
    ("slogdet_vector", lambda L, a: L.linalg.slogdet(a), [np.ones(3)]),
    ("solve_singular", lambda L, a, b: L.linalg.solve(a, b), [np.zeros((3, 3)), np.ones(3)]),
    ("solve_shapes", lambda L, a, b: L.linalg.solve(a, b), [np.eye(3), np.ones(4)]),
    ("solve_shapes_right", lambda L, a, b: L.linalg.solve(a, b, left=False),
     [np.eye(3), np.ones((2, 4))]),
    ("solve_batches", lambda L, a, b: L.linalg.solve(a, b),
     [np.ones((2, 3, 3)), np.ones((4, 3, 1))]),
    ("cholesky_not_pd", lambda L, a: L.linalg.cholesky(a), [NOT_PD]),
    ("cholesky_not_pd_batch", lambda L, a: L.linalg.cholesky(a),
     [np.stack([np.eye(2), NOT_PD])]),
    ("cholesky_not_square", lambda L, a: L.linalg.cholesky(a), [np.ones((2, 3))]),
    ("eigh_not_square", lambda L, a: L.linalg.eigh(a), [np.ones((2, 3))]),
    ("cross_not_3", lambda L, a, b: L.linalg.cross(a, b), [np.ones((3, 4)), np.ones((3, 4))]),
    ("cross_ndim", lambda L, a, b: L.linalg.cross(a, b), [np.ones(3), np.ones((2, 3))]),
    ("qr_mode", lambda L, a: L.linalg.qr(a, mode="bad"), [np.ones((3, 4))]),
    ("qr_integer", lambda L, a: L.linalg.qr(a), [np.ones((3, 4), dtype=np.int64)]),
    ("solve_dtypes", lambda L, a, b: L.linalg.solve(a, b),
     [np.eye(3, dtype=np.float32), np.ones(3)]),
    ("cross_dtypes", lambda L, a, b: L.linalg.cross(a, b),
     [np.ones(3, dtype=np.float32), np.ones(3)]),
    ("vector_norm_integer", lambda L, a: L.linalg.vector_norm(a), [np.ones(3, dtype=np.int64)]),
    ("matrix_norm_integer", lambda L, a: L.linalg.matrix_norm(a, "nuc"),
     [np.ones((2, 2), dtype=np.int64)]),
    ("matrix_norm_ord", lambda L, a: L.linalg.matrix_norm(a, "bad"), [np.ones((3, 4))]),
    ("norm_3d_with_ord", lambda L, a: L.linalg.norm(a, 2), [np.ones((2, 2, 2))]),
])
def test_errors_in_pytorchs_words(name, fn, arrays):
    theirs, ours = _both(fn, *arrays)
    assert theirs is not None and ours is not None, name
    # a shape error goes on to name the op, its inputs and the line (ShapeError's way)
    assert str(ours).startswith(str(theirs)), (str(ours), str(theirs))
    assert isinstance(ours, RuntimeError)
    if isinstance(theirs, torch.linalg.LinAlgError):
        assert isinstance(ours, vg.linalg.LinAlgError)


def test_singular_solve_from_singular_matrix():
    with pytest.raises(vg.linalg.LinAlgError, match="the input matrix is singular"):
        vg.linalg.inv(vg.tensor(SINGULAR))


@pytest.mark.parametrize("mode, message", [
    ("r", "The derivative of linalg.qr depends on Q"),
    ("complete", "not differentiable when mode='complete' and nrows > ncols"),
])
def test_qr_backward_refused_as_pytorch(mode, message):
    for lib in (torch, vg):
        a = lib.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
        with pytest.raises(RuntimeError, match=message):
            lib.linalg.qr(a, mode=mode).R.sum().backward()


def test_result_types_and_fields():
    a = vg.tensor(SQUARE)
    assert vg.linalg.slogdet(a)._fields == ("sign", "logabsdet")
    assert vg.linalg.qr(a)._fields == ("Q", "R")
    assert vg.linalg.svd(a)._fields == ("U", "S", "Vh")
    assert vg.linalg.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert vg.linalg.qr(a, mode="r").Q.shape == (0,)
    assert vg.linalg.svd(vg.tensor(RNG.standard_normal((4, 3)))).U.shape == (4, 4)


@pytest.mark.parametrize("make", [
    lambda L, a: L.linalg.inv(a), lambda L, a: L.linalg.det(a),
    lambda L, a: L.linalg.slogdet(a)[1], lambda L, a: L.linalg.cholesky(a @ a.mT),
    lambda L, a: L.linalg.qr(a).Q, lambda L, a: L.linalg.svd(a).U,
    lambda L, a: L.linalg.eigh(a + a.mT).eigenvectors,
    lambda L, a: L.linalg.cross(a, a.flip(0)), lambda L, a: L.linalg.solve(a, a),
])
def test_node_and_saved_names_as_pytorch(make):
    mine = make(vg, vg.tensor(SQUARE + 4 * np.eye(3), requires_grad=True)).grad_fn
    theirs = make(torch, torch.tensor(SQUARE + 4 * np.eye(3), requires_grad=True)).grad_fn
    assert mine.name() == theirs.name()
    ours = {n for n in dir(mine) if n.startswith("_saved_")}
    skipped = {"_saved_S_sym_argsize_minus_1"}
    assert ours == {n for n in dir(theirs) if n.startswith("_saved_")} - skipped


def test_values_only_have_a_gradient_at_repeated_values():
    """``S.sum()`` and ``eigvalsh(A).sum()`` of a matrix with repeated values: the
    gradient is U V^H (I for eigh), finite, as PyTorch's."""
    eye = np.eye(3)
    for lib in (vg, torch):
        a = lib.tensor(eye * 2.0, requires_grad=True)
        lib.linalg.svdvals(a).sum().backward()
        np.testing.assert_allclose(np.asarray(a.grad.tolist()), eye, atol=1e-12)
        b = lib.tensor(eye, requires_grad=True)
        lib.linalg.eigvalsh(b).sum().backward()
        np.testing.assert_allclose(np.asarray(b.grad.tolist()), eye, atol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy says 1 / 0; torch does not
def test_vectors_of_repeated_values_give_no_finite_gradient():
    """PyTorch's documented caveat: the vectors of repeated values are not unique."""
    for lib in (vg, torch):
        a = lib.tensor(np.eye(3), requires_grad=True)
        (lib.linalg.eigh(a).eigenvectors ** 2 * lib.tensor(np.arange(9.0).reshape(3, 3))
         ).sum().backward()
        assert not np.isfinite(np.asarray(a.grad.tolist())).all()


def test_gauge_invariant_loss_matches_pytorch():
    """``U diag(S) Vh`` and ``U Vh`` (the polar factor) do not depend on the vectors'
    signs: gradients agree with PyTorch's (batched, both shapes)."""
    for shape in ((2, 5, 3), (2, 3, 5)):
        array = RNG.standard_normal(shape)
        weight = RNG.standard_normal(shape)
        grads = []
        for lib in (vg, torch):
            a = lib.tensor(array, requires_grad=True)
            U, S, Vh = lib.linalg.svd(a, full_matrices=False)
            loss = ((U * S.unsqueeze(-2)) @ Vh + U @ Vh) * lib.tensor(weight)
            loss.sum().backward()
            grads.append(np.asarray(a.grad.tolist()))
        np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)


def test_aliases_and_methods():
    array = SQUARE + 4 * np.eye(3)
    a, t = vg.tensor(array), torch.tensor(array)
    np.testing.assert_allclose(a.det().item(), t.det().item())
    np.testing.assert_allclose(vg.det(a).item(), torch.det(t).item())
    np.testing.assert_allclose(a.inverse().numpy(), t.inverse().numpy())
    np.testing.assert_allclose(vg.inverse(a).numpy(), torch.inverse(t).numpy())
    assert a.slogdet().sign.item() == t.slogdet().sign.item()
    b = RNG.standard_normal((4, 3, 2))
    with pytest.warns(UserWarning, match="without specifying the dim"):
        mine = vg.cross(vg.tensor(b), vg.tensor(b[::-1].copy()))
    with pytest.warns(UserWarning):
        theirs = torch.cross(torch.tensor(b), torch.tensor(b[::-1].copy()))
    np.testing.assert_allclose(mine.numpy(), theirs.numpy())
    np.testing.assert_allclose(vg.tensor(b).cross(vg.tensor(b[::-1].copy()), dim=1).numpy(),
                               torch.tensor(b).cross(torch.tensor(b[::-1].copy()), dim=1))


@pytest.mark.parametrize("args", [
    (None, None, False), (2, None, False), (1, None, False), (float("inf"), None, True),
    ("fro", None, False), ("nuc", None, True), (-2, None, False), (-1, None, False),
    (3, 1, False), (None, (0, 1), True), (0, 0, False),
])
def test_norm_values_as_pytorch(args):
    ord, dim, keepdim = args
    array = RNG.standard_normal((3, 4))
    if isinstance(ord, (int, float)) and ord == 0:
        array[0, 1] = 0.0
    mine = vg.linalg.norm(vg.tensor(array), ord, dim, keepdim)
    theirs = torch.linalg.norm(torch.tensor(array), ord, dim, keepdim)
    assert mine.shape == tuple(theirs.shape)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12)


def test_det_of_a_singular_matrix_as_pytorch():
    """A singular matrix: PyTorch's first-order gradient is zero (it solves with
    ``grad * det = 0``); under ``create_graph`` it is the cofactor matrix, from an SVD,
    and its own gradient follows."""
    batch = np.stack([SINGULAR, SINGULAR + np.eye(3)])
    results = []
    for lib, grad in ((vg, vg.autograd.grad), (torch, torch.autograd.grad)):
        a = lib.tensor(batch, requires_grad=True)
        lib.linalg.det(a).sum().backward()
        b = lib.tensor(SINGULAR, requires_grad=True)
        (cofactors,) = grad(lib.linalg.det(b), b, create_graph=True)
        (cofactors * lib.tensor(SQUARE)).sum().backward()
        results.append([np.asarray(t.tolist()) for t in (a.grad, cofactors, b.grad)])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, atol=1e-12)


@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "svdvals", "eigvalsh", "cholesky"])
def test_float32_stays_float32(name):
    array = (SQUARE @ SQUARE.T + np.eye(3)).astype(np.float32)
    mine = getattr(vg.linalg, name)(vg.tensor(array, requires_grad=True))
    theirs = getattr(torch.linalg, name)(torch.tensor(array, requires_grad=True))
    mine, theirs = (mine[1], theirs[1]) if name == "slogdet" else (mine, theirs)
    assert str(mine.dtype) == str(theirs.dtype).removeprefix("torch.")


@pytest.mark.parametrize("matrix", [[[1.0, 2.0], [2.0, 4.0]], [[0.0, 1.0], [0.0, 1.0]],
                                    [[0.0, 0.0], [0.0, 0.0]], [[2.0, 1.0], [0.0, 0.0]]])
def test_slogdet_of_a_singular_matrix_as_pytorch(matrix):
    """PyTorch solves with the zero pivot of the saved LU: sign 0 (signed as the row
    interchanges say), ``-inf``, and a first-order gradient of infinities and NaNs in
    the same places; under ``create_graph`` it solves again and raises LinAlgError."""
    found = []
    for lib in (vg, torch):
        a = lib.tensor(np.array(matrix), requires_grad=True)
        sign, logabsdet = lib.linalg.slogdet(a)
        logabsdet.backward()
        found.append([np.asarray(t.tolist()) for t in (sign, logabsdet, a.grad)])
        b = lib.tensor(np.array(matrix), requires_grad=True)
        with pytest.raises(RuntimeError, match="The solver failed because the input matrix "
                           "is singular"):
            lib.autograd.grad(lib.linalg.slogdet(b)[1], b, create_graph=True)
    for mine, theirs in zip(*found):
        np.testing.assert_array_equal(mine, theirs)
        np.testing.assert_array_equal(np.signbit(mine), np.signbit(theirs))


def test_lu_saved_as_pytorch():
    """det and slogdet factor A^T (PyTorch's choice for a contiguous A), solve factors A:
    the saved LU and pivots are LAPACK's, as torch's."""
    array = SQUARE + 4 * np.eye(3)
    for make in (lambda L, a: L.linalg.det(a), lambda L, a: L.linalg.slogdet(a)[1],
                 lambda L, a: L.linalg.solve(a, a[:, :2]),
                 lambda L, a: L.linalg.solve(a, a[:2], left=False)):
        mine = make(vg, vg.tensor(array, requires_grad=True)).grad_fn
        theirs = make(torch, torch.tensor(array, requires_grad=True)).grad_fn
        np.testing.assert_allclose(mine._saved_LU.numpy(), theirs._saved_LU.numpy(),
                                   atol=1e-12)
        assert mine._saved_pivots.tolist() == theirs._saved_pivots.tolist()
        assert str(mine._saved_pivots.dtype) == "int32"
