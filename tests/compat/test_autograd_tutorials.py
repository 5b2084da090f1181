"""PyTorch's autograd tutorials ("Learning PyTorch with Examples": the polynomial fits;
"Double Backward with Custom Functions"), written from their documented behaviour.

Each script is a function of the module it runs with, so the same source runs as
``import vizgrad as torch`` and with PyTorch itself; starting values are copied across
(the two libraries draw different random numbers) and the results must agree.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch as real_torch

import vizgrad

LIBS = [vizgrad, real_torch]
START = np.random.default_rng(0).standard_normal(4).tolist()


def fit_with_autograd(torch, start, steps=300):
    dtype = torch.float
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)
    a, b, c, d = (torch.tensor(v, dtype=dtype, requires_grad=True) for v in start)
    learning_rate = 1e-6
    for _ in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    return loss.item(), [a.item(), b.item(), c.item(), d.item()]


def fit_with_custom_function(torch, start, steps=300):
    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    dtype = torch.float
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)
    a, b, c, d = (torch.full((), v, dtype=dtype, requires_grad=True)
                  for v in (0.0, -1.0, 0.0, 0.3))
    learning_rate = 5e-6
    for _ in range(steps):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p.data.add_(p.grad, alpha=-learning_rate)  # the .data idiom of older scripts
                p.grad = None
    return loss.item(), [a.item(), b.item(), c.item(), d.item()]


def _copy_linear(torch, model, weight, bias):
    with torch.no_grad():
        model[0].weight.copy_(torch.tensor(weight))
        model[0].bias.copy_(torch.tensor(bias))


def fit_with_nn(torch, start, steps=300, optimizer=None):
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    _copy_linear(torch, model, [start[1:]], [start[0]])
    loss_fn = torch.nn.MSELoss(reduction="sum")
    learning_rate = 1e-6
    opt = None if optimizer is None else getattr(torch.optim, optimizer)(
        model.parameters(), lr=1e-3)
    for _ in range(steps):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        if opt is None:
            model.zero_grad()
            loss.backward()
            with torch.no_grad():
                for param in model.parameters():
                    param -= learning_rate * param.grad
        else:
            opt.zero_grad()
            loss.backward()
            opt.step()
    linear_layer = model[0]
    return loss.item(), [linear_layer.bias.item(), *linear_layer.weight[:, :].reshape(-1).tolist()]


def fit_with_custom_module(torch, start, steps=300):
    class Polynomial3(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c, self.d = (torch.nn.Parameter(torch.tensor(v))
                                              for v in start)

        def forward(self, x):
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

        def string(self):
            return (f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + "
                    f"{self.d.item()} x^3")

    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    model = Polynomial3()
    criterion = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    for _ in range(steps):
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert model.string().startswith("y = ")
    return loss.item(), [p.item() for p in model.parameters()]


def fit_dynamic_net(torch, start, steps=200):
    class DynamicNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c, self.d, self.e = (torch.nn.Parameter(torch.tensor(v))
                                                      for v in [*start, 0.01])

        def forward(self, x, extra):  # the tutorial draws 4 or 5 with random.randint
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, extra + 1):
                y = y + self.e * x ** exp
            return y

    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    model = DynamicNet()
    criterion = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    for t in range(steps):
        loss = criterion(model(x, 4 + t % 2), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item(), [p.item() for p in model.parameters()]


@pytest.mark.parametrize("script, options", [
    (fit_with_autograd, {}), (fit_with_custom_function, {}), (fit_with_nn, {}),
    (fit_with_nn, {"optimizer": "RMSprop"}), (fit_with_custom_module, {}),
    (fit_dynamic_net, {}),
], ids=["autograd", "custom_function", "nn", "nn_rmsprop", "custom_module", "dynamic_net"])
def test_polynomial_tutorial_agrees_with_torch(script, options):
    ours, theirs = (script(lib, START, **options) for lib in LIBS)
    # float32 sums over 2000 points, a few hundred steps: agree to a few float32 ulps/step
    np.testing.assert_allclose(ours[1], theirs[1], rtol=2e-3, atol=2e-4)
    assert ours[0] == pytest.approx(theirs[0], rel=2e-3)
    assert ours[0] < script(vizgrad, START, steps=1, **options)[0]  # it learned


def double_backward_examples(torch):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)  # an input: its history is kept for double backward
            return x ** 2

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return grad_out * 2 * x

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = torch.exp(x)
            ctx.save_for_backward(result)  # an output
            return result

        @staticmethod
        def backward(ctx, grad_out):
            result, = ctx.saved_tensors
            return grad_out * result

    class Sinh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = torch.exp(x)
            expnegx = torch.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            # intermediates returned as outputs, so double backward can see through them
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += _grad_out_exp * expx
            grad_input -= _grad_out_negexp * expnegx
            return grad_input

    def sinh(x):
        return Sinh.apply(x)[0]

    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.double, requires_grad=True)
    results = []
    for fn in (Square.apply, Exp.apply, sinh):
        assert torch.autograd.gradcheck(fn, x)
        assert torch.autograd.gradgradcheck(fn, x)
        (first,) = torch.autograd.grad(fn(x).sum(), x, create_graph=True)
        (second,) = torch.autograd.grad(first.sum(), x)
        results.append((first.detach().tolist(), second.tolist()))
    return results


def test_double_backward_tutorial_agrees_with_torch():
    ours, theirs = (double_backward_examples(lib) for lib in LIBS)
    np.testing.assert_allclose(np.array(ours, dtype=float), np.array(theirs, dtype=float),
                               rtol=1e-12)
