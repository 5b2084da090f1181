"""Anomaly mode: the first NaN/Inf gradient (or forward output) stops backward, named."""

from __future__ import annotations

import html

import numpy as np
import pytest
import torch

import vizgrad as vg
import vizgrad.nn as nn
from vizgrad.core import engine, function


@pytest.fixture(autouse=True)
def _anomaly_off():
    yield
    vg.autograd.set_detect_anomaly(False)
    assert not engine.NODE_LISTENERS and not function.FORWARD_LISTENERS


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0]


def test_division_by_zero_is_named_as_torch_names_it() -> None:
    data = [0.0, 1.0]
    x = vg.tensor(data, requires_grad=True, name="x")
    with pytest.raises(RuntimeError) as ours, np.errstate(all="ignore"), vg.detect_anomaly():
        (x / x).sum().backward()
    tx = torch.tensor(data, requires_grad=True)
    with pytest.raises(RuntimeError) as theirs, pytest.warns(UserWarning), \
            torch.autograd.detect_anomaly():
        (tx / tx).sum().backward()
    assert _first_line(ours.value) == _first_line(theirs.value) \
        == "Function 'DivBackward0' returned nan values in its 1th output."
    text = str(ours.value)
    # which gradient: slot.rank, the input's name and shape, where it was going
    assert "gradient 1.0 (for input 'other' of shape (2,)), going to AccumulateGrad of " \
           "leaf 'x'" in text
    assert "2 values, 1 NaN, 0 Inf" in text
    # the incoming gradient's statistics, and that it was finite
    assert "incoming gradient 0 (of the node's output): (2,) float32, 2 values, 0 NaN, " \
           "0 Inf: norm 1.414, min 1, max 1, mean 1" in text
    assert "this node's backward made the nan" in text
    # the user's forward line
    assert "(x / x).sum().backward()" in text and __file__ in text
    assert ours.value.node.name() == "DivBackward0" and ours.value.phase == "backward"


def test_without_anomaly_mode_nan_flows_silently() -> None:
    x = vg.tensor([0.0, 1.0], requires_grad=True)
    with np.errstate(all="ignore"):
        (x / x).sum().backward()
    assert np.isnan(x.grad.numpy()[0])


def test_inf_gradient_is_caught_with_the_shape_of_its_input() -> None:
    x = vg.tensor([[1.0, 0.0, 4.0]], requires_grad=True, name="x")
    with pytest.raises(vg.debug.AnomalyError) as caught, np.errstate(all="ignore"), \
            vg.detect_anomaly():
        y = x.sqrt()
        y.sum().backward()
    text = str(caught.value)
    assert _first_line(caught.value) == "Function 'SqrtBackward0' returned inf values in " \
                                        "its 0th output."
    assert "for input 'self' of shape (1, 3)" in text and "y = x.sqrt()" in text
    # the finite part of the bad gradient: 0.5/sqrt(1), 0.5/sqrt(4)
    assert "3 values, 0 NaN, 1 Inf; finite ones: norm 0.559, min 0.25, max 0.5" in text


def test_an_incoming_nan_is_reported_as_such() -> None:
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    with pytest.raises(RuntimeError) as caught, vg.detect_anomaly():
        y.backward(vg.tensor([float("nan"), 1.0]))
    assert "MulBackward0" in _first_line(caught.value)
    assert "The incoming gradient already held NaN/Inf" in str(caught.value)


def test_global_switch_context_manager_and_decorator() -> None:
    assert not vg.is_anomaly_enabled()
    vg.autograd.set_detect_anomaly(True)
    assert vg.autograd.is_anomaly_enabled() and vg.debug.is_anomaly_check_nan_enabled()
    with vg.autograd.set_detect_anomaly(False):
        assert not vg.is_anomaly_enabled()
    assert vg.is_anomaly_enabled()
    vg.autograd.set_detect_anomaly(False)
    assert not engine.NODE_LISTENERS

    @vg.detect_anomaly()
    def step(x):
        assert vg.is_anomaly_enabled()
        (x.log()).sum().backward()

    with np.errstate(all="ignore"), pytest.raises(RuntimeError, match="LogBackward0"):
        step(vg.tensor([0.0], requires_grad=True))
    assert not vg.is_anomaly_enabled()
    with vg.detect_anomaly(check_nan=False):
        assert vg.is_anomaly_enabled() and not vg.debug.is_anomaly_check_nan_enabled()
        x = vg.tensor([0.0], requires_grad=True)
        with np.errstate(all="ignore"):
            x.log().sum().backward()  # not checked
        assert np.isinf(x.grad.numpy()[0])


def test_anomaly_mode_gives_the_same_gradients() -> None:
    x = vg.randn(4, 3, requires_grad=True)
    w = vg.randn(3, 2, requires_grad=True)
    (x @ w).tanh().sum().backward()
    expected = x.grad.numpy().copy(), w.grad.numpy().copy()
    x.grad = w.grad = None
    with vg.detect_anomaly(check_forward=True):
        (x @ w).tanh().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected[0])
    np.testing.assert_array_equal(w.grad.numpy(), expected[1])


class _LogModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        probabilities = self.fc(x).relu()
        return vg.log(probabilities)  # log(0) where the ReLU cut


def test_check_forward_finds_the_op_that_made_the_nan(tmp_path) -> None:
    model = _LogModel()
    x = vg.tensor(np.array([[1.0, -1.0, 0.5]], dtype=np.float32))
    model.fc.weight.array[...] = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
    model.fc.bias.array[...] = 0.0  # unit 1 is -1 -> ReLU 0 -> log(0) = -inf
    picture = tmp_path / "anomaly.svg"
    with pytest.raises(RuntimeError) as caught, np.errstate(all="ignore"), \
            vg.detect_anomaly(check_forward=True, save_to=picture):
        model(x).sum().backward()
    error = caught.value
    text = str(error)
    assert _first_line(error).startswith("Forward of 'LogBackward0' produced -inf values in "
                                         "its 0th output")
    assert "Its inputs are finite: this op made the non-finite values" in text
    assert "return vg.log(probabilities)" in text and "in forward" in text
    assert error.phase == "forward" and error.picture == str(picture)
    svg = picture.read_text()
    assert "LogBackward0" in svg and "#e00000" in svg  # the failing node, highlighted
    # and what went wrong there, on top of the picture
    assert "AnomalyError: Forward of 'LogBackward0' produced -inf values" in html.unescape(svg)


def test_save_to_draws_the_neighbourhood_highlighted(tmp_path) -> None:
    x = vg.tensor([0.0, 1.0], requires_grad=True, name="x")
    picture = tmp_path / "anomaly.svg"
    with pytest.raises(RuntimeError) as caught, np.errstate(all="ignore"), \
            vg.detect_anomaly(save_to=picture, radius=1):
        loss = (x / x + 1).sum()
        loss.backward()
    assert f"picture of the neighbourhood: {picture}" in str(caught.value)
    svg = picture.read_text()
    assert "DivBackward0" in svg and "AddBackward0" in svg and "#e00000" in svg
    assert "SumBackward0" not in svg  # two steps away: outside radius=1
    assert "neighbourhood of DivBackward0 within 1 steps" in svg


def test_inplace_error_gets_the_same_picture(tmp_path) -> None:
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    picture = tmp_path / "inplace.svg"
    with pytest.raises(RuntimeError, match="modified by an in-place operation") as caught, \
            vg.detect_anomaly(save_to=picture):
        y = x.exp()
        y.mul_(2)  # exp saved its output
        y.sum().backward()
    assert caught.value.picture == str(picture)
    assert any(str(picture) in note for note in caught.value.__notes__)
    assert "ExpBackward0" in picture.read_text()
    # outside anomaly mode: the error names its node, and the picture is one call away
    z = vg.tensor([1.0, 2.0], requires_grad=True)
    w = z.exp()
    w.add_(1)
    loss = w.sum()
    with pytest.raises(RuntimeError) as again:
        loss.backward()
    assert again.value.node.name() == "ExpBackward0"
    other = tmp_path / "later.svg"
    vg.debug.save_error_picture(again.value, other, roots=loss)
    assert "#e00000" in other.read_text()
    # both pictures say what the error was, not only where
    for drawn in (picture, other):
        text = html.unescape(drawn.read_text())
        assert f"{type(again.value).__name__}: A tensor needed for gradient" in text
    with pytest.raises(ValueError, match="does not name a graph node"):
        vg.debug.save_error_picture(ValueError("x"), other)


def test_node_and_forward_listener_seams() -> None:
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    seen, forward = [], []
    with vg.watching.on_forward(lambda node, inputs, outs: forward.append(
            (node.name(), len(inputs), outs[0].shape))):
        y = (x * 3).exp()
    # x * 3: the number gets a slot of its own (as in PyTorch), so two inputs
    assert forward == [("MulBackward0", 2, (2,)), ("ExpBackward0", 1, (2,))]
    with vg.watching.on_node_backward(lambda node, gout, gin, error: seen.append(
            (node.name(), len(gout), None if gin is None else len(gin), error))):
        y.sum().backward(retain_graph=True)
    # every op node, newest first (AccumulateGrad is not reported)
    assert seen == [("SumBackward0", 1, 1, None), ("ExpBackward0", 1, 1, None),
                    ("MulBackward0", 1, 2, None)]
    assert not engine.NODE_LISTENERS and not function.FORWARD_LISTENERS
    failures = []
    z = x.exp()
    z.add_(1)
    with vg.watching.on_node_backward(lambda node, gout, gin, error: failures.append(
            (node.name(), gin, type(error).__name__))), pytest.raises(RuntimeError):
        z.sum().backward()
    assert failures[-1] == ("ExpBackward0", None, "InplaceModificationError")
