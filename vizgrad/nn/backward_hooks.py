"""Module backward hooks (``register_full_backward_hook``/``_pre_hook``), as PyTorch
implements them (``torch.utils.hooks.BackwardHook``).

When a module with such hooks is called under grad mode, its positional tensor inputs
pass through one ``BackwardHookFunction`` (an identity user Function, so the graph shows
PyTorch's ``BackwardHookFunctionBackward`` node) before forward, and its tensor outputs
through another after it.  The output node's post-hook sees the gradients of the
outputs (``grad_output``: the pre-hooks run there and may replace them); the input
node's post-hook sees the gradients of the inputs (``grad_input``) and calls the full
hooks, which may replace those.  As in PyTorch, forward receives (and the caller gets)
views of the tensors, which must not be modified in place.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

from ..core.custom_function import CustomFunction
from ..core.factory import zeros
from ..core.state import grad_enabled
from ..core.tensor import Tensor

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_level() -> int:
    """The ``stacklevel`` that points a warning at the user's line (the backward() call)."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


class BackwardHookFunction(CustomFunction):
    """The identity on tensors whose node carries a module's backward hooks
    (``torch.nn.modules._functions.BackwardHookFunction``)."""

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:
        """Return the tensors themselves (recorded as views); those that do not require
        grad are non-differentiable outputs."""
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        ctx.set_materialize_grads(False)  # hooks see None where no gradient arrived
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        """The gradients unchanged (zeros where none arrived, as PyTorch's materialized
        ones)."""
        return tuple(grad if grad is not None else
                     zeros(*ctx._result_meta[nr][0], dtype=ctx._result_meta[nr][1],
                           device=ctx._device)
                     for nr, grad in enumerate(grads))


class BackwardHook:
    """One module call's link between the hooks and its two ``BackwardHookFunction``
    nodes (``torch.utils.hooks.BackwardHook``)."""

    def __init__(self, module: Any, user_hooks: list, user_pre_hooks: list) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_outputs = -1
        self.output_tensors_index: list | None = None
        self.n_inputs = -1
        self.input_tensors_index: list | None = None

    @staticmethod
    def _pack_with_none(indices: list, values: Any, size: int) -> tuple:
        result: list = [None] * size
        for index, value in zip(indices, values):
            result[index] = value
        return tuple(result)

    def _input_hook(self, grad_input: tuple, _: tuple) -> Any:
        if self.grad_outputs is None:
            # The gradient reached the inputs without passing through the outputs
            # (double backward): PyTorch calls no hook then.
            return None
        assert self.input_tensors_index is not None
        result = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, result, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(result):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(result)}")
            result = out
        self.grad_outputs = None
        return tuple(result[index] for index in self.input_tensors_index)

    def _output_hook(self, _: tuple, grad_output: tuple) -> Any:
        assert self.output_tensors_index is not None
        self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                 self.n_outputs)
        if self.user_pre_hooks:
            expected = len(self.grad_outputs)
            for pre_hook in self.user_pre_hooks:
                replaced = pre_hook(self.module, self.grad_outputs)
                if replaced is None:
                    continue
                if len(replaced) != expected:
                    raise RuntimeError("Backward pre hook returned an invalid number of "
                                       f"grad_output, got {len(replaced)}, but expected "
                                       f"{expected}")
                self.grad_outputs = replaced
        local_grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:  # no input requires grad: call them here
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients. See "
                          "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=_user_level())
            grad_inputs = self._pack_with_none([], [], self.n_inputs)
            for user_hook in self.user_hooks:
                result = user_hook(self.module, grad_inputs, self.grad_outputs)
                if result is not None and not (isinstance(result, tuple)
                                               and all(e is None for e in result)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        if local_grad_outputs is not None:
            return tuple(local_grad_outputs[i] for i in self.output_tensors_index)
        return None

    def _apply_on_tensors(self, hook: Callable, args: tuple) -> tuple[tuple, list | None]:
        indices, tensors = [], []
        requires_grad = False
        for index, arg in enumerate(args):
            if isinstance(arg, Tensor):
                indices.append(index)
                tensors.append(arg)
                requires_grad |= arg.requires_grad
        if not (requires_grad and grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        node = next(t.grad_fn for t in new_tensors if t.grad_fn is not None)
        node.register_hook(hook)
        out = list(args)
        for index, value in zip(indices, new_tensors):
            out[index] = value
        return tuple(out), indices

    def setup_input_hook(self, args: tuple) -> tuple:
        """The positional arguments, tensors passed through the input node."""
        result, self.input_tensors_index = self._apply_on_tensors(self._input_hook, args)
        self.n_inputs = len(args)
        return result

    def setup_output_hook(self, output: Any) -> Any:
        """Forward's result, tensors passed through the output node."""
        is_tuple = isinstance(output, tuple)
        args = output if is_tuple else (output,)
        result, self.output_tensors_index = self._apply_on_tensors(self._output_hook, args)
        self.n_outputs = len(args)
        if not is_tuple:
            return result[0]
        return result if type(output) is tuple else type(output)(*result)


def start_backward_hooks(module: Any, args: tuple) -> tuple[BackwardHook, tuple]:
    """Set up a call of ``module`` with backward hooks: ``(hook, args)``, the positional
    tensors passed through the input node (``Module._call_impl``'s part for them)."""
    hook = BackwardHook(module, list(module._backward_hooks.values()),
                        list(module._backward_pre_hooks.values()))
    return hook, hook.setup_input_hook(args)


def finish_backward_hooks(hook: BackwardHook, output: Any) -> Any:
    """Pass forward's (hooked) result through the output node."""
    if not isinstance(output, (Tensor, tuple)):
        warnings.warn("For backward hooks to be called, module output should be a Tensor or "
                      f"a tuple of Tensors but received {type(output)}", stacklevel=3)
    return hook.setup_output_hook(output)
