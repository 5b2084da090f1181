"""``vizgrad render`` of a deep PyTorch Transformer LM (#28): by default the module
scopes are recorded and the repeated layers fold, the inputs, the first and the last
layer drawn op by op."""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from tests.cli.conftest import cli  # noqa: E402

LM = """
import sys
import torch
from torch import nn

torch.manual_seed(0)


class LM(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.embedding = nn.Embedding(100, 16)
        layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.decoder = nn.Linear(16, 100)

    def forward(self, tokens):
        return self.decoder(self.encoder(self.embedding(tokens)))


model = LM(int(sys.argv[1]))
tokens = torch.randint(0, 100, (2, 5))
loss = nn.functional.cross_entropy(model(tokens).reshape(-1, 100), tokens.reshape(-1))
loss.backward()
"""


@pytest.fixture
def lm(tmp_path):
    path = tmp_path / "lm.py"
    path.write_text(textwrap.dedent(LM), encoding="utf-8")
    return path


def test_a_24_layer_lm_folds_its_middle_layers_and_keeps_inputs_first_and_last(lm,
                                                                                tmp_path):
    out = tmp_path / "lm.dot"
    result = cli("render", "-o", out, lm, "--", "24")
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert ("Folded for readability: 1,355 graph nodes drawn as 1,647 boxes -> 152 boxes "
            "shown (max_nodes=1,000): "
            "model.encoder.layers.1 .. model.encoder.layers.22 folded (22 blocks like "
            "model.encoder.layers.0)") in said
    assert "farthest from the outputs" not in said and "without module boxes" not in said
    assert "drawn as 152 boxes" in result.stdout
    dot = out.read_text(encoding="utf-8")
    # the input side (the embedding), the first and last layer, the decoder: drawn
    for name in ("model.embedding.weight", "model.encoder.layers.0.linear1.weight",
                 "model.encoder.layers.23.linear1.weight", "model.decoder.weight"):
        assert f"<{name}<BR/>" in dot, name
    for hidden in ("model.encoder.layers.1.", "model.encoder.layers.22."):
        assert hidden not in dot
    # one box stands for layers 1 .. 22, between layer 0's box and layer 23's
    assert dot.count("... 22 identical blocks ...") == 2  # label and tooltip
    assert "model.encoder.layers.1 .. model.encoder.layers.22<BR/>each like " \
           "model.encoder.layers.0: 44 ops, 12 leaves" in dot
    assert "label=<model.encoder.layers.0>" in dot and "label=<model.encoder.layers.23>" in dot


def test_a_12_layer_lm_within_max_nodes_folds_its_repeated_layers_too(lm, tmp_path):
    out = tmp_path / "lm.dot"
    result = cli("render", "-o", out, lm, "--", "12")
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert ("Folded for readability: 831 nodes -> 152 shown (more than 500 with repeated "
            "blocks): model.encoder.layers.1 .. model.encoder.layers.10 folded") in said
    everything = cli("render", "--max-nodes", "0", "-o", out, lm, "--", "12")
    assert "drawn as 831 boxes" in everything.stdout
    assert "identical blocks" not in out.read_text(encoding="utf-8")
