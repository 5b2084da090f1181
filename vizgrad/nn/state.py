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
        return value.data
    if backend.is_array(value):
        return value
    import numpy as np

    return np.asarray(value)


def load_into(module: Any, state_dict: Any, strict: bool) -> Any:
    if not hasattr(state_dict, "items"):
        raise TypeError(f"load_state_dict expects a dict, got {type(state_dict).__name__}")
    targets = module.state_dict(keep_vars=True)
    missing = [key for key in targets if key not in state_dict]
    unexpected = [key for key in state_dict if key not in targets]
    mismatched = []
    for key, target in targets.items():
        if key in state_dict:
            shape = tuple(_as_array(state_dict[key]).shape)
            if shape != tuple(target.shape):
                mismatched.append(f"  {key}: checkpoint has shape {shape}, the model "
                                  f"expects {tuple(target.shape)}")
    problems = []
    if strict and missing:
        problems.append("missing keys (in the model, not in the state dict): "
                        + ", ".join(repr(k) for k in missing))
    if strict and unexpected:
        problems.append("unexpected keys (in the state dict, not in the model): "
                        + ", ".join(repr(k) for k in unexpected))
    if mismatched:
        problems.append("shape mismatch:\n" + "\n".join(mismatched))
    if problems:
        raise RuntimeError(f"error loading the state dict into {type(module).__name__}; "
                           "nothing was loaded.\n" + "\n".join(problems)
                           + ("\nPass strict=False to load only the matching keys."
                              if strict and (missing or unexpected) else ""))
    for key, target in targets.items():
        if key not in state_dict:
            continue
        array = _as_array(state_dict[key])
        xp = backend.array_module(target.data)
        if backend.array_module(array) is not xp:
            array = backend.to_device(backend.to_numpy(array), target.device)
        # Copy into the existing buffer so optimizers and views keep seeing the same array.
        target.data[...] = array.astype(target.data.dtype, copy=False)
        target._bump_version()
    return IncompatibleKeys(missing, unexpected)


def cast_tensor(tensor: Tensor, args: tuple, kwargs: dict) -> Tensor:
    dtype = kwargs.get("dtype")
    device = kwargs.get("device")
    for arg in args:
        if isinstance(arg, str) and (arg == "cpu" or arg.startswith("cuda")):
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
