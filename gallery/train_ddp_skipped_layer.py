"""DDP where one rank's forward skips a layer: vizgrad names it before the all-reduce.

Two ranks train the same model; on rank 1 a data-dependent branch skips the ``aux``
layer.  With ``find_unused_parameters=True`` DDP fills the missing gradients in and
the all-reduce averages them: after ``backward()`` every rank holds a gradient for
``aux`` and nothing shows.  ``vizgrad.debug.RankCheck`` compares the ranks' graphs
before ``backward()`` and measures each rank's gradients before the all-reduce:

    rank 1: 2 parameter(s) not in this rank's graph (... rank 0 used them):
      aux.weight (module aux) at .../train_ddp_skipped_layer.py:41 in forward
      aux.bias (module aux) at .../train_ddp_skipped_layer.py:41 in forward

(with ``find_unused_parameters=False`` PyTorch would fail on rank 1 a step later.)
Not a gallery picture (the gallery draws one process); run it:

    torchrun --nproc_per_node 2 gallery/train_ddp_skipped_layer.py
    python gallery/train_ddp_skipped_layer.py      # starts 2 gloo ranks itself, on CPU
"""

import gc
import os
import socket
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

import vizgrad


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.head = nn.Linear(8, 1)
        self.aux = nn.Linear(8, 1)

    def forward(self, x, use_aux: bool):
        h = self.body(x).relu()
        return self.head(h) + self.aux(h) if use_aux else self.head(h)  # rank 1: no aux


def train(rank: int, world: int) -> None:
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(Net(), find_unused_parameters=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 4) + rank
    check = vizgrad.debug.RankCheck(model)
    for step in range(2):
        optimizer.zero_grad()
        with warnings.catch_warnings(), check:
            warnings.simplefilter("ignore", vizgrad.debug.RankWarning)  # printed below
            loss = model(x, use_aux=x.mean() < 0.5).pow(2).mean()
            report = check.compare(loss)  # every rank, before backward()
            loss.backward()
        if rank == 0 and step == 0:
            print(report, flush=True)
        grad = model.module.aux.weight.grad
        print(f"step {step}, rank {rank}: no gradient before the all-reduce: "
              f"{check.no_grad or 'none'}; aux.weight.grad after it: "
              f"{'None' if grad is None else f'norm {grad.norm():.3g}'}", flush=True)
        optimizer.step()


def finish() -> None:
    """Free DDP's reducer while gloo still runs, wait for the other rank, then tear down.

    DDP's constructor leaves its model in a reference cycle (frames of a lazy import
    inside torch), so only the cyclic GC frees it.  Freed at interpreter exit, after
    ``destroy_process_group``, gloo's threads may abort the process ("terminate called
    without an active exception").
    """
    gc.collect()
    dist.barrier()  # both ranks done before either tears gloo down
    dist.destroy_process_group()


def spawned(rank: int, world: int, port: int) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    train(rank, world)
    finish()


if __name__ == "__main__":
    if "RANK" in os.environ:  # under torchrun
        dist.init_process_group("gloo")
        train(dist.get_rank(), dist.get_world_size())
        finish()
    else:
        with socket.socket() as probe:  # a free port on this machine only
            probe.bind(("127.0.0.1", 0))
            free = probe.getsockname()[1]
        mp.spawn(spawned, args=(2, free), nprocs=2)
