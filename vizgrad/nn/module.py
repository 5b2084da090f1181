"""``Module``: the base class of layers: parameters, buffers, children, scopes, state dicts.

Naming
------
Two names are kept up to date automatically, both from attribute names:

* ``Parameter.name`` (and a buffer's ``name``) is the dotted path from the outermost
  module it has been registered into. Assigning ``self.weight = Parameter(...)``
  names it ``"weight"``; registering that module as ``self.encoder`` of a parent
  renames everything below to ``"encoder.weight"``, and so on upwards. Calling
  ``named_parameters()`` / ``state_dict()`` on a root module (one registered in
  no parent) renames from it again, so for a parameter shared between two models
  the root asked last decides; asking a submodule never shortens the names.
* ``Module.scope_name`` is the module's attribute name in its parent. Calling a
  module pushes its path from the root module as the scope -- the name
  ``named_modules()`` gives it, the same prefix its parameters carry -- so the node
  of ``encoder.0``'s matmul has scope ``"encoder.0"`` and its weight is named
  ``"encoder.0.weight"``.  The root module's own ops have no scope (``""``, as in
  ``named_modules()``) unless you assign ``scope_name`` (``vizgrad render`` names
  a script's root modules after the globals holding them, ``model.encoder.0``, as
  it names their parameters ``model.encoder.0.weight``).  The path follows
  registration (a weak link to the parent), not only call nesting, so
  ``self.heads["a"](x)`` records ``"heads.a"``; a module that is registered nowhere
  and called while another scope is active nests under it with its class name
  lowercased (``"outer.linear"``).  A module called again within one call of its
  parent records which call it is: ``pool``, then ``pool#2`` (counted afresh at each
  root call; ``vizgrad.graph.scopes``), so each call is its own box in a picture.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from ..core.handles import RemovableHandle, add_hook
from ..core.state import current_scope, no_grad, set_scope
from ..core.tensor import Tensor
from ..graph.scopes import call_scope
from .backward_hooks import finish_backward_hooks, start_backward_hooks
from .parameter import Parameter
from .state import IncompatibleKeys, cast_tensor, load_into

_ACTIVE = threading.local()  # (module, scope) of every module whose forward is running
#: ``namer(module) -> str`` naming root modules (``vizgrad render`` names a script's
#: modules by their globals); None: a root module's own ops are unscoped.
_ROOT_NAMER: list[Callable[[Module], str]] = []


def _add_hook(hooks: OrderedDict, hook: Callable, prepend: bool) -> RemovableHandle:
    handle = add_hook(hooks, hook)
    if prepend:
        hooks.move_to_end(handle._key, last=False)
    return handle


class root_scope_names:  # noqa: N801 - used like a function, as a context manager
    """Name root modules' scopes with ``namer(module)`` meanwhile.

    ``vizgrad render`` runs a script under it with a namer that returns the global
    holding the module, so ``model = Net()`` scopes its ops ``model.fc1`` -- the
    same prefix the script's parameter names get (``model.fc1.weight``).

    Example
    -------
    >>> class Net(vizgrad.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = vizgrad.nn.Linear(3, 2)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> net, x = Net(), vizgrad.randn(4, 3)
    >>> with vizgrad.nn.module.root_scope_names(lambda module: "model"):
    ...     out = net(x)
    >>> out.grad_fn.scope
    'model.fc'
    """

    def __init__(self, namer: Callable[[Module], str]) -> None:
        self.namer = namer

    def __enter__(self) -> root_scope_names:
        _ROOT_NAMER.append(self.namer)
        return self

    def __exit__(self, *exc: object) -> None:
        _ROOT_NAMER.remove(self.namer)


class Module:
    """Base class for all layers; subclasses define ``__init__`` and ``forward``.

    Example
    -------
    >>> class Net(vizgrad.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = vizgrad.nn.Linear(4, 2)
    ...     def forward(self, x):
    ...         return self.fc(x).relu()
    >>> net = Net()
    >>> [name for name, _ in net.named_parameters()]
    ['fc.weight', 'fc.bias']
    """

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_scope_name", None)
        object.__setattr__(self, "_parent", None)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    # -- calling ------------------------------------------------------------------
    @property
    def scope_name(self) -> str:
        """The name this module pushes as a scope when called."""
        return self._scope_name or type(self).__name__.lower()

    @scope_name.setter
    def scope_name(self, value: str) -> None:
        object.__setattr__(self, "_scope_name", str(value))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Runs for every layer of every step: empty hook tables cost one truth test,
        # and the scope path of a child called by its running parent is one lookup.
        if self._forward_pre_hooks:
            for hook in list(self._forward_pre_hooks.values()):
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward_hook = None
        if self._backward_hooks or self._backward_pre_hooks:
            backward_hook, args = start_backward_hooks(self, args)
        try:
            active = _ACTIVE.stack
        except AttributeError:  # this thread's first module call
            active = _ACTIVE.stack = []
            _ACTIVE.calls = {}
        if not active:  # a root call: its modules' calls are counted afresh
            _ACTIVE.calls.clear()
        previous = current_scope()
        path = self._call_scope(active, previous, _ACTIVE.calls)
        set_scope(path)
        active.append((self, path))
        try:
            output = self.forward(*args, **kwargs)
        finally:
            active.pop()
            set_scope(previous)
        if self._forward_hooks:
            for hook in list(self._forward_hooks.values()):
                result = hook(self, args, output)
                if result is not None:
                    output = result
        if backward_hook is not None:
            output = finish_backward_hooks(backward_hook, output)
        return output

    def _call_scope(self, active: list, current: str, calls: dict[str, int]) -> str:
        """This module's path under its nearest ancestor that is running right now,
        marked ``#k`` for its k-th call within that ancestor's call (``vizgrad.graph.scopes``).

        Walking registered parents (not just the call nesting) keeps the path right
        when a parent's forward reaches a grandchild directly, as in
        ``self.heads["a"](x)`` -> ``"heads.a"``.
        """
        ref = self._parent
        if ref is not None and active:
            running, running_path = active[-1]
            if running is ref():  # called by its running parent (Sequential, most layers)
                own = self._scope_name or type(self).__name__.lower()
                return call_scope(running_path, own, (type(self).__name__,), calls)
        return self._walk_scope(active, current, calls)

    def _walk_scope(self, active: list, current: str, calls: dict[str, int]) -> str:
        """``_call_scope`` in full: up the registered parents to one that is running."""
        names, classes = [], []
        module = self
        base = None
        while base is None:
            ref = module._parent
            parent = ref() if ref is not None else None
            if parent is None:
                # the root: named_modules() calls it "" (its ops are unscoped) unless
                # the user named it; a stray module inside another scope keeps its
                # class name so its ops are still told apart
                own = module._scope_name or (_ROOT_NAMER[-1](module) if _ROOT_NAMER
                                             else "")
                if not own and current:
                    own = type(module).__name__.lower()
                if own:
                    names.append(own)
                    classes.append(type(module).__name__)
                break
            names.append(module._scope_name or type(module).__name__.lower())
            classes.append(type(module).__name__)
            for running, scope_path in reversed(active):
                if running is parent:
                    base = scope_path
                    break
            module = parent
        if base is None:
            base = current  # nothing above us is running: nest under the caller's scope
        return call_scope(base, ".".join(reversed(names)), tuple(reversed(classes)), calls)

    def register_forward_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, inputs, output)`` after forward; a non-None result replaces it."""
        return add_hook(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, inputs)`` before forward; a non-None result replaces the inputs."""
        return add_hook(self._forward_pre_hooks, hook)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False
                                        ) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the module's outputs are
        computed; a returned tuple replaces ``grad_output``
        (``torch.nn.Module.register_full_backward_pre_hook``).

        Example
        -------
        >>> layer = vizgrad.nn.Linear(3, 2)
        >>> h = layer.register_full_backward_pre_hook(lambda m, go: (go[0] * 0,))
        >>> layer(vizgrad.ones(1, 3)).sum().backward()
        >>> layer.bias.grad                        # the gradient was replaced by zeros
        tensor([0., 0.])
        """
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False
                                    ) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients of the module's
        positional tensor inputs are computed (of its outputs, when no input requires
        grad); a returned tuple replaces ``grad_input``
        (``torch.nn.Module.register_full_backward_hook``).

        Example
        -------
        >>> layer = vizgrad.nn.Linear(3, 2)
        >>> h = layer.register_full_backward_hook(
        ...     lambda m, gi, go: print([tuple(g.shape) for g in gi + go]))
        >>> layer(vizgrad.ones(1, 3, requires_grad=True)).sum().backward()
        [(1, 3), (1, 2)]
        """
        return _add_hook(self._backward_hooks, hook, prepend)

    # -- registration -------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("call super().__init__() before assigning parameters")
            self._drop(name)
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("call super().__init__() before assigning submodules")
            self._drop(name)
            self.add_module(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} to parameter '{name}' "
                                "(use a vizgrad.nn.Parameter or None)")
            params[name] = None
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} to buffer '{name}'")
            self._buffers[name] = value
            if value is not None:
                value.name = name
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} to submodule '{name}'")
            self._modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def _drop(self, name: str) -> None:
        for table in (self._parameters, self._buffers, self._modules):
            table.pop(name, None)
        self.__dict__.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        state = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            entries = state.get(table)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a ``None`` placeholder, as for ``bias=False``)."""
        if "." in name or not name:
            raise KeyError(f"parameter name must be non-empty and contain no '.', got {name!r}")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"'{name}' must be a vizgrad.nn.Parameter or None, got "
                            f"{type(param).__name__}")
        self._parameters[name] = param
        if param is not None:
            param.name = name

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add state that is saved in ``state_dict`` but not trained (running stats...)."""
        if "." in name or not name:
            raise KeyError(f"buffer name must be non-empty and contain no '.', got {name!r}")
        self._drop(name)
        self._buffers[name] = tensor
        if tensor is not None:
            tensor.name = name
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register a child; its parameters are renamed to ``name.<path>``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module")
        self._modules[name] = module
        if module is not None:
            object.__setattr__(module, "_scope_name", str(name))
            # A weak link up: the parent owns the child, never the other way round.
            object.__setattr__(module, "_parent", weakref.ref(self))
            module._rename(str(name) + ".")

    register_module = add_module

    def _rename(self, prefix: str = "") -> None:
        for name, tensor in self._named_tensors("_parameters", prefix, remove_duplicate=False):
            tensor.name = name
        for name, tensor in self._named_tensors("_buffers", prefix, remove_duplicate=False):
            tensor.name = name

    # -- traversal (iterative: deep models must not hit the recursion limit) --------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        memo = set() if memo is None else memo
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            path, module = stack.pop()
            if remove_duplicate:
                if id(module) in memo:
                    continue
                memo.add(id(module))
            yield path, module
            children = [(f"{path}.{n}" if path else n, m)
                        for n, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named_tensors(self, table: str, prefix: str, recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix.rstrip("."), remove_duplicate=remove_duplicate) \
            if recurse else [(prefix.rstrip("."), self)]
        for path, module in modules:
            for name, tensor in getattr(module, table).items():
                if tensor is None or (remove_duplicate and id(tensor) in seen):
                    continue
                seen.add(id(tensor))
                yield (f"{path}.{name}" if path else name), tensor

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(path, parameter)`` pairs; a root module also (re)names each parameter."""
        rename = not prefix and self._parent is None
        for name, param in self._named_tensors("_parameters", prefix, recurse, remove_duplicate):
            if rename:
                param.name = name
            yield name, param  # type: ignore[misc]  # _parameters holds Parameters

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        rename = not prefix and self._parent is None
        for name, buffer in self._named_tensors("_buffers", prefix, recurse, remove_duplicate):
            if rename:
                buffer.name = name
            yield name, buffer

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    # -- modes and bulk operations --------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                param.grad = Tensor.from_array(param.grad.array * 0)

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every submodule (children first) and on self, like PyTorch."""
        for module in reversed(list(self.modules())):
            fn(module)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move/cast parameters and buffers in place (floating ones only for a dtype)."""
        with no_grad():
            for table in ("_parameters", "_buffers"):
                for module in self.modules():
                    for tensor in getattr(module, table).values():
                        if tensor is None:
                            continue
                        moved = cast_tensor(tensor, args, kwargs)
                        if moved is not tensor:
                            tensor.array = moved.array
                            if tensor.grad is not None:
                                tensor.grad = cast_tensor(tensor.grad, args, kwargs)
        return self

    def float(self) -> Module:
        return self.to("float32")

    def double(self) -> Module:
        return self.to("float64")

    def cpu(self) -> Module:
        return self.to(device="cpu")

    def cuda(self, device: int | str = 0) -> Module:
        return self.to(device=f"cuda:{device}" if isinstance(device, int) else device)

    # -- state dicts ------------------------------------------------------------------
    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> OrderedDict:
        """Every parameter and persistent buffer by dotted path (detached, sharing memory)."""
        state: OrderedDict = OrderedDict()
        for path, module in self.named_modules(prefix=prefix.rstrip("."),
                                               remove_duplicate=False):
            base = f"{path}." if path else ""
            for name, param in module._parameters.items():
                if param is not None:
                    state[base + name] = param if keep_vars else param.detach()
            for name, buffer in module._buffers.items():
                if buffer is not None and name not in module._non_persistent:
                    state[base + name] = buffer if keep_vars else buffer.detach()
        if self._parent is None:
            self._rename()
        return state

    def load_state_dict(self, state_dict: Any, strict: bool = True) -> IncompatibleKeys:
        """Copy values into parameters and buffers; all checks happen before any copy.

        Raises ``RuntimeError`` listing missing keys, unexpected keys (when ``strict``),
        shape mismatches and values that cannot be converted to the tensor's dtype
        (strings, objects, complex into real); every value is converted before any is
        copied, so nothing is modified when it raises.

        Example
        -------
        >>> model = vizgrad.nn.Linear(3, 2)
        >>> vizgrad.save({"model": model.state_dict()}, "ckpt.npz")
        >>> model.load_state_dict(vizgrad.load("ckpt.npz")["model"])
        IncompatibleKeys(missing_keys=[], unexpected_keys=[])
        """
        return load_into(self, state_dict, strict)

    # -- repr -----------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines.extend(extra.split("\n"))
        for name, module in self._modules.items():
            body = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        head = type(self).__name__ + "("
        if not lines:
            return head + ")"
        if not self._modules and len(lines) == 1:
            return head + lines[0] + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"

    def __getstate__(self) -> dict[str, Any]:
        # The weak link to a parent cannot be copied; the parent's __setstate__ relinks it.
        state = dict(self.__dict__)
        state["_parent"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for child in self._modules.values():
            if child is not None:
                object.__setattr__(child, "_parent", weakref.ref(self))
        # Copied parameters come back unnamed (Parameter pickles as data + requires_grad);
        # children are restored before their parent, so the outermost copy names last and
        # every parameter and buffer ends up with its full dotted path, as in the original.
        self._rename()

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

