"""The nn layers tests/nn/test_layers.py's LAYERS and LOSSES tables leave out, for the
CUDA run (tests/gpu/test_layers_cuda.py), and the optimizer rows it reuses.

Rows are ``(name, make, inputs)`` as in LAYERS: ``make(nn)`` builds the layer (with
dropout 0 where a layer has one, so CPU and CUDA draw nothing), ``inputs`` are NumPy
arrays (float ones get gradients).  tests/gpu/test_rows_cover_everything.py fails when
an nn layer or an optimizer has no row anywhere.
"""

from __future__ import annotations

import numpy as np

from tests.nn.helpers import randn

_INDICES = np.array([[0, 2, 4], [9, 0, 1]], dtype=np.int64)

EXTRA_LAYERS = [
    ("embedding", lambda m: m.Embedding(10, 4, padding_idx=0), [_INDICES]),
    ("batchnorm1d", lambda m: m.BatchNorm1d(4), [randn(8, 4, 5)]),
    ("batchnorm2d", lambda m: m.BatchNorm2d(3), [randn(4, 3, 5, 5)]),
    ("dropout_p0", lambda m: m.Dropout(0.0), [randn(3, 4)]),
    ("rnn_relu_2layer", lambda m: m.RNN(3, 4, num_layers=2, nonlinearity="relu"),
     [randn(5, 2, 3)]),
    ("lstm_bidirectional", lambda m: m.LSTM(3, 4, bidirectional=True, batch_first=True),
     [randn(2, 5, 3)]),
    ("gru", lambda m: m.GRU(3, 4), [randn(5, 2, 3), randn(1, 2, 4, seed=1)]),
    ("rnn_cell", lambda m: m.RNNCell(3, 4), [randn(2, 3), randn(2, 4, seed=1)]),
    ("lstm_cell", lambda m: m.LSTMCell(3, 4), [randn(2, 3)]),
    ("gru_cell", lambda m: m.GRUCell(3, 4), [randn(2, 3), randn(2, 4, seed=1)]),
    ("multihead_attention", lambda m: m.MultiheadAttention(8, 2),
     [randn(5, 3, 8), randn(6, 3, 8, seed=1), randn(6, 3, 8, seed=2)]),
    ("encoder_layer", lambda m: m.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
     [randn(5, 3, 8)]),
    ("decoder_layer",
     lambda m: m.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=True),
     [randn(4, 3, 8), randn(5, 3, 8, seed=1)]),
    ("encoder_stack",
     lambda m: m.TransformerEncoder(m.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2),
     [randn(5, 3, 8)]),
    ("decoder_stack",
     lambda m: m.TransformerDecoder(m.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2),
     [randn(4, 3, 8), randn(5, 3, 8, seed=1)]),
    ("conv3d_reflect", lambda m: m.Conv3d(2, 3, 3, padding=1, padding_mode="reflect"),
     [randn(2, 2, 4, 4, 4)]),
    ("avgpool1d", lambda m: m.AvgPool1d(2), [randn(2, 3, 6)]),
    ("upsample_bicubic",
     lambda m: m.Upsample(scale_factor=2, mode="bicubic", align_corners=False),
     [randn(1, 2, 3, 3)]),
    ("upsampling_nearest2d", lambda m: m.UpsamplingNearest2d(scale_factor=2),
     [randn(1, 2, 3, 3)]),
    ("upsampling_bilinear2d", lambda m: m.UpsamplingBilinear2d(scale_factor=2),
     [randn(1, 2, 3, 3)]),
    ("transformer",
     lambda m: m.Transformer(8, 2, 1, 1, 16, dropout=0.0),
     [randn(5, 3, 8), randn(4, 3, 8, seed=1)]),
]

# Containers hold other layers; each is exercised by the rows that build stacks.
CONTAINERS = {"Module", "Sequential", "ModuleList", "ModuleDict"}
