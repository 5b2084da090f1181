"""``Tensor``: an array plus its place in the backward graph.

Ops are attached as methods by ``vizgrad.ops`` (``x.sum()``, ``x @ w``); this file
holds the state and the graph-facing API only.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import backend
from . import dual as _dual_module
from . import node as _node_module
from . import saved as _saved_module
from .dual import ACTIVE as _DUAL_LEVELS
from .node import AccumulateGrad, Node, RemovableHandle, add_hook
from .tensor_checks import NOT_COPIED, check_grad, rebuild_tensor

_NO_EDGE = (None, 0)
_new_object = object.__new__  # one global read, no attribute lookups, per tensor made
NAMES_KEY = "vizgrad.names"  # node.metadata[NAMES_KEY] = {output_nr: name} (Tensor.name)


class _Size(int):
    """``t.size`` is the element count (NumPy/Paddle); ``t.size()`` is the shape (PyTorch)."""

    _shape: tuple[int, ...]

    def __new__(cls, shape: tuple[int, ...]) -> _Size:
        count = 1
        for extent in shape:
            count *= extent
        value = super().__new__(cls, count)
        value._shape = shape
        return value

    def __call__(self, dim: int | None = None) -> Any:
        return self._shape if dim is None else self._shape[dim]


def is_float_dtype(dtype: Any) -> bool:
    return np.dtype(dtype).kind in "fc"


#: Why complex tensors may not require grad: vizgrad implements no complex
#: (conjugate Wirtinger) derivatives, and a half-right gradient would be silently wrong.
COMPLEX_AUTOGRAD = (
    "complex autograd is not supported: vizgrad computes no gradients for complex tensors "
    "(PyTorch's conjugate Wirtinger derivatives are not implemented), so a complex tensor "
    "cannot require grad. Compute with complex numbers outside the graph (under "
    "vizgrad.no_grad(), or on .detach()ed tensors), or keep the real and imaginary parts "
    "as two real tensors.")


def _no_grad_dtype_message(dtype: Any) -> str:
    if np.dtype(dtype).kind == "c":
        return f"this tensor is {dtype}: {COMPLEX_AUTOGRAD}"
    return (f"only floating-point tensors can require gradients; this tensor is {dtype}. "
            "Convert it first: t = t.float() (or .double())")


class Tensor:
    """An n-dimensional array that records the ops applied to it.

    Example
    -------
    >>> x = vizgrad.tensor([1.0, 2.0, 3.0], requires_grad=True, name="x")
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4., 6.])

    This class holds the state and the core methods (backward, hooks, views,
    versions).  The operators (``__add__``, ``__mul__`` ...) and the op methods
    (``sum``, ``tanh``, ``reshape`` ...) are bound from one table, ``METHODS`` (and
    ``PROPERTIES``) in ``vizgrad/ops/methods.py``, which lists every one, grouped by the
    ``ops/`` module of the op behind it, and installs them all in one place.
    """

    # Hot attributes are slots; rarely set ones live in the instance dict (created
    # only when first set) with these class-level defaults, so making a tensor is cheap.
    __slots__ = ("array", "_rg", "_grad", "grad_fn", "output_nr", "_vc", "_base", "__dict__",
                 "__weakref__")
    array: Any  #: the backend array (NumPy, CuPy ...)
    _rg: bool  #: requires_grad
    _grad: Tensor | None
    grad_fn: Node | None  #: the node that made it (None for a leaf)
    output_nr: int  #: which output of ``grad_fn`` it is
    _vc: Any  #: version counter, a shared [int] (None: never written; a view always has one)
    _base: Any  #: the Tensor it is a view of, or None
    _name: str | None = None
    _view_chain: tuple | None = None
    _accumulator: Any = None
    _hooks: dict | None = None
    _retains_grad = False
    _view_version = 0  # a view's base version when its grad_fn was last derived
    __array_priority__ = 1000
    __array_ufunc__ = None  # NumPy defers to our reflected operators

    def __init__(self, data: Any, requires_grad: bool = False, name: str | None = None) -> None:
        from .factory import to_array

        self.array = to_array(data, None, "cpu")
        self._init_state(False, None, 0)
        if name is not None:
            self._name = name
        if requires_grad:
            self.requires_grad = True

    @property
    def name(self) -> str | None:
        """A name for pictures; on a non-leaf also kept on its ``grad_fn`` (drawn there)."""
        return self._name

    @name.setter
    def name(self, value: str | None) -> None:
        self._name = value
        node = self.grad_fn
        if node is not None and value is not None:
            node.metadata.setdefault(NAMES_KEY, {})[self.output_nr] = str(value)

    def _init_state(self, requires_grad: bool, grad_fn: Node | None, output_nr: int) -> None:
        self._rg = requires_grad
        self._grad = None
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self._vc = None
        self._base = None

    @staticmethod
    def _make(data: Any, requires_grad: bool = False, grad_fn: Node | None = None,
              output_nr: int = 0) -> Tensor:
        """Wrap an array without copying (the hot path of every op)."""
        tensor = _new_object(Tensor)
        tensor.array = data
        tensor._rg = requires_grad
        tensor._grad = None
        tensor.grad_fn = grad_fn
        tensor.output_nr = output_nr
        tensor._vc = None
        tensor._base = None
        return tensor

    if TYPE_CHECKING:
        # Operators and most methods are bound by vizgrad/ops/methods.py (its table lists
        # each one and the op behind it); the ones core itself calls are declared here.
        def __add__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def to(self, *args: Any, **kwargs: Any) -> Tensor: ...
        # ... and the ones the typed layers above (nn, optim) call
        def reshape(self, *shape: Any) -> Tensor: ...
        def view(self, *shape: Any) -> Tensor: ...
        def expand(self, *sizes: Any) -> Tensor: ...
        def contiguous(self) -> Tensor: ...
        def select(self, dim: int, index: int) -> Tensor: ...
        def unflatten(self, dim: int, sizes: Any) -> Tensor: ...
        def split(self, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]: ...
        def unsqueeze(self, dim: int) -> Tensor: ...
        def squeeze(self, dim: Any = None) -> Tensor: ...
        def transpose(self, dim0: int, dim1: int) -> Tensor: ...
        def t(self) -> Tensor: ...
        def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor: ...
        def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]: ...
        def unsafe_chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]: ...
        def unbind(self, dim: int = 0) -> tuple[Tensor, ...]: ...
        def relu(self) -> Tensor: ...
        def relu_(self) -> Tensor: ...
        def tanh(self) -> Tensor: ...
        def sigmoid(self) -> Tensor: ...
        def permute(self, *dims: Any) -> Tensor: ...
        def mean(self, dim: Any = None, keepdim: bool = False) -> Tensor: ...
        def sum(self, dim: Any = None, keepdim: bool = False) -> Tensor: ...
        def __matmul__(self, other: Any) -> Tensor: ...
        def __getitem__(self, index: Any) -> Tensor: ...
        def copy_(self, src: Any) -> Tensor: ...

    @staticmethod
    def from_array(array: Any, requires_grad: bool = False) -> Tensor:
        """Wrap a backend array (NumPy, CuPy ...) as a leaf tensor, without copying.

        The seam nn, optim, serialization and ops use to make tensors from arrays they
        computed; inside core, ``_make`` also links the tensor to its node.

        Example
        -------
        >>> t = vizgrad.Tensor.from_array(np.zeros(3, np.float32))
        >>> t.shape, t.requires_grad
        ((3,), False)
        """
        return Tensor._make(array, requires_grad)

    # -- array facts ------------------------------------------------------------
    @property
    def data(self) -> Tensor:
        """PyTorch's ``.data``: a Tensor sharing this one's storage, with no history.

        Unlike ``detach()`` it does not share the version counter, so writes through it
        are invisible to autograd (the classic manual SGD step). The backend array itself
        is ``t.array``.

        Example
        -------
        >>> p.data.add_(p.grad, alpha=-0.1)     # updates p in place
        """
        return Tensor._make(self.array)

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"tensor.data = value needs a Tensor, got {type(value).__name__}; "
                            "to replace the backend array itself assign tensor.array")
        self.array = value.array

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.array.shape)

    @property
    def dtype(self) -> Any:
        return self.array.dtype

    @property
    def ndim(self) -> int:
        return self.array.ndim

    @property
    def size(self) -> _Size:
        return _Size(tuple(self.array.shape))

    def numel(self) -> int:
        return int(self.array.size)

    def dim(self) -> int:
        return self.array.ndim

    @property
    def device(self) -> backend.device:
        return backend.device_object(self.array)

    @property
    def is_cuda(self) -> bool:
        return self.device.startswith("cuda")

    # -- autograd state ---------------------------------------------------------
    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (``None`` until a backward reaches this tensor).

        Assigning checks what PyTorch checks: a Tensor (or None) of this tensor's
        shape, dtype and device.

        Example
        -------
        >>> w.grad = vizgrad.zeros_like(w)
        """
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        # backward assigns every leaf's gradient through here: the common case (same
        # shape and dtype, both NumPy) costs three comparisons, the rest is checked in full
        if value is not None and not (
                isinstance(value, Tensor) and type(value.array) is np.ndarray
                and type(self.array) is np.ndarray and value.array.shape == self.array.shape
                and value.array.dtype == self.array.dtype):
            check_grad(self, value)
        self._grad = value

    @property
    def requires_grad(self) -> bool:
        # A view made before its base came to require grad (a write of a tensor that
        # does) requires grad too, as in PyTorch: its history is derived on reading.
        if self._base is not None and self._view_version != self._vc[0]:
            self._refresh_if_stale()
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        value = bool(value)
        if value and self.array.dtype.kind != "f":
            raise RuntimeError(_no_grad_dtype_message(self.array.dtype))
        if not value and self.grad_fn is not None:
            raise RuntimeError(
                "requires_grad can only be turned off on a leaf tensor; this one was made "
                f"by {self.grad_fn.name()}. Use t.detach() for a tensor without history.")
        self._rg = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def stop_gradient(self) -> bool:
        """Paddle's spelling: ``stop_gradient == not requires_grad``."""
        return not self._rg

    @stop_gradient.setter
    def stop_gradient(self, value: bool) -> None:
        self.requires_grad = not value

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def _version(self) -> int:
        return self._vc[0] if self._vc is not None else 0

    def _bump_version(self) -> None:
        if self._vc is None:
            self._vc = [0]
        self._vc[0] += 1

    def _is_view(self) -> bool:
        return self._base is not None

    @property
    def slot_rank(self) -> tuple[int, int]:
        """``(slot, rank)`` of this tensor among its ``grad_fn``'s outputs."""
        if self.grad_fn is None:
            return (0, 0)
        return self.grad_fn.slot_rank_of(self.output_nr)

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def _refresh_if_stale(self) -> None:
        # A view whose base was written since it was made gets its new history first, so
        # a hook or retain_grad lands on the node its gradient will really pass through.
        if self._base is not None and self._view_version != self._vc[0]:
            from .inplace import refresh_view

            refresh_view(self)

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        self._refresh_if_stale()
        if self.grad_fn is None:
            if not self._rg:
                raise RuntimeError("can't retain_grad on a tensor that doesn't require grad")
            return
        node = self.grad_fn
        if node._retained is None:
            node._retained = {}
            node._hooked = True
        node._retained[self.output_nr] = weakref.ref(self)
        self._retains_grad = True

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one.

        Example
        -------
        >>> handle = h.register_hook(lambda g: g * 2)
        >>> handle.remove()
        """
        self._refresh_if_stale()
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require grad")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = {}
            return add_hook(self._hooks, hook)
        node = self.grad_fn
        if node._tensor_hooks is None:
            node._tensor_hooks = {}
            node._hooked = True
        hooks = node._tensor_hooks.setdefault(self.output_nr, {})
        return add_hook(hooks, hook)

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad``.

        Example
        -------
        >>> loss.backward()                       # scalar loss
        >>> y.backward(vizgrad.ones_like(y))       # non-scalar: give the gradient
        """
        from .engine import backward

        backward([self], None if gradient is None else [gradient], retain_graph,
                 create_graph, inputs)

    def detach(self) -> Tensor:
        """A tensor sharing data (and version counter) with no history."""
        # Under forward AD a new array object (same memory): tangents are keyed by array
        # and, as in PyTorch, a detached tensor has none.
        out = Tensor._make(self.array.view() if _DUAL_LEVELS else self.array)
        if self._vc is None:
            self._vc = [0]
        out._vc = self._vc
        return out

    def detach_(self) -> Tensor:
        """Cut this tensor from its history in place; it becomes a leaf."""
        if self._base is not None and self._rg:
            raise RuntimeError("can't detach_() a view; use detach() instead")
        self.grad_fn = None
        self.output_nr = 0
        self._rg = False
        return self

    def item(self) -> Any:
        if self.array.size != 1:
            raise ValueError(f"item() needs a tensor with one element, this one has shape "
                             f"{self.shape}")
        return self.array.item()

    def tolist(self) -> Any:
        return backend.to_numpy(self.array).tolist()

    def numpy(self) -> np.ndarray:
        """The data as a NumPy array (copied to host memory when on a GPU)."""
        if self._rg:
            raise RuntimeError("can't call numpy() on a tensor that requires grad; "
                               "use tensor.detach().numpy()")
        return backend.to_numpy(self.array)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if type(self.array) is not np.ndarray:
            raise TypeError(f"implicit conversion of a {self.device} tensor to NumPy is not "
                            "allowed; call .numpy() explicitly")
        return self.array if dtype is None else self.array.astype(dtype)

    def __len__(self) -> int:
        if self.array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.array.shape[0]

    def __bool__(self) -> bool:
        if self.array.size != 1:
            raise RuntimeError(f"the truth value of a tensor with {self.array.size} elements "
                               "is ambiguous; use .any() or .all()")
        return bool(self.array.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.array.dtype.kind not in "iub":
            raise TypeError("only integer tensors can be used as an index")
        return int(self.item())

    __hash__ = object.__hash__

    def __deepcopy__(self, memo: dict) -> Tensor:
        """Copy a leaf: data, ``requires_grad``, name and ``.grad`` (as PyTorch does)."""
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                f"deepcopy protocol at the moment. This tensor was made by "
                f"{self.grad_fn.name()}. Copy its values without the history with "
                "t.detach().clone(), or deepcopy t.detach().")
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.array = copy.deepcopy(self.array, memo)
        new._init_state(self._rg, None, 0)
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        for key, value in getattr(self, "__dict__", {}).items():
            if key not in NOT_COPIED:
                setattr(new, key, copy.deepcopy(value, memo))
        return new

    def __reduce_ex__(self, protocol: Any) -> Any:
        # As torch.save/pickle do: the values, requires_grad and name, no history and no
        # .grad; a non-leaf comes back as a leaf.
        return (rebuild_tensor, (backend.to_numpy(self.array), self._rg, self.name,
                                  self.device))

    def __repr__(self) -> str:
        if self.device == "meta":  # shape and dtype only, as PyTorch prints a meta tensor
            return f"tensor(..., device='meta', size={tuple(self.shape)}, dtype={self.dtype})"
        body = np.array2string(backend.to_numpy(self.array), separator=", ", precision=4,
                               prefix="tensor(")
        extras = []
        if self.array.dtype not in (np.float32, np.int64, np.bool_):
            extras.append(f"dtype={self.array.dtype}")
        if self.device != "cpu":
            extras.append(f"device='{self.device}'")
        if self.name:
            extras.append(f"name={self.name!r}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._rg:
            extras.append("requires_grad=True")
        return "tensor(" + body + "".join(", " + e for e in extras) + ")"


_node_module.Tensor = _saved_module.Tensor = Tensor
_dual_module.Tensor = _dual_module._Tensor = Tensor  # type: ignore[attr-defined]

def accumulator_of(tensor: Tensor) -> AccumulateGrad:
    """The (cached, weakly held) AccumulateGrad node of a leaf that requires grad."""
    ref = tensor._accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._accumulator = weakref.ref(node)
    return node


def edge_of(tensor: Tensor) -> tuple:
    """``(node, input_nr)`` that a gradient for ``tensor`` flows to, PyTorch's gradient_edge."""
    if not tensor._rg:
        return _NO_EDGE
    node = tensor.grad_fn
    if node is not None:
        return (node, tensor.output_nr)
    return (accumulator_of(tensor), 0)
