"""``vizgrad.torch``, the user-facing entry for PyTorch: ``capture``, module scopes and
user stacks on PyTorch's nodes.

``vizgrad.make_dot(loss)`` draws any PyTorch graph without it: the graph reader is
:mod:`vizgrad.adapters.torch_nodes` (``TorchNode``), which reads what ``capture`` writes.
Inside ``capture`` every node the forward creates also carries the module path it
ran in and the user's stack frames, so ``cluster="scope"``, ``collapse="scope"``
and ``show_stack=True`` work on PyTorch graphs as on vizgrad's own::

    import torch, vizgrad
    with vizgrad.torch.capture(model):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    vizgrad.make_dot(loss, cluster="scope", show_stack=True).render("graph")

It uses PyTorch's public mechanisms only: a ``torch.overrides.TorchFunctionMode``
sees every torch call and tags the nodes it created, and global module forward
hooks (``register_module_forward_pre_hook`` / ``register_module_forward_hook``)
keep the module path.  What is recorded lives in the node's own ``metadata`` dict
(strings and code locations, no tensors), so it goes when the graph goes.

``import vizgrad`` does not import this module (nor torch): ``vizgrad.torch`` loads
it on first use.
"""

from __future__ import annotations

import os
from typing import Any

import torch
from torch.nn.modules.module import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
)
from torch.overrides import TorchFunctionMode

from .adapters.torch_nodes import FORWARD_KEY, LEAF_SEQ, RECORDED, adapt, name_leaf
from .core.stack import capture as capture_frames
from .core.stack import hide_package
from .graph.reach import reach
from .graph.scopes import call_scope

__all__ = ["adapt", "capture", "name_leaf"]

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
#: Modules with a fused inference path (eval mode, no graph made) that PyTorch skips
#: while any TorchFunctionMode is on: the capture steps aside for their call, so their
#: results are the same bits as without it (nothing is recorded there: no node is made).
_FAST_PATHS = (torch.nn.MultiheadAttention, torch.nn.TransformerEncoderLayer,
               torch.nn.TransformerEncoder)


def _tensors(value: Any) -> list:
    """The tensors in an op's result (a tensor, or nested tuples/lists/dicts of them)."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, torch.Tensor):
            found.append(item)
        elif isinstance(item, (tuple, list)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


_ENTERED = [0]  # captures entered now (all threads)


def captures_entered() -> int:
    """How many :class:`capture` contexts are entered now (``vizgrad render``'s own
    capture of a script defers to one the script enters itself)."""
    return _ENTERED[0]


def _no_graph(module: torch.nn.Module, args: Any) -> bool:
    """Whether the call makes no graph: grad off, or nothing it is given requires grad."""
    if not torch.is_grad_enabled():
        return True
    return not any(t.requires_grad for t in _tensors(args)) and not any(
        p.requires_grad for p in module.parameters())


class capture(TorchFunctionMode):
    """Record module scopes and user stacks for the PyTorch nodes made inside the ``with``.

    Parameters
    ----------
    model : the root module (optional).  Its submodules' scopes are their paths as
        ``model.named_modules()`` gives them (``"encoder.layers.0.linear1"``) and the
        root's own ops are unscoped, as vizgrad's own modules record them; its
        parameters are named for the picture (``"encoder.layers.0.linear1.weight"``).
        A module called from one of them without being registered in it nests under
        it by its class name lowercased (``"encoder.linear"``).  Modules outside
        ``model`` (or all, without it): one called from no other module is a root
        named by its class (``"linear"``, there is no path to give it), and the same
        naming applies from it.
    name : a prefix for ``model``'s scopes (``name="net"``: ``"net.encoder"``, the
        root's own ops ``"net"``), as ``vizgrad render`` names a script's models after
        the globals holding them.
    stack : record the user's stack frames (PyTorch's and vizgrad's frames are skipped).
    depth : how many user frames to keep per node.

    Example
    -------
    >>> import torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    >>> x = torch.randn(16, 4)
    >>> with vizgrad.torch.capture(model):
    ...     loss = model(x).pow(2).mean()
    >>> vizgrad.make_dot(loss, cluster="scope", show_stack=True)
    <vizgrad.render.digraph.Digraph object at 0x...>
    """

    def __init__(self, model: torch.nn.Module | None = None, *, stack: bool = True,
                 depth: int = 8, name: str | None = None) -> None:
        super().__init__()
        self.model = model
        self.depth = depth if stack else 0
        root = name or ""
        self._paths: dict[int, str] = {}
        self._classes: dict[str, str] = {}  # module path -> its class name
        if model is not None:  # named_modules() paths: the root is "" unless named
            for path, module in model.named_modules():
                path = f"{root}.{path}" if root and path else root or path
                self._paths[id(module)] = path
                self._classes[path] = type(module).__name__
        self._calls: dict[str, int] = {}  # calls of each scope in this root call
        self._scopes: list[str] = []
        self._modules: list[torch.nn.Module] = []  # running now, innermost last
        self._keep: list[torch.nn.Module] = []
        self._handles: list[Any] = []
        self._start = LEAF_SEQ
        self._aside: torch.nn.Module | None = None  # a fast path runs without the mode

    # -- module scopes ------------------------------------------------------------
    def _enter_module(self, module: torch.nn.Module, args: Any) -> None:
        path = self._paths.get(id(module))
        if path is None:
            path = self._path_of(module)
        if not self._scopes:  # a root call: its modules' calls are counted afresh
            self._calls.clear()
        self._scopes.append(self._call_scope(path))
        self._modules.append(module)
        if self._aside is None and isinstance(module, _FAST_PATHS) and not module.training \
                and _no_graph(module, args):
            count = torch._C._len_torch_function_stack()
            if count and torch._C._get_function_stack_at(count - 1) is self:
                torch._C._pop_torch_function_stack()
                self._aside = module

    def _call_scope(self, path: str) -> str:
        """The scope of this call of the module at ``path``: under the running module's
        call when ``path`` is below that module's (``block#2.conv``), marked ``#k`` for
        its k-th call there, with each level's class (``vizgrad.graph.scopes``)."""
        base, name = "", path
        if self._scopes:
            running = self._scopes[-1]
            static = self._paths.get(id(self._modules[-1]), "")
            if static and path.startswith(static + "."):
                base, name = running, path[len(static) + 1:]
        parts = path.split(".") if path else []
        first = len(parts) - (name.count(".") + 1 if name else 0)
        classes = tuple(self._classes.get(".".join(parts[:end]), "")
                        for end in range(first + 1, len(parts) + 1))
        return call_scope(base, name, classes, self._calls)

    def _path_of(self, module: torch.nn.Module) -> str:
        """A module outside ``model``: its attribute name in the module running it (a
        root: its class name), and its parameters named from there, once."""
        parent = self._modules[-1] if self._modules else None
        own = None
        if parent is not None:
            own = next((key for key, child in parent._modules.items() if child is module),
                       None)
        own = own or (self._root_name(module) if parent is None
                      else type(module).__name__.lower())
        base = self._paths.get(id(parent), "") if parent is not None else ""
        path = f"{base}.{own}" if base else own
        self._paths[id(module)] = path
        self._classes.setdefault(path, type(module).__name__)
        self._keep.append(module)  # ids stay valid while the capture lives
        if parent is None:
            for sub, child in module.named_modules():
                if sub:
                    self._paths.setdefault(id(child), f"{path}.{sub}")
                    self._classes.setdefault(f"{path}.{sub}", type(child).__name__)
            prefix = self._leaf_prefix(path)
            for name, parameter in module.named_parameters():
                name_leaf(parameter, prefix + name)
        return path

    def _step_back(self) -> None:
        torch._C._push_on_torch_function_stack(self)
        self._aside = None

    def _root_name(self, module: torch.nn.Module) -> str:
        """The scope of a module outside ``model`` called from no module: its class name."""
        return type(module).__name__.lower()

    def _leaf_prefix(self, path: str) -> str:
        """What the names of such a root's parameters start with (nothing: ``weight``)."""
        return ""

    def _leave_module(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        if self._aside is module:
            self._step_back()
        if self._scopes:
            self._scopes.pop()
            self._modules.pop()

    # -- nodes ----------------------------------------------------------------------
    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        info = None
        # most results are one tensor; size(), dim() and the like need no look
        for tensor in ((out,) if isinstance(out, torch.Tensor)
                       else _tensors(out) if isinstance(out, (tuple, list, dict)) else ()):
            fn = tensor.grad_fn
            if fn is None or FORWARD_KEY in fn.metadata:
                continue
            if info is None:
                frames = capture_frames(self.depth, 1) if self.depth else None
                info = (self._scopes[-1] if self._scopes else "", frames)
            self._tag(fn, info)
        return out

    def _tag(self, fn: Any, info: tuple) -> None:
        """Tag ``fn`` and the untagged nodes behind it that this op made (a composite
        op such as attention makes many; they are newer than the capture's start)."""
        start = self._start

        def tag(node: Any) -> list:  # the node's inputs to tag next: none once tagged
            metadata = node.metadata
            if FORWARD_KEY in metadata:
                return []
            metadata[FORWARD_KEY] = info
            return [child for child, _ in node.next_functions
                    if child is not None and start < child._sequence_nr() < LEAF_SEQ]

        reach([fn], tag)

    def __enter__(self) -> capture:
        hide_package(_TORCH_DIR)
        RECORDED[0] = True
        if self.model is not None:
            for path, parameter in self.model.named_parameters():
                name_leaf(parameter, path)
        with torch.enable_grad():  # where this capture starts (entered under no_grad too)
            probe = torch.zeros((), requires_grad=True).view(())
        self._start = probe.grad_fn._sequence_nr()
        self._handles = [register_module_forward_pre_hook(self._enter_module),
                         register_module_forward_hook(self._leave_module, always_call=True)]
        self._scopes.clear()
        self._modules.clear()
        _ENTERED[0] += 1
        return super().__enter__()

    def __exit__(self, *exc: object) -> None:
        if self._aside is not None:  # left from inside a fast path's call
            self._step_back()
        _ENTERED[0] -= 1
        try:
            super().__exit__(*exc)
        finally:
            for handle in self._handles:
                handle.remove()
            self._handles.clear()
            self._scopes.clear()
            self._modules.clear()
            self._keep.clear()
