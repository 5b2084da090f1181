"""State helpers for ``Module``: ``load_state_dict`` (validate everything first, then copy,
so a failure changes nothing) and the dtype/device cast behind ``Module.to``."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ..core import backend
from ..core.tensor import Tensor

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


def _as_array(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.array
    if backend.is_array(value):
        return value
    import numpy as np

    return np.asarray(value)


_SHAPE = "\0shape"  # marks shape problems, which are listed under their own heading


def _prepare(key: str, value: Any, target: Tensor) -> tuple[Any, str | None]:
    """``value`` as an array ready to copy into ``target`` (its dtype, its device), or the
    reason it cannot be. Nothing is written here: ``load_into`` copies only once every key
    has been prepared, so one bad value anywhere loads nothing."""
    try:
        array = _as_array(value)
    except Exception as error:  # noqa: BLE001 - any failure to convert is reported per key
        return None, f"  {key}: cannot convert a {type(value).__name__} to an array ({error})"
    shape = tuple(array.shape)
    if shape != tuple(target.shape):
        return None, (f"{_SHAPE}  {key}: checkpoint has shape {shape}, the model expects "
                      f"{tuple(target.shape)}")
    kind, want = array.dtype.kind, target.array.dtype
    if kind not in "biufc":
        return None, (f"  {key}: checkpoint holds {array.dtype} values, which are not "
                      f"numbers (the model expects {want})")
    if kind == "c" and want.kind != "c":
        return None, (f"  {key}: checkpoint holds complex values; copying them into {want} "
                      "would discard the imaginary part")
    flags = getattr(target.array, "flags", None)
    if flags is not None and not getattr(flags, "writeable", True):  # CuPy: no such flag
        return None, f"  {key}: the model's tensor is read-only"
    xp = backend.array_module(target.array)
    try:
        if backend.array_module(array) is not xp:
            array = backend.to_device(backend.to_numpy(array), target.device)
        return array.astype(want, copy=False), None
    except Exception as error:  # noqa: BLE001
        return None, f"  {key}: cannot convert to {want} ({error})"


def load_into(module: Any, state_dict: Any, strict: bool) -> Any:
    if not hasattr(state_dict, "items"):
        raise TypeError(f"load_state_dict expects a dict, got {type(state_dict).__name__}")
    targets = module.state_dict(keep_vars=True)
    missing = [key for key in targets if key not in state_dict]
    unexpected = [key for key in state_dict if key not in targets]
    # Convert and check every value first; the copy below cannot fail.
    ready: list[tuple[Tensor, Any]] = []
    bad = []
    for key, target in targets.items():
        if key in state_dict:
            array, problem = _prepare(key, state_dict[key], target)
            if problem is None:
                ready.append((target, array))
            else:
                bad.append(problem)
    problems = []
    if strict and missing:
        problems.append("missing keys (in the model, not in the state dict): "
                        + ", ".join(repr(k) for k in missing))
    if strict and unexpected:
        problems.append("unexpected keys (in the state dict, not in the model): "
                        + ", ".join(repr(k) for k in unexpected))
    shapes = [line for line in bad if line.startswith(_SHAPE)]
    others = [line for line in bad if not line.startswith(_SHAPE)]
    if shapes:
        problems.append("shape mismatch:\n" + "\n".join(line[len(_SHAPE):] for line in shapes))
    if others:
        problems.append("values that cannot be loaded:\n" + "\n".join(others))
    if problems:
        raise RuntimeError(f"error loading the state dict into {type(module).__name__}; "
                           "nothing was loaded.\n" + "\n".join(problems)
                           + ("\nPass strict=False to load only the matching keys."
                              if strict and (missing or unexpected) else ""))
    for target, array in ready:
        # Copy into the existing buffer so optimizers and views keep seeing the same array.
        target.array[...] = array
        target._bump_version()
    return IncompatibleKeys(missing, unexpected)


def cast_tensor(tensor: Tensor, args: tuple, kwargs: dict) -> Tensor:
    dtype = kwargs.get("dtype")
    device = kwargs.get("device")
    for arg in args:
        if isinstance(arg, bool):  # non_blocking, as PyTorch's Module.to takes it
            continue
        if backend.is_device_name(arg):
            device = arg
        elif isinstance(arg, Tensor):
            dtype, device = arg.dtype, arg.device
        else:
            dtype = arg
    if dtype is not None and tensor.dtype.kind != "f":
        dtype = None  # integer buffers (num_batches_tracked) keep their dtype
    if dtype is None and device is None:
        return tensor
    kwargs = {k: v for k, v in (("dtype", dtype), ("device", device)) if v is not None}
    return tensor.detach().to(**kwargs)
