"""PyTorch's ``torch.autograd.functional``: vjp, jvp, jacobian, hessian, vhp, hvp.

Each takes a function of Tensors and the point to differentiate at, and builds what it
needs with ``vizgrad.autograd.grad``; ``create_graph=True`` keeps the result
differentiable, ``strict=True`` raises where an output does not depend on an input
(instead of giving zeros), as in PyTorch.  ``jvp`` and ``hvp`` use the double-backward
trick (PyTorch's default); ``jacobian(..., strategy="forward-mode")`` uses forward AD.

Example
-------
>>> from vizgrad.autograd.functional import hessian, jvp
>>> x = vizgrad.tensor([1.0, 2.0], dtype=vizgrad.float64)
>>> hessian(lambda t: (t ** 3).sum(), x)      # diag(6 x)
tensor([[ 6.,  0.],
        [ 0., 12.]], dtype=float64)
>>> jvp(lambda t: t ** 2, x, vizgrad.ones_like(x))[1]  # 2 x
tensor([2., 4.], dtype=float64)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.engine import grad as _grad
from ..core.state import enable_grad
from ..core.tensor import Tensor

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _as_tuple(value: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    # Only a tuple counts as several (a list is one bad value), as in PyTorch.
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for index, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"value at index {index}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where} has type {type(item)}.")
    return is_tuple, items


def _tuple_postprocess(result: Any, to_unpack: Any) -> Any:
    """Undo ``_as_tuple`` (one flag, or two for the nested results of jacobian/hessian)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            result = tuple(r[0] for r in result)
        if not to_unpack[0]:
            result = result[0]
    elif not to_unpack:
        result = result[0]
    return result


def _grad_preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    # With create_graph the user's graph must stay connected (a view keeps it); without,
    # fresh leaves keep the work off the user's tensors.
    if create_graph:
        return tuple(x.view_as(x) if x.requires_grad else x.detach().requires_grad_(need_graph)
                     for x in inputs)
    return tuple(x.detach().requires_grad_(need_graph) for x in inputs)


def _grad_postprocess(values: tuple, create_graph: bool) -> tuple:
    if isinstance(values[0], Tensor) or values[0] is None:
        return tuple(v if create_graph or v is None else v.detach() for v in values)
    return tuple(_grad_postprocess(v, create_graph) for v in values)


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for index, (el_v, el_other) in enumerate(zip(v, other)):
        if tuple(el_v.shape) != tuple(el_other.shape):
            prepend = f"Entry {index} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be "
                               f"{tuple(el_other.shape)} but got {tuple(el_v.shape)}.")


def _check_requires_grad(values: tuple, kind: str, strict: bool) -> None:
    if not strict:
        return
    for index, value in enumerate(values):
        if value is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {index}. This is not allowed in strict mode.")
        if not value.requires_grad:
            if kind == "hessian":
                raise RuntimeError(
                    f"The hessian of the user-provided function with respect to input "
                    f"{index} is independent of the input. This is not allowed in strict "
                    "mode. You should ensure that your function is thrice differentiable "
                    "and that the hessian depends on the inputs.")
            if kind == "jacobian":
                raise RuntimeError(
                    f"While computing the hessian, found that the jacobian of the "
                    f"user-provided function with respect to input {index} is independent "
                    "of the input. This is not allowed in strict mode. You should ensure "
                    "that your function is twice differentiable and that the jacobian "
                    "depends on the inputs (this would be violated by a linear function "
                    "for example).")
            if kind == "grad_inputs":
                raise RuntimeError(f"The gradient with respect to input {index} is "
                                   "independent of the inputs of the user-provided function. "
                                   "This is not allowed in strict mode.")
            raise RuntimeError(f"Output {index} of the user-provided function does not "
                               "require gradients. The outputs must be computed in a "
                               "differentiable manner from the input when running in "
                               "strict mode.")


def _autograd_grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None,
                   create_graph: bool = False, retain_graph: bool | None = None) -> tuple:
    """``grad`` over the outputs that require grad; None for unreachable inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_grads = [], []
    for out, grad_out in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs.append(out)
            new_grads.append(grad_out)
    if not new_outputs:
        return (None,) * len(inputs)
    wanted = [x for x in inputs if x.requires_grad]
    found = iter(_grad(new_outputs, wanted, new_grads, retain_graph=retain_graph,
                       create_graph=create_graph, allow_unused=True) if wanted else ())
    return tuple(next(found) if x.requires_grad else None for x in inputs)


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool,
                   stage: str) -> tuple:
    from ..core.factory import zeros_like

    result = []
    for index, (grad_value, ref) in enumerate(zip(grads, refs)):
        if grad_value is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(f"The output of the user-provided function is "
                                       f"independent of input {index}. This is not allowed "
                                       "in strict mode.")
                if stage == "back_trick":
                    raise RuntimeError(f"The gradient with respect to the input is "
                                       f"independent of entry {index} in the grad_outputs "
                                       "when using the double backward trick to compute "
                                       "forward mode gradients. This is not allowed in "
                                       "strict mode.")
                if stage == "double_back":
                    raise RuntimeError(f"The jacobian of the user-provided function is "
                                       f"independent of input {index}. This is not allowed "
                                       "in strict mode.")
                raise RuntimeError(f"The hessian of the user-provided function is "
                                   f"independent of entry {index} in the grad_jacobian. This "
                                   "is not allowed in strict mode as it prevents from using "
                                   "the double backward trick to replace forward mode AD.")
            grad_value = zeros_like(ref)
        result.append(grad_value)
    return tuple(result)


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: a vector-Jacobian product at ``inputs``.

    Example
    -------
    >>> out, vjp_value = vjp(lambda x: x.exp().sum(), vizgrad.zeros(3))  # (3., ones)
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided "
                                              "function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        else:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided "
                                   "function returns a single Tensor with a single element.")
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        vjp_value = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    vjp_value = _grad_postprocess(vjp_value, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(vjp_value, is_inputs_tuple))


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)`` by the double-backward trick, as PyTorch's default.

    Example
    -------
    >>> out, jvp_value = jvp(lambda x: x ** 2, vizgrad.ones(3), vizgrad.ones(3))  # 2s
    """
    from ..core.factory import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _grad_preprocess(v, create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple)
        else:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided "
                                              "function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # The gradient of (grad_outputs . J) with respect to grad_outputs, against v, is J v.
        grad_outputs = tuple(zeros_like(out).requires_grad_(True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
        if create_graph:
            with enable_grad():
                grad_res = _autograd_grad(grad_inputs, grad_outputs, v,
                                          create_graph=create_graph)
                jvp_value = _fill_in_zeros(grad_res, outputs, strict, create_graph,
                                           "back_trick")
        else:
            grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
            jvp_value = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    jvp_value = _grad_postprocess(jvp_value, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(jvp_value, is_outputs_tuple))


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: ``result[i][j]`` has shape
    ``outputs[i].shape + inputs[j].shape`` (tuples collapsed as PyTorch does).

    ``strategy="forward-mode"`` builds it column by column with forward AD
    (``vizgrad.autograd.forward_ad``); PyTorch requires ``vectorize=True`` for that,
    vizgrad loops instead (``vectorize`` is accepted and has no effect).

    Example
    -------
    >>> jacobian(lambda x: x ** 2, vizgrad.tensor([1.0, 2.0]))  # diag(2 x)
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                         'Hint: If your function has more outputs than inputs, '
                         '"forward-mode" tends to be more performant. Otherwise, prefer to '
                         'use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` "
                                      "and `strategy=\"forward-mode\"` are not supported together "
                                      "(yet). Please either set `create_graph=False` or "
                                      "`strategy=\"reverse-mode\"`.")
        from .forward_mode_jacobian import forward_jacobian

        return forward_jacobian(func, inputs, strict)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided "
                                              "function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        jacobian_rows = []
        for index, out in enumerate(outputs):
            rows: list[list] = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(flat.numel()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True,
                                    create_graph=create_graph)
                for el_idx, (rows_el, vj_el, inp_el) in enumerate(zip(rows, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is independent "
                                f"of input {index}. This is not allowed in strict mode when "
                                "create_graph=True.")
                        rows_el.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(f"Output {index} of the user-provided function "
                                               f"is independent of input {el_idx}. This is "
                                               "not allowed in strict mode.")
                        from ..core.factory import zeros_like
                        rows_el.append(zeros_like(inp_el))
            jacobian_rows.append(tuple(_stack_rows(rows_el, inp_el, out)
                                       for rows_el, inp_el in zip(rows, inputs)))
        result = _grad_postprocess(tuple(jacobian_rows), create_graph)
    return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def _stack_rows(rows: list, inp: Tensor, out: Tensor) -> Tensor:
    from ..ops import stack

    shape = tuple(out.shape) + tuple(inp.shape)
    if not rows:  # an empty output
        from ..core.factory import zeros

        return zeros(shape, dtype=inp.dtype)
    return stack(rows, 0).reshape(shape)


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function at ``inputs`` (a Jacobian of its gradient).

    Example
    -------
    >>> hessian(lambda x: (x ** 3).sum(), vizgrad.tensor([1.0, 2.0]))  # diag(6 x)
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp: Tensor) -> Tensor:
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function",
                                        "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp: Tensor) -> tuple:
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)  # forward over reverse
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _second_order(name: str, func: Callable, inputs: Any, v: Any, create_graph: bool,
                  strict: bool) -> tuple[Any, Any]:
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", name)
            v = _grad_preprocess(v, create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided "
                                              "function", name)
        _check_requires_grad(outputs, "outputs", strict)
        if is_outputs_tuple or not isinstance(outputs[0], Tensor):
            raise RuntimeError(f"The function given to {name} should return a single Tensor")
        if outputs[0].numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {name} should "
                               "contain a single element")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        if name == "vhp":
            grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
            result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
        else:
            from ..core.factory import zeros_like

            grad_jac = tuple(zeros_like(inp).requires_grad_(True) for inp in inputs)
            double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
            _check_requires_grad(jac, "hessian", strict)
            grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
            result = _fill_in_zeros(grad_res, inputs, strict, create_graph,
                                    "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a scalar function.

    Example
    -------
    >>> x = vizgrad.tensor([1.0, 2.0])
    >>> out, vhp_value = vhp(lambda x: (x ** 3).sum(), x, vizgrad.ones_like(x))
    >>> out, vhp_value                    # sum(x**3), v^T diag(6 x)
    (tensor(9.), tensor([ 6., 12.]))
    """
    return _second_order("vhp", func, inputs, v, create_graph, strict)


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a scalar function (double-backward trick).

    Example
    -------
    >>> x = vizgrad.tensor([1.0, 2.0])
    >>> out, hvp_value = hvp(lambda x: (x ** 3).sum(), x, vizgrad.ones_like(x))
    >>> hvp_value                         # diag(6 x) v
    tensor([ 6., 12.])
    """
    return _second_order("hvp", func, inputs, v, create_graph, strict)
