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

#: name -> (optimizer class, fixed hyper-parameters)
_OPTIMIZERS: dict[str, tuple[type, dict[str, Any]]] = {
    "sgd": (optim.SGD, {}),
    "momentum": (optim.SGD, {"momentum": 0.9}),
    "adam": (optim.Adam, {}),
    "adamw": (optim.AdamW, {}),
}


def compile_optimizer(graph: Graph, optimizer: str, **hyper: Any) -> Graph:
    """A new graph: ``graph`` (which has backward ops) plus an update of every parameter
    that got a gradient.  ``optimizer`` is ``"sgd"``, ``"momentum"`` (SGD with
    ``momentum=0.9`` unless given), ``"adam"`` or ``"adamw"``; ``hyper`` are the
    optimizer's keyword arguments (``lr=``, ``weight_decay=``, ``maximize=``,
    ``amsgrad=`` ...), as ``vizgrad.optim`` takes them."""
    try:
        cls, defaults = _OPTIMIZERS[optimizer.lower()]
    except KeyError:
        raise ValueError(f"compile_optimizer: unknown optimizer {optimizer!r}; "
                         f"use one of {sorted(_OPTIMIZERS)}") from None
    if not any(op.phase == "backward" for op in graph.ops):
        raise ValueError("compile_optimizer: the graph has no backward ops; "
                         "run compile_backward first")
    if any(op.phase == "optimizer" for op in graph.ops):
        raise ValueError("compile_optimizer: the graph already has optimizer ops")
    settings = {**defaults, **hyper}
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
        arrays, scalars = _state_of(update, attr)
        state = []
        for key in arrays:
            state.append(new.add_tensor(TensorAttr(
                f"state/{param}/{key}", attr.shape, attr.dtype, attr.device, False,
                "state")).name)
        for key, dtype in scalars.items():
            state.append(new.add_tensor(TensorAttr(
                f"state/{param}/{key}", (), dtype, attr.device, False, "state")).name)
        new.ops.append(Op(f"{optimizer}/{param}", "Update", [param, grad, *state], [param],
                          "optimizer", update,
                          attrs={"optimizer": optimizer, **settings,
                                 "state_keys": (*arrays, *scalars),
                                 "scalar_state": dict(scalars)}))
    return new


def _state_of(update: Any, attr: TensorAttr) -> tuple[list[str], dict[str, Any]]:
    """The state the optimizer keeps per parameter, found by running its own update once
    on a one-element stand-in: arrays shaped like the parameter, and numbers (Adam's step
    count) kept as 0-d arrays so checkpoints store them.  Whatever options add state
    (``momentum``, ``amsgrad``) are covered without a list to keep in step."""
    import numpy as np

    probe: dict[str, Any] = {}
    update._update(update.param_groups[0], _ones(attr), _ones(attr), probe)
    arrays = [key for key, value in probe.items() if hasattr(value, "shape")]
    scalars = {key: np.dtype(np.int64 if isinstance(value, int) else np.float64)
               for key, value in probe.items() if not hasattr(value, "shape")}
    return arrays, scalars


def _ones(attr: TensorAttr) -> Any:
    import numpy as np

    return np.ones((1,), dtype=attr.dtype)
