"""Adapters that present other libraries' backward graphs through :mod:`vizgrad.graph`.

Nothing here is imported by ``import vizgrad``: :mod:`vizgrad.graph` loads an
adapter the first time it meets one of that library's tensors or nodes (found by
``sys.modules``, never by importing the library).

* :mod:`vizgrad.adapters.torch`: PyTorch's autograd nodes (``tensor.grad_fn``).
"""
