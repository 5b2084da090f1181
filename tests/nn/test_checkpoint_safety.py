"""Issue 9, points 11-13: checkpoint files under bad input.

A killed save's temp file is cleaned by the next save and files get the umask's mode;
load reads only referenced members and checks declared sizes before reading; every
malformed file gives one CheckpointError naming the file.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import re
import subprocess
import sys
import time
import tracemalloc
import zipfile

import numpy as np
import pytest

import vizgrad
from vizgrad import _checkpoint_files as files
from vizgrad.serialization import MAX_DEPTH

# -- point 11: permissions and temp files of killed saves ---------------------------------


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_save_respects_the_umask_and_keeps_an_existing_mode(tmp_path, umask):
    old = os.umask(umask)
    try:
        vizgrad.save({"w": vizgrad.ones(2)}, tmp_path / "new.npz")
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "new.npz").st_mode & 0o777 == 0o666 & ~umask
    os.chmod(tmp_path / "new.npz", 0o640)
    vizgrad.save({"w": vizgrad.zeros(2)}, tmp_path / "new.npz")
    assert os.stat(tmp_path / "new.npz").st_mode & 0o777 == 0o640


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.skipif(os.name != "posix", reason="the owner's PID is checked on POSIX only")
def test_save_removes_only_stale_temp_files_of_its_own_naming(tmp_path):
    host = files._host()
    other = "f" * 8 if host != "f" * 8 else "e" * 8
    names = {
        "dead": f".vizgrad-{host}-{_dead_pid()}-0123abcd.npz.tmp",
        "running": f".vizgrad-{host}-{os.getpid()}-0123abcd.npz.tmp",  # a concurrent save
        "other_host_fresh": f".vizgrad-{other}-1-00000000.npz.tmp",
        "legacy_old": ".vizgrad-k3j_9zq2.npz.tmp",
        "legacy_fresh": ".vizgrad-a1b2c3d4.npz.tmp",
        "user_file": ".vizgrad-notes.npz.tmp",
        "user_tmp": "model.npz.tmp",
    }
    for name in names.values():
        (tmp_path / name).write_bytes(b"x" * 100)
    hours_ago = time.time() - 2 * 3600
    os.utime(tmp_path / names["legacy_old"], (hours_ago, hours_ago))
    vizgrad.save({"w": vizgrad.ones(2)}, tmp_path / "ckpt.npz")
    left = set(os.listdir(tmp_path))
    assert names["dead"] not in left and names["legacy_old"] not in left
    kept = {k for k, name in names.items() if name in left}
    assert kept == {"running", "other_host_fresh", "legacy_fresh", "user_file", "user_tmp"}


_SLOW_SAVE = """
import os, sys, time
import vizgrad
def stall(fd):  # the checkpoint is fully written: hang before the rename
    print("ready", flush=True)
    time.sleep(60)
os.fsync = stall
vizgrad.save({"w": vizgrad.ones(256, 256)}, sys.argv[1])
"""


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
def test_a_killed_save_leaves_a_temp_file_that_the_next_save_removes(tmp_path):
    import signal

    target = tmp_path / "ckpt.npz"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(vizgrad.__file__)), os.environ.get("PYTHONPATH", "")]))
    child = subprocess.Popen([sys.executable, "-c", _SLOW_SAVE, str(target)],
                             stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
        child.stdout.close()
    leftovers = [name for name in os.listdir(tmp_path) if name.endswith(".npz.tmp")]
    assert len(leftovers) == 1 and not target.exists()
    assert os.path.getsize(tmp_path / leftovers[0]) > 256 * 256 * 4  # the whole checkpoint
    vizgrad.save({"w": vizgrad.zeros(2)}, target)
    assert os.listdir(tmp_path) == ["ckpt.npz"]


# -- point 12: sizes are checked before reading; unreferenced members are never read ----


def _npy_header(shape, dtype="<f4") -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def _checkpoint(path, root, members: dict[str, bytes], manifest: str | None = None):
    """A hand-made checkpoint: ``members`` are raw ``name -> bytes``, stored as
    ``vizgrad.save`` stores them (a compressed member is refused: test_checkpoint_bombs)."""
    text = manifest if manifest is not None else json.dumps({"format": 1, "root": root})
    buffer = io.BytesIO()
    np.save(buffer, np.array(text))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("__vizgrad__.npy", buffer.getvalue())
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _zeros_bomb(path, declared_shape, real_bytes, name="a0.npy"):
    """A member whose .npy header declares ``declared_shape`` float32 but that holds only
    ``real_bytes`` zeros (deflate shrinks them ~1000 times)."""
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as archive:
        with archive.open(name, "w") as member:
            member.write(_npy_header(declared_shape))
            chunk = bytes(1 << 20)
            for start in range(0, real_bytes, len(chunk)):
                member.write(chunk[:real_bytes - start])


def _peak_bytes(call):
    tracemalloc.start()
    try:
        call()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_a_header_declaring_gigabytes_is_refused_before_allocating(tmp_path):
    path = _checkpoint(tmp_path / "bomb.npz", {"t": "tensor", "ref": "a0"}, {})
    _zeros_bomb(path, (2**31,), 1 << 20)  # declares 8 GiB, a 1 MiB member, ~1 KB of file
    assert os.path.getsize(path) < 64 * 1024
    errors = []

    def load():
        with pytest.raises(vizgrad.CheckpointError, match="max_bytes") as error:
            vizgrad.load(path)
        errors.append(str(error.value))

    assert _peak_bytes(load) < 8 << 20
    assert str(path) in errors[0] and "a0" in errors[0]


def test_the_zip_directory_size_is_checked_against_max_bytes(tmp_path):
    path = _checkpoint(tmp_path / "zeros.npz", {"t": "tensor", "ref": "a0"}, {})
    _zeros_bomb(path, (2**22,), 2**24)  # an honest 16 MiB of zeros
    with pytest.raises(vizgrad.CheckpointError, match="zip directory"):
        vizgrad.load(path, max_bytes=2**20)
    peak = _peak_bytes(lambda: vizgrad.load(path, max_bytes=None))
    assert peak < 2**24 + (8 << 20)  # the array itself, read once into its own buffer


def test_a_header_larger_than_its_member_is_truncated_not_allocated(tmp_path):
    path = _checkpoint(tmp_path / "short.npz", {"t": "tensor", "ref": "a0"}, {})
    _zeros_bomb(path, (2**26,), 1 << 20)  # declares 256 MiB (under the cap), holds 1 MiB
    errors = []
    peak = _peak_bytes(lambda: errors.append(pytest.raises(
        vizgrad.CheckpointError, vizgrad.load, path)))
    assert peak < 8 << 20 and "truncated" in str(errors[0].value)


def test_members_the_manifest_does_not_reference_are_never_read(tmp_path):
    data = io.BytesIO()
    np.save(data, np.arange(3, dtype=np.float32))
    path = _checkpoint(tmp_path / "extra.npz", {"t": "dict", "items": [
        [{"t": "value", "v": "w"}, {"t": "tensor", "ref": "a0"}]]},
        {"a0.npy": data.getvalue(), "evil.pkl": pickle.dumps({"x": 1})})
    _zeros_bomb(path, (2**31,), 1 << 20, name="junk.npy")
    loaded = {}
    assert _peak_bytes(lambda: loaded.update(vizgrad.load(path))) < 8 << 20
    np.testing.assert_array_equal(loaded["w"].numpy(), np.arange(3, dtype=np.float32))


def test_max_bytes_limits_the_total_and_can_be_raised(tmp_path):
    path = tmp_path / "ckpt.npz"
    vizgrad.save({"a": vizgrad.ones(1000), "b": vizgrad.ones(1000)}, path)
    with pytest.raises(vizgrad.CheckpointError, match=r"max_bytes=6000.*larger max_bytes="):
        vizgrad.load(path, max_bytes=6000)  # each array fits, both together don't
    assert vizgrad.load(path, max_bytes=10_000)["b"].shape == (1000,)
    assert vizgrad.load(path, max_bytes=None)["a"].shape == (1000,)
    with pytest.raises(ValueError, match="max_bytes"):
        vizgrad.load(path, max_bytes=-1)


# -- point 13: one clear CheckpointError per malformed kind -------------------------------

_REF = {"t": "tensor", "ref": "a0"}


def _good_member() -> bytes:
    data = io.BytesIO()
    np.save(data, np.ones(4, dtype=np.float32))
    return data.getvalue()


def _deep(levels: int) -> str:
    return ('{"format": 1, "root": ' + '{"t": "list", "items": [' * levels
            + "]}" * levels + "}")


def _malformed(kind: str, path) -> None:
    good = {"a0.npy": _good_member()}
    if kind == "missing_member":
        _checkpoint(path, {"t": "tensor", "ref": "zzz"}, good)
    elif kind == "manifest_is_a_list":
        _checkpoint(path, None, good, manifest="[1, 2]")
    elif kind == "json_too_deep":
        _checkpoint(path, None, good, manifest=_deep(100_000))
    elif kind == "nesting_over_the_cap":
        _checkpoint(path, None, good, manifest=_deep(MAX_DEPTH + 5))
    elif kind == "unknown_entry_kind":
        _checkpoint(path, {"t": "zzz"}, good)
    elif kind == "entry_not_an_object":
        _checkpoint(path, {"t": "list", "items": [[1]]}, good)
    elif kind == "bad_dict_items":
        _checkpoint(path, {"t": "dict", "items": [[_REF]]}, good)
    elif kind == "unhashable_key":
        _checkpoint(path, {"t": "dict", "items": [[{"t": "list", "items": []}, _REF]]}, good)
    elif kind == "invalid_json":
        _checkpoint(path, None, good, manifest="{not json")
    elif kind == "future_format":
        _checkpoint(path, None, good, manifest='{"format": 99, "root": null}')
    elif kind == "manifest_not_a_string":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("__vizgrad__.npy", _good_member())
    elif kind == "npy_file":
        with open(path, "wb") as file:
            np.save(file, np.ones(3))
    elif kind == "random_bytes":
        path.write_bytes(np.random.default_rng(0).bytes(4096))
    elif kind == "empty_file":
        path.write_bytes(b"")
    elif kind == "member_not_npy":
        _checkpoint(path, _REF, {"a0.npy": b"hello, not an array"})
    elif kind == "truncated_member":
        _checkpoint(path, _REF, {"a0.npy": _good_member()[:-3]})
    elif kind == "object_member":
        data = io.BytesIO()
        np.save(data, np.array([None], dtype=object), allow_pickle=True)
        _checkpoint(path, _REF, {"a0.npy": data.getvalue()})
    elif kind == "torch_file":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("archive/data.pkl", pickle.dumps({"w": 1}))
    else:
        raise AssertionError(kind)


MALFORMED = ["missing_member", "manifest_is_a_list", "json_too_deep", "nesting_over_the_cap",
             "unknown_entry_kind", "entry_not_an_object", "bad_dict_items", "unhashable_key",
             "invalid_json", "future_format", "manifest_not_a_string", "npy_file",
             "random_bytes", "empty_file", "member_not_npy", "truncated_member",
             "object_member", "torch_file"]
EXPECTED = {"missing_member": "'zzz'", "json_too_deep": "nests too deeply",
            "nesting_over_the_cap": f"deeper than {MAX_DEPTH}", "npy_file": r"\.npy",
            "random_bytes": "not a .npz", "empty_file": "not a .npz", "torch_file": "PyTorch",
            "truncated_member": "truncated", "object_member": "pickle",
            "future_format": "format 99", "unknown_entry_kind": "'zzz'"}


@pytest.mark.parametrize("kind", MALFORMED)
def test_each_malformed_checkpoint_gives_one_clear_error(tmp_path, kind):
    path = tmp_path / f"{kind}.npz"
    _malformed(kind, path)
    with pytest.raises(vizgrad.CheckpointError) as error:
        vizgrad.load(path)
    message = str(error.value)
    assert message.startswith(str(path) + ": ")
    assert "allow_pickle=True" not in message
    assert re.search(EXPECTED.get(kind, "."), message), message
    assert isinstance(error.value, ValueError)


def test_nesting_up_to_the_cap_round_trips_and_deeper_is_refused_at_save(tmp_path):
    deep: dict = {"leaf": vizgrad.ones(1)}
    for _ in range(MAX_DEPTH - 1):
        deep = {"k": deep}  # dicts nest deepest in the JSON manifest (4 levels each)
    vizgrad.save(deep, tmp_path / "deep.npz")
    loaded = vizgrad.load(tmp_path / "deep.npz")
    for _ in range(MAX_DEPTH - 1):
        loaded = loaded["k"]
    np.testing.assert_array_equal(loaded["leaf"].numpy(), np.ones(1, dtype=np.float32))
    with pytest.raises(ValueError, match="nested deeper"):
        vizgrad.save({"k": deep}, tmp_path / "too_deep.npz")
    looped: list = []
    looped.append(looped)
    with pytest.raises(ValueError, match="nested deeper"):
        vizgrad.save(looped, tmp_path / "loop.npz")
    assert sorted(os.listdir(tmp_path)) == ["deep.npz"]
