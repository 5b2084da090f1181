"""A corpus of real PyTorch models for the debugging tools' tests, all built offline.

``build(name, seed=0) -> Case``: a fresh model, a batch and a loss function, every
weight drawn from ``torch.manual_seed(seed)`` so two builds with one seed are equal
(a run with vizgrad's tools and one without compare gradient for gradient).

Names (:data:`NAMES`): ``gpt2``, ``bert``, ``bloom`` (transformers models made from
tiny configs, never downloaded: 2 layers, hidden 32, vocab 100, sequence 8),
``resnet_block`` (Conv2d with bias, BatchNorm2d, a residual add) and ``lstm_tagger``
(Embedding, LSTM, Linear).  The transformers decoders run with ``use_cache=True``:
their KV cache starts from an empty tensor (``torch.cat([empty, k])``), the graph shape
that once broke the tools' hooks.

Example
-------
>>> case = build("gpt2")
>>> loss = case.loss()          # forward on the case's batch
>>> loss.backward()
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

NAMES = ("gpt2", "bert", "bloom", "resnet_block", "lstm_tagger")
VOCAB, HIDDEN, LAYERS, HEADS, SEQ, BATCH = 100, 32, 2, 2, 8, 2


@dataclass
class Case:
    """One model of the corpus: ``loss()`` runs forward on ``batch`` and returns the loss."""

    name: str
    model: nn.Module
    batch: dict[str, torch.Tensor]
    loss_fn: Callable[[nn.Module, dict[str, torch.Tensor]], torch.Tensor]

    def loss(self) -> torch.Tensor:
        return self.loss_fn(self.model, self.batch)

    def grads(self) -> dict[str, torch.Tensor | None]:
        """Every parameter's ``.grad`` (cloned), by name."""
        return {name: None if p.grad is None else p.grad.detach().clone()
                for name, p in self.model.named_parameters()}


def _tokens(generator: torch.Generator) -> dict[str, torch.Tensor]:
    ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=generator)
    return {"input_ids": ids, "labels": ids.clone()}


def _lm_loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    # use_cache: the decoders build their KV cache from an empty tensor
    return model(input_ids=batch["input_ids"], labels=batch["labels"], use_cache=True).loss


def _mlm_loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    return model(input_ids=batch["input_ids"], labels=batch["labels"]).loss


def _gpt2() -> nn.Module:
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=VOCAB, n_positions=SEQ * 2, n_embd=HIDDEN, n_layer=LAYERS,
                        n_head=HEADS, bos_token_id=0, eos_token_id=0,
                        attn_implementation="eager")
    return GPT2LMHeadModel(config)


def _bert() -> nn.Module:
    from transformers import BertConfig, BertForMaskedLM

    config = BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                        num_attention_heads=HEADS, intermediate_size=HIDDEN * 2,
                        max_position_embeddings=SEQ * 2, attn_implementation="eager")
    return BertForMaskedLM(config)


def _bloom() -> nn.Module:
    from transformers import BloomConfig, BloomForCausalLM

    config = BloomConfig(vocab_size=VOCAB, hidden_size=HIDDEN, n_layer=LAYERS, n_head=HEADS,
                         attn_implementation="eager")
    return BloomForCausalLM(config)


class ResNetBlock(nn.Module):
    """A small residual CNN: stem conv (with bias), one basic block, pooled head."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1, bias=True)
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1, bias=True)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=True)
        self.bn2 = nn.BatchNorm2d(8)
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.stem(x))
        h = torch.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        x = torch.relu(h + x)
        return self.head(x.mean(dim=(2, 3)))


class LSTMTagger(nn.Module):
    """Embedding -> LSTM -> per-token tag scores."""

    def __init__(self, tags: int = 5) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.lstm = nn.LSTM(16, HIDDEN, batch_first=True)
        self.head = nn.Linear(HIDDEN, tags)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embed(ids))
        return self.head(out)


def _image_loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    return nn.functional.cross_entropy(model(batch["x"]), batch["y"])


def _tag_loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    scores = model(batch["input_ids"])
    return nn.functional.cross_entropy(scores.flatten(0, 1), batch["tags"].flatten())


def build(name: str, seed: int = 0) -> Case:
    """A fresh model of the corpus, its batch and loss, all from ``seed``."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed + 1)
    if name == "gpt2":
        model, batch, loss_fn = _gpt2(), _tokens(generator), _lm_loss
    elif name == "bert":
        model, batch, loss_fn = _bert(), _tokens(generator), _mlm_loss
    elif name == "bloom":
        model, batch, loss_fn = _bloom(), _tokens(generator), _lm_loss
    elif name == "resnet_block":
        model = ResNetBlock()
        batch = {"x": torch.randn(BATCH, 3, 8, 8, generator=generator),
                 "y": torch.randint(0, 4, (BATCH,), generator=generator)}
        loss_fn = _image_loss
    elif name == "lstm_tagger":
        model = LSTMTagger()
        batch = {"input_ids": torch.randint(0, VOCAB, (BATCH, SEQ), generator=generator),
                 "tags": torch.randint(0, 5, (BATCH, SEQ), generator=generator)}
        loss_fn = _tag_loss
    else:
        raise KeyError(f"no model {name!r} in the corpus; have {NAMES}")
    model.train()
    return Case(name, model, batch, loss_fn)


def run_plain(name: str, seed: int = 0) -> dict[str, torch.Tensor | None]:
    """Gradients of one plain step (no vizgrad at all): the reference."""
    case = build(name, seed)
    case.loss().backward()
    return case.grads()


def build_fn(name: str) -> tuple[nn.Module, Callable[[], dict[str, torch.Tensor]],
                                 Callable[[nn.Module, dict[str, torch.Tensor]], Any]]:
    """``(model, make_batch, loss_fn)``: the corpus in its simplest form."""
    case = build(name)
    return case.model, lambda: case.batch, case.loss_fn
