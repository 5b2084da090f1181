"""The code paths that use NumPy-only functions, exercised on CUDA tensors (issue #19).

A grep of vizgrad for SciPy, ``np.linalg``, ``np.random`` and ``.get()`` finds them all
working on host data by design, none on device arrays:

- random draws (``nn.init``, ``randn``/``rand``, dropout masks) come from vizgrad's one
  seeded NumPy generator and are copied to the device, so a seed gives the same numbers
  on every device; ``orthogonal_`` runs ``np.linalg.qr`` on that host draw;
- ``erf`` (GELU) uses ``scipy.special`` on NumPy and ``cupyx.scipy.special`` on CuPy
  (the op table covers it);
- ``vizgrad.save`` copies tensors to the host to write them.

So nothing raises on CUDA; these rows check each path keeps the tensor on the device
and gives the CPU's values.
"""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
import vizgrad.nn as nn

from ._device import assert_on_device, host

INITS = [
    ("uniform_", {"a": -2.0, "b": 3.0}), ("normal_", {"std": 0.5}), ("constant_", {"val": 1.5}),
    ("zeros_", {}), ("ones_", {}), ("eye_", {}), ("xavier_uniform_", {}),
    ("xavier_normal_", {"gain": 2.0}), ("kaiming_uniform_", {"a": 0.1}),
    ("kaiming_normal_", {"mode": "fan_out"}), ("orthogonal_", {"gain": 0.5}),
]


@pytest.mark.parametrize("name, options", INITS, ids=[row[0] for row in INITS])
def test_init_on_cuda_gives_the_cpu_values(name, options):
    results = {}
    for device in ("cpu", "cuda"):
        weight = vizgrad.empty(6, 4, device=device)
        vizgrad.manual_seed(3)
        getattr(nn.init, name)(weight, **options)
        results[device] = host(weight)
    assert_on_device(weight, name)
    # the same host draw, copied: exactly equal
    np.testing.assert_array_equal(results["cuda"], results["cpu"])


def test_random_factories_on_cuda_give_the_cpu_values():
    for make in (vizgrad.randn, vizgrad.rand):
        vizgrad.manual_seed(5)
        cpu = make(3, 4)
        vizgrad.manual_seed(5)
        cuda = make(3, 4, device="cuda")
        assert_on_device(cuda, make.__name__)
        np.testing.assert_array_equal(host(cuda), host(cpu))


def test_save_and_load_a_cuda_model(tmp_path):
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)).to("cuda")
    vizgrad.save(model.state_dict(), tmp_path / "model.vzg")
    copy = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)).to("cuda")
    copy.load_state_dict(vizgrad.load(tmp_path / "model.vzg"))
    for (name, mine), (_, ref) in zip(copy.state_dict().items(), model.state_dict().items()):
        assert_on_device(mine, name)
        np.testing.assert_array_equal(host(mine), host(ref), err_msg=name)
