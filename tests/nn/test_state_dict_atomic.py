"""Issue 9, point 10 and 17 (part): ``load_state_dict`` of a module or an optimizer
loads everything or nothing; deepcopy/pickle of a module keep parameter names."""

from __future__ import annotations

import copy
import pickle
import re

import numpy as np
import pytest

import vizgrad
import vizgrad.nn as nn
import vizgrad.optim as optim

# -- point 10: load_state_dict is all or nothing ------------------------------------------


def _model():
    vizgrad.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))


def _raw(model):
    """Every parameter and buffer: (the array object, its exact bytes)."""
    return {k: (v.array, v.array.tobytes()) for k, v in model.state_dict(keep_vars=True).items()}


BAD_VALUES = {
    "string_array": lambda shape: np.full(shape, "a"),
    "string": lambda shape: "abc",
    "complex_into_float": lambda shape: np.full(shape, 1 + 2j),
    "object_array": lambda shape: np.full(shape, None, dtype=object),
}


@pytest.mark.parametrize("kind", sorted(BAD_VALUES))
def test_load_state_dict_with_a_bad_last_value_changes_nothing(kind):
    model = _model()
    before = _raw(model)
    state = {k: v.numpy() + 1 for k, v in model.state_dict().items()}
    last = list(state)[-1]
    state[last] = BAD_VALUES[kind](model.state_dict()[last].shape)
    with pytest.raises(RuntimeError, match=rf"nothing was loaded(.|\n)*{re.escape(last)}"):
        model.load_state_dict(state)
    after = _raw(model)
    assert after.keys() == before.keys()
    for key, (array, data) in before.items():
        assert after[key][0] is array, f"{key} was replaced"
        assert after[key][1] == data, f"{key} was half-loaded"


def test_load_state_dict_converts_numeric_values_and_lists_every_bad_key():
    model = _model()
    state = {k: v.numpy().astype(np.float64) + 1 for k, v in model.state_dict().items()}
    model.load_state_dict(state)  # float64 values are cast into the float32 parameters
    expected = state["0.bias"].astype(np.float32)
    np.testing.assert_array_equal(model[0].bias.detach().numpy(), expected)
    assert model[0].bias.dtype == np.float32
    state["0.bias"] = np.array(["x"] * 4)
    state["2.bias"] = "zz"
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(state)
    assert "0.bias" in str(error.value) and "2.bias" in str(error.value)


def _trained_adam():
    vizgrad.manual_seed(0)
    params = [nn.Parameter(vizgrad.randn(3)), nn.Parameter(vizgrad.randn(2, 2))]
    opt = optim.Adam(params, lr=0.01)
    (params[0].sum() + (params[1] * params[1]).sum()).backward()
    opt.step()
    return opt


def _opt_snapshot(opt):
    state = {id(p): {k: (v.tobytes() if hasattr(v, "tobytes") else v) for k, v in s.items()}
             for p, s in opt.state.items()}
    return state, [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]


@pytest.mark.parametrize("bad", ["string_array", "unknown_index", "not_a_dict", "string"])
def test_optimizer_load_state_dict_with_a_bad_value_changes_nothing(bad):
    opt = _trained_adam()
    before = _opt_snapshot(opt)
    saved = _trained_adam().state_dict()
    saved["param_groups"][0]["lr"] = 0.5
    if bad == "string_array":
        saved["state"][1]["exp_avg_sq"] = np.full((2, 2), "a")
    elif bad == "unknown_index":
        saved["state"][7] = saved["state"][1]
    elif bad == "not_a_dict":
        saved["state"][1] = [1, 2]
    else:
        saved["state"][1]["step"] = "three"
    with pytest.raises(ValueError, match="nothing was loaded"):
        opt.load_state_dict(saved)
    assert _opt_snapshot(opt) == before
    assert opt.param_groups[0]["lr"] == 0.01


def test_optimizer_load_state_dict_refuses_a_non_state_dict():
    opt = _trained_adam()
    with pytest.raises(ValueError, match="'state'.*'param_groups'"):
        opt.load_state_dict([1])


# -- point 17 (part): deepcopy and pickle of a module keep its parameter names -----------


def _nested():
    vizgrad.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.Linear(3, 1)), nn.BatchNorm1d(1))


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copies_of_a_module_keep_parameter_and_buffer_names(how):
    model = _nested()
    expected = dict(model.named_parameters()), dict(model.named_buffers())
    copied = copy.deepcopy(model) if how == "deepcopy" else pickle.loads(pickle.dumps(model))
    # The names are right straight away, before any named_parameters() call renames them.
    assert copied[0].weight.name == "0.weight" and copied[1][0].bias.name == "1.0.bias"
    assert copied[2].running_mean.name == "2.running_mean"
    assert [(n, p.name) for n, p in copied.named_parameters()] == [(n, n) for n in expected[0]]
    for name, param in copied.named_parameters():
        assert param is not expected[0][name] and param.requires_grad
        np.testing.assert_array_equal(param.detach().numpy(), expected[0][name].detach().numpy())
    out = copied(vizgrad.randn(4, 2)).sum()
    assert 'label=<1.0.weight<BR/>' in vizgrad.make_dot(out).source
    import torch

    reference = torch.nn.Sequential(torch.nn.Linear(2, 3),
                                    torch.nn.Sequential(torch.nn.Linear(3, 1)),
                                    torch.nn.BatchNorm1d(1))
    torch_copy = copy.deepcopy(reference) if how == "deepcopy" else \
        pickle.loads(pickle.dumps(reference))
    assert [n for n, _ in copied.named_parameters()] == \
        [n for n, _ in torch_copy.named_parameters()]
    assert list(copied.state_dict()) == list(torch_copy.state_dict())


def test_a_copied_submodule_is_named_from_itself_and_the_original_keeps_its_names():
    model = _nested()
    model.state_dict()
    inner = copy.deepcopy(model[1])
    assert inner[0].weight.name == "0.weight"
    assert model[1][0].weight.name == "1.0.weight"
