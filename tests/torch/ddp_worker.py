"""One rank of the DDP tests (tests/torch/test_distributed.py): run as a script.

``python ddp_worker.py RANK WORLD PORT MODE OUT``: two gloo ranks on 127.0.0.1; rank 1's
forward skips the ``extra`` layer.  MODE ``unused_true``: DDP with
``find_unused_parameters=True``, one full step.  MODE ``unused_false``: ``False``; rank 1
runs backward and then the next forward, where PyTorch raises; rank 0 stops after the
comparison (its backward would wait for rank 1's all-reduce until the timeout).
What each rank saw is written to ``OUT/result.RANK.json``.
"""

from __future__ import annotations

import datetime
import gc
import json
import sys
import warnings
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

import vizgrad
from vizgrad.debug.ranks import rank_info, rank_path


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)
        self.extra = nn.Linear(4, 1)

    def forward(self, x: torch.Tensor, skip: bool) -> torch.Tensor:
        h = self.body(x).tanh()
        out = self.head(h)
        if not skip:
            out = out + self.extra(h)  # the layer rank 1 skips
        return out


def main(rank: int, world: int, port: int, mode: str, out: Path) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(
        Net(), find_unused_parameters=(mode == "unused_true"))
    x = torch.randn(8, 4)
    result: dict = {"rank": rank, "ranks": list(rank_info())}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check = vizgrad.debug.RankCheck(model)
        with check:
            loss = model(x, skip=rank == 1).pow(2).mean()
            report = check.compare(loss)
            vizgrad.render.save(loss, rank_path(out / "graph.json", rank_info()))
            if mode == "unused_true" or rank == 1:
                loss.backward()
    result.update(missing={str(k): v for k, v in report.missing.items()},
                  differ=report.differ, lines=report.lines, text=str(report),
                  no_grad=check.no_grad,
                  warnings=[str(w.message) for w in caught
                            if issubclass(w.category, vizgrad.debug.RankWarning)])
    extra = model.module.extra.weight.grad
    result["extra_grad_after_reduce"] = None if extra is None else float(extra.abs().sum())
    if mode == "unused_false" and rank == 1:
        try:  # PyTorch notices a step later
            model(x, skip=True).sum()
            result["torch_error"] = None
        except RuntimeError as error:
            result["torch_error"] = str(error)
    (out / f"result.{rank}.json").write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], Path(sys.argv[5]))
    # DDP's constructor leaves its model in a reference cycle (frames of a lazy import in
    # torch): free its reducer while gloo still runs, not at interpreter exit after teardown
    gc.collect()
    dist.destroy_process_group()
