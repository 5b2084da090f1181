"""Which rank of a distributed run this process is, and its own file names.

Under ``torchrun`` (or any launcher that sets ``RANK`` and ``WORLD_SIZE``), or once a
``torch.distributed`` process group is initialized, every rank runs the same code: a
file name written by all of them must differ per rank, or the ranks overwrite each
other.  torch is never imported here: a program that has not imported it has no
process group.

Example
-------
>>> rank_path("graph.svg", (1, 2))
PosixPath('graph.rank1.svg')
>>> rank_path("graph.{rank}.svg", (1, 2))
PosixPath('graph.1.svg')
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def rank_info() -> tuple[int, int] | None:
    """``(rank, world_size)`` when this process is one of several ranks, else None.

    An initialized process group is asked first; else the launcher's environment
    (``RANK``, ``WORLD_SIZE``), before the program has initialized its group.
    """
    torch = sys.modules.get("torch")
    distributed = getattr(torch, "distributed", None) if torch is not None else None
    try:
        if distributed is not None and distributed.is_available() \
                and distributed.is_initialized():
            world = distributed.get_world_size()
            return (distributed.get_rank(), world) if world > 1 else None
    except (RuntimeError, ValueError):  # a group being torn down: the environment says
        pass
    try:
        world = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
    except ValueError:
        return None
    return (rank, world) if world > 1 else None


def rank_path(path: str | os.PathLike, info: tuple[int, int] | None) -> Path:
    """``path`` for this rank: ``{rank}`` in it is replaced by the rank; else, under
    several ranks, ``.rank<N>`` goes before the suffix (``graph.rank1.svg``).  A
    single process keeps ``path`` (``{rank}`` becomes 0)."""
    text = os.fspath(path)
    rank = info[0] if info is not None else 0
    if "{rank}" in text:
        return Path(text.replace("{rank}", str(rank)))
    if info is None:
        return Path(text)
    plain = Path(text)
    return plain.with_name(f"{plain.stem}.rank{rank}{plain.suffix}")
