"""linear (``AddmmBackward0`` like PyTorch), bilinear, embedding and one_hot
(scaled dot-product attention is in nn_attention.py).

Example
-------
>>> from vizgrad.nn import functional as F
>>> x, bias = vizgrad.randn(4, 3), vizgrad.randn(2)
>>> weight = vizgrad.randn(2, 3, requires_grad=True)
>>> F.linear(x, weight, bias).grad_fn.name()      # x 2-d
'AddmmBackward0'
"""

from __future__ import annotations

from ..core.backend import array_module
from ..core.dual import LINEAR, plus, scaled
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.recording import ShapeError
from ..core.tensor import Tensor
from .index_checks import index_error
from .indexing import IndexBackward
from .linalg import matmul, mm_grads, note_layouts, scale_terms
from .operands import c_contiguous, same_dtype, save_crossed, saved_crossed
from .views import T


class Addmm(Function):
    """``beta * self + alpha * (mat1 @ mat2)``: the fused linear layer, PyTorch's
    ``addmm(bias, input, weight.t())`` (so the weight reaches it through ``TBackward0``)."""

    saved_defaults = {"alpha": 1, "beta": 1, "_mat1_t": False, "_mat2_t": False}
    saved_if_needed = ("mat1", "mat2")

    @staticmethod
    def infer_shape(self, mat1, mat2, beta=1, alpha=1):
        if mat1.ndim != 2 or mat2.ndim != 2 or mat1.shape[1] != mat2.shape[0]:
            # PyTorch's words; in a linear layer, mat2 is weight.T: the input's last size
            # must be the weight's in_features
            raise ShapeError(f"mat1 and mat2 shapes cannot be multiplied "
                             f"({'x'.join(map(str, mat1.shape))} and "
                             f"{'x'.join(map(str, mat2.shape))})")
        shape = (mat1.shape[0], mat2.shape[1])
        bias = tuple(getattr(self, "shape", ()))
        if len(bias) > 2:
            raise ShapeError(f"expand: the number of sizes provided (2) must be greater or "
                             f"equal to the number of dimensions in the tensor ({len(bias)})")
        for axis in range(1, len(bias) + 1):  # the bias expands to the output's shape
            if bias[-axis] not in (1, shape[-axis]):
                raise ShapeError(
                    f"The expanded size of the tensor ({shape[-axis]}) must match the "
                    f"existing size ({bias[-axis]}) at non-singleton dimension "
                    f"{2 - axis}.  Target sizes: [{shape[0]}, {shape[1]}].  Tensor sizes: "
                    f"[{', '.join(map(str, bias))}]")
        return MetaArray(shape, mat1.dtype)

    @staticmethod
    def forward(ctx, self, mat1, mat2, beta=1, alpha=1):
        if mat1.dtype != mat2.dtype:
            same_dtype("linear", mat1, mat2)  # raises, naming both
        save_crossed(ctx, 1, mat1, mat2)  # each only for the other's gradient
        note_layouts(ctx, mat1, mat2)  # the weight arrives as weight.T: column-major
        out, self = scale_terms(ctx, array_module(mat1).matmul(mat1, mat2), self, beta, alpha)
        # The product is a new array: a bias of its dtype that broadcasts to it without
        # growing it (a linear layer's) is added into it, not into a second new array.
        shape = getattr(self, "shape", None)
        if shape is not None and self.dtype == out.dtype and (
                shape == out.shape or shape == out.shape[1:] or not shape):
            out += self
            return out
        return out + self

    @staticmethod
    def backward(ctx, grad):
        mat1, mat2 = saved_crossed(ctx, 1)
        # alpha and beta are saved_defaults, set on the node only when not 1: read
        # each once (a default costs a trip through Node.__getattr__)
        alpha, beta = ctx.alpha, ctx.beta
        scaled = grad * alpha if alpha != 1 else grad
        # The bias gradient is ``grad`` itself; the engine sums it to the bias's shape.
        return (grad * beta if beta != 1 else grad,
                *mm_grads(ctx, scaled, mat1, mat2), None, None)

    @staticmethod
    def jvp(args, tangents, result):  # beta self + alpha mat1 @ mat2: linear in each
        self, mat1, mat2 = args[:3]
        beta = args[3] if len(args) > 3 else 1
        alpha = args[4] if len(args) > 4 else 1
        product = plus(None if tangents[1] is None else tangents[1] @ mat2,
                       None if tangents[2] is None else mat1 @ tangents[2])
        return plus(scaled(tangents[0], beta) if beta != 1 else tangents[0],
                    scaled(product, alpha) if alpha != 1 else product)


class Embedding(Function):
    """Rows of ``weight`` picked by integer ``indices``; ``padding_idx`` rows get no gradient.

    As in PyTorch the indices are not an input slot (no ``(None, 0)`` edge): they are
    saved as ``_saved_indices`` with ``padding_idx`` (-1 for none), ``scale_grad_by_freq``
    and ``sparse``.
    """

    saved_defaults = {"padding_idx": -1, "scale_grad_by_freq": False, "sparse": False}

    @staticmethod
    def infer_shape(weight, indices, padding_idx, scale_grad_by_freq=False):
        return MetaArray(tuple(indices.shape) + weight.shape[1:], weight.dtype)

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq=False):
        error = index_error(indices, weight.shape[0], 0, "self")
        if error is not None:  # NumPy would wrap a negative index silently
            raise error
        ctx._weight_shape = weight.shape
        if padding_idx is not None:
            ctx.padding_idx = padding_idx
        if scale_grad_by_freq:
            ctx.scale_grad_by_freq = True
        ctx.save_named("indices", indices)
        return weight[indices]

    @staticmethod
    def backward(ctx, grad):
        indices = ctx._saved_indices.array
        factor = None  # what each looked-up row's gradient is multiplied by
        if ctx.padding_idx >= 0:
            factor = (indices != ctx.padding_idx)[..., None].astype(grad.dtype)
        if ctx.scale_grad_by_freq:  # each row's gradient over its count in the batch
            xp = array_module(indices)
            counts = xp.bincount(indices.reshape(-1), minlength=ctx._weight_shape[0])
            inverse = (1.0 / counts[indices])[..., None].astype(grad.dtype)
            factor = inverse if factor is None else factor * inverse
        if factor is not None:
            grad = grad * Tensor.from_array(factor)
        return IndexBackward.apply(grad, indices, ctx._weight_shape, True), None, None, None

    jvp = LINEAR


def _trilinear_subscripts(ndim: int, expands) -> tuple[list[str], str]:
    """einsum subscripts of the three operands (their positions among ``ndim``, minus the
    ``expand`` ones) and of the result (every position)."""
    letters = "abcdefghijklmnopqrstuvwxyz"[:ndim]
    return ["".join(c for d, c in enumerate(letters) if d not in expand)
            for expand in expands], letters


class Trilinear(Function):
    """PyTorch's ``_trilinear``: ``i1, i2, i3`` unsqueezed at their ``expand`` dims,
    multiplied, summed over ``sumdim``; backward: each input's gradient is the same
    product of the gradient with the two others (einsum)."""

    @staticmethod
    def infer_shape(i1, i2, i3, expand1, expand2, expand3, sumdim):
        ndim = i1.ndim + len(expand1)
        sizes = [1] * ndim
        for operand, expand in ((i1, expand1), (i2, expand2), (i3, expand3)):
            kept = [d for d in range(ndim) if d not in expand]
            if len(kept) != operand.ndim:
                raise ValueError(f"trilinear: an operand of shape {operand.shape} does not "
                                 f"fill {ndim} dimensions with expand {tuple(expand)}")
            for d, size in zip(kept, operand.shape):
                if sizes[d] not in (1, size) and size != 1:
                    raise ValueError(f"trilinear: operands of shapes {i1.shape}, {i2.shape}, "
                                     f"{i3.shape} disagree in dimension {d}")
                sizes[d] = max(sizes[d], size)
        shape = tuple(size for d, size in enumerate(sizes) if d not in sumdim)
        return MetaArray(shape, i1.dtype)

    @staticmethod
    def forward(ctx, i1, i2, i3, expand1, expand2, expand3, sumdim):
        ctx.expand1, ctx.expand2, ctx.expand3 = tuple(expand1), tuple(expand2), tuple(expand3)
        ctx.sumdim = tuple(sumdim)
        ctx.save_for_backward(i1, i2, i3)
        (s1, s2, s3), letters = _trilinear_subscripts(i1.ndim + len(expand1),
                                                      (expand1, expand2, expand3))
        out = "".join(c for d, c in enumerate(letters) if d not in sumdim)
        return array_module(i1).einsum(f"{s1},{s2},{s3}->{out}", i1, i2, i3, optimize=True)

    @staticmethod
    def backward(ctx, grad):
        from .linalg import einsum

        inputs = ctx.saved_values
        subs, letters = _trilinear_subscripts(inputs[0].ndim + len(ctx.expand1),
                                              (ctx.expand1, ctx.expand2, ctx.expand3))
        out = "".join(c for d, c in enumerate(letters) if d not in ctx.sumdim)
        grads = []
        for k in range(3):
            if not ctx.needs_input_grad[k]:
                grads.append(None)
                continue
            others = [j for j in range(3) if j != k]
            equation = f"{out},{subs[others[0]]},{subs[others[1]]}->{subs[k]}"
            grads.append(einsum(equation, grad, inputs[others[0]], inputs[others[1]]))
        return (*grads, None, None, None, None)

    @staticmethod
    def jvp(args, tangents, result):  # trilinear: one term per operand's tangent
        total = None
        for k in range(3):
            if tangents[k] is not None:
                operands = list(args)
                operands[k] = tangents[k]
                total = plus(total, Trilinear.apply(*operands))
        return total


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = input1[...] @ weight[o] @ input2[...] + bias[o]``, as ATen builds it:
    a ``_trilinear`` of (N, in1), weight and (N, in2) views, viewed back, plus the bias.

    Example
    -------
    >>> x1, x2, weight = vizgrad.randn(4, 3), vizgrad.randn(4, 5), vizgrad.randn(2, 3, 5)
    >>> bilinear(x1, x2, weight).shape      # weight (out, in1, in2): (..., out)
    (4, 2)
    """
    if input1.shape[:-1] != input2.shape[:-1]:
        raise ValueError(f"bilinear: input1 {tuple(input1.shape)} and input2 "
                         f"{tuple(input2.shape)} need the same leading dimensions")
    if weight.ndim != 3 or (input1.shape[-1], input2.shape[-1]) != tuple(weight.shape[1:]):
        raise ValueError(f"bilinear: weight {tuple(weight.shape)} does not fit inputs with "
                         f"{input1.shape[-1]} and {input2.shape[-1]} features")
    lead = tuple(input1.shape[:-1])
    out = Trilinear.apply(input1.reshape(-1, input1.shape[-1]), weight,
                          input2.reshape(-1, input2.shape[-1]), (1, 3), (0,), (1, 2), (2, 3))
    out = out.reshape(*lead, weight.shape[0])
    return out if bias is None else out + bias


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1,
          alpha: float = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``, with ``input`` broadcast to the product
    (PyTorch's ``torch.addmm``, the node a linear layer records).

    Example
    -------
    >>> bias, x, w = vizgrad.zeros(3), vizgrad.ones(2, 4), vizgrad.ones(4, 3)
    >>> vizgrad.addmm(bias, x, w, alpha=0.5).tolist()
    [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
    """
    return Addmm.apply(input, mat1, mat2, beta, alpha)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` with ``weight`` of shape (out_features, in_features).

    Example
    -------
    >>> linear(vizgrad.randn(8, 3), vizgrad.randn(4, 3), vizgrad.zeros(4)).shape
    (8, 4)
    """
    # ATen's decomposition: addmm for a 2-D input with a bias; for a contiguous input
    # with a bias, addmm on a 2-D view viewed back; otherwise matmul then the bias added.
    # The weight enters through t() (TBackward0) every way.
    if bias is None:
        return matmul(input, T.apply(weight))
    if input.ndim == 2:
        return Addmm.apply(bias, input, T.apply(weight))
    if c_contiguous(input.array) and bias.ndim == 1:
        lead = input.shape[:-1]
        flat = Addmm.apply(bias, input.reshape(-1, input.shape[-1]), T.apply(weight))
        return flat.reshape(lead + (weight.shape[0],))
    return matmul(input, T.apply(weight)) + bias


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Look up rows of ``weight`` (num_embeddings, dim) by the integer tensor ``input``.

    ``max_norm`` first rescales, in place and without recording, every looked-up row
    whose ``norm_type``-norm exceeds it to norm ``max_norm`` (PyTorch's
    ``embedding_renorm_``); ``scale_grad_by_freq`` divides each row's gradient by how
    often its index occurs in ``input``.  ``sparse=True`` (sparse gradients) is refused.

    Example
    -------
    >>> table = vizgrad.randn(10, 3, requires_grad=True)      # 10 words, dim 3
    >>> embedding(vizgrad.tensor([[0, 2]]), table, padding_idx=0).shape   # (1, 2, dim)
    (1, 2, 3)
    >>> rows = embedding(vizgrad.tensor([1, 1, 4]), table, max_norm=1.0)
    >>> bool((rows.norm(dim=1) <= 1.0 + 1e-6).all())
    True
    """
    if sparse:
        raise NotImplementedError(_SPARSE_REFUSAL)
    indices = input.array if isinstance(input, Tensor) else input
    if indices.dtype.kind not in "iu":
        raise TypeError(f"embedding indices must be integers, got {indices.dtype}")
    if padding_idx is not None:
        count = weight.shape[0]
        if not -count <= padding_idx < count:
            raise ValueError(f"padding_idx {padding_idx} is out of range for {count} embeddings")
        padding_idx %= count
    if max_norm is not None:
        embedding_renorm_(weight, indices, max_norm, norm_type)
    return Embedding.apply(weight, indices, padding_idx, scale_grad_by_freq)


_SPARSE_REFUSAL = ("embedding: sparse=True (sparse gradients) is not supported: vizgrad's "
                   "gradients are dense arrays; leave sparse=False")


def embedding_renorm_(weight: Tensor, indices, max_norm: float, norm_type: float) -> Tensor:
    """Rescale, in place and unrecorded, each row of ``weight`` named in ``indices`` whose
    ``norm_type``-norm exceeds ``max_norm`` to ``max_norm / (norm + 1e-7)`` times itself
    (PyTorch's ``embedding_renorm_``: one write, so ``weight``'s version moves by one).

    Example
    -------
    >>> table = vizgrad.full((3, 4), 2.0)                     # every row's norm is 4
    >>> embedding_renorm_(table, vizgrad.tensor([0, 0, 2]).array, 1.0, 2.0)[:, 0].tolist()
    [0.5, 2.0, 0.5]
    """
    from ..core.state import no_grad

    if isinstance(weight.array, MetaArray) or isinstance(indices, MetaArray):
        return weight  # no values to rescale (PyTorch's meta kernel checks only)
    xp = array_module(indices)
    error = index_error(indices, weight.shape[0], 0, "self")
    if error is not None:
        raise error
    rows = xp.unique(indices.reshape(-1))
    picked = weight.array[rows]
    magnitude = xp.abs(picked)
    if norm_type == float("inf"):
        norms = magnitude.max(axis=1) if picked.shape[1] else xp.zeros(len(rows), picked.dtype)
    elif norm_type == 0:
        norms = (magnitude != 0).sum(axis=1).astype(picked.dtype)
    else:
        norms = (magnitude ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    norms = norms.astype(xp.float64)  # PyTorch compares and scales with the norm as a double
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(picked.dtype)
    with no_grad():
        weight[Tensor.from_array(rows)] = Tensor.from_array(picked * scale[:, None])
    return weight


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding with a new last dimension (no gradient).

    Example
    -------
    >>> one_hot(vizgrad.tensor([0, 2]), 3).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    indices = tensor.array
    if indices.dtype.kind not in "iu":
        raise TypeError(f"one_hot is only applicable to index tensors, got {indices.dtype}")
    xp = array_module(indices)
    if num_classes < 0:
        num_classes = int(indices.max()) + 1 if indices.size else 0
    if indices.size and int(indices.min()) < 0:  # PyTorch's words
        raise ShapeError("Class values must be non-negative.")
    if indices.size and int(indices.max()) >= num_classes:
        raise ShapeError("Class values must be smaller than num_classes.")
    return Tensor.from_array((indices[..., None] == xp.arange(num_classes)).astype(xp.int64))
