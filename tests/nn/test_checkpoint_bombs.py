"""Issue 26, point 5: a small file cannot make ``vizgrad.load`` allocate what it declares.

``vizgrad.save`` stores every member as it is (never compressed), so with the default
``max_bytes`` a member that is compressed, or whose declared size is more than the file
holds for it, is refused before anything is allocated; ``max_bytes=None`` (a file you
trust) still reads compressed archives.  Legitimate checkpoints load as before.
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest

import vizgrad

GIB = 2**30


def _npy(array_or_header) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array_or_header)
    return buffer.getvalue()


def _header(count: int) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": "<f4", "fortran_order": False, "shape": (count,)})
    return buffer.getvalue()


def _forged(path, declared: int, method: int) -> None:
    """A checkpoint of one float32 array whose .npy header and zip directory declare
    ``declared`` bytes of data while the file holds 4 KiB of it: the zip sizes are
    patched after writing, as a forger would (no gigabyte is ever compressed here)."""
    header = _header(declared // 4)
    manifest = json.dumps({"format": 1, "root": {"t": "tensor", "ref": "a0"}})
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("__vizgrad__.npy", _npy(np.array(manifest)))
        archive.writestr("a0.npy", header + bytes(4096), compress_type=method)
    raw = bytearray(path.read_bytes())
    size = len(header) + declared
    name = b"a0.npy"
    local = raw.find(b"PK\x03\x04")
    while raw[local + 30:local + 30 + len(name)] != name:
        local = raw.find(b"PK\x03\x04", local + 1)
    central = raw.find(b"PK\x01\x02")
    while raw[central + 46:central + 46 + len(name)] != name:
        central = raw.find(b"PK\x01\x02", central + 1)
    struct.pack_into("<I", raw, local + 22, size)
    struct.pack_into("<I", raw, central + 24, size)
    if method == zipfile.ZIP_STORED:  # a stored member's two sizes agree: both lie
        struct.pack_into("<I", raw, local + 18, size)
        struct.pack_into("<I", raw, central + 20, size)
    path.write_bytes(bytes(raw))


def _peak(call) -> int:
    tracemalloc.start()
    try:
        call()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize("method, expected", [
    (zipfile.ZIP_DEFLATED, "is compressed"),
    (zipfile.ZIP_STORED, "declares .* bytes but the file stores at most")])
def test_a_small_file_declaring_a_gigabyte_is_refused_before_allocating(tmp_path, method,
                                                                        expected):
    path = tmp_path / "bomb.npz"
    _forged(path, GIB, method)  # under the 4 GiB default: max_bytes alone lets it by
    assert os.path.getsize(path) < 16 * 1024
    errors = []

    def load():
        with pytest.raises(vizgrad.CheckpointError) as caught:
            vizgrad.load(path)
        errors.append(str(caught.value))

    assert _peak(load) < 8 << 20  # nothing near the declared gigabyte was allocated
    message = errors[0]
    assert message.startswith(f"{path}: entry 'a0'")
    assert re.search(expected, message), message
    assert "max_bytes=None" in message


def test_a_compressed_archive_loads_only_when_trusted(tmp_path):
    path = tmp_path / "compressed.npz"
    np.savez_compressed(path, w=np.arange(10.0))
    with pytest.raises(vizgrad.CheckpointError, match="'w' is compressed.*max_bytes=None"):
        vizgrad.load(path)
    np.testing.assert_array_equal(vizgrad.load(path, max_bytes=None)["w"].numpy(),
                                  np.arange(10.0))


DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def test_every_legitimate_checkpoint_still_loads(tmp_path):
    rng = np.random.default_rng(0)
    arrays = {name: (rng.standard_normal((3, 5)) * 100).astype(name) for name in DTYPES}
    arrays.update({
        "scalar": np.array(2.5), "empty": np.zeros((0, 3), np.float32),
        "fortran": np.asfortranarray(rng.standard_normal((4, 6))),
        "large": rng.standard_normal(3 * 2**17),  # 3 MiB: read in several chunks
    })
    state = {"arrays": arrays, "tensor": vizgrad.ones(2, 2), "epoch": 3}
    vizgrad.save(state, tmp_path / "ckpt.npz")
    loaded = vizgrad.load(tmp_path / "ckpt.npz")
    for name, array in arrays.items():
        got = loaded["arrays"][name]
        assert got.dtype == array.dtype and got.shape == array.shape, name
        np.testing.assert_array_equal(got, array, err_msg=name)
    np.testing.assert_array_equal(loaded["tensor"].numpy(), np.ones((2, 2), np.float32))
    assert loaded["epoch"] == 3
    np.savez(tmp_path / "plain.npz", **{k: v for k, v in arrays.items() if k != "fortran"})
    plain = vizgrad.load(tmp_path / "plain.npz")
    np.testing.assert_array_equal(plain["large"].numpy(), arrays["large"])
