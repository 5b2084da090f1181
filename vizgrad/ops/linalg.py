"""Matrix products: matmul (as ATen decomposes it), mm, mv, dot, bmm, baddbmm, outer, einsum."""

from __future__ import annotations

import string
from collections import Counter
from typing import Any

from ..core.backend import array_module
from ..core.broadcast import expand
from ..core.dual import bilinear, plus
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.recording import ShapeError
from ..core.state import grad_enabled
from ..core.tensor import Tensor
from .operands import same_dtype as _same_dtype
from .operands import save_crossed, saved_crossed
from .shape_rules import broadcast, layout_of, matmul_shape
from .views import SqueezeDimInPlace, UnsafeView, reshape


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """``input @ other`` with NumPy's rules, recorded as ATen's ``matmul`` decomposes it:
    ``Dot``, ``Mv``, ``unsqueeze -> Mm -> squeeze_`` (``SqueezeBackward4``) for a vector
    times a matrix, ``Mm``; a batch times a vector or matrix (either way round) folded
    into one ``Mv``/``Mm`` when ATen folds (``_should_fold``): the small operand requires
    grad, or the batch folds without a copy; otherwise ``Expand -> reshape -> Bmm ->
    UnsafeView``.

    Example
    -------
    >>> (vizgrad.randn(2, 5, 3) @ vizgrad.randn(3, 4)).shape
    (2, 5, 4)
    """
    a, b = input.ndim, other.ndim
    if a == 0 or b == 0:
        raise ShapeError(f"both arguments to matmul need to be at least 1D, but they are "
                         f"{a}D and {b}D")
    if a == 2 and b == 2:
        return Mm.apply(input, other)
    if a == 1 and b == 1:
        return Dot.apply(input, other)
    if a == 2 and b == 1:
        return Mv.apply(input, other)
    if a == 1 and b == 2:
        return SqueezeDimInPlace.apply(Mm.apply(input.unsqueeze(0), other), 0)
    if input.shape[-1] != other.shape[-2 if b > 1 else -1]:  # said before decomposing
        matmul_shape("matmul", input.array, other.array)  # raises, in PyTorch's words
    if _should_fold(input, other):
        return _folded(input, other)
    try:
        return _batched(input, other)
    except ValueError:  # batch dims that do not broadcast: PyTorch's words, not expand's
        matmul_shape("matmul", input.array, other.array)
        raise


def _should_fold(input: Tensor, other: Tensor) -> bool:
    """ATen's ``should_fold``: fold the larger operand's batch into the rows of one
    ``mm``/``mv`` when the smaller operand requires grad (its gradient is then one
    product, not a batch summed), or when the fold needs no copy."""
    a, b = input.ndim, other.ndim
    first_larger = a >= b
    if not (max(a, b) >= 3 and min(a, b) <= 2):
        return False
    if (other if first_larger else input).requires_grad:
        return True
    if a == 2:  # the result would need a transposed copy
        return False
    big = input.array if first_larger else other.array
    if not big.size:
        return True
    # element strides of a meta array (static graphs), byte strides of a real one: the
    # test below compares ratios, so either unit does
    shape = list(big.shape)
    strides = list(big.strides if hasattr(big, "strides") else layout_of(big))
    if not first_larger:  # other.mT
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _folded(input: Tensor, other: Tensor) -> Tensor:
    """The batch of the larger operand folded into rows: ``reshape -> Mm/Mv ->
    UnsafeView``; with the batch on the right, ``other.mT`` times ``input.t()`` and the
    result transposed back (``mT().contiguous()``)."""
    transpose = other.ndim > input.ndim
    big = other.transpose(-2, -1) if transpose else input
    small = (input.t() if input.ndim == 2 else input) if transpose else other
    shape = big.shape[:-1] + ((small.shape[1],) if small.ndim == 2 else ())
    folded = 1
    for size in big.shape[:-1]:  # not -1: ambiguous when the last dim is 0
        folded *= size
    rows = reshape(big, (folded, big.shape[-1]))
    if small.ndim == 1:
        return UnsafeView.apply(Mv.apply(rows, small), shape)
    out = UnsafeView.apply(Mm.apply(rows, small), shape)
    return out.transpose(-2, -1).contiguous() if transpose else out


def _batched(input: Tensor, other: Tensor) -> Tensor:
    """Both operands expanded to the broadcast batch and flattened into one ``Bmm``: a
    vector on the left expands as a row, one on the right is unsqueezed to a column (the
    result squeezed back), as ATen does."""
    a, b = input.ndim, other.ndim
    left_batch, right_batch = input.shape[:-2], other.shape[:-2]
    if a == 3 and b == 3 and left_batch[0] != right_batch[0]:
        # ATen squeezes a batch of one that requires grad, to fold instead of broadcasting
        if left_batch[0] == 1 and input.requires_grad:
            return matmul(input.squeeze(0), other)
        if right_batch[0] == 1 and other.requires_grad:
            return matmul(input, other.squeeze(0))
    n = input.shape[-2] if a > 1 else 1
    k = input.shape[-1]
    m = other.shape[-1] if b > 1 else 1
    batch = tuple(array_module(input.array).broadcast_shapes(left_batch, right_batch))
    count = 1
    for size in batch:
        count *= size
    left = reshape(expand(input, batch + (n, k)), (count, n, k))
    if b == 1:
        right = reshape(expand(other, batch + (k,)), (count, k)).unsqueeze(2)
    else:
        right = reshape(expand(other, batch + (k, m)), (count, k, m))
    out = Bmm.apply(left, right)
    shape = batch + ((n,) if a > 1 else ()) + ((m,) if b > 1 else ())
    return UnsafeView.apply(out.squeeze(-1) if b == 1 else out, shape)


class Bmm(Function):
    """Batched matrix product of two 3-D tensors (no broadcasting, as in PyTorch)."""

    saved_if_needed = ("input", "mat2")

    @staticmethod
    def infer_shape(input, mat2):
        if input.ndim != 3:
            raise ShapeError("batch1 must be a 3D tensor")
        if mat2.ndim != 3:
            raise ShapeError("batch2 must be a 3D tensor")
        if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
            raise ShapeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                             f"[{input.shape[0]}, {input.shape[2]}] but got: "
                             f"[{mat2.shape[0]}, {mat2.shape[1]}].")
        return MetaArray(input.shape[:2] + mat2.shape[2:], input.dtype)

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

    @staticmethod
    def jvp(args, tangents, result):  # bilinear: one term per operand's tangent
        return bilinear(Bmm.apply, args, tangents)


class Baddbmm(Function):
    """``beta * self + alpha * (batch1 @ batch2)`` over a batch (``BaddbmmBackward0``;
    MultiheadAttention adds its mask to the scores so). ``self`` broadcasts to the result."""

    saved_defaults = {"alpha": 1, "beta": 1}
    saved_if_needed = ("batch1", "batch2")

    @staticmethod
    def infer_shape(self, batch1, batch2, beta=1, alpha=1):
        if batch1.ndim != 3 or batch2.ndim != 3 or batch1.shape[0] != batch2.shape[0] \
                or batch1.shape[2] != batch2.shape[1]:
            raise ValueError(f"baddbmm: batch1 {batch1.shape} and batch2 {batch2.shape} "
                             f"do not match")
        shape = batch1.shape[:2] + batch2.shape[2:]
        if broadcast(self, MetaArray(shape, batch1.dtype)) != shape:
            raise ValueError(f"baddbmm: self {self.shape} does not broadcast to {shape}")
        return MetaArray(shape, batch1.dtype)

    @staticmethod
    def forward(ctx, self, batch1, batch2, beta=1, alpha=1):
        _same_dtype("baddbmm", batch1, batch2)
        save_crossed(ctx, 1, batch1, batch2)  # each only for the other's gradient
        out, self = scale_terms(ctx, array_module(batch1).matmul(batch1, batch2), self,
                                beta, alpha)
        return out + self

    @staticmethod
    def backward(ctx, grad):
        batch1, batch2 = saved_crossed(ctx, 1)
        scaled = grad * ctx.alpha if ctx.alpha != 1 else grad
        # self's gradient is grad (times beta); the engine sums it to self's shape
        return (grad * ctx.beta if ctx.beta != 1 else grad,
                None if batch2 is None else Bmm.apply(scaled, batch2.transpose(1, 2)),
                None if batch1 is None else Bmm.apply(batch1.transpose(1, 2), scaled),
                None, None)

    @staticmethod
    def jvp(args, tangents, result):  # beta self + alpha b1 @ b2: linear in each
        beta = args[3] if len(args) > 3 else 1
        alpha = args[4] if len(args) > 4 else 1
        product = bilinear(Bmm.apply, args[1:3], tangents[1:3])
        first = tangents[0]
        return plus(first * beta if first is not None and beta != 1 else first,
                    product * alpha if product is not None and alpha != 1 else product)


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
    def infer_shape(equation, operands):
        parsed, output, _ = _parse_einsum(equation, [o.shape for o in operands])
        sizes: dict = {}
        for labels, operand in zip(parsed, operands):
            if len(labels) != operand.ndim:
                raise ValueError(f"einsum: {labels!r} does not fit a tensor of shape "
                                 f"{operand.shape}")
            for label, size in zip(labels, operand.shape):
                if sizes.setdefault(label, size) != size:
                    if size != 1 and sizes[label] != 1:
                        raise ValueError(f"einsum: {label!r} is {sizes[label]} in one "
                                         f"operand and {size} in another")
                    sizes[label] = max(size, sizes[label])
        return MetaArray(tuple(sizes[label] for label in output), operands[0].dtype)

    @staticmethod
    def forward(ctx, equation, operands):
        parsed, output, _ = _parse_einsum(equation, [o.shape for o in operands])
        ctx.equation = ",".join(parsed) + "->" + output
        for operand in operands[1:]:
            _same_dtype("einsum", operands[0], operand)
        if ctx.needs_input_grad[1]:
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
        for term, (shape, _) in zip(terms, ctx._operand_meta):
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
                       *(Tensor.from_array(a) for a in extra)]
            grads.append(Einsum.apply(subscripts, tensors))
        return None, grads

    @staticmethod
    def jvp(args, tangents, result):  # multilinear: one term per operand with a tangent
        equation, operands = args
        tangent = None
        for index, part in enumerate(tangents[1]):
            if part is not None:
                swapped = list(operands)
                swapped[index] = part
                tangent = plus(tangent, Einsum.apply(equation, swapped))
        return tangent


def _needed(ctx) -> list[bool]:
    """Per einsum operand: whether another operand's gradient needs it (only those are
    saved, as PyTorch's products do)."""
    wanted = [node is not None for node, _ in ctx.next_functions]
    return [any(w for k, w in enumerate(wanted) if k != j) for j in range(len(wanted))]


def _broadcast(operand, term, sizes):
    """Expand size-1 dims to their label's full size (not every backend's einsum
    broadcasts explicit labels)."""
    shape = tuple(sizes[label] for label in term)
    return operand if operand.shape == shape else operand.expand(shape)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product: ``(b, n, m) @ (b, m, p) -> (b, n, p)``."""
    return Bmm.apply(input, mat2)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1,
            alpha: float = 1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)``; ``input`` broadcasts to the result.

    Example
    -------
    >>> q, k, mask = vizgrad.randn(2, 5, 8), vizgrad.randn(2, 7, 8), vizgrad.zeros(5, 7)
    >>> vizgrad.baddbmm(mask, q, k.transpose(1, 2)).shape   # (b, n, p)
    (2, 5, 7)
    """
    return Baddbmm.apply(input, batch1, batch2, beta, alpha)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two vectors (``input[:, None] * vec2``, as PyTorch records it)."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise ValueError(f"outer expects two 1-D tensors, got {input.ndim}-D and {vec2.ndim}-D")
    return input.reshape(input.shape[0], 1) * vec2


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation, e.g. ``einsum('bij,bjk->bik', a, b)`` or ``einsum('ii', m)``.

    >>> a = vizgrad.ones(2, 3, requires_grad=True)
    >>> vizgrad.einsum('ij->j', a).tolist()
    [2.0, 2.0, 2.0]
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return Einsum.apply(equation, list(operands))


def scale_terms(ctx: Any, product: Any, self: Any, beta: float, alpha: float
                ) -> tuple[Any, Any]:
    """``alpha * product`` and ``beta * self`` of an addmm-like op (arrays), each
    scale saved on ``ctx`` only when it is not 1 (PyTorch's defaults)."""
    if alpha != 1:
        ctx.alpha = alpha
        product = product * alpha
    if beta != 1:
        ctx.beta = beta
        self = self * beta
    return product, self


def column_major(array: object) -> bool:
    """True for a 2-d array laid out column by column, as ``weight.T`` of a C-ordered
    weight is.  PyTorch's ``mm_mat1/mat2_backward`` compute such an operand's gradient
    as ``(b @ a).T``, so that it comes out in the operand's own layout: through
    ``TBackward0`` the weight then gets a C-ordered gradient, which AccumulateGrad can
    keep as it is (a transposed one costs a transposing copy, ten times a plain one,
    and strided reads in every optimizer step)."""
    flags = getattr(array, "flags", None)
    return flags is not None and flags.f_contiguous and not flags.c_contiguous


def mm_grads(ctx: object, grad: Tensor, mat1: Tensor | None, mat2: Tensor | None) -> tuple:
    """The gradients of ``mat1 @ mat2`` (None for an operand not saved), each in its
    operand's layout (``ctx._mat1_t`` / ``ctx._mat2_t``: set by forward when the operand
    was column-major)."""
    grad1 = grad2 = None
    if not grad_enabled():  # a plain backward: on the arrays, nothing to record
        g = grad.array
        xp = array_module(g)
        if mat2 is not None:
            grad1 = Tensor._make(xp.matmul(mat2.array, g.T).T if ctx._mat1_t  # type: ignore[attr-defined]
                                 else xp.matmul(g, mat2.array.T))
        if mat1 is not None:
            grad2 = Tensor._make(xp.matmul(g.T, mat1.array).T if ctx._mat2_t  # type: ignore[attr-defined]
                                 else xp.matmul(mat1.array.T, g))
        return grad1, grad2
    if mat2 is not None:  # d mat1 = grad @ mat2.T
        grad1 = (Mm.apply(mat2, grad.t()).t() if ctx._mat1_t  # type: ignore[attr-defined]
                 else Mm.apply(grad, mat2.t()))
    if mat1 is not None:  # d mat2 = mat1.T @ grad
        grad2 = (Mm.apply(grad.t(), mat1).t() if ctx._mat2_t  # type: ignore[attr-defined]
                 else Mm.apply(mat1.t(), grad))
    return grad1, grad2


def note_layouts(ctx: object, mat1: object, mat2: object) -> None:
    """Remember which operands of a matrix product are column-major (see ``mm_grads``)."""
    if column_major(mat1):
        ctx._mat1_t = True  # type: ignore[attr-defined]
    if column_major(mat2):
        ctx._mat2_t = True  # type: ignore[attr-defined]


class Mm(Function):
    """Matrix product of two 2-D tensors (``torch.mm``: no broadcasting)."""
    unsigned_kernel = "addmm_impl_cpu_"  # PyTorch has none for uint16/32/64

    saved_if_needed = ("self", "mat2")
    saved_defaults = {"_mat1_t": False, "_mat2_t": False}  # see mm_grads

    @staticmethod
    def infer_shape(self, mat2):
        if self.ndim != 2:
            raise ShapeError("self must be a matrix")
        if mat2.ndim != 2:
            raise ShapeError("mat2 must be a matrix")
        return matmul_shape("mm", self, mat2)

    @staticmethod
    def forward(ctx, self, mat2):
        if self.ndim != 2 or mat2.ndim != 2:
            raise ValueError(f"mm expects two 2-D tensors, got {self.ndim}-D and {mat2.ndim}-D")
        _same_dtype("mm", self, mat2)
        save_crossed(ctx, 0, self, mat2)  # each only for the other's gradient
        note_layouts(ctx, self, mat2)
        return array_module(self).matmul(self, mat2)

    @staticmethod
    def backward(ctx, grad):
        self, mat2 = saved_crossed(ctx, 0)
        return mm_grads(ctx, grad, self, mat2)

    @staticmethod
    def jvp(args, tangents, result):  # bilinear: one term per operand's tangent
        return bilinear(Mm.apply, args, tangents)


class Mv(Function):
    """Matrix-vector product (``torch.mv``)."""
    unsigned_kernel = "addmv_impl_cpu"  # PyTorch has none for uint16/32/64

    saved_if_needed = ("self", "vec")

    @staticmethod
    def infer_shape(self, vec):
        if self.ndim != 2 or vec.ndim != 1:
            raise ShapeError(f"vector + matrix @ vector expected, got 1, {self.ndim}, "
                             f"{vec.ndim}")
        return matmul_shape("mv", self, vec)

    @staticmethod
    def forward(ctx, self, vec):
        if self.ndim != 2 or vec.ndim != 1:
            raise ValueError(f"mv expects a 2-D and a 1-D tensor, got {self.ndim}-D and "
                             f"{vec.ndim}-D")
        _same_dtype("mv", self, vec)
        save_crossed(ctx, 0, self, vec)  # each only for the other's gradient
        return array_module(self).matmul(self, vec)

    @staticmethod
    def backward(ctx, grad):
        self, vec = saved_crossed(ctx, 0)
        return (grad.unsqueeze(1) * vec if vec is not None else None,
                Mv.apply(self.t(), grad) if self is not None else None)

    @staticmethod
    def jvp(args, tangents, result):  # bilinear: one term per operand's tangent
        return bilinear(Mv.apply, args, tangents)


class Dot(Function):
    """Inner product of two 1-D tensors (``torch.dot``)."""
    unsigned_kernel = "dot"  # PyTorch has none for uint16/32/64

    saved_if_needed = ("self", "tensor")

    @staticmethod
    def infer_shape(self, tensor):
        if self.ndim != 1 or tensor.ndim != 1:
            raise ShapeError(f"1D tensors expected, but got {self.ndim}D and {tensor.ndim}D "
                             "tensors")
        return matmul_shape("dot", self, tensor)

    @staticmethod
    def forward(ctx, self, tensor):
        if self.ndim != 1 or tensor.ndim != 1:
            raise ValueError(f"dot expects two 1-D tensors, got {self.ndim}-D and "
                             f"{tensor.ndim}-D")
        _same_dtype("dot", self, tensor)
        save_crossed(ctx, 0, self, tensor)  # each only for the other's gradient
        return array_module(self).asarray(array_module(self).dot(self, tensor))

    @staticmethod
    def backward(ctx, grad):
        self, tensor = saved_crossed(ctx, 0)
        return (grad * tensor if tensor is not None else None,
                grad * self if self is not None else None)

    @staticmethod
    def jvp(args, tangents, result):  # bilinear: one term per operand's tangent
        return bilinear(Dot.apply, args, tangents)


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """``input @ mat2`` for two matrices. Example: ``vizgrad.mm(a, b)``."""
    return Mm.apply(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """``input @ vec`` for a matrix and a vector. Example: ``vizgrad.mv(a, v)``."""
    return Mv.apply(input, vec)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two vectors. Example: ``vizgrad.dot(u, v)``."""
    return Dot.apply(input, tensor)
