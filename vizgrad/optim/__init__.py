"""Optimizers and learning-rate schedulers with PyTorch's update formulas.

Example
-------
>>> nn = vizgrad.nn
>>> model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
>>> loss = model(vizgrad.randn(8, 3)).pow(2).mean()
>>> opt = vizgrad.optim.Adam(model.parameters(), lr=1e-3)
>>> opt.zero_grad(); loss.backward(); opt.step()
"""

from . import lr_scheduler
from .adam import Adam, AdamW
from .adaptive import Adadelta, Adamax, NAdam
from .optimizer import Optimizer
from .rmsprop import Adagrad, RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam", "Optimizer",
           "RMSprop", "lr_scheduler"]
