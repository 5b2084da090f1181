"""Matrix products (matmul, bmm, outer, einsum) and triangular masks (tril, triu)."""

from __future__ import annotations

import string
from collections import Counter

from ..core.backend import array_module
from ..core.function import Function
from ..core.tensor import Tensor
from .operands import same_dtype as _same_dtype
from .operands import save_crossed, saved_crossed


class Matmul(Function):
    """``input @ other`` with NumPy's rules (1-D operands, broadcast batch dims)."""

    backward_name = "MmBackward0"
    saved_if_needed = ("input", "other")

    @staticmethod
    def forward(ctx, input, other):
        if input.ndim == 0 or other.ndim == 0:
            raise ValueError("matmul: both operands need at least one dimension")
        _same_dtype("matmul", input, other)
        save_crossed(ctx, 0, input, other)  # each only for the other's gradient
        return array_module(input).matmul(input, other)

    @staticmethod
    def backward(ctx, grad):
        input, other = saved_crossed(ctx, 0)
        (input_shape, _), (other_shape, _) = ctx._out_meta
        g = grad
        if len(input_shape) == 1:
            g = g.unsqueeze(-2)
        if len(other_shape) == 1:
            g = g.unsqueeze(-1)
        grad_input = grad_other = None
        if other is not None:
            b = other.unsqueeze(-1) if other.ndim == 1 else other
            grad_input = g @ b.transpose(-1, -2)
            if len(input_shape) == 1:
                grad_input = grad_input.squeeze(-2)
        if input is not None:
            a = input.unsqueeze(0) if input.ndim == 1 else input
            grad_other = a.transpose(-1, -2) @ g
            if len(other_shape) == 1:
                grad_other = grad_other.squeeze(-1)
        return grad_input, grad_other


def matmul(input, other):
    return Matmul.apply(input, other)


class Bmm(Function):
    """Batched matrix product of two 3-D tensors (no broadcasting, as in PyTorch)."""

    saved_if_needed = ("input", "mat2")

    @staticmethod
    def forward(ctx, input, mat2):
        if input.ndim != 3 or mat2.ndim != 3:
            raise ValueError(f"bmm expects two 3-D tensors, got {input.ndim}-D and {mat2.ndim}-D")
        if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
            raise ValueError(f"bmm: shapes {input.shape} and {mat2.shape} do not match")
        _same_dtype("bmm", input, mat2)
        save_crossed(ctx, 0, input, mat2)
        return array_module(input).matmul(input, mat2)

    @staticmethod
    def backward(ctx, grad):
        input, mat2 = saved_crossed(ctx, 0)
        return (None if mat2 is None else Bmm.apply(grad, mat2.transpose(1, 2)),
                None if input is None else Bmm.apply(input.transpose(1, 2), grad))


class Tril(Function):
    @staticmethod
    def forward(ctx, input, diagonal):
        ctx.diagonal = diagonal
        return array_module(input).tril(input, diagonal)

    @staticmethod
    def backward(ctx, grad):
        return Tril.apply(grad, ctx.diagonal), None


class Triu(Function):
    @staticmethod
    def forward(ctx, input, diagonal):
        ctx.diagonal = diagonal
        return array_module(input).triu(input, diagonal)

    @staticmethod
    def backward(ctx, grad):
        return Triu.apply(grad, ctx.diagonal), None


def _parse_einsum(equation, shapes):
    """Explicit form of an einsum equation: one label string per operand (``...`` spelled
    out with spare letters, right-aligned), the output labels, and the unused letters."""
    equation = equation.replace(" ", "")
    lhs, arrow, output = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: the equation {equation!r} has {len(terms)} operands, "
                         f"but {len(shapes)} tensors were given")
    spare = [c for c in string.ascii_letters if c not in equation]
    widths = [len(shape) - len(term) + 3 for term, shape in zip(terms, shapes) if "..." in term]
    ellipsis = "".join(spare[:max(widths, default=0)])
    spare = spare[len(ellipsis):]
    parsed = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            width = len(shape) - len(term) + 3
            term = term.replace("...", ellipsis[len(ellipsis) - width:])
        if len(term) != len(shape):
            raise ValueError(f"einsum: the subscripts {term!r} do not fit a tensor of shape "
                             f"{tuple(shape)}")
        parsed.append(term)
    if arrow:
        output = output.replace("...", ellipsis)
    else:  # NumPy's implicit output: broadcast dims, then labels used once, sorted
        counts = Counter(lhs.replace("...", "").replace(",", ""))
        output = ellipsis + "".join(sorted(c for c, n in counts.items() if n == 1))
    return parsed, output, spare


class Einsum(Function):
    """Einstein summation over any equation NumPy accepts (implicit output and ``...`` too).

    The gradient of each operand is itself an einsum of the output gradient with the other
    operands; repeated labels (diagonals) and labels summed within one operand are handled
    with identity and ones operands, so second derivatives come for free.
    """

    @staticmethod
    def forward(ctx, equation, operands):
        parsed, output, _ = _parse_einsum(equation, [o.shape for o in operands])
        ctx.equation = ",".join(parsed) + "->" + output
        for operand in operands[1:]:
            _same_dtype("einsum", operands[0], operand)
        if ctx._grad_mask:
            ctx.save_for_backward(*[o for o, need in zip(operands, _needed(ctx)) if need])
        return array_module(operands[0]).einsum(equation.replace(" ", ""), *operands)

    @staticmethod
    def backward(ctx, grad):
        saved = iter(ctx.saved_values)
        operands = [next(saved) if need else None for need in _needed(ctx)]
        inputs, output = ctx.equation.split("->")
        terms = inputs.split(",")
        spare = [c for c in string.ascii_letters if c not in ctx.equation]
        sizes = {}
        for term, (shape, _) in zip(terms, ctx._out_meta):
            for label, extent in zip(term, shape):
                sizes[label] = max(sizes.get(label, 1), extent)
        xp = array_module(grad.array)
        dtype = grad.array.dtype
        grads = []
        for i, term in enumerate(terms):
            if ctx.next_functions[i][0] is None:
                grads.append(None)
                continue
            target, extra_terms, extra = [], [], []
            for label in term:
                if label in target:  # a diagonal: a fresh label tied to the first by eye(n)
                    fresh = spare.pop()
                    extra_terms.append(label + fresh)
                    extra.append(xp.eye(sizes[label], dtype=dtype))
                    label = fresh
                target.append(label)
            known = set(output + "".join(extra_terms))
            known.update(*(t for j, t in enumerate(terms) if j != i))
            lonely = [label for label in target if label not in known]
            if lonely:  # summed inside this operand only: its gradient is broadcast
                extra_terms.append("".join(lonely))
                extra.append(xp.ones(tuple(sizes[label] for label in lonely), dtype=dtype))
            others = [t for j, t in enumerate(terms) if j != i]
            subscripts = ",".join([output, *others, *extra_terms]) + "->" + "".join(target)
            tensors = [grad, *(_broadcast(o, t, sizes) for j, (o, t) in
                               enumerate(zip(operands, terms)) if j != i),
                       *(Tensor._make(a) for a in extra)]
            grads.append(Einsum.apply(subscripts, tensors))
        return None, grads


def _needed(ctx) -> list[bool]:
    """Per einsum operand: whether another operand's gradient needs it (only those are
    saved, as PyTorch's products do)."""
    wanted = [node is not None for node in ctx._next_nodes]
    return [any(w for k, w in enumerate(wanted) if k != j) for j in range(len(wanted))]


def _broadcast(operand, term, sizes):
    """Expand size-1 dims to their label's full size (not every backend's einsum
    broadcasts explicit labels)."""
    shape = tuple(sizes[label] for label in term)
    return operand if operand.shape == shape else operand.expand(shape)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product: ``(b, n, m) @ (b, m, p) -> (b, n, p)``."""
    return Bmm.apply(input, mat2)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two vectors (``input[:, None] * vec2``, as PyTorch records it)."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise ValueError(f"outer expects two 1-D tensors, got {input.ndim}-D and {vec2.ndim}-D")
    return input.reshape(input.shape[0], 1) * vec2


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation, e.g. ``einsum('bij,bjk->bik', a, b)`` or ``einsum('ii', m)``.

    >>> a = vizgrad.ones(2, 3, requires_grad=True)
    >>> vizgrad.einsum('ij->j', a).tolist()
    [2.0, 2.0, 2.0]
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return Einsum.apply(equation, list(operands))


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """Lower triangle of the last two dims (entries above ``diagonal`` set to 0)."""
    return Tril.apply(input, diagonal)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """Upper triangle of the last two dims (entries below ``diagonal`` set to 0)."""
    return Triu.apply(input, diagonal)


class Mm(Function):
    """Matrix product of two 2-D tensors (``torch.mm``: no broadcasting)."""

    @staticmethod
    def forward(ctx, self, mat2):
        if self.ndim != 2 or mat2.ndim != 2:
            raise ValueError(f"mm expects two 2-D tensors, got {self.ndim}-D and {mat2.ndim}-D")
        ctx.save_for_backward(self, mat2)
        return array_module(self).matmul(self, mat2)

    @staticmethod
    def backward(ctx, grad):
        self, mat2 = ctx.saved_values
        return (Mm.apply(grad, mat2.t()) if ctx.needs_grad(0) else None,
                Mm.apply(self.t(), grad) if ctx.needs_grad(1) else None)


class Mv(Function):
    """Matrix-vector product (``torch.mv``)."""

    @staticmethod
    def forward(ctx, self, vec):
        if self.ndim != 2 or vec.ndim != 1:
            raise ValueError(f"mv expects a 2-D and a 1-D tensor, got {self.ndim}-D and "
                             f"{vec.ndim}-D")
        ctx.save_for_backward(self, vec)
        return array_module(self).matmul(self, vec)

    @staticmethod
    def backward(ctx, grad):
        self, vec = ctx.saved_values
        return (grad.unsqueeze(1) * vec if ctx.needs_grad(0) else None,
                Mv.apply(self.t(), grad) if ctx.needs_grad(1) else None)


class Dot(Function):
    """Inner product of two 1-D tensors (``torch.dot``)."""

    @staticmethod
    def forward(ctx, self, tensor):
        if self.ndim != 1 or tensor.ndim != 1:
            raise ValueError(f"dot expects two 1-D tensors, got {self.ndim}-D and "
                             f"{tensor.ndim}-D")
        ctx.save_for_backward(self, tensor)
        return array_module(self).asarray(array_module(self).dot(self, tensor))

    @staticmethod
    def backward(ctx, grad):
        self, tensor = ctx.saved_values
        return (grad * tensor if ctx.needs_grad(0) else None,
                grad * self if ctx.needs_grad(1) else None)


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """``input @ mat2`` for two matrices. Example: ``vizgrad.mm(a, b)``."""
    return Mm.apply(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """``input @ vec`` for a matrix and a vector. Example: ``vizgrad.mv(a, v)``."""
    return Mv.apply(input, vec)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two vectors. Example: ``vizgrad.dot(u, v)``."""
    return Dot.apply(input, tensor)
