"""Static graphs (the Paddle refactor design): trace once, compile, replay.

``trace`` records a function's ops as a ``Graph`` of ``Op``s over named buffers
(``TensorAttr``); compilers turn it into a whole training step (``compile_backward``,
``compile_optimizer``, ``compile_inplace``, ``compile_data_parallel``, each
``Graph -> Graph``); an ``Engine`` replays it on the arrays a ``Workspace`` owns.

Example
-------
>>> from vizgrad import nn, static
>>> import vizgrad.nn.functional as F
>>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
>>> x, y = vizgrad.randn(8, 4), vizgrad.randn(8, 1)
>>> g = static.trace(lambda x, y: F.mse_loss(model(x), y), x, y, input_names=["x", "y"])
>>> step = static.compile_optimizer(static.compile_backward(g), "sgd", lr=0.1)
>>> engine = static.Engine(static.Workspace(), step)
>>> engine.run(x=x, y=y)                  # the loss, named after its op
{'mseloss': array(..., dtype=float32)}
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_names

# Each part loads on first use (vizgrad/_lazy.py): render/ only asks whether a value is a
# Graph (static/graph.py), which must not load the compilers, the engine and optim/.
_NAMES = {
    ".compile_backward": ["compile_backward"],
    ".compile_inplace": ["compile_inplace"],
    ".compile_optimizer": ["compile_optimizer"],
    ".compile_parallel": ["compile_data_parallel"],
    ".engine": ["Engine"],
    ".graph": ["Graph", "Op", "TensorAttr"],
    ".meta": ["MetaArray", "meta_forwards"],
    ".shapes": ["missing_rules"],
    ".stateful": ["ModeChangedWarning"],
    ".trace": ["Recording", "recording", "trace"],
    ".workspace": ["Workspace"],
}
#: its modules, as attributes too (``vizgrad.static.shapes``), as when all were imported
#: (where a module and its function share a name, ``static.trace``, the name is the function)
_MODULES = ["compile_parallel", "engine", "graph", "meta", "shapes", "stateful", "tensors",
            "workspace"]
__getattr__, __dir__ = lazy_names(__name__, _NAMES, _MODULES)

if TYPE_CHECKING:  # what editors and type checkers read; at run time __getattr__ gives them
    from .compile_backward import compile_backward
    from .compile_inplace import compile_inplace
    from .compile_optimizer import compile_optimizer
    from .compile_parallel import compile_data_parallel
    from .engine import Engine
    from .graph import Graph, Op, TensorAttr
    from .meta import MetaArray, meta_forwards
    from .shapes import missing_rules
    from .stateful import ModeChangedWarning
    from .trace import Recording, recording, trace
    from .workspace import Workspace


__all__ = ["Engine", "Graph", "MetaArray", "ModeChangedWarning", "Op", "TensorAttr", "Workspace",
           "compile_backward", "meta_forwards", "missing_rules", "Recording", "recording",
           "compile_data_parallel", "compile_inplace", "compile_optimizer", "trace"]
