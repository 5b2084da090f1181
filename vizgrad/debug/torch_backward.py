"""See a script's PyTorch ``backward()`` calls, for ``vizgrad render`` / ``inspect``.

:func:`vizgrad.debug.script_run.run_script` records vizgrad's backward calls through
:func:`vizgrad.on_backward`; PyTorch has no such hook, so while a script runs its
public entry points ``torch.Tensor.backward`` and ``torch.autograd.backward`` are
wrapped (and put back afterwards).  torch is never imported here: if the script
has not imported it yet, an import hook wraps them right after it does.

Example
-------
>>> import torch
>>> seen = []
>>> watch = TorchBackwardWatch(on_call=seen.append, after_call=lambda: None)
>>> watch.start()
>>> loss = torch.ones(2, requires_grad=True).sum()  # the script runs
>>> loss.backward()                                  # ... and calls on_call([loss])
>>> watch.stop()
>>> seen
[[tensor(2., grad_fn=<SumBackward0>)]]
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Callable
from typing import Any

from vizgrad import graph


class _PatchAfterImport(importlib.abc.MetaPathFinder):
    """Finds ``torch`` through the other finders and runs a callback once it is loaded."""

    def __init__(self, callback: Callable[[Any], None]) -> None:
        self.callback = callback
        self.searching = False

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        # Two watches at once (anomaly mode and `vizgrad render`) each ask the other
        # finders: the one already searching answers None, or they would ask each other
        # for ever.  The inner one wraps the real loader, the outer one wraps that.
        if fullname != "torch" or self.searching:
            return None
        self.searching = True
        try:
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
        finally:
            self.searching = False
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, self.callback)
        return spec


class _Loader(importlib.abc.Loader):
    """Delegates to the real loader; after ``exec_module`` puts it back and calls back."""

    def __init__(self, inner: Any, callback: Callable[[Any], None]) -> None:
        self.inner = inner
        self.callback = callback

    def create_module(self, spec: Any) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        spec = module.__spec__
        if spec is not None:  # the real loader again, for anything that reads it later
            spec.loader = self.inner
        module.__loader__ = self.inner
        self.inner.exec_module(module)
        self.callback(module)

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, ...
        return getattr(self.inner, name)


class TorchBackwardWatch:
    """Calls ``on_call(outputs)`` before and ``after_call()`` after every PyTorch backward.

    ``Tensor.backward`` calls ``torch.autograd.backward`` itself: that inner call
    is not counted again.  ``start()`` patches now if torch is loaded, else when the
    script imports it; ``stop()`` undoes everything.
    """

    def __init__(self, on_call: Callable[[list], None], after_call: Callable[[], None], *,
                 grad: bool = False, on_failure: Callable[[], None] | None = None) -> None:
        self.on_call = on_call
        self.after_call = after_call
        self.grad = grad  # torch.autograd.grad too (its outputs are the roots)
        self.on_failure = on_failure  # called when the backward raised
        self.after_import: Callable[[Any], None] | None = None  # once torch is patched
        self._patched: list[tuple[Any, str, Any]] = []
        self._finder: _PatchAfterImport | None = None
        self.inside = 0  # > 0 while a patched backward runs

    def start(self) -> None:
        torch = sys.modules.get("torch")
        if torch is not None and hasattr(torch, "autograd"):
            self._patch(torch)
        else:
            self._finder = _PatchAfterImport(self._patch)
            sys.meta_path.insert(0, self._finder)

    def stop(self) -> None:
        if self._finder is not None:
            if self._finder in sys.meta_path:
                sys.meta_path.remove(self._finder)
            self._finder = None
        for owner, attribute, original in reversed(self._patched):
            setattr(owner, attribute, original)
        self._patched.clear()

    def _patch(self, torch: Any) -> None:
        if self._finder is not None and self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)
        entries = [(torch.Tensor, "backward"), (torch.autograd, "backward")]
        if self.grad:
            entries.append((torch.autograd, "grad"))
        for owner, attribute in entries:
            original = owner.__dict__[attribute] if isinstance(owner, type) else getattr(
                owner, attribute)
            setattr(owner, attribute, self._wrap(original))
            self._patched.append((owner, attribute, original))
        if self.after_import is not None:
            self.after_import(torch)

    def _wrap(self, original: Any) -> Any:
        watch = self

        def backward(*args: Any, **kwargs: Any) -> Any:
            if watch.inside:  # Tensor.backward's own call of torch.autograd.backward
                return original(*args, **kwargs)
            first = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
            outputs = [first] if graph.is_tensor(first) else list(first or ())
            watch.on_call(outputs)
            watch.inside += 1
            try:
                result = original(*args, **kwargs)
            except BaseException:
                if watch.on_failure is not None:
                    watch.on_failure()
                raise
            finally:
                watch.inside -= 1
            watch.after_call()
            return result

        backward.__wrapped__ = original
        backward.__doc__ = original.__doc__
        backward.__name__ = getattr(original, "__name__", "backward")
        return backward
