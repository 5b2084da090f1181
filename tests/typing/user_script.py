# A user-style script: scripts/test.sh runs mypy over it (and the gallery) to check that
# type checkers see Tensor's methods and operators (vizgrad/core/tensor_methods.pyi).
import vizgrad

x = vizgrad.randn(3, requires_grad=True)
y = (1.0 - x).exp().sum()
y.backward()
