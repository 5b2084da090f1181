"""Anomaly mode on PyTorch graphs names the node and line PyTorch's anomaly mode names.

Each program is run twice, the same code: under ``torch.autograd.detect_anomaly`` (its
error names the node, its warning the forward traceback) and under
``vizgrad.detect_anomaly``; the node and the user's line must agree.
"""

from __future__ import annotations

import re
import warnings

import pytest
import torch

import vizgrad
from vizgrad.debug import torch_anomaly


@pytest.fixture(autouse=True)
def _anomaly_off():
    yield
    vizgrad.autograd.set_detect_anomaly(False)
    # everything the mode patched is put back
    assert torch.Tensor.backward.__name__ == "backward"
    assert not hasattr(torch.Tensor.backward, "__wrapped__")
    assert not hasattr(torch.autograd.grad, "__wrapped__")


#: Each program's leaf, kept before its backward() (which may raise)
LEAVES: list[torch.Tensor] = []


def log_of_zero() -> torch.Tensor:
    x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    LEAVES.append(x)
    (x * torch.log(x)).sum().backward()
    return x


def sqrt_of_negative() -> torch.Tensor:
    x = torch.tensor([-1.0, 4.0], requires_grad=True)
    LEAVES.append(x)
    torch.sqrt(x).sum().backward()
    return x


class Normalise(torch.nn.Module):
    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h / h.abs().sum(dim=1, keepdim=True)  # a row of zeros: 0/0


def division_in_a_module() -> torch.Tensor:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), Normalise())
    with torch.no_grad():
        model[0].bias.fill_(-100.0)  # every unit off: h is all zeros
    x = torch.randn(2, 3)
    LEAVES.append(model[0].weight)
    model(x).pow(2).sum().backward()
    return model[0].weight


PROGRAMS = [log_of_zero, sqrt_of_negative, division_in_a_module]


def _torch_says(program) -> tuple[str, tuple[str, int]]:
    """The node and the innermost frame in this file that PyTorch's anomaly mode names."""
    with warnings.catch_warnings(record=True) as caught, \
            pytest.raises(RuntimeError) as error:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            program()
    node = re.match(r"Function '(\w+)' returned nan", str(error.value))[1]
    traceback = next(str(w.message) for w in caught if "Error detected in" in str(w.message))
    frames = re.findall(r'File "([^"]+)", line (\d+)', traceback)
    mine = [(path, int(line)) for path, line in frames if path == __file__]
    return node, mine[-1]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_the_same_node_and_line_as_torch(program) -> None:
    theirs = _torch_says(program)
    with pytest.raises(vizgrad.debug.AnomalyError) as ours, vizgrad.detect_anomaly():
        program()
    node = ours.value.node
    frame = node.stack[-1]
    assert (node.name(), (frame.filename, frame.lineno)) == theirs
    assert ours.value.phase == "backward"
    text = str(ours.value)
    assert text.splitlines()[0] == f"Function '{theirs[0]}' returned nan values in its 0th " \
                                   "output."
    assert "incoming gradient 0 (of the node's output)" in text
    assert f'File "{__file__}", line {theirs[1][1]}' in text


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_the_gradients_are_those_of_a_plain_backward(program) -> None:
    plain = program().grad
    with pytest.raises(vizgrad.debug.AnomalyError), vizgrad.detect_anomaly():
        program()
    # the hooks returned nothing: PyTorch's backward computed what it computes unwatched
    torch.testing.assert_close(LEAVES[-1].grad, plain, equal_nan=True)


def test_a_module_report_names_the_scope_and_the_forward_check_the_op() -> None:
    with pytest.raises(vizgrad.debug.AnomalyError) as ours, \
            vizgrad.detect_anomaly(check_forward=True):
        division_in_a_module()
    error = ours.value
    assert error.phase == "forward"
    assert error.node.name() == "DivBackward0"
    assert "Its inputs are finite: this op made the non-finite values." in str(error)
    assert "return h / h.abs().sum(dim=1, keepdim=True)" in str(error)
    assert "module scope: sequential.2" in str(error)  # the Normalise in the Sequential


def test_an_explicit_infinite_fill_is_not_an_anomaly() -> None:
    scores = torch.randn(2, 3, requires_grad=True)
    mask = torch.tensor([[False, True, False], [False, False, True]])
    with vizgrad.detect_anomaly(check_forward=True):
        probabilities = scores.masked_fill(mask, float("-inf")).softmax(dim=1)
        probabilities[:, 0].sum().backward()
    assert torch.isfinite(scores.grad).all()


def test_a_failing_hook_warns_once_and_changes_no_gradient(monkeypatch) -> None:
    plain = sqrt_of_negative().grad

    def broken(*args, **kwargs):
        raise ValueError("internal")

    monkeypatch.setattr(vizgrad.debug.anomaly, "backward_lines", broken)
    with pytest.warns(RuntimeWarning, match="stopped checking") as caught, \
            vizgrad.detect_anomaly():
        x = sqrt_of_negative()  # no error raised into PyTorch's backward, nor after it
    assert len([w for w in caught if "stopped checking" in str(w.message)]) == 1
    torch.testing.assert_close(x.grad, plain, equal_nan=True)


def test_torch_autograd_grad_is_checked_too() -> None:
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with pytest.raises(vizgrad.debug.AnomalyError) as ours, vizgrad.detect_anomaly():
        torch.autograd.grad((x * torch.log(x)).sum(), x)
    assert ours.value.node.name() == "LogBackward0"


def test_nothing_found_says_what_was_checked() -> None:
    x = torch.ones(3, requires_grad=True)
    with vizgrad.detect_anomaly():
        (x * 2).exp().sum().backward()
    text = vizgrad.debug.anomaly.coverage_text()
    assert "1 PyTorch backward call(s), 3 node backward(s) hooked" in text
    assert torch_anomaly.COUNTS["unhooked"] == []


def test_a_node_that_takes_no_hook_is_named_as_not_checked(monkeypatch) -> None:
    from vizgrad.adapters import torch_nodes as adapter

    hook = adapter.TorchNode.register_hook

    def refusing(self, fn):
        if self.name() == "ExpBackward0":
            raise RuntimeError("this node takes no hooks")
        return hook(self, fn)

    monkeypatch.setattr(adapter.TorchNode, "register_hook", refusing)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with vizgrad.detect_anomaly():
        (x * 2).exp().sum().backward()  # all finite: but ExpBackward0 was not looked at
    text = vizgrad.debug.anomaly.coverage_text()
    assert "1 node(s) could not be hooked and were NOT checked: ExpBackward0" in text
    assert "2 node backward(s) hooked" in text


def test_save_to_draws_the_failing_pytorch_node_with_the_error_on_top(tmp_path) -> None:
    path = tmp_path / "anomaly.svg"
    with pytest.raises(vizgrad.debug.AnomalyError) as ours, \
            vizgrad.detect_anomaly(save_to=path):
        log_of_zero()
    assert ours.value.picture == str(path)
    svg = path.read_text(encoding="utf-8")
    assert "LogBackward0" in svg and "AnomalyError: Function" in svg
