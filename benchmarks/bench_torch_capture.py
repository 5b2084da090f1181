"""Forward overhead of ``vizgrad.torch.capture`` on a small MLP and a ResNet-style CNN.

Each forward (with autograd on, as in training) is timed plain, inside one
``capture(model)`` (scopes and user stacks) and one ``capture(model, stack=False)``
entered around all the forwards (the per-forward cost), and with a fresh
``capture(model)`` entered and left around every forward (adds the set-up: module
names, hooks); best of ``--repeats`` rounds of ``--iters`` forwards, the variants
taking turns.  The second column is the floor: PyTorch's own cost for an empty
``TorchFunctionMode`` and empty global module hooks.  One torch thread, so other
load on the machine disturbs less; times are CPU time.

Run: ``python benchmarks/bench_torch_capture.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn
from torch.nn.modules.module import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
)
from torch.overrides import TorchFunctionMode

import vizgrad


def mlp() -> tuple[nn.Module, torch.Tensor]:
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                          nn.Linear(128, 10))
    return model, torch.randn(32, 64)


class Block(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(out)))


class ResNetish(nn.Module):
    def __init__(self, channels: int = 16, blocks: int = 4) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(channels), nn.ReLU())
        self.layers = nn.Sequential(*[Block(channels) for _ in range(blocks)])
        self.head = nn.Linear(channels, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.layers(self.stem(x))
        return self.head(h.mean(dim=(2, 3)))


def cnn() -> tuple[nn.Module, torch.Tensor]:
    return ResNetish(), torch.randn(8, 3, 32, 32)


def timings(model: nn.Module, x: torch.Tensor, iters: int, repeats: int) -> dict[str, float]:
    def loop() -> None:
        for _ in range(iters):
            model(x).sum()

    def inside(**options: object) -> None:
        with vizgrad.torch.capture(model, **options):
            loop()

    def each() -> None:
        for _ in range(iters):
            with vizgrad.torch.capture(model):
                model(x).sum()

    class Empty(TorchFunctionMode):  # what PyTorch's mechanisms cost by themselves
        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            return func(*args, **(kwargs or {}))

    def bare() -> None:
        pre = register_module_forward_pre_hook(lambda module, args: None)
        post = register_module_forward_hook(lambda module, args, out: None, always_call=True)
        try:
            with Empty():
                loop()
        finally:
            pre.remove()
            post.remove()

    variants = {"plain": loop, "bare": bare, "capture": inside,
                "capture(stack=False)": lambda: inside(stack=False), "capture each": each}
    best = {label: float("inf") for label in variants}
    for function in variants.values():  # warm up
        function()
    for _ in range(repeats):
        for label, function in variants.items():
            start = time.process_time()
            function()
            best[label] = min(best[label], (time.process_time() - start) / iters)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    iters, repeats = (5, 2) if args.quick else (args.iters, args.repeats)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    print("| model | plain ms | empty TorchFunctionMode + global hooks ms | capture ms "
          "| capture(stack=False) ms | capture entered per forward ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, build in (("MLP 64-128-128-10, batch 32", mlp),
                         ("ResNet-style CNN, 4 blocks, 16 ch, 8x3x32x32", cnn)):
        model, x = build()
        t = timings(model, x, iters, repeats)
        plain = t["plain"]

        def cell(key: str, plain: float = plain, t: dict = t) -> str:
            return f"{t[key] * 1e3:.3f} (+{(t[key] / plain - 1) * 100:.0f}%)"

        print(f"| {label} | {plain * 1e3:.3f} | {cell('bare')} | {cell('capture')} | "
              f"{cell('capture(stack=False)')} | {cell('capture each')} |")


if __name__ == "__main__":
    main()
