"""``vizgrad.utils.data``: Dataset, TensorDataset, DataLoader as PyTorch documents them."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import vizgrad as vg
from vizgrad.utils.data import DataLoader, Dataset, TensorDataset, default_collate, random_split


def _datasets():
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    y = np.arange(10)
    return (TensorDataset(vg.tensor(x), vg.tensor(y)),
            tdata.TensorDataset(torch.tensor(x), torch.tensor(y)))


@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (3, False), (3, True), (10, True),
                                                   (4, False)])
def test_unshuffled_batches_match_torch(batch_size, drop_last):
    ours, theirs = _datasets()
    vloader = DataLoader(ours, batch_size=batch_size, drop_last=drop_last)
    tloader = tdata.DataLoader(theirs, batch_size=batch_size, drop_last=drop_last)
    assert len(vloader) == len(tloader)
    batches = list(vloader)
    assert len(batches) == len(list(tloader))
    for (vx, vy), (tx, ty) in zip(batches, tloader):
        np.testing.assert_array_equal(vx.numpy(), tx.numpy())
        assert vy.tolist() == ty.tolist() and vy.dtype == np.int64


def test_shuffle_is_a_seeded_permutation():
    ours, _ = _datasets()
    first = [y.tolist() for _, y in DataLoader(ours, batch_size=4, shuffle=True,
                                                generator=vg.Generator().manual_seed(3))]
    again = [y.tolist() for _, y in DataLoader(ours, batch_size=4, shuffle=True,
                                                generator=vg.Generator().manual_seed(3))]
    assert first == again
    assert sorted(v for batch in first for v in batch) == list(range(10))
    assert first != [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    vg.manual_seed(1)
    global_order = [y.tolist() for _, y in DataLoader(ours, batch_size=10, shuffle=True)]
    vg.manual_seed(1)
    assert global_order == [y.tolist() for _, y in DataLoader(ours, batch_size=10,
                                                              shuffle=True)]


def test_custom_dataset_and_collate_fn():
    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, index):
            return {"x": np.full(2, index, dtype=np.float32), "y": index * index}

    batches = list(DataLoader(Squares(), batch_size=2))
    assert [b["y"].tolist() for b in batches] == [[0, 1], [4, 9], [16]]
    assert batches[0]["x"].shape == (2, 2)
    lengths = list(DataLoader(Squares(), batch_size=2, collate_fn=len))
    assert lengths == [2, 2, 1]
    with pytest.raises(NotImplementedError):
        Dataset()[0]
    with pytest.raises(ValueError, match="same first dimension"):
        TensorDataset(vg.zeros(3), vg.zeros(4))
    assert default_collate([(1.0, "a"), (2.0, "b")])[1] == ["a", "b"]


def test_random_split_partitions_the_dataset():
    ours, _ = _datasets()
    train, test = random_split(ours, [0.8, 0.2], generator=vg.Generator().manual_seed(0))
    assert len(train) == 8 and len(test) == 2
    seen = sorted(int(train[i][1]) for i in range(8)) + [int(test[i][1]) for i in range(2)]
    assert sorted(seen) == list(range(10))
    with pytest.raises(ValueError, match="sum to"):
        random_split(ours, [3, 3])
