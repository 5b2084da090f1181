"""The device paths of max pooling and convolution agree with PyTorch where the op table's
random inputs do not reach: ties and NaNs in a pooling window (which position wins, so
which gets the gradient), and the strict backend standing in for CuPy (tiled windows
take their few-kernel path there, NumPy its running maximum); and how many array
operations a CNN training step makes on a device (kernel launches, issue #32)."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
from tests import strict_backend

torch = pytest.importorskip("torch")
F = vizgrad.nn.functional


def _windows_with_ties_and_nans() -> np.ndarray:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, (2, 3, 9, 7)).astype(np.float64)  # many tied maxima
    x[0, 0, 0, 0] = x[0, 0, 1, 1] = np.nan  # two NaNs in one window: the last wins
    x[0, 1, :2, :2] = np.nan  # a window of NaNs
    x[1, 2, 2, 3] = np.nan
    x[1, 1] = 0.0  # ReLU's zeros: every window one tie
    return x


POOLS = [(2, {}), ((2, 3), {}), (3, {}), (2, {"stride": 1}), (3, {"padding": 1})]


def check_max_pool_against_pytorch(to_device, to_host, kernel, options) -> None:
    """Values, indices and the input's gradient of ``max_pool2d`` on windows with ties and
    NaNs, the data moved by ``to_device`` (tests/gpu runs it on CuPy too)."""
    x = _windows_with_ties_and_nans()
    ours = vizgrad.tensor(to_device(x), requires_grad=True)
    values, indices = F.max_pool2d(ours, kernel, return_indices=True, **options)
    upstream = np.random.default_rng(1).standard_normal(values.shape)
    values.backward(vizgrad.tensor(to_device(upstream)))
    theirs = torch.tensor(x, requires_grad=True)
    expected, expected_indices = torch.nn.functional.max_pool2d(
        theirs, kernel, return_indices=True, **options)
    expected.backward(torch.tensor(upstream))
    np.testing.assert_array_equal(to_host(values.detach().array), expected.detach().numpy())
    np.testing.assert_array_equal(to_host(indices.array), expected_indices.numpy())
    np.testing.assert_array_equal(to_host(ours.grad.array), theirs.grad.numpy())


@pytest.mark.parametrize("device", ["numpy", "strict"])
@pytest.mark.parametrize("kernel, options", POOLS)
def test_max_pool_winners_gradients_and_indices_match_pytorch(device, kernel, options):
    if device == "strict":
        check_max_pool_against_pytorch(strict_backend.strict, lambda a: a.get(), kernel,
                                       options)
    else:
        check_max_pool_against_pytorch(np.array, np.asarray, kernel, options)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_tiled_max_pool_on_a_device_keeps_the_dtype_and_second_order(dtype):
    x = np.arange(2 * 4 * 6).reshape(1, 2, 4, 6)[:, :, ::-1].astype(dtype)
    values, indices = F.max_pool2d(vizgrad.tensor(strict_backend.strict(x.copy())), 2,
                                   return_indices=True)
    reference, reference_indices = torch.nn.functional.max_pool2d(
        torch.tensor(x.astype(np.float64)), 2, return_indices=True)
    assert values.dtype == vizgrad.tensor(x).dtype
    np.testing.assert_array_equal(values.array.get(), reference.numpy())
    np.testing.assert_array_equal(indices.array.get(), reference_indices.numpy())
    if dtype is np.float32:
        x64 = vizgrad.tensor(strict_backend.strict(np.random.default_rng(2).standard_normal(
            (1, 2, 4, 6))), requires_grad=True)
        assert vizgrad.autograd.gradcheck(lambda t: F.max_pool2d(t, 2), (x64,))
        assert vizgrad.autograd.gradgradcheck(lambda t: F.max_pool2d(t, 2), (x64,))


def _count_array_ops(workload):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import count_array_ops

    return count_array_ops.count(workload)


def test_a_cnn_step_on_a_device_makes_few_array_operations():
    # Kernel launches set a GPU CNN step's time (issue #32): the step made 192 array
    # operations before the tiled max-pool and the forward-conv adjoint, 116 after; 101
    # with device gradients kept as .grad and the loss's and max-pool's fewer operations.
    counts = _count_array_ops("cnn")
    assert sum(counts.values()) <= 101, counts
    assert not any("pad" == name.rsplit(".", 1)[-1] for name, _ in counts), counts
    assert not any(name.endswith(".copy") for name, _ in counts), counts  # .grad: kept


def test_an_mlp_step_on_a_device_makes_few_array_operations():
    # 74 before issue #32's first round, 70 after it, 57 after the second: 3 products,
    # 3 bias adds, 5 gradient products, 3 bias sums, 12 for SGD, the rest ReLU and loss.
    counts = _count_array_ops("mlp")
    assert sum(counts.values()) <= 57, counts
    assert not any(name.endswith(".copy") for name, _ in counts), counts


def test_the_tiled_pool_finds_nan_winners_without_argmax_over_nans():
    # CuPy's argmax over windows holding NaN did not give NumPy's answer (an H100 run of
    # tests/gpu/test_pool_ties_cuda.py): the tiled path must pick PyTorch's winners even
    # when argmax ignores NaN, so only argmax over NaN-free windows and a bool mask count.
    import types

    from vizgrad.ops import nn_pool

    blind = types.ModuleType("nan_blind_numpy")
    blind.__dict__.update({k: v for k, v in vars(np).items() if not k.startswith("__")})

    def argmax(a, axis=None):
        a = np.asarray(a)
        return np.argmax(np.where(a != a, -np.inf, a) if a.dtype.kind == "f" else a,
                         axis=axis)

    blind.argmax = argmax
    planes = np.random.default_rng(0).integers(0, 3, (4, 6, 6)).astype(np.float64)
    for where in [(0, 0, 0), (0, 1, 1), (1, 2, 3), (2, 0, 1)]:
        planes[where] = np.nan
    for kernel in [(2, 2), (2, 3), (3, 3)]:
        outs = (6 // kernel[0], 6 // kernel[1])
        expected = torch.nn.functional.max_pool2d(
            torch.tensor(planes[None]), kernel, return_indices=True)[1][0].numpy()
        for xp in (np, blind):
            values, indices = nn_pool._tiled_max(xp, planes, kernel, outs)
            np.testing.assert_array_equal(indices, expected, err_msg=f"{xp.__name__} {kernel}")
