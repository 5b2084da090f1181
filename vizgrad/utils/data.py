"""``Dataset``, ``TensorDataset``, ``DataLoader``: PyTorch's data-loading names.

Batches are drawn in the main process (no workers). Shuffling uses ``generator``
when given (a ``vizgrad.Generator`` or a NumPy ``Generator``), else vizgrad's global
generator, so ``vizgrad.manual_seed`` makes the order reproducible.

Example
-------
>>> data = TensorDataset(vizgrad.randn(10, 3), vizgrad.arange(10))
>>> for x, y in DataLoader(data, batch_size=4, shuffle=True):
...     pass
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..core.factory import generator as _global_generator
from ..core.factory import tensor as _tensor
from ..core.tensor import Tensor
from ..ops.join import stack

__all__ = ["DataLoader", "Dataset", "Subset", "TensorDataset", "default_collate",
           "random_split"]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and ``__len__()``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError("a Dataset subclass must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError("a Dataset subclass must define __len__")


class TensorDataset(Dataset):
    """Samples are the ``index``-th rows of each tensor (all of the same length).

    Example
    -------
    >>> x, y = TensorDataset(vizgrad.randn(5, 2), vizgrad.zeros(5))[0]
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        if any(len(t) != len(tensors[0]) for t in tensors):
            raise ValueError("TensorDataset: every tensor needs the same first dimension, got "
                             f"{[t.shape[0] for t in tensors]}")
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return len(self.tensors[0])


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def _rng(generator: Any) -> np.random.Generator:
    if generator is None:
        return _global_generator()
    return getattr(generator, "rng", generator)


def random_split(dataset: Dataset, lengths: Sequence[float], generator: Any = None) -> list:
    """Split into non-overlapping random subsets of the given lengths (or fractions).

    Example
    -------
    >>> data = TensorDataset(vizgrad.randn(10, 3), vizgrad.arange(10))
    >>> train, test = random_split(data, [0.8, 0.2])
    >>> len(train), len(test)
    (8, 2)
    """
    total = len(dataset)
    if all(0 <= f <= 1 for f in lengths) and abs(sum(lengths) - 1) < 1e-9 \
            and sum(lengths) != total:
        counts = [int(np.floor(total * f)) for f in lengths]
        for i in range(total - sum(counts)):  # torch: the remainder round-robin
            counts[i % len(counts)] += 1
    else:
        counts = [int(n) for n in lengths]
    if sum(counts) != total:
        raise ValueError(f"random_split: lengths sum to {sum(counts)}, the dataset has {total}")
    order = _rng(generator).permutation(total).tolist()
    out, start = [], 0
    for count in counts:
        out.append(Subset(dataset, order[start:start + count]))
        start += count
    return out


def default_collate(batch: list) -> Any:
    """Stack a list of samples into a batch, recursing into tuples, lists and dicts."""
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(batch, 0)
    if isinstance(first, np.ndarray):
        return _tensor(np.stack(batch), dtype=first.dtype)
    if isinstance(first, (bool, int, float, np.number)):
        return _tensor(np.asarray(batch))
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, (tuple, list)):
        if any(len(sample) != len(first) for sample in batch):
            raise RuntimeError("each element in the batch should be of equal size")
        columns = [default_collate(list(column)) for column in zip(*batch)]
        return tuple(columns) if isinstance(first, tuple) else columns
    raise TypeError(f"default_collate: don't know how to batch a {type(first).__name__}; "
                    "pass collate_fn=")


class DataLoader:
    """Iterate over ``dataset`` in batches.

    Example
    -------
    >>> data = TensorDataset(vizgrad.randn(100, 3), vizgrad.randn(100, 1))
    >>> model, loss_fn = vizgrad.nn.Linear(3, 1), vizgrad.nn.MSELoss()
    >>> loader = DataLoader(data, batch_size=32, shuffle=True, drop_last=True)
    >>> for inputs, targets in loader:
    ...     loss = loss_fn(model(inputs), targets)
    >>> len(loader), inputs.shape                 # 100 // 32 full batches
    (3, (32, 3))
    """

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool = False,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, generator: Any = None, **kwargs: Any) -> None:
        if batch_size is not None and batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer, got {batch_size}")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler and shuffle are mutually exclusive")
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.sampler, self.batch_sampler, self.drop_last = sampler, batch_sampler, drop_last
        self.num_workers = num_workers  # batches are always made in this process
        self.collate_fn = collate_fn or default_collate
        self.generator = generator

    def _indices(self) -> list:
        if self.sampler is not None:
            return list(self.sampler)
        if self.shuffle:
            return _rng(self.generator).permutation(len(self.dataset)).tolist()
        return list(range(len(self.dataset)))

    def _batches(self) -> Iterator[list]:
        if self.batch_sampler is not None:
            yield from self.batch_sampler
            return
        indices = self._indices()
        if self.batch_size is None:
            yield from ([i] for i in indices)
            return
        for start in range(0, len(indices), self.batch_size):
            chunk = indices[start:start + self.batch_size]
            if len(chunk) < self.batch_size and self.drop_last:
                return
            yield chunk

    def __iter__(self) -> Iterator[Any]:
        for chunk in self._batches():
            samples = [self.dataset[i] for i in chunk]
            yield samples[0] if self.batch_size is None and self.batch_sampler is None \
                else self.collate_fn(samples)

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        count = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return count
        return count // self.batch_size if self.drop_last else -(-count // self.batch_size)
