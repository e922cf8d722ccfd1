"""Rules for Python's operators (``a + b`` is ``operator.add(a, b)`` in the lowered form).

Arithmetic (``+ - * / % -x +x``) shares its rules with the NumPy ufuncs it matches, in `ufuncs`.
"""
import operator

import numpy as np

from ..runtime import matmul_grad_a, matmul_grad_b, scatter
from .registry import adjoint, d, nondifferentiable, same_for_complex, tangent
from .tables import broadcasting

broadcasting(operator.pow,                                                 # (b = 0: zero, also at a = 0)
             lambda g, y, a, b: g * b * a ** np.where(b == 0, 1, b - 1),
             lambda g, y, a, b: g * y * np.log(np.where(a == 0, 1, a)))


@adjoint(operator.matmul)
def matmul(y, a, b):
    d[a] = matmul_grad_a(d[y], a, b)
    d[b] = matmul_grad_b(d[y], a, b)


@tangent(operator.matmul)
def matmul(y, a, b):
    d[y] = d[a] @ b + a @ d[b]

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
    operator.floordiv, operator.index,
)


same_for_complex(operator.matmul, operator.getitem)      # (bilinear, or moves elements: no conjugates)
