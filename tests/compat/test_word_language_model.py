"""PyTorch's word-language-model example (RNN, LSTM, GRU and Transformer models, its
``batchify``/``get_batch``/``repackage_hidden`` helpers and its training step with the
manual ``p.data.add_(p.grad, alpha=-lr)`` update), written from its documented
behaviour as functions of the module they run with: once as ``import vizgrad as torch``,
once with PyTorch, weights copied across, the losses and parameters compared.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch as real_torch

import vizgrad
from tests.nn.helpers import copy_weights


def models(torch):
    nn, F = torch.nn, torch.nn.functional

    class RNNModel(nn.Module):
        """Container module with an encoder, a recurrent module, and a decoder."""

        def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5,
                     tie_weights=False):
            super().__init__()
            self.ntoken = ntoken
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            if rnn_type in ["LSTM", "GRU"]:
                self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            else:
                nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
                self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity,
                                  dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            if tie_weights:
                self.decoder.weight = self.encoder.weight
            self.init_weights()
            self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output)
            decoded = decoded.view(-1, self.ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if self.rnn_type == "LSTM":
                return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                        weight.new_zeros(self.nlayers, bsz, self.nhid))
            return weight.new_zeros(self.nlayers, bsz, self.nhid)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2).float()
                                 * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0).transpose(0, 1)
            self.register_buffer("pe", pe)

        def forward(self, x):
            x = x + self.pe[:x.size(0), :]
            return self.dropout(x)

    class TransformerModel(nn.Module):
        """Container module with an encoder, a transformer encoder and a decoder."""

        def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
            super().__init__()
            self.model_type = "Transformer"
            self.src_mask = None
            self.pos_encoder = PositionalEncoding(ninp, dropout)
            encoder_layers = nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout)
            self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers,
                                                             enable_nested_tensor=False)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)
            self.init_weights()

        def _generate_square_subsequent_mask(self, sz):
            mask = (torch.triu(torch.ones(sz, sz)) == 1).transpose(0, 1)
            return mask.float().masked_fill(mask == 0, float("-inf")).masked_fill(
                mask == 1, float(0.0))  # noqa: UP018 - the example's own spelling

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, src, has_mask=True):
            if has_mask:
                if self.src_mask is None or self.src_mask.size(0) != len(src):
                    self.src_mask = self._generate_square_subsequent_mask(len(src))
            else:
                self.src_mask = None
            src = self.encoder(src) * math.sqrt(self.ninp)
            src = self.pos_encoder(src)
            output = self.transformer_encoder(src, self.src_mask)
            output = self.decoder(output)
            return F.log_softmax(output, dim=-1)

    return RNNModel, TransformerModel


def batchify(torch, data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def repackage_hidden(torch, h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(torch, v) for v in h)


NTOKEN, BPTT, LR, CLIP = 20, 5, 2.0, 0.25
CORPUS = np.random.default_rng(0).integers(0, NTOKEN, 83)


def train(torch, model, steps=4):
    train_data = batchify(torch, torch.tensor(CORPUS), 4)
    criterion = torch.nn.CrossEntropyLoss()
    model.train()
    transformer = getattr(model, "model_type", None) == "Transformer"
    hidden = None if transformer else model.init_hidden(4)
    losses = []
    for i in range(0, min(steps * BPTT, train_data.size(0) - 1), BPTT):
        data, targets = get_batch(train_data, i, BPTT)
        model.zero_grad()
        if transformer:
            output = model(data).view(-1, NTOKEN)
        else:
            hidden = repackage_hidden(torch, hidden)
            output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-LR)
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN_TANH", "RNN_RELU", "Transformer"])
def test_word_language_model_trains_like_torch(kind):
    (vrnn, vtransformer), (trnn, ttransformer) = models(vizgrad), models(real_torch)
    if kind == "Transformer":
        ours, theirs = vtransformer(NTOKEN, 8, 2, 16, 2, 0.0), ttransformer(NTOKEN, 8, 2, 16, 2,
                                                                              0.0)
    else:
        ours, theirs = vrnn(kind, NTOKEN, 8, 12, 2, 0.0), trnn(kind, NTOKEN, 8, 12, 2, 0.0)
    copy_weights(ours, theirs)
    vlosses, tlosses = train(vizgrad, ours), train(real_torch, theirs)
    assert len(vlosses) == 4
    np.testing.assert_allclose(vlosses, tlosses, rtol=1e-4)
    for (name, v), (_, t) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(v.detach().numpy(), t.detach().numpy(), rtol=1e-3,
                                   atol=1e-5, err_msg=name)
