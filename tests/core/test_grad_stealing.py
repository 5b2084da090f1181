"""AccumulateGrad keeps a leaf's first gradient without a copy only when nobody else holds it.

The engine "steals" an unshared gradient array for ``.grad`` (PyTorch does the same
on its use count); these tests check both sides: the copy is skipped where it can
be (so the speed-up is real), and a stolen array is never shared with anything a user
or a hook can still reach: another leaf's ``.grad``, a hook's kept value (the tensor,
a ``detach()``, a view, the raw array, a weak reference), a retained ``.grad``, the
root gradient passed in, or a saved tensor of a retained graph.
"""

from __future__ import annotations

import weakref

import numpy as np

import vizgrad as vg
from vizgrad.autograd import Function


def _leaf(n=4):
    return vg.tensor(np.arange(1.0, n + 1.0), requires_grad=True)


class Fresh(Function):
    """``3 * x``, whose backward makes a new array and notes its id in ``MADE``."""

    MADE: list = []

    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, grad):
        out = np.asarray(grad.numpy() * 3)
        Fresh.MADE.append(id(out))
        return vg.from_numpy(out)


class Through(Function):
    """Identity whose backward hands the incoming gradient tensor on unchanged."""

    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        return grad


class Twice(Function):
    """``a + b`` whose backward gives both inputs the same (new) gradient tensor."""

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad):
        shared = vg.from_numpy(grad.numpy() * 1)
        return shared, shared


def _owns_alone(grad: vg.Tensor, *others) -> bool:
    return not any(np.shares_memory(grad.numpy(), np.asarray(other)) for other in others)


def test_an_unshared_first_gradient_becomes_grad_without_a_copy():
    x = _leaf()
    Fresh.MADE.clear()
    Fresh.apply(x).sum().backward()
    array = x.grad.numpy()
    assert id(array) in Fresh.MADE or id(array.base) in Fresh.MADE  # the same array, kept
    np.testing.assert_array_equal(array, np.full(4, 3.0))
    assert x.grad.grad_fn is None and not x.grad.requires_grad


def test_a_linear_layer_keeps_its_weight_gradient_c_ordered_and_uncopied():
    layer = vg.nn.Linear(5, 3).float()
    x = vg.randn(7, 5)
    layer(x).sum().backward()
    for param in layer.parameters():
        array = param.grad.numpy()
        assert array.flags.c_contiguous and array.flags.writeable
        assert array.base is not None  # the matmul's (or the bias sum's) own buffer
    np.testing.assert_allclose(layer.weight.grad.numpy(),
                               np.ones((7, 3), np.float32).T @ x.numpy(), rtol=1e-6)


def test_the_root_gradient_passed_in_is_never_kept_as_grad():
    x = _leaf()
    root = vg.ones(4, dtype="float64") * 2  # x's dtype: no cast on the way
    Through.apply(x).backward(root)
    assert _owns_alone(x.grad, root.numpy())
    root.numpy()[:] = 7
    np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 2.0))


def test_two_leaves_given_the_same_gradient_tensor_get_separate_arrays():
    a, b = _leaf(), _leaf()
    Twice.apply(a, b).sum().backward()
    assert _owns_alone(a.grad, b.grad.numpy())
    a.grad.numpy()[:] = 0
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(4))


def test_builtin_add_of_two_leaves_gives_separate_writable_grads():
    a, b = _leaf(), _leaf()
    (a * 2 + b * 2).sum().backward()
    assert _owns_alone(a.grad, b.grad.numpy())
    (a + b).backward(vg.ones(4, dtype="float64"))
    assert _owns_alone(a.grad, b.grad.numpy())
    assert a.grad.numpy().flags.writeable and b.grad.numpy().flags.writeable


def _kept_by_hook(keep):
    """Backpropagate through a pass-through op whose output has a hook ``keep(g)``."""
    x = _leaf()
    h = Through.apply(x)
    kept = []
    h.register_hook(lambda g: kept.append(keep(g)))
    Fresh.apply(h).sum().backward()
    return x, kept[0]


def test_a_gradient_a_hook_kept_is_not_stolen():
    x, kept = _kept_by_hook(lambda g: g)
    assert _owns_alone(x.grad, kept.numpy())
    x.grad.numpy()[:] = 0
    np.testing.assert_array_equal(kept.numpy(), np.full(4, 3.0))


def test_a_detached_or_raw_or_viewed_gradient_a_hook_kept_is_not_stolen():
    for keep in (lambda g: g.detach(), lambda g: g.numpy(), lambda g: g.numpy()[::-1],
                 lambda g: g.reshape(2, 2), lambda g: g.numpy().T, lambda g: g[1:]):
        x, kept = _kept_by_hook(keep)
        assert _owns_alone(x.grad, kept.numpy() if isinstance(kept, vg.Tensor) else kept)


def test_a_weak_reference_a_hook_kept_cannot_reach_grad():
    x, kept = _kept_by_hook(weakref.ref)
    other = kept()
    assert other is None or _owns_alone(x.grad, other.numpy())
    x2, kept_array = _kept_by_hook(lambda g: weakref.ref(g.numpy()))
    raw = kept_array()
    assert raw is None or _owns_alone(x2.grad, raw)


def test_a_retained_grad_on_the_way_is_not_shared_with_the_leaf():
    x = _leaf()
    h = Through.apply(x)
    h.retain_grad()
    Fresh.apply(h).sum().backward()
    assert _owns_alone(x.grad, h.grad.numpy())
    np.testing.assert_array_equal(h.grad.numpy(), x.grad.numpy())


def test_a_post_hook_that_keeps_the_gradients_it_gave_blocks_the_steal():
    x = _leaf()
    h = Through.apply(x)
    kept = []
    h.grad_fn.register_hook(lambda grad_inputs, grad_outputs: kept.append(grad_inputs))
    Fresh.apply(h).sum().backward()
    assert _owns_alone(x.grad, kept[0][0].numpy())


def test_a_gradient_kept_by_the_function_itself_is_not_stolen():
    class Keeps(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            Keeps.kept = grad * 2
            return Keeps.kept

    x = _leaf()
    Keeps.apply(x).sum().backward()
    assert _owns_alone(x.grad, Keeps.kept.numpy())


def test_a_saved_tensor_of_a_retained_graph_is_not_stolen():
    class GivesSaved(Function):  # backward returns what forward saved (odd but legal)
        @staticmethod
        def forward(ctx, x):
            y = x * 3
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return y

    x = _leaf()
    out = GivesSaved.apply(x).sum()
    out.backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), 3 * np.arange(1.0, 5.0))
    x.grad.numpy()[:] = 0  # a user's in-place edit must not reach the saved y
    out.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 3 * np.arange(1.0, 5.0))


def test_a_slice_of_a_larger_buffer_or_a_broadcast_is_copied():
    class Slice(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return vg.from_numpy(np.ones(1000)[:4])

    class Broadcast(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return vg.from_numpy(np.broadcast_to(np.float64(2.0), (4,)))

    x = _leaf()
    Slice.apply(x).sum().backward()
    assert x.grad.numpy().base is None or x.grad.numpy().base.nbytes == x.grad.numpy().nbytes
    y = _leaf()
    Broadcast.apply(y).sum().backward()
    array = y.grad.numpy()
    assert array.flags.writeable and array.strides == (8,)
    array += np.arange(4.0)  # element-wise, not through one shared element
    np.testing.assert_array_equal(array, [2.0, 3.0, 4.0, 5.0])


def test_later_gradients_add_into_a_new_array_so_an_earlier_grad_is_unchanged():
    x = _leaf()
    Fresh.apply(x).sum().backward()
    first = x.grad
    Fresh.apply(x).sum().backward()
    np.testing.assert_array_equal(first.numpy(), np.full(4, 3.0))
    np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 6.0))


def test_a_leaf_used_twice_gets_the_engine_sum_and_a_fresh_version_counter():
    x = _leaf()
    y = Fresh.apply(x)
    (y * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 6 * np.arange(1.0, 5.0))
    assert x.grad._version == 0 and x.grad._base is None


def test_create_graph_keeps_the_gradient_in_the_graph():
    x = _leaf()
    (x * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    (gx,) = vg.autograd.grad(x.grad.sum(), [x])
    np.testing.assert_array_equal(gx.numpy(), np.full(4, 2.0))


def test_a_transposed_view_whose_base_tensor_is_kept_elsewhere_is_not_stolen():
    class KeepsBase(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            KeepsBase.kept = vg.from_numpy(np.full((3, 2), 5.0))
            return KeepsBase.kept.t()  # a vizgrad view of a tensor held elsewhere

    x = vg.zeros(2, 3, dtype="float64", requires_grad=True)
    KeepsBase.apply(x).sum().backward()
    assert _owns_alone(x.grad, KeepsBase.kept.numpy())
    x.grad.numpy()[:] = 0
    np.testing.assert_array_equal(KeepsBase.kept.numpy(), np.full((3, 2), 5.0))


def test_the_stealing_rule_itself_keeps_an_unshared_array_and_copies_a_held_one():
    """``accumulate.unshared_array`` directly: the rule the engine's leaves follow."""
    from vizgrad.core.accumulate import unshared_array

    array = np.arange(4.0)
    made = id(array)
    buffer = [vg.from_numpy(array)]
    del array
    assert id(unshared_array(buffer)) == made and buffer == []  # nobody else: kept
    held = vg.from_numpy(np.arange(4.0))
    kept = unshared_array([held])  # the caller still holds the tensor: a copy
    assert not np.shares_memory(kept, held.numpy())
    raw = np.arange(4.0)
    assert unshared_array([vg.from_numpy(raw)]) is not raw  # the array is held: a copy
    whole = np.arange(8.0)
    part = unshared_array([vg.from_numpy(whole[:4])])  # a slice of a larger buffer
    assert not np.shares_memory(part, whole)
    assert unshared_array([vg.from_numpy(np.arange(4.0).reshape(2, 2).T)]).flags.c_contiguous


def test_the_device_rule_keeps_an_unshared_strict_array_and_copies_a_shared_one():
    """The strict backend stands in for CuPy: ``unshared_array`` asks its registered
    ``sole_owner`` rule about the memory (tests/strict_backend.py, core/backend_cupy.py)."""
    from tests.strict_backend import StrictArray, strict
    from vizgrad.core.accumulate import unshared_array

    def steal(make):  # the array ``make`` builds, passed through the rule
        array, *kept = make()
        made = id(array)
        buffer = [vg.Tensor._make(array)]
        del array
        out = unshared_array(buffer)
        return id(out) == made, out, kept

    assert steal(lambda: (strict(np.arange(4.0)),))[0]  # nobody else: kept
    whole = np.arange(6.0).reshape(2, 3)
    assert steal(lambda: (StrictArray(whole.copy()).T.T,))[0]  # a lone whole-buffer view
    shared = strict(np.arange(4.0))
    assert not steal(lambda: (shared,))[0]  # the caller holds the array
    for make in [
        lambda: (lambda a: (a, StrictArray(a._a)))(strict(np.arange(4.0))),  # 2 wrappers
        lambda: (lambda a: (a, a[1:]))(strict(np.arange(4.0))),  # a view still alive
        lambda: (strict(np.arange(8.0))[:4],),  # a slice of a larger buffer
        lambda: (lambda a: (a, weakref.ref(a)))(strict(np.arange(4.0))),  # a weak reference
        lambda: (lambda a: (a, a.T))(strict(np.arange(4.0).reshape(2, 2))),  # a twin view
    ]:
        stolen, out, kept = steal(make)
        assert not stolen
        out[...] = -1.0  # the copy is the gradient's own: nothing kept sees the write
        for other in kept:
            if isinstance(other, weakref.ref):
                other = other()  # (dead once the copy was made: nothing reaches it)
                if other is None:
                    continue
            assert not (other.get() == -1.0).any()


def test_a_linear_layers_device_gradients_are_kept_and_a_hooks_are_not():
    from tests.strict_backend import StrictArray, strict

    layer = vg.nn.Linear(3, 2)
    for param in layer.parameters():
        param.array = strict(param.array)
    x = vg.tensor(strict(np.ones((4, 3), dtype=np.float32)))  # (tensor() copies)
    copies = []
    original = StrictArray.__getattr__

    def counting(self, name):
        if name == "copy":
            copies.append(self.shape)
        return original(self, name)

    StrictArray.__getattr__ = counting
    try:
        layer(x).sum().backward()
        assert copies == []  # weight (a transposed product) and bias: no copy
        seen = []
        layer.weight.grad = None
        layer.weight.register_hook(lambda g: seen.append(g))
        layer(x).sum().backward()
    finally:
        StrictArray.__getattr__ = original
    assert layer.weight.grad.array is not seen[0].array  # the hook kept it: a copy
    seen[0].array[...] = 0.0
    assert (layer.weight.grad.array.get() == 4.0).all()
