"""Rules for Python's operators (``a + b`` is ``operator.add(a, b)`` in the lowered form)."""
import operator

import numpy as np

from ..runtime import matmul_grad_a, matmul_grad_b, scatter, unbroadcast
from .registry import adjoint, d, nondifferentiable, tangent


@adjoint(operator.add)
def add(y, a, b):
    d[a] = unbroadcast(d[y], a)
    d[b] = unbroadcast(d[y], b)


@tangent(operator.add)
def add(y, a, b):
    d[y] = d[a] + d[b]


@adjoint(operator.sub)
def sub(y, a, b):
    d[a] = unbroadcast(d[y], a)
    d[b] = unbroadcast(-d[y], b)


@tangent(operator.sub)
def sub(y, a, b):
    d[y] = d[a] - d[b]


@adjoint(operator.mul)
def mul(y, a, b):
    d[a] = unbroadcast(d[y] * b, a)
    d[b] = unbroadcast(d[y] * a, b)


@tangent(operator.mul)
def mul(y, a, b):
    d[y] = d[a] * b + a * d[b]


@adjoint(operator.truediv)
def truediv(y, a, b):
    d[a] = unbroadcast(d[y] / b, a)
    d[b] = unbroadcast(-d[y] * y / b, b)


@tangent(operator.truediv)
def truediv(y, a, b):
    d[y] = d[a] / b - d[b] * y / b


@adjoint(operator.pow)
def pow(y, a, b):
    d[a] = unbroadcast(d[y] * b * a ** (b - 1), a)
    d[b] = unbroadcast(d[y] * y * np.log(np.where(a == 0, 1, a)), b)


@tangent(operator.pow)
def pow(y, a, b):
    d[y] = d[a] * b * a ** (b - 1) + d[b] * y * np.log(np.where(a == 0, 1, a))


@adjoint(operator.matmul)
def matmul(y, a, b):
    d[a] = matmul_grad_a(d[y], a, b)
    d[b] = matmul_grad_b(d[y], a, b)


@tangent(operator.matmul)
def matmul(y, a, b):
    d[y] = d[a] @ b + a @ d[b]


@adjoint(operator.neg)
def neg(y, x):
    d[x] = -d[y]


@tangent(operator.neg)
def neg(y, x):
    d[y] = -d[x]


@adjoint(operator.pos)
def pos(y, x):
    d[x] = d[y]


@tangent(operator.pos)
def pos(y, x):
    d[y] = d[x]


@adjoint(operator.getitem)
def getitem(y, x, index):
    d[x] = scatter(d[y], x, index)


@tangent(operator.getitem)
def getitem(y, x, index):
    d[y] = d[x][index]


nondifferentiable(
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
    operator.is_, operator.is_not, operator.contains, operator.not_, operator.invert,
    operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift,
    operator.floordiv, operator.mod, operator.index,
)
