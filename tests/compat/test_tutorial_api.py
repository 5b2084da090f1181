"""The PyTorch names tutorial code reaches for exist and behave as PyTorch documents them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vizgrad as vg


def _pair(*shape, seed=0):
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return vg.tensor(values), torch.tensor(values)


def _same(ours, theirs, rtol=1e-6):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol,
                               atol=1e-6)


def test_new_factories_take_dtype_and_device_from_self():
    x = vg.zeros(2, dtype=vg.float64)
    assert x.new_zeros(2, 3).dtype == np.float64 and x.new_zeros((2, 3)).shape == (2, 3)
    assert x.new_ones(3).tolist() == [1.0, 1.0, 1.0]
    assert x.new_full((2,), 7).tolist() == [7.0, 7.0] and x.new_full((2,), 7).dtype == x.dtype
    assert x.new_empty(4).shape == (4,)
    assert x.new_tensor([1, 2]).dtype == np.float64  # torch: self's dtype, not inferred
    assert x.new_zeros(2, dtype=vg.int64).dtype == np.int64
    assert x.new_ones(2, requires_grad=True).requires_grad


def test_alpha_and_value_forms_match_torch():
    (a, ta), (b, tb), (c, tc) = _pair(3, 4), _pair(3, 4, seed=1), _pair(4, seed=2)
    _same(a.add(b, alpha=-2.5), ta.add(tb, alpha=-2.5))
    _same(vg.sub(a, b, alpha=3), torch.sub(ta, tb, alpha=3))
    _same(a.addcmul(b, c, value=0.5), ta.addcmul(tb, tc, value=0.5))
    _same(vg.addcdiv(a, b, c.abs() + 1, value=2), torch.addcdiv(ta, tb, tc.abs() + 1, value=2))
    a2, ta2 = a.clone(), ta.clone()
    a2.add_(b, alpha=0.1).sub_(b, alpha=2).addcmul_(b, b, value=-1).addcdiv_(b, b.abs() + 1)
    ta2.add_(tb, alpha=0.1).sub_(tb, alpha=2).addcmul_(tb, tb, value=-1).addcdiv_(tb,
                                                                               tb.abs() + 1)
    _same(a2, ta2, rtol=1e-5)


def test_products_and_softmax_methods_match_torch():
    (m, tm), (n, tn), (v, tv) = _pair(3, 4), _pair(4, 2, seed=1), _pair(4, seed=2)
    _same(m.mm(n), tm.mm(tn))
    _same(m.mv(v), tm.mv(tv))
    _same(v.dot(v), tv.dot(tv))
    _same(v.outer(v), tv.outer(tv))
    _same(vg.mm(m, n), torch.mm(tm, tn))
    (b1, tb1), (b2, tb2) = _pair(2, 3, 4), _pair(2, 4, 5, seed=3)
    _same(b1.bmm(b2), tb1.bmm(tb2))
    _same(m.softmax(1), tm.softmax(1))
    _same(m.log_softmax(dim=0), tm.log_softmax(dim=0))
    _same(vg.softmax(m, 1), torch.softmax(tm, 1))
    _same(vg.log_softmax(m, -1), torch.log_softmax(tm, -1))


def test_sort_topk_argsort_match_torch():
    x, tx = _pair(3, 6)
    for ours, theirs in ((x.sort(), tx.sort()), (x.sort(0, descending=True),
                                                  tx.sort(0, descending=True)),
                         (x.topk(3), tx.topk(3)), (vg.topk(x, 2, dim=0, largest=False),
                                                   torch.topk(tx, 2, dim=0, largest=False))):
        values, indices = ours
        _same(values, theirs.values)
        assert ours.indices.tolist() == theirs.indices.tolist() == indices.tolist()
        assert indices.dtype == np.int64
    assert x.argsort(1).tolist() == tx.argsort(1).tolist()
    assert vg.argsort(x, 0, descending=True).tolist() == torch.argsort(tx, 0,
                                                                       descending=True).tolist()
    with pytest.raises(RuntimeError, match="selected index k out of range"):  # torch's
        x.topk(7)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        tx.topk(7)


def test_in_place_initialisers():
    vg.manual_seed(0)
    w = vg.empty(400, 300)
    assert w.normal_(1.0, 0.5) is w
    assert abs(float(w.mean()) - 1.0) < 0.01 and abs(float(w.std()) - 0.5) < 0.01
    w.uniform_(-2.0, -1.0)
    assert float(w.min()) >= -2.0 and float(w.max()) < -1.0
    m, tm = _pair(5, 3)
    _same(m.clone().fill_diagonal_(9.0), tm.clone().fill_diagonal_(9.0))
    _same(m.clone().fill_diagonal_(9.0, wrap=True), tm.clone().fill_diagonal_(9.0, wrap=True))
    with torch.no_grad(), vg.no_grad():  # under no_grad a leaf that requires grad may be filled
        p = vg.nn.Parameter(vg.zeros(2, 2))
        p.normal_()
        assert p.is_leaf and p.requires_grad


def test_equal_type_and_legacy_constructors():
    x = vg.tensor([1.0, 2.0])
    assert x.equal(vg.tensor([1.0, 2.0])) and not x.equal(vg.tensor([1.0, 3.0]))
    assert not x.equal(vg.tensor([[1.0, 2.0]]))
    assert x.type() == torch.tensor([1.0, 2.0]).type() == "torch.FloatTensor"
    assert x.long().type() == "torch.LongTensor"
    assert x.type(vg.LongTensor).dtype == np.int64
    assert x.type("torch.DoubleTensor").dtype == np.float64
    assert x.type(vg.int32).dtype == np.int32
    assert vg.LongTensor([1, 2]).dtype == np.int64 and vg.LongTensor([1, 2]).tolist() == [1, 2]
    assert vg.FloatTensor(2, 3).shape == (2, 3) and vg.FloatTensor(2, 3).dtype == np.float32
    assert vg.FloatTensor([[1, 2]]).dtype == np.float32


def test_device_and_defaults():
    assert vg.device("cpu") == "cpu" and vg.device("cpu").type == "cpu"
    assert vg.device("cuda", 1).index == 1 and vg.device("cuda:1").type == "cuda"
    assert repr(vg.device("cpu")) == repr(torch.device("cpu"))
    assert vg.ones(2).device.type == "cpu" and vg.ones(2).device == vg.device("cpu")
    assert vg.ones(2).to(vg.device("cpu")).device == "cpu"
    assert vg.cuda.is_available() is False or vg.cuda.device_count() > 0
    vg.set_default_device("cpu")
    assert vg.get_default_device() == "cpu"
    try:
        vg.set_default_dtype(vg.float64)
        assert vg.tensor([1.0]).dtype == np.float64 and vg.randn(2).dtype == np.float64
    finally:
        vg.set_default_dtype(vg.float32)


def test_cuda_is_unavailable_without_cupy(monkeypatch):
    from vizgrad.core import backend

    monkeypatch.setattr(backend, "_load_cupy", lambda: None)
    assert vg.cuda.is_available() is False and vg.cuda.device_count() == 0


def test_randint_reads_torch_forms():
    vg.manual_seed(0)
    values = vg.randint(10, (10,))
    assert values.shape == (10,) and values.dtype == np.int64
    assert 0 <= int(values.min()) and int(values.max()) < 10
    ranged = vg.randint(3, 5, (4, 2))
    assert ranged.shape == (4, 2) and set(ranged.tolist()[0]) <= {3, 4}
    assert vg.randint(0, 2, size=(3,)).shape == (3,)


def test_variable_and_gradcheck_forms():
    from vizgrad.autograd import Variable, gradcheck, gradgradcheck

    x = Variable(vg.ones(2), requires_grad=True)
    assert x.requires_grad and isinstance(x, Variable) and isinstance(vg.ones(1), Variable)
    t = vg.randn(3, dtype=vg.float64, requires_grad=True)
    assert gradcheck(lambda a: (a ** 3).sin(), t) is True
    assert gradgradcheck(lambda a: (a ** 3).sin(), t) is True
    assert gradcheck(lambda a, b: a * b, (t, t.detach().clone().requires_grad_())) is True

    class Wrong(vg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    assert gradcheck(Wrong.apply, t, raise_exception=False) is False
    with pytest.raises(AssertionError):
        gradcheck(Wrong.apply, t)


def test_clip_grad_value_matches_torch():
    grads = np.array([[-3.0, 0.2], [0.7, 5.0]], dtype=np.float32)
    p, tp = vg.nn.Parameter(vg.zeros(2, 2)), torch.nn.Parameter(torch.zeros(2, 2))
    p.grad, tp.grad = vg.tensor(grads), torch.tensor(grads)
    vg.nn.utils.clip_grad_value_([p], 0.5)
    torch.nn.utils.clip_grad_value_([tp], 0.5)
    _same(p.grad, tp.grad)


def test_names_not_provided_say_so():
    with pytest.raises(NotImplementedError, match="does not provide nn.DataParallel"):
        vg.nn.DataParallel(vg.nn.Linear(2, 2))
    with pytest.raises(NotImplementedError, match="DistributedDataParallel"):
        vg.nn.DistributedDataParallel(vg.nn.Linear(2, 2))
    with pytest.raises(NotImplementedError, match="ONNX"):
        vg.onnx.export(vg.nn.Linear(2, 2), vg.ones(1, 2), "model.onnx")
    # make_dot_from_trace is provided now (vizgrad.static traces; tests/static/test_draw.py);
    # anything but a traced Graph is refused with what to use instead
    with pytest.raises(TypeError, match="vizgrad.static.Graph.*vizgrad.make_dot"):
        vg.make_dot_from_trace(None)
