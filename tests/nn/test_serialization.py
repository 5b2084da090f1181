"""Checkpoints: state dicts round-trip through vizgrad.save/load; load errors change nothing."""

from __future__ import annotations

import os

import numpy as np
import pytest

import vizgrad
import vizgrad.nn as nn
import vizgrad.optim as optim


def _model():
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(),
                         nn.Linear(8, 3))


def _snapshot(model):
    return {k: v.numpy().copy() for k, v in model.state_dict().items()}


def test_state_dict_round_trip(tmp_path):
    vizgrad.manual_seed(0)
    model = _model()
    opt = optim.Adam(model.parameters(), lr=0.01)
    out = model(vizgrad.randn(4, 1, 4, 4))
    out.sum().backward()
    opt.step()
    path = tmp_path / "checkpoint.npz"
    vizgrad.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 7,
                  "note": "hello", "history": [0.5, 0.25], "pair": (1, None)}, path)
    loaded = vizgrad.load(path)
    assert loaded["epoch"] == 7 and loaded["note"] == "hello"
    assert loaded["history"] == [0.5, 0.25] and loaded["pair"] == (1, None)
    vizgrad.manual_seed(1)
    other = _model()
    other.load_state_dict(loaded["model"])
    for key, value in _snapshot(model).items():
        np.testing.assert_array_equal(other.state_dict()[key].numpy(), value)
    assert other.state_dict()["1.num_batches_tracked"].dtype == np.int64
    resumed = optim.Adam(other.parameters(), lr=1.0)
    resumed.load_state_dict(loaded["optim"])
    assert resumed.param_groups[0]["lr"] == 0.01
    assert resumed.param_groups[0]["betas"] == (0.9, 0.999)
    assert [f for f in os.listdir(tmp_path)] == ["checkpoint.npz"]  # no temp files left


def test_missing_unexpected_and_shape_errors_load_nothing(tmp_path):
    model = _model()
    before = _snapshot(model)
    state = {k: v.numpy() + 1 for k, v in model.state_dict().items()}
    missing = dict(state)
    del missing["4.bias"]
    with pytest.raises(RuntimeError, match=r"missing keys.*'4\.bias'"):
        model.load_state_dict(missing)
    unexpected = dict(state, extra=np.zeros(2))
    with pytest.raises(RuntimeError, match="unexpected keys.*'extra'"):
        model.load_state_dict(unexpected)
    wrong = dict(state)
    wrong["4.weight"] = np.zeros((3, 9), dtype=np.float32)
    with pytest.raises(RuntimeError, match=r"4\.weight: checkpoint has shape \(3, 9\)"):
        model.load_state_dict(wrong)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        model.load_state_dict(wrong, strict=False)
    for key, value in _snapshot(model).items():
        np.testing.assert_array_equal(value, before[key])  # nothing half-loaded
    result = model.load_state_dict(unexpected, strict=False)
    assert result.unexpected_keys == ["extra"] and result.missing_keys == []
    np.testing.assert_array_equal(model.state_dict()["4.bias"].numpy(), before["4.bias"] + 1)


def test_load_refuses_pickles_and_reads_plain_npz(tmp_path):
    pickled = tmp_path / "evil.npz"
    np.savez(pickled, payload=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError):
        vizgrad.load(pickled)
    plain = tmp_path / "plain.npz"
    np.savez(plain, weight=np.ones((2, 2), dtype=np.float32))
    loaded = vizgrad.load(plain)
    assert isinstance(loaded["weight"], vizgrad.Tensor)
    with pytest.raises(TypeError, match="cannot store a object"):
        vizgrad.save({"bad": object()}, tmp_path / "bad.npz")
    assert not (tmp_path / "bad.npz").exists()
    assert sorted(os.listdir(tmp_path)) == ["evil.npz", "plain.npz"]


def test_save_overwrites_atomically(tmp_path):
    path = tmp_path / "ckpt.npz"
    vizgrad.save({"w": vizgrad.ones(2)}, path)
    vizgrad.save({"w": vizgrad.zeros(3)}, path)
    assert vizgrad.load(path)["w"].shape == (3,)
