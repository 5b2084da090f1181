"""Tensors and saved values as the graph tools read them (:class:`TensorInfo`,
:class:`SavedInfo`), host copies and dtype names."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..core.node import SavedTensor, accumulator_of
from ..core.tensor import Tensor
from .foreign import reader

if TYPE_CHECKING:
    from .nodes import GraphNode

_KINDS = {SavedTensor.INPUT: "input", SavedTensor.OUTPUT: "output",
          SavedTensor.CONSTANT: "constant", SavedTensor.SCALAR: "scalar"}


class SavedInfo(NamedTuple):
    """One tensor (or scalar) a node saved for backward; metadata survives freeing."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    freed: bool
    kind: str  # "input", "output", "constant" or "scalar"
    value: Any  # the scalar for kind == "scalar", else None
    hooked: bool = False  # packed by saved_tensors_hooks (kind: what it was before)


def is_torch_tensor(value: Any) -> bool:
    """Whether ``value`` is a ``torch.Tensor`` (without importing torch: if the program
    has not imported it, nothing can be one)."""
    tensor_class = getattr(sys.modules.get("torch"), "Tensor", None)  # (maybe a stand-in)
    return isinstance(tensor_class, type) and isinstance(value, tensor_class)


def is_tensor(value: Any) -> bool:
    """Whether ``value`` is a tensor the graph tools read (vizgrad's, or PyTorch's)."""
    return isinstance(value, Tensor) or is_torch_tensor(value)


def to_numpy(value: Any) -> np.ndarray | None:
    """Host copy of a tensor's (or array's) data; ``None`` stays ``None``."""
    if value is None:
        return None
    if is_torch_tensor(value):
        return torch_to_numpy(value)
    data = getattr(value, "array", value)
    getter = getattr(data, "get", None)  # CuPy arrays copy to the host with .get()
    if getter is not None and not isinstance(data, np.ndarray):
        data = getter()
    return np.asarray(data)


def torch_to_numpy(value: Any) -> np.ndarray:
    """:func:`to_numpy` of a ``torch.Tensor`` (the caller knows it is one): detached, on
    the host; as float32 where it is bfloat16 (NumPy has none)."""
    value = value.detach().cpu()
    return (value.float() if str(value.dtype) == "torch.bfloat16" else value).numpy()


_DTYPE_NAMES: dict[Any, str] = {}
# A node's raw output metadata -> its (shape, dtype-name) tuple; shapes repeat a lot.
_OUTPUTS: dict[Any, tuple] = {}


def to_dtype_name(dtype: Any) -> str:
    """``"float32"`` for a NumPy dtype (or anything with a ``name``)."""
    try:
        return _DTYPE_NAMES[dtype]
    except (KeyError, TypeError):
        name = getattr(dtype, "name", None)
        if not isinstance(name, str):  # a torch.dtype: "torch.float32" -> "float32"
            name = str(dtype)
            name = name[6:] if name.startswith("torch.") else name
        try:
            _DTYPE_NAMES[dtype] = name
        except TypeError:
            pass
        return name


def outputs_of(meta: tuple) -> tuple[tuple[tuple[int, ...], str], ...]:
    """``(shape, dtype name)`` per output from a node's ``(shape, dtype)`` tuple, cached by
    that tuple (nodes share it, and shapes repeat)."""
    found = _OUTPUTS.get(meta)
    if found is None:
        found = tuple((tuple(shape), to_dtype_name(dtype)) for shape, dtype in meta)
        if len(_OUTPUTS) < 65536:
            _OUTPUTS[meta] = found
    return found


class TensorInfo:
    """Read-only facts about one tensor: name, shape, dtype, grad and history."""

    __slots__ = ("tensor",)

    def __new__(cls, tensor: Any = None) -> TensorInfo:
        # a torch.Tensor gets PyTorch's reading of it (vizgrad.adapters.torch_tensor,
        # registered in graph/foreign.py's READERS)
        if cls is TensorInfo and not isinstance(tensor, Tensor) and is_torch_tensor(tensor):
            cls = reader("torch_tensor_info")()
        return object.__new__(cls)

    def __init__(self, tensor: Any) -> None:
        self.tensor = tensor

    @property
    def name(self) -> str | None:
        return getattr(self.tensor, "name", None)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.tensor.shape)

    @property
    def dtype(self) -> str:
        return to_dtype_name(self.tensor.dtype)

    @property
    def signature(self) -> tuple[tuple[int, ...], str]:
        """``(shape, dtype)`` in one read (the renderer's hot path)."""
        data = getattr(self.tensor, "array", None)
        if data is None or not hasattr(data, "shape"):
            return self.shape, self.dtype
        return tuple(data.shape), to_dtype_name(data.dtype)

    @property
    def requires_grad(self) -> bool:
        return bool(self.tensor.requires_grad)

    @property
    def grad(self) -> np.ndarray | None:
        """The accumulated (or retained) gradient as a NumPy array, or ``None``."""
        return to_numpy(getattr(self.tensor, "grad", None))

    @property
    def grad_fn(self) -> GraphNode | None:
        from .nodes import GraphNode

        fn = getattr(self.tensor, "grad_fn", None)
        return None if fn is None else GraphNode(fn)

    @property
    def output_nr(self) -> int:
        return int(getattr(self.tensor, "output_nr", 0))

    @property
    def slot_rank(self) -> tuple[int, int]:
        return tuple(getattr(self.tensor, "slot_rank", (self.output_nr, 0)))

    @property
    def base(self) -> TensorInfo | None:
        """The tensor this one is a view of, or ``None``."""
        base = getattr(self.tensor, "_base", None)
        return None if base is None else TensorInfo(base)

    @property
    def node(self) -> GraphNode | None:
        """The node a gradient for this tensor flows to (``grad_fn`` or the leaf's accumulator)."""
        from .nodes import GraphNode

        if getattr(self.tensor, "grad_fn", None) is not None:
            return GraphNode(self.tensor.grad_fn)
        if isinstance(self.tensor, Tensor) and self.tensor.requires_grad:
            return GraphNode(accumulator_of(self.tensor))
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorInfo) and other.tensor is self.tensor

    def __hash__(self) -> int:
        return id(self.tensor)

    def __repr__(self) -> str:
        return f"TensorInfo(name={self.name!r}, shape={self.shape}, dtype={self.dtype})"


def as_tensor_info(value: Any) -> TensorInfo:
    """Wrap a tensor (a ``TensorInfo`` passes through)."""
    return value if isinstance(value, TensorInfo) else TensorInfo(value)
