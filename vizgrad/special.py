"""``vizgrad.special``: PyTorch's ``torch.special`` functions that vizgrad has.

Example
-------
>>> x = vizgrad.tensor([0.0, 2.0], requires_grad=True)
>>> vizgrad.special.xlogy(x, vizgrad.tensor([0.0, 1.0])).tolist()
[0.0, 0.0]
>>> vizgrad.special.xlog1py(x, 1.0).grad_fn.name()
'SpecialXlog1PyBackward2'
"""

from __future__ import annotations

from .ops.binary_math import xlog1py, xlogy

__all__ = ["xlog1py", "xlogy"]
