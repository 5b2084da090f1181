"""Checkpoints: ``vizgrad.save`` / ``vizgrad.load`` of (nested) state dicts as ``.npz``.

The file is a plain NumPy archive: every array is one entry, and one more entry,
``__vizgrad__``, holds a JSON description of the nesting (dicts, lists, tuples,
numbers, strings, None). Loading uses ``allow_pickle=False``, so opening a file from
someone else can never execute code. Writes go to a temporary file in the same
folder that is then renamed over the target, so a crash never leaves half a file.

Example
-------
>>> vizgrad.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3},
...              "ckpt.npz")
>>> checkpoint = vizgrad.load("ckpt.npz")
>>> model.load_state_dict(checkpoint["model"])
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import numpy as np

from .core import backend
from .core.tensor import Tensor

_MANIFEST = "__vizgrad__"
_FORMAT = 1


def _encode(value: Any, arrays: dict[str, np.ndarray]) -> Any:
    if isinstance(value, Tensor) or backend.is_array(value):
        array = backend.to_numpy(value.data if isinstance(value, Tensor) else value)
        if array.dtype.kind == "O":
            raise TypeError("cannot save an object array (it would need pickle)")
        key = f"a{len(arrays)}"
        arrays[key] = array
        return {"t": "tensor" if isinstance(value, Tensor) else "ndarray", "ref": key}
    if isinstance(value, dict):
        return {"t": "dict", "items": [[_encode(k, arrays), _encode(v, arrays)]
                                       for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return {"t": type(value).__name__ if type(value) in (list, tuple) else "list",
                "items": [_encode(v, arrays) for v in value]}
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"t": "value", "v": value}
    raise TypeError(f"vizgrad.save cannot store a {type(value).__name__}; checkpoints hold "
                    "tensors, arrays, numbers, strings, None and dicts/lists/tuples of them")


def _decode(node: Any, archive: Any) -> Any:
    kind = node["t"]
    if kind == "tensor":
        return Tensor._make(archive[node["ref"]])
    if kind == "ndarray":
        return archive[node["ref"]]
    if kind == "dict":
        return {_decode(k, archive): _decode(v, archive) for k, v in node["items"]}
    if kind in ("list", "tuple"):
        items = [_decode(v, archive) for v in node["items"]]
        return tuple(items) if kind == "tuple" else items
    if kind == "value":
        return node["v"]
    raise ValueError(f"unknown entry kind {kind!r} in the checkpoint")


def save(obj: Any, path: str | os.PathLike) -> None:
    """Write ``obj`` (a state dict, or nested dicts/lists of tensors and numbers) to ``path``.

    The write is atomic: the file at ``path`` is either the old one or the new one.
    """
    arrays: dict[str, np.ndarray] = {}
    manifest = {"format": _FORMAT, "root": _encode(obj, arrays)}
    arrays[_MANIFEST] = np.array(json.dumps(manifest))
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".vizgrad-", suffix=".npz.tmp", dir=folder)
    try:
        with os.fdopen(handle, "wb") as file:
            np.savez(file, **arrays)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def load(path: str | os.PathLike) -> Any:
    """Read a checkpoint written by ``vizgrad.save`` (tensors come back on the CPU).

    A plain ``.npz`` without vizgrad's manifest loads as a dict of tensors.
    """
    with np.load(os.fspath(path), allow_pickle=False) as archive:
        if _MANIFEST not in archive.files:
            return {key: Tensor._make(_array(archive, key, path)) for key in archive.files}
        try:
            manifest = json.loads(str(archive[_MANIFEST]))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: the checkpoint's manifest is not valid JSON") from error
        if manifest.get("format") != _FORMAT:
            raise ValueError(f"{path}: unsupported checkpoint format {manifest.get('format')!r}")
        arrays = {key: _array(archive, key, path) for key in archive.files if key != _MANIFEST}
        return _decode(manifest["root"], arrays)


def _array(archive: Any, key: str, path: Any) -> np.ndarray:
    # A zip member that is not a ``.npy`` comes back from np.load as raw bytes.
    value = archive[key]
    if not isinstance(value, np.ndarray):
        raise ValueError(f"{path}: entry {key!r} is not a NumPy array, so this is not a "
                         "checkpoint vizgrad can read")
    return value
