"""Audit of issue 3: "loading a file from elsewhere cannot execute anything".

Each hostile file carries a pickle whose unpickling would create a marker file; loading
must fail with a clear ValueError and the marker must never appear.
"""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pytest

import vizgrad


class _Payload:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))  # runs on unpickling: creates the marker


def _hostile_files(tmp_path, marker: str) -> dict[str, object]:
    payload = pickle.dumps(_Payload(marker))
    raw = tmp_path / "raw_pickle.npz"
    raw.write_bytes(payload)

    member = tmp_path / "pickle_member.npz"
    with zipfile.ZipFile(member, "w") as archive:
        archive.writestr("weight.pkl", payload)

    buffer = io.BytesIO()
    np.save(buffer, np.array([_Payload(marker)], dtype=object), allow_pickle=True)
    object_npy = tmp_path / "object_npy.npz"
    with zipfile.ZipFile(object_npy, "w") as archive:
        archive.writestr("weight.npy", buffer.getvalue())

    # A vizgrad checkpoint whose manifest is fine but one array is a pickled object.
    vizgrad.save({"w": vizgrad.ones(2)}, tmp_path / "good.npz")
    doctored = tmp_path / "doctored.npz"
    with zipfile.ZipFile(tmp_path / "good.npz") as good, \
            zipfile.ZipFile(doctored, "w") as archive:
        for name in good.namelist():
            data = buffer.getvalue() if name == "a0.npy" else good.read(name)
            archive.writestr(name, data)
    return {"raw": raw, "member": member, "object_npy": object_npy, "doctored": doctored}


@pytest.mark.parametrize("kind", ["raw", "member", "object_npy", "doctored"])
def test_hostile_files_are_refused_without_running_anything(tmp_path, kind):
    marker = tmp_path / "executed"
    path = _hostile_files(tmp_path, str(marker))[kind]
    with pytest.raises(ValueError):
        vizgrad.load(path)
    assert not marker.exists(), "loading a checkpoint executed code"


def test_the_good_checkpoint_still_loads(tmp_path):
    _hostile_files(tmp_path, str(tmp_path / "executed"))
    loaded = vizgrad.load(tmp_path / "good.npz")
    np.testing.assert_array_equal(loaded["w"].numpy(), np.ones(2, dtype=np.float32))
