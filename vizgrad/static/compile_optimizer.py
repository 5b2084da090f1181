"""``compile_optimizer``: add one update op per parameter, writing back to the parameter.

Each ``Update`` op (phase ``optimizer``) runs the same formula as ``vizgrad.optim``'s
optimizer of that name on the workspace arrays (the optimizer's own ``_update``), so N
replayed steps match N eager ``opt.step()`` calls.  Optimizer state (momentum buffers,
Adam's moments and step count) lives in the workspace as ``state/<param>/<key>``.

Example
-------
>>> import vizgrad.nn.functional as F
>>> from vizgrad import nn
>>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
>>> x, y = vizgrad.randn(8, 4), vizgrad.randn(8, 1)
>>> loss_fn = lambda x, y: F.mse_loss(model(x), y)
>>> from vizgrad.static import compile_backward, trace
>>> g = trace(loss_fn, x, y)
>>> step = compile_optimizer(compile_backward(g), "adam", lr=1e-3)
>>> [op.kind for op in step.ops if op.phase == "optimizer"]
['Update', 'Update', 'Update', 'Update']
"""

from __future__ import annotations

from typing import Any

from .. import optim
from .compile_backward import grad_name
from .graph import Graph, Op, TensorAttr
from .tensors import wrap

#: name -> (optimizer class, fixed hyper-parameters, state buffers shaped like the param)
_OPTIMIZERS: dict[str, tuple[type, dict[str, Any], tuple[str, ...]]] = {
    "sgd": (optim.SGD, {}, ()),
    "momentum": (optim.SGD, {"momentum": 0.9}, ("momentum_buffer",)),
    "adam": (optim.Adam, {}, ("exp_avg", "exp_avg_sq")),
}


def compile_optimizer(graph: Graph, optimizer: str, **hyper: Any) -> Graph:
    """A new graph: ``graph`` (which has backward ops) plus an update of every parameter
    that got a gradient.  ``optimizer`` is ``"sgd"``, ``"momentum"`` (SGD with
    ``momentum=0.9`` unless given) or ``"adam"``; ``hyper`` are the optimizer's
    keyword arguments (``lr=``, ``weight_decay=`` ...), as ``vizgrad.optim`` takes them."""
    try:
        cls, defaults, state_keys = _OPTIMIZERS[optimizer.lower()]
    except KeyError:
        raise ValueError(f"compile_optimizer: unknown optimizer {optimizer!r}; "
                         f"use one of {sorted(_OPTIMIZERS)}") from None
    if not any(op.phase == "backward" for op in graph.ops):
        raise ValueError("compile_optimizer: the graph has no backward ops; "
                         "run compile_backward first")
    if any(op.phase == "optimizer" for op in graph.ops):
        raise ValueError("compile_optimizer: the graph already has optimizer ops")
    settings = {**defaults, **hyper}
    if settings.get("momentum") and state_keys == ():
        state_keys = ("momentum_buffer",)
    new = graph.copy()
    for param in graph.parameters:
        grad = grad_name(param)
        if grad not in new.tensors:
            continue  # no gradient reaches it: PyTorch's optimizers skip it too
        attr = new.tensors[param]
        # One optimizer object per parameter: the update formula and its hyper-
        # parameters (a placeholder tensor stands for the parameter; its state is
        # kept in the workspace, not in the object).
        stand_in = wrap(attr.dtype.type(0) * _ones(attr), requires_grad=True)
        update = cls([stand_in], **settings)
        state = [f"state/{param}/{key}" for key in state_keys]
        for name in state:
            new.add_tensor(TensorAttr(name, attr.shape, attr.dtype, attr.device, False,
                                      "state"))
        if cls is optim.Adam:
            new.add_tensor(TensorAttr(f"state/{param}/step", (), _int64(), attr.device,
                                      False, "state"))
            state.append(f"state/{param}/step")
        new.ops.append(Op(f"{optimizer}/{param}", "Update", [param, grad, *state], [param],
                          "optimizer", update,
                          attrs={"optimizer": optimizer, **settings,
                                 "state_keys": (*state_keys,
                                                *(("step",) if cls is optim.Adam else ()))}))
    return new


def _ones(attr: TensorAttr) -> Any:
    import numpy as np

    return np.ones((1,), dtype=attr.dtype)


def _int64() -> Any:
    import numpy as np

    return np.dtype(np.int64)
