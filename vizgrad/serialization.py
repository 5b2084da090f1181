"""Checkpoints: ``vizgrad.save`` / ``vizgrad.load`` of (nested) state dicts as ``.npz``.

The file is a plain NumPy archive: every array is one entry, and one more entry,
``__vizgrad__``, holds a JSON description of the nesting (dicts, lists, tuples,
numbers, strings, None). Writes go to a temporary file in the same folder that is
then renamed over the target, so a crash never leaves half a file.

Safety rules for loading (a checkpoint from someone else is untrusted input):

* No pickle, ever: object arrays and non-``.npy`` members are refused, so opening a
  file can never execute code.
* Only the members the manifest refers to are read. Before any member is read, its
  size as declared in the zip directory and in its ``.npy`` header is checked against
  ``max_bytes`` (default ``DEFAULT_MAX_BYTES``, 4 GiB, for all arrays together), and
  against the file itself: ``save`` never compresses, so a member that is compressed,
  or that declares more bytes than the file stores for it, is not one ``save`` wrote
  and is refused before anything is allocated. So a small "zip bomb" cannot make
  ``load`` allocate gigabytes: what it allocates is bounded by the file's size. Pass
  a larger ``max_bytes=`` to load bigger files you trust, or ``None`` (no limit, and
  compressed members allowed: ``numpy.savez_compressed`` files).
* Nesting deeper than ``MAX_DEPTH`` levels is refused (saving too), and the manifest is
  walked without recursion.
* Anything malformed (not a zip, a ``.npy``, a bad manifest, a missing member, a
  truncated array) raises ``CheckpointError`` (a ``ValueError``) naming the file.

``save`` writes with the usual permissions (``0o666`` minus the umask; an existing
file's mode is kept). A temporary file left by a save that was killed is named
``.vizgrad-<host>-<pid>-<random>.npz.tmp``; the next save into that folder deletes
those whose process is gone (and older ones, over an hour untouched, it cannot check).

Example
-------
>>> model = vizgrad.nn.Linear(3, 2)
>>> opt = vizgrad.optim.Adam(model.parameters())
>>> vizgrad.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3},
...              "ckpt.npz")
>>> checkpoint = vizgrad.load("ckpt.npz")
>>> model.load_state_dict(checkpoint["model"])
IncompatibleKeys(missing_keys=[], unexpected_keys=[])
>>> checkpoint["epoch"]
3
"""

from __future__ import annotations

import json
import os
import zipfile
from typing import Any

import numpy as np

from . import _atomic as atomic
from . import _checkpoint_files as files
from .core import backend
from .core.tensor import Tensor

_MANIFEST = "__vizgrad__"
_FORMAT = 1
DEFAULT_MAX_BYTES = 4 * 2**30
MAX_DEPTH = 100  # dicts/lists/tuples inside each other; the JSON nests 4 deep per level
_KINDS = ("tensor", "ndarray", "dict", "list", "tuple", "value")


class CheckpointError(ValueError):
    """A file that ``vizgrad.load`` refuses: not a checkpoint, malformed, or too large."""


def _encode(root: Any, arrays: dict[str, np.ndarray]) -> Any:
    """The manifest node of ``root`` (arrays go to ``arrays``), built without recursion."""
    holder: list = [None]
    work: list[tuple[Any, list, int, int]] = [(root, holder, 0, 0)]
    while work:
        value, parent, slot, depth = work.pop()
        if depth >= MAX_DEPTH and isinstance(value, (dict, list, tuple)):
            raise ValueError(f"vizgrad.save: the object is nested deeper than {MAX_DEPTH} "
                             "levels (or contains itself)")
        if isinstance(value, Tensor) or backend.is_array(value):
            array = backend.to_numpy(value.array if isinstance(value, Tensor) else value)
            if array.dtype.hasobject:
                raise TypeError("cannot save an object array (it would need pickle)")
            key = f"a{len(arrays)}"
            arrays[key] = array
            node: Any = {"t": "tensor" if isinstance(value, Tensor) else "ndarray", "ref": key}
        elif isinstance(value, dict):
            pairs = [[None, None] for _ in value]
            node = {"t": "dict", "items": pairs}
            for pair, (k, v) in reversed(list(zip(pairs, value.items()))):
                work.append((v, pair, 1, depth + 1))
                work.append((k, pair, 0, depth + 1))
        elif isinstance(value, (list, tuple)):
            items = [None] * len(value)
            node = {"t": "tuple" if type(value) is tuple else "list", "items": items}
            work.extend((v, items, i, depth + 1) for i, v in reversed(list(enumerate(value))))
        else:
            if isinstance(value, np.generic):
                value = value.item()
            if not (value is None or isinstance(value, (bool, int, float, str))):
                raise TypeError(f"vizgrad.save cannot store a {type(value).__name__}; "
                                "checkpoints hold tensors, arrays, numbers, strings, None "
                                "and dicts/lists/tuples of them")
            node = {"t": "value", "v": value}
        parent[slot] = node
    return holder[0]


def _check_manifest(root: Any, where: str) -> list[str]:
    """Validate the manifest tree (iteratively, depth-capped); return the array refs."""
    refs: list[str] = []
    work = [(root, 0)]
    while work:
        node, depth = work.pop()
        kind = node.get("t") if isinstance(node, dict) else None
        if kind not in _KINDS:
            raise CheckpointError(f"{where}: the manifest has an entry that is not a "
                                  f"known kind ({_short(node)})")
        if depth >= MAX_DEPTH and kind in ("dict", "list", "tuple"):
            raise CheckpointError(f"{where}: the manifest nests deeper than {MAX_DEPTH} levels")
        if kind in ("tensor", "ndarray"):
            if not isinstance(node.get("ref"), str):
                raise CheckpointError(f"{where}: a manifest array entry has no name "
                                      f"({_short(node)})")
            refs.append(node["ref"])
        elif kind == "value":
            value = node.get("v")
            if not (value is None or isinstance(value, (bool, int, float, str))):
                raise CheckpointError(f"{where}: a manifest value is not a number, string "
                                      f"or null ({_short(node)})")
        else:
            items = node.get("items")
            if not isinstance(items, list) or kind == "dict" and not all(
                    isinstance(pair, list) and len(pair) == 2 for pair in items):
                raise CheckpointError(f"{where}: the manifest's {kind} entry has malformed "
                                      "items")
            children = [c for pair in items for c in pair] if kind == "dict" else items
            work.extend((child, depth + 1) for child in children)
    return refs


def _build(root: Any, arrays: dict[str, np.ndarray], where: str) -> Any:
    """Turn a checked manifest into Python objects, children before parents, no recursion."""
    values: list = []
    work: list[tuple[bool, Any]] = [(False, root)]
    while work:
        ready, node = work.pop()
        kind = node["t"]
        if kind == "value":
            values.append(node["v"])
        elif kind in ("tensor", "ndarray"):
            array = arrays[node["ref"]]
            values.append(Tensor.from_array(array) if kind == "tensor" else array)
        elif not ready:
            work.append((True, node))
            children = [c for pair in node["items"] for c in pair] \
                if kind == "dict" else node["items"]
            work.extend((False, child) for child in reversed(children))
        else:
            count = len(node["items"]) * (2 if kind == "dict" else 1)
            items = values[len(values) - count:]
            del values[len(values) - count:]
            if kind == "dict":
                try:
                    values.append(dict(zip(items[::2], items[1::2])))
                except TypeError as error:
                    raise CheckpointError(f"{where}: the manifest has a dict key that "
                                          f"cannot be a key ({error})") from None
            else:
                values.append(tuple(items) if kind == "tuple" else items)
    return values[0]


def _short(node: Any) -> str:
    text = repr(node)
    return text if len(text) <= 80 else text[:77] + "..."


def save(obj: Any, path: str | os.PathLike) -> None:
    """Write ``obj`` (a state dict, or nested dicts/lists of tensors and numbers) to ``path``.

    The write is atomic: the file at ``path`` is either the old one or the new one. The
    file gets ``0o666`` minus the umask (an existing file keeps its mode), and stale
    temporary files of killed saves into the same folder are removed.

    Example
    -------
    >>> model = vizgrad.nn.Linear(3, 2)
    >>> vizgrad.save({"model": model.state_dict(), "epoch": 3}, "ckpt.npz")
    """
    arrays: dict[str, np.ndarray] = {}
    manifest = {"format": _FORMAT, "root": _encode(obj, arrays)}
    arrays[_MANIFEST] = np.array(json.dumps(manifest))
    path = os.fspath(path)
    atomic.check_target(path)
    folder = os.path.dirname(os.path.abspath(path))
    files.remove_stale_temporaries(folder)
    try:
        handle, temporary = files.create_temporary(folder)
    except OSError as error:  # no such folder, no permission: say so about the target
        raise atomic.target_error(path, error) from None
    try:
        with os.fdopen(handle, "wb") as file:
            np.savez(file, **arrays)  # type: ignore[arg-type]  # numpy stubs: allow_pickle
            file.flush()
            os.fsync(file.fileno())
        files.keep_mode(path, temporary)
    except BaseException:
        atomic.discard(temporary)
        raise
    atomic.replace(temporary, path)


def load(path: str | os.PathLike, *, max_bytes: int | None = DEFAULT_MAX_BYTES) -> Any:
    """Read a checkpoint written by ``vizgrad.save`` (tensors come back on the CPU).

    A plain ``.npz`` without vizgrad's manifest loads as a dict of tensors. Raises
    ``CheckpointError`` (a ``ValueError``) for anything that is not a well-formed
    checkpoint, when its arrays would take more than ``max_bytes`` bytes of memory
    (checked from the file's declared sizes before reading), and when a member is
    compressed or declares more than the file stores for it (``save`` never writes
    such a file). ``max_bytes=None``: no limit, compressed members allowed.

    Example
    -------
    >>> vizgrad.save({"w": vizgrad.ones(2, 3)}, "ckpt.npz")
    >>> state = vizgrad.load("ckpt.npz")                        # up to 4 GiB of arrays
    >>> state["w"].shape
    (2, 3)
    >>> big = vizgrad.load("ckpt.npz", max_bytes=64 * 2**30)    # a larger file you trust
    >>> vizgrad.load("ckpt.npz", max_bytes=16)                  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    vizgrad.serialization.CheckpointError: ...
    """
    where = os.fspath(path)
    with files.open_archive(where, CheckpointError) as archive:
        reader = files.MemberReader(archive, where, max_bytes, CheckpointError)
        names = set(archive.namelist())
        if _MANIFEST + ".npy" not in names:
            keys = _plain_keys(archive, where)
            reader.check_sizes(keys)
            return {key: Tensor.from_array(reader.read(key)) for key in keys}
        manifest = reader.read(_MANIFEST)
        if manifest.dtype.kind != "U" or manifest.shape != ():
            raise CheckpointError(f"{where}: the checkpoint's manifest is not a string")
        try:
            manifest = json.loads(str(manifest[()]))
        except json.JSONDecodeError as error:
            raise CheckpointError(f"{where}: the checkpoint's manifest is not valid JSON "
                                  f"({error})") from None
        except RecursionError:
            raise CheckpointError(f"{where}: the checkpoint's manifest nests too deeply "
                                  "to read") from None
        if not isinstance(manifest, dict) or "root" not in manifest:
            raise CheckpointError(f"{where}: the checkpoint's manifest is not a vizgrad "
                                  "manifest (expected an object with 'format' and 'root')")
        if manifest.get("format") != _FORMAT:
            raise CheckpointError(f"{where}: unsupported checkpoint format "
                                  f"{manifest.get('format')!r} (this vizgrad reads {_FORMAT})")
        refs = _check_manifest(manifest["root"], where)
        absent = sorted({ref for ref in refs if ref + ".npy" not in names})
        if absent:
            raise CheckpointError(f"{where}: the manifest refers to arrays the file does not "
                                  f"contain: {', '.join(map(repr, absent[:5]))}")
        reader.check_sizes(dict.fromkeys(refs))
        arrays = {ref: reader.read(ref) for ref in dict.fromkeys(refs)}
        return _build(manifest["root"], arrays, where)


def _plain_keys(archive: zipfile.ZipFile, where: str) -> list[str]:
    """The array names of a plain ``.npz``; every member must be a ``.npy``."""
    keys = []
    for name in archive.namelist():
        if not name.endswith(".npy"):
            hint = " (it looks like a PyTorch file: torch.save pickles, which vizgrad " \
                "never loads)" if name.endswith(".pkl") else ""
            raise CheckpointError(f"{where}: entry {name!r} is not a NumPy array, so this is "
                                  f"not a checkpoint vizgrad can read{hint}")
        keys.append(name[:-4])
    return keys
