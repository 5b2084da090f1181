"""vizgrad.onnx: export says clearly that ONNX export is not supported and what to do
instead; the advice works (the weights copy into the same PyTorch model by name)."""

import numpy as np
import pytest
import torch

import vizgrad as vg


@pytest.mark.parametrize("name", ["export", "dynamo_export"])
def test_export_is_refused_with_what_to_do_instead(name, tmp_path):
    target = tmp_path / "model.onnx"
    with pytest.raises(NotImplementedError) as caught:
        getattr(vg.onnx, name)(vg.nn.Linear(3, 2), vg.randn(1, 3), str(target))
    message = str(caught.value)
    assert message.startswith("vizgrad does not provide ONNX export")
    assert "torch.onnx.export" in message and "load_state_dict" in message
    assert not target.exists()


def test_is_in_onnx_export_is_false_as_outside_torchs_export():
    assert vg.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    assert issubclass(vg.onnx.OnnxExporterError, RuntimeError)
    assert issubclass(torch.onnx.OnnxExporterError, RuntimeError)


def test_the_advice_in_the_message_works():
    """The state-dict copy the message quotes loads into PyTorch's model of the same code,
    which then computes what vizgrad's does."""
    model = vg.nn.Sequential(vg.nn.Linear(3, 4), vg.nn.ReLU(), vg.nn.Linear(4, 2))
    torch_model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                                      torch.nn.Linear(4, 2))
    assert "torch_model.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in " \
           "model.state_dict().items()})" in vg.onnx.NOT_SUPPORTED
    torch_model.load_state_dict({k: torch.from_numpy(v.numpy())
                                 for k, v in model.state_dict().items()})
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(model(vg.tensor(x)).detach().numpy(),
                               torch_model(torch.tensor(x)).detach().numpy(), rtol=1e-6)
