"""The adjoints and tangents of NumPy's products: ``a @ b``, `np.tensordot` (also dot and inner) and
`np.einsum`, for vectors, matrices and stacks of them.

    >>> a, b = np.ones((2, 3)), np.ones(3)
    >>> matmul_grad_a(np.array([1.0, 2.0]), a, b).tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    >>> einsum_grad(np.ones(2), "ij,j->i", (a, b))[1].tolist()
    [2.0, 2.0, 2.0]
"""
from __future__ import annotations

import numpy as np

from .arrays import unbroadcast
from .dtypes import float_dtype
from .gradients import zeros_like


def _ndim(x) -> int:
    try:
        return x.ndim
    except AttributeError:
        return np.ndim(x)


def matmul_grad_a(g, a, b):
    """The gradient of ``a @ b`` with respect to `a`, for vectors, matrices and stacks of them."""
    if _ndim(a) == 2 and _ndim(b) == 1:
        return np.multiply.outer(g, b)
    if _ndim(a) == 2 and _ndim(b) == 2:
        return g @ b.T
    if np.ndim(b) == 1:
        return unbroadcast(np.multiply.outer(g, b), a) if np.ndim(a) > 1 else g * b
    if np.ndim(a) == 1:
        if np.ndim(g) == 1:
            return b @ g
        return unbroadcast(np.swapaxes(b @ np.swapaxes(g[..., None, :], -1, -2), -1, -2)[..., 0, :], a)
    return unbroadcast(g @ np.swapaxes(b, -1, -2), a)


def matmul_grad_b(g, a, b):
    """The gradient of ``a @ b`` with respect to `b`, for vectors, matrices and stacks of them."""
    if _ndim(a) == 2 and _ndim(b) <= 2:
        return a.T @ g
    if np.ndim(a) == 1:
        return unbroadcast(a[:, None] * np.expand_dims(g, -2), b) if np.ndim(b) > 1 else g * a
    if np.ndim(b) == 1:
        return unbroadcast((np.swapaxes(a, -1, -2) @ np.expand_dims(g, -1))[..., 0], b)
    return unbroadcast(np.swapaxes(a, -1, -2) @ g, b)


def _tensordot_axes(a, b, axes):
    """The contracted axes of ``np.tensordot(a, b, axes)`` as two lists of non-negative ints."""
    na, nb = np.ndim(a), np.ndim(b)
    if isinstance(axes, (int, np.integer)):
        return list(range(na - axes, na)), list(range(axes))
    axes_a, axes_b = ([int(i) for i in np.atleast_1d(ax)] for ax in axes)
    return [i % na for i in axes_a], [i % nb for i in axes_b]


def tensordot_grad_a(g, a, b, axes=2):
    """The gradient of ``np.tensordot(a, b, axes)`` with respect to `a` (also used for dot and inner)."""
    axes_a, axes_b = _tensordot_axes(a, b, axes)
    free_a = [i for i in range(np.ndim(a)) if i not in axes_a]
    free_b = [i for i in range(np.ndim(b)) if i not in axes_b]
    ga = np.tensordot(g, b, (list(range(len(free_a), np.ndim(g))), free_b))
    return np.transpose(ga, np.argsort(free_a + [axes_a[axes_b.index(j)] for j in sorted(axes_b)]))


def tensordot_grad_b(g, a, b, axes=2):
    """The gradient of ``np.tensordot(a, b, axes)`` with respect to `b` (also used for dot and inner)."""
    axes_a, axes_b = _tensordot_axes(a, b, axes)
    free_a = [i for i in range(np.ndim(a)) if i not in axes_a]
    free_b = [i for i in range(np.ndim(b)) if i not in axes_b]
    gb = np.tensordot(a, g, (free_a, list(range(len(free_a)))))
    return np.transpose(gb, np.argsort([axes_b[axes_a.index(j)] for j in sorted(axes_a)] + free_b))


def _einsum_explicit(subscripts, operands):
    """The input and output subscripts of an einsum, with '->' made explicit and '...' spelled as letters."""
    subscripts = subscripts.replace(" ", "")
    inputs, arrow, output = subscripts.partition("->")
    inputs = inputs.split(",")
    if not arrow:
        letters = "".join(inputs).replace(".", "")
        output = ("..." if "..." in subscripts else "") + "".join(
            c for c in sorted(set(letters)) if letters.count(c) == 1)
    if "..." in subscripts:
        free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in subscripts]
        lengths = [np.ndim(x) - len(s) + 3 for s, x in zip(inputs, operands) if "..." in s]
        dots = "".join(free[:max(lengths)])
        inputs = [s.replace("...", dots[len(dots) - (np.ndim(x) - len(s) + 3):]) if "..." in s else s
                  for s, x in zip(inputs, operands)]
        output = output.replace("...", dots)
    return inputs, output


def einsum_grad(g, subscripts, operands):
    """The gradients of ``np.einsum(subscripts, *operands)``, one per operand, each computed when indexed."""
    return _EinsumGrads(g, *_einsum_explicit(subscripts, operands), operands)


class _EinsumGrads:
    """``einsum_grad(...)[i]``: the gradient with respect to operand i, computed only for the i asked for."""

    def __init__(self, g, inputs, output, operands):
        self.g, self.inputs, self.output, self.operands = g, inputs, output, operands

    def __len__(self):
        return len(self.operands)

    def __getitem__(self, i):
        return _einsum_grad_one(self.g, self.inputs, self.output, self.operands, range(len(self.operands))[i])


def _einsum_grad_one(g, inputs, output, operands, i):
    target, others = inputs[i], inputs[:i] + inputs[i + 1:]
    letters = "".join(dict.fromkeys(target))
    kept = "".join(c for c in letters if c in output or any(c in s for s in others))
    r = np.einsum(",".join([output, *others]) + "->" + kept, g, *operands[:i], *operands[i + 1:],
                  optimize=len(others) > 1)
    size = dict(zip(target, np.shape(operands[i])))
    r = np.broadcast_to(np.reshape(r, [size[c] if c in kept else 1 for c in letters]), [size[c] for c in letters])
    if len(letters) == len(target):
        return r
    out = np.zeros(np.shape(operands[i]), dtype=float_dtype(r))
    np.einsum(target + "->" + letters, out)[...] = r  # a repeated index: r goes on the diagonal
    return out


def einsum_tangent(subscripts, operands, tangents):
    """The tangent of ``np.einsum(subscripts, *operands)``: one einsum per operand whose tangent
    (in `tangents`) is not None, with that tangent in the operand's place.

        >>> float(einsum_tangent("i,i", (np.ones(2), np.ones(2)), (np.ones(2), None)))
        2.0
    """
    total = 0.0
    for k, tangent in enumerate(tangents):
        if tangent is not None:
            total = total + np.einsum(subscripts, *operands[:k], tangent, *operands[k + 1:])
    return total


def einsum_grad_tangent(g, dg, subscripts, operands, tangents):
    """The tangent of ``einsum_grad(g, subscripts, operands)`` given the tangents `dg` of g and
    `tangents` of the operands (None where zero); like einsum_grad, computed per operand when indexed."""
    return _EinsumGradTangents(g, dg, *_einsum_explicit(subscripts, operands), operands, tangents)


class _EinsumGradTangents:
    """``einsum_grad_tangent(...)[i]``: the tangent of the gradient with respect to operand i."""

    def __init__(self, g, dg, inputs, output, operands, tangents):
        self.g, self.dg, self.inputs, self.output = g, dg, inputs, output
        self.operands, self.tangents = operands, tangents

    def __len__(self):
        return len(self.operands)

    def __getitem__(self, i):
        i = range(len(self.operands))[i]
        total = None if self.dg is None else _einsum_grad_one(self.dg, self.inputs, self.output, self.operands, i)
        for j, tangent in enumerate(self.tangents or ()):
            if tangent is not None and j != i:
                operands = [*self.operands[:j], tangent, *self.operands[j + 1:]]
                term = _einsum_grad_one(self.g, self.inputs, self.output, operands, i)
                total = term if total is None else total + term
        return zeros_like(self.operands[i]) if total is None else total      # (linear in operand i: zero)
