"""What generated gradient code needs at run time, and nothing else.

Every generated module starts with ``from s2sgrad.runtime import *``.

    >>> s = Stack()
    >>> s.push(1.0); s.push(2.0)
    >>> s.pop()
    2.0
    >>> unbroadcast(np.ones((3, 4)), np.ones(4)).tolist()
    [3.0, 3.0, 3.0, 3.0]
"""
from __future__ import annotations

import numpy as np

from ..errors import NoDerivativeRule, NonScalarOutput
from ..schedules import Advance, Free, Restore, Reverse, Snapshot

__all__ = [
    "Stack", "SparseGrad", "Like", "like", "sum_to", "unbroadcast", "unreduce", "zeros_like", "complete",
    "scatter", "seq_scatter", "add_grads", "densify", "while_loop", "if_else",
    "setitem", "list_append", "seq_setitem", "seq_written", "seq_unwritten", "seq_concat", "seq_repeat",
    "seq_unrepeat", "dict_keys", "format_string", "check_scalar", "assert_true", "written", "Checkpoints", "Work",
    "copy_state", "random_state", "replay", "swap_random_state", "derivative_vjp", "derivative_jvp", "unstack",
    "grad_or_zeros", "matmul_grad_a", "matmul_grad_b",
    "tensordot_grad_a", "tensordot_grad_b", "one_step", "einsum_grad", "unconcatenate", "untile", "unrepeat",
    "undiagonal", "untake", "norm_grad", "divide_or_zero", "uncast", "cast_tangent", "clip_choice",
    "product_of_others", "product_of_others_tangent", "cumprod_grad", "cumprod_grad_tangent_y",
    "cumprod_grad_tangent_a", "cumprod_tangent",
    "linspace_fraction", "add_at", "subtract_at", "maximum_at", "minimum_at", "extremum_ties", "at_copy",
    "written_copy", "as_column", "unsort", "sorted_like",
]


class Stack(list):
    """A last-in first-out store of primal values for the backward sweep.

    It holds references, not copies: s2sgrad pushes only values that nothing
    mutates afterwards.
    """

    push = list.append

    def pop_rows(self, n: int) -> np.ndarray:
        """Pop the last `n` values at once, as the rows of one array (the last pushed first).

        They are arrays of one shape. Rows of different numeric dtypes are widened to one floating
        dtype (an integer first trip among floating ones, float32 among float64: one array cannot keep
        them apart); booleans among other dtypes, or integers of different widths alone, raise.

            >>> s = Stack([np.zeros(2), np.ones(2)])
            >>> s.pop_rows(2).tolist(), s
            ([[1.0, 1.0], [0.0, 0.0]], [])
        """
        start = len(self) - n
        rows = self[start:]
        del self[start:]
        rows.reverse()
        stacked = np.array(rows)
        dtypes = {row.dtype for row in rows}
        if len(dtypes) > 1 and (stacked.dtype.kind not in "fc" or any(d.kind == "b" for d in dtypes)):
            raise TypeError(f"values pushed on one stack changed dtype from trip to trip "
                            f"({', '.join(sorted(map(str, dtypes)))}); "
                            "turn off the optimization that pops them as rows: "
                            "optimize=set(s2sgrad.OPTIMIZATIONS) - {'vectorize'}")
        return stacked


class SparseGrad:
    """A gradient that is zero except at some rows: ``dense[indices] += values``.

    It stays sparse while sparse gradients are added to it, and becomes dense
    when something dense is added or the user receives it.
    """

    __slots__ = ("indices", "values", "shape")
    __array_ufunc__ = None           # make NumPy defer ``dense + sparse`` to __radd__

    def __init__(self, indices, values, shape):
        self.indices = indices
        self.values = values
        self.shape = shape

    def dense(self) -> np.ndarray:
        out = np.zeros(self.shape, dtype=np.result_type(self.values, float))
        np.add.at(out, self.indices, self.values)
        return out

    def __add__(self, other):
        if isinstance(other, SparseGrad) and isinstance(self.indices, np.ndarray) \
                and isinstance(other.indices, np.ndarray) \
                and self.indices.ndim == other.indices.ndim == 1:
            return SparseGrad(np.concatenate([self.indices, other.indices]),
                              np.concatenate([np.broadcast_to(self.values, self.indices.shape + self.shape[1:]),
                                              np.broadcast_to(other.values, other.indices.shape + other.shape[1:])]),
                              self.shape)
        return densify(other) + self.dense()

    __radd__ = __add__

    def __repr__(self) -> str:
        return f"SparseGrad(indices={self.indices!r}, values={self.values!r}, shape={self.shape})"


def densify(g):
    """The dense form of a gradient (a no-op unless it is a SparseGrad)."""
    return g.dense() if isinstance(g, SparseGrad) else g


def unbroadcast(g, x):
    """Sum `g` over the axes along which `x` was broadcast, so that it has x's shape."""
    try:
        shape = x.shape
        if g.shape == shape:
            return g
    except AttributeError:
        shape = np.shape(x)
        if np.shape(g) == shape:
            return g
    g = sum_to(g, shape)
    if not isinstance(x, np.ndarray):
        return g.item() if g.ndim == 0 and isinstance(x, (float, int)) else g
    return g


def sum_to(g, shape):
    """Sum `g` over its broadcast axes down to `shape` (``unbroadcast`` with the shape known)."""
    g = np.asarray(g)
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the gradient of a reduction over `axis` back to the shape of `x`."""
    shape = np.shape(x)
    if not keepdims and axis is not None and np.ndim(g) < len(shape):
        g = np.expand_dims(g, axis)
    return np.broadcast_to(g, shape)


class Like:
    """What the backward sweep keeps of an array it needs only the shape of: shape and dtype.

        >>> np.shape(Like(np.zeros((2, 3))))
        (2, 3)
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, array):
        self.shape = array.shape
        self.dtype = array.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)


def like(x):
    """`x` as the backward sweep keeps it when it reads only x's shape: arrays become a `Like`."""
    return Like(x) if isinstance(x, np.ndarray) else x


def rebuilt(x, items: list):
    """A list or tuple of the type of `x` holding `items` (a named tuple takes them one by one).

        >>> import collections
        >>> rebuilt(collections.namedtuple("P", "a b")(1, 2), [3, 4])
        P(a=3, b=4)
    """
    return type(x)(*items) if isinstance(x, tuple) and hasattr(x, "_fields") else type(x)(items)


def zeros_like(x):
    """A zero gradient for `x`: 0.0 for a scalar, a float array for an array, and so on for containers."""
    if isinstance(x, Like):
        return np.zeros(x.shape, dtype=np.result_type(x.dtype, float))
    if isinstance(x, (list, tuple)):
        return rebuilt(x, [zeros_like(v) for v in x])
    if isinstance(x, dict):
        return {k: zeros_like(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=np.result_type(x.dtype, float))
    if isinstance(x, complex):
        return 0j
    return 0.0 if np.ndim(x) == 0 else np.zeros(np.shape(x))


def complete(g, x):
    """The gradient handed to the user for `x`: zeros where `g` is None, dense, and never an alias.

        >>> complete([None, np.ones(2)], [1.0, np.zeros(2)])
        [0.0, array([1., 1.])]
        >>> complete(np.float64(2.0), np.array(1.0))
        array(2.)
    """
    if g is None:
        return zeros_like(x)
    if isinstance(x, (list, tuple)):
        return rebuilt(x, [complete(gi, xi) for gi, xi in zip(g, x)])
    if isinstance(x, dict):
        return {k: complete(g.get(k), v) for k, v in x.items()}
    if isinstance(g, SparseGrad):
        return g.dense()
    if isinstance(g, np.ndarray):
        if not isinstance(x, np.ndarray) and np.ndim(x) == 0 and g.ndim == 0:
            return g.item()
        return np.array(g, dtype=np.result_type(g.dtype, float), copy=True)
    if isinstance(x, np.ndarray):                 # arithmetic on 0-d arrays gives NumPy scalars
        return np.array(g, dtype=np.result_type(g, float))
    return g


def scatter(g, x, index):
    """The gradient of ``x[index]``: `g` placed at `index` in zeros shaped like x, repeats accumulated."""
    if isinstance(x, (list, tuple, dict)):
        return seq_scatter(g, x, index)
    shape = np.shape(x)
    if _is_row_gather(index, shape):
        return SparseGrad(np.asarray(index), g, shape)
    dtype = x.dtype if isinstance(x, (np.ndarray, Like)) else np.asarray(x).dtype
    out = np.zeros(shape, dtype=np.result_type(dtype, np.asarray(g).dtype, float))
    np.add.at(out, index, g)
    return out


def _is_row_gather(index, shape) -> bool:
    return (isinstance(index, np.ndarray) and index.ndim == 1 and index.dtype.kind in "iu"
            and len(shape) >= 2)


def seq_scatter(g, x, index):
    """The gradient of ``x[index]`` where x is a list or tuple: None (zero) everywhere but at index."""
    if isinstance(x, dict):
        return {index: g}
    out = [None] * len(x)
    if isinstance(index, slice):
        for i, gi in zip(range(*index.indices(len(x))), g):
            out[i] = gi
    else:
        out[index] = g
    return tuple(out) if isinstance(x, tuple) else out


def add_grads(a, b):
    """The sum of two gradients of any structure; None is a zero."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return rebuilt(a, [add_grads(u, v) for u, v in zip(a, b)])
    if isinstance(a, dict):
        return {k: add_grads(a.get(k), b.get(k)) for k in a.keys() | b.keys()}
    if isinstance(a, SparseGrad) or isinstance(b, SparseGrad):
        return a + b
    return a + b


def unstack(g, x, axis=0):
    """The gradient of ``np.stack(x, axis)`` (or ``np.array(x)``) for a list x: one slice per element."""
    return [np.take(g, i, axis=axis) for i in range(len(x))]


def setitem(x, index, value):
    """``x`` with ``x[index] = value``, as a new array (the lowered form's functional write). An array keeps
    its dtype, as it does when written in place (a float written into an integer array is truncated)."""
    if isinstance(x, np.ndarray):
        out = np.array(x, copy=True)
    else:
        out = np.array(x, dtype=np.result_type(np.asarray(x).dtype, np.asarray(value).dtype))
    out[index] = value
    return out


def seq_setitem(xs, index, value):
    """``xs`` with ``xs[index] = value`` where xs is a list, as a new list (the functional list write).

        >>> seq_setitem([1, 2, 3], 1, 5), seq_setitem([1, 2, 3], slice(0, 2), [7])
        ([1, 5, 3], [7, 3])
    """
    out = list(xs)
    out[index] = value
    return out


def seq_written(g, index, value):
    """The gradient of the value written by ``ys[index] = value`` (ys a list): its part of `g`, the
    gradient of ys (None where zero)."""
    if isinstance(index, slice) and index.step in (None, 1):
        start = index.indices(len(g) - len(value) + len(range(*index.indices(len(g)))))[0]
        return list(g[start:start + len(value)])
    return g[index]


def seq_unwritten(g, xs, index, value):
    """The gradient of the list `xs` that ``ys = xs; ys[index] = value`` overwrote: `g` (ys's gradient)
    with the written part taken out and zeros (None) for what was overwritten."""
    out = list(g)
    if isinstance(index, slice) and index.step in (None, 1):
        start, stop, _ = index.indices(len(xs))
        out[start:start + len(value)] = [None] * len(range(start, stop))
    else:
        out[index] = [None] * len(out[index]) if isinstance(index, slice) else None
    return out


def seq_concat(a, b):
    """``a + b`` of two lists or tuples.

        >>> seq_concat([1], (2, 3)), seq_concat((1,), (2,))
        ([1, 2, 3], (1, 2))
    """
    return (*a, *b) if isinstance(a, tuple) and isinstance(b, tuple) else [*a, *b]


def seq_repeat(xs, n):
    """``xs * n`` of a list or tuple and an integer."""
    return xs * n


def seq_unrepeat(g, xs):
    """The gradient of `xs` from the gradient `g` of ``xs * n``: the sum of g's chunks."""
    size, out = len(xs), [None] * len(xs)
    for k, gk in enumerate(g):
        out[k % size] = add_grads(out[k % size], gk)
    return out


def format_string(template: str, *values) -> str:
    """An f-string: ``f"{x:.2f}!"`` is ``format_string("{0:.2f}!", x)``."""
    return template.format(*values)


def dict_keys(mapping) -> list:
    """The keys of a dict, as a list (how a loop over a dict's keys, values or items counts its trips)."""
    return list(mapping)


def list_append(xs, x):
    """``xs + [x]`` (the lowered form's functional ``xs.append(x)``)."""
    return [*xs, x]


def while_loop(cond, body, loop_vars, captures=()):
    """Run ``loop_vars = body(*loop_vars, *captures)`` while ``cond(*loop_vars, *captures)``: the lowered
    form of a loop, whose loop invariants (`captures`) are passed explicitly."""
    while cond(*loop_vars, *captures):
        loop_vars = body(*loop_vars, *captures)
    return loop_vars


def if_else(test, then, orelse):
    """``then()`` if `test` else ``orelse()``; the lowered form of a branch."""
    return then() if test else orelse()


def grad_or_zeros(g, x):
    """`g`, or a zero gradient shaped like `x` where `g` is None (an element nothing flowed into)."""
    return zeros_like(x) if g is None else densify(g)


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
    out = np.zeros(np.shape(operands[i]), dtype=np.result_type(r, float))
    np.einsum(target + "->" + letters, out)[...] = r  # a repeated index: r goes on the diagonal
    return out


def _stacked_shape(x, ndmin):
    """The shape `x` takes in a stacking: ``ndmin`` 1 and 2 as ``np.atleast_1d/2d`` (leading axes), 3 as
    ``np.atleast_3d`` (a vector is (1, n, 1)), ``"columns"`` as ``np.column_stack`` (a vector is one column)."""
    shape = np.shape(x)
    if ndmin == "columns":
        return shape if len(shape) >= 2 else (max(np.size(x), 1), 1)
    if ndmin == 3 and len(shape) < 3:
        return {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}[len(shape)]
    return (1,) * (ndmin - len(shape)) + shape


def unconcatenate(g, arrays, axis=0, ndmin=1):
    """The gradient of ``np.concatenate(arrays, axis)`` (and hstack, vstack, dstack, column_stack, with
    `ndmin` the layout each array takes first, see `_stacked_shape`): g cut into one piece per array."""
    if axis is None:
        g, axis, sizes = np.ravel(g), 0, [np.size(x) for x in arrays]
    else:
        sizes = [_stacked_shape(x, ndmin)[axis] for x in arrays]
    grads = [np.reshape(p, np.shape(x)) for p, x in zip(np.split(g, np.cumsum(sizes)[:-1], axis), arrays)]
    return np.stack(grads) if isinstance(arrays, np.ndarray) else grads


def untile(g, x, reps):
    """The gradient of ``np.tile(x, reps)``: g summed over the copies."""
    shape, reps = np.shape(x), tuple(np.atleast_1d(reps))
    n = max(len(shape), len(reps))
    pairs = zip((1,) * (n - len(reps)) + reps, (1,) * (n - len(shape)) + shape)
    g = np.reshape(g, [size for pair in pairs for size in pair])
    return np.reshape(g.sum(axis=tuple(range(0, 2 * n, 2))), shape)


def unrepeat(g, x, repeats, axis=None):
    """The gradient of ``np.repeat(x, repeats, axis)``: g summed over the copies of each element."""
    shape = np.shape(x)
    n = int(np.prod(shape)) if axis is None else shape[axis]
    axis = 0 if axis is None else axis % len(shape)
    g = np.moveaxis(np.asarray(g), axis, 0)
    if np.size(repeats) == 1:
        out = np.reshape(g, (n, int(np.ravel(repeats)[0])) + g.shape[1:]).sum(axis=1)
    else:
        out = np.zeros((n,) + g.shape[1:], dtype=np.result_type(g, float))
        np.add.at(out, np.repeat(np.arange(n), repeats), g)
    return np.reshape(np.moveaxis(out, 0, axis), shape)


def undiagonal(g, x, offset=0, axis1=0, axis2=1):
    """The gradient of ``np.diagonal(x, offset, axis1, axis2)``: g placed on that diagonal of zeros shaped like x."""
    out = np.zeros(np.shape(x), dtype=np.result_type(np.asarray(x).dtype, np.asarray(g).dtype, float))
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    rows, cols = view.shape[-2] - max(-offset, 0), view.shape[-1] - max(offset, 0)
    i = np.arange(max(0, min(rows, cols)))
    view[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return out


def untake(g, x, indices, axis=None, mode="raise"):
    """The gradient of ``np.take(x, indices, axis, mode=mode)``: g added at the indices, repeats accumulated."""
    shape = np.shape(x)
    out = np.zeros(np.size(x) if axis is None else shape, dtype=np.result_type(np.asarray(g).dtype, float))
    axis = 0 if axis is None else axis % len(shape)
    n, indices = out.shape[axis], np.asarray(indices)
    indices = np.mod(indices, n) if mode == "wrap" else np.clip(indices, 0, n - 1) if mode == "clip" else indices
    k = indices.ndim
    g = np.moveaxis(np.asarray(g), list(range(axis, axis + k)), list(range(k)))
    np.add.at(np.moveaxis(out, axis, 0), indices, g)
    return np.reshape(out, shape)


def divide_or_zero(g, y):
    """``g / y``, and 0 where y is 0: the gradient of a norm (or a standard deviation) at zero is
    taken to be 0, the subgradient of least norm (as ``np.sign(0)`` is 0 for ``abs``).

        >>> divide_or_zero(np.array([1.0, 1.0]), np.array([2.0, 0.0])).tolist()
        [0.5, 0.0]
    """
    zero = np.equal(y, 0)
    if not np.any(zero):
        return g / y
    return np.where(zero, 0.0, np.divide(g, np.where(zero, 1.0, y)))


def uncast(g, x, dtype):
    """The gradient of casting `x` to `dtype`: zero through an integer or boolean dtype (the cast is
    piecewise constant), else `g` cast back to x's own floating dtype."""
    if np.dtype(dtype).kind in "biu":
        return zeros_like(x)
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc" and np.result_type(g) != x.dtype:
        return np.asarray(g).astype(x.dtype)
    return g


def cast_tangent(t, dtype):
    """The tangent of a cast to `dtype` of a value with tangent `t`: zero through an integer or boolean dtype."""
    if np.dtype(dtype).kind in "biu":
        return np.zeros(np.shape(t))
    return t


def clip_choice(a, lo, hi):
    """What ``np.clip(a, lo, hi)`` returns, element by element: 0 for `a`, 1 for `lo`, 2 for `hi`
    (NumPy computes ``minimum(maximum(a, lo), hi)``, so `hi` wins where ``lo > hi``).

        >>> clip_choice(np.array([-2.0, 0.0, 2.0]), -1.0, 1.0).tolist(), clip_choice(0.0, 1.0, -1.0).tolist()
        ([1, 0, 2], 2)
    """
    a = np.asarray(a)
    pick = np.zeros(np.broadcast_shapes(a.shape, np.shape(lo) if lo is not None else (),
                                        np.shape(hi) if hi is not None else ()), dtype=np.int8)
    low = a
    if lo is not None:
        pick = np.where(a < lo, 1, pick)
        low = np.maximum(a, lo)
    if hi is not None:
        pick = np.where(low > hi, 2, pick)
    return pick


def one_step(y, axis=0):
    """An uninitialized array shaped like one step of `y` along `axis` (what the start and stop of
    ``np.linspace`` broadcast to), also where `y` has no step at all (``num=0``)."""
    shape = list(np.shape(y))
    del shape[axis]
    return np.empty(shape)


def linspace_fraction(y, num, endpoint=True, axis=0):
    """Where each element of ``y = np.linspace(start, stop, num, endpoint, axis=axis)`` lies between
    start (0) and stop (1), shaped to broadcast against y: ``y = start + t * (stop - start)``."""
    if isinstance(y, tuple):
        raise NoDerivativeRule("no derivative rule for np.linspace with retstep=True",
                               hint="compute the step as (stop - start) / (num - 1)")
    steps = max(num - 1, 1) if endpoint else max(num, 1)
    t = np.arange(num) / steps
    shape = [1] * np.ndim(y)
    shape[axis] = num
    return np.reshape(t, shape)


def _reduced(axis, ndim):
    """The axes a reduction over `axis` (None, an int or a tuple) removes."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(np.array(np.atleast_1d(axis)) % max(ndim, 1))


def product_of_others(a, axis=None):
    """For each element of `a`, the product of the other elements of its lane of ``np.prod(a, axis)``:
    the gradient of the product, exact where `a` has zeros (no division by them).

        >>> product_of_others(np.array([2.0, 0.0, 3.0])).tolist()
        [0.0, 6.0, 0.0]
    """
    a = np.asarray(a, dtype=np.result_type(a, float))
    axes = _reduced(axis, a.ndim)
    nonzero = a != 0
    if np.all(nonzero):
        return np.prod(a, axis=axes, keepdims=True) / a
    zeros = np.sum(~nonzero, axis=axes, keepdims=True)
    rest = np.prod(np.where(nonzero, a, 1.0), axis=axes, keepdims=True)     # the product of the nonzeros
    safe = np.where(nonzero, a, 1.0)
    return np.where(zeros == 0, rest / safe, np.where((zeros == 1) & ~nonzero, rest, 0.0))


def product_of_others_tangent(a, t, axis=None):
    """The tangent of ``product_of_others(a, axis)`` along `t`, exact where `a` has zeros."""
    a = np.asarray(a, dtype=np.result_type(a, float))
    axes = _reduced(axis, a.ndim)
    nonzero = a != 0
    safe = np.where(nonzero, a, 1.0)
    zeros = np.sum(~nonzero, axis=axes, keepdims=True)
    rest = np.prod(safe, axis=axes, keepdims=True)
    ratio = np.where(nonzero, t / safe, 0.0)
    total = np.sum(ratio, axis=axes, keepdims=True)                   # sum of t/a over the nonzeros
    at_zeros = np.sum(np.where(nonzero, 0.0, t), axis=axes, keepdims=True)
    none = rest / safe * (total - ratio)
    one = np.where(nonzero, at_zeros * rest / safe, rest * total)
    two = np.where(nonzero, 0.0, rest * (at_zeros - t))
    return np.where(zeros == 0, none, np.where(zeros == 1, one, np.where(zeros == 2, two, 0.0)))


def _reverse_cumsum(v, axis):
    return np.flip(np.cumsum(np.flip(v, axis), axis), axis)


def cumprod_grad(g, y, a, axis=None):
    """The gradient of ``y = np.cumprod(a, axis)``, exact where `a` has zeros: the gradient of an element
    is the sum over later products of the product of the other factors."""
    shape = np.shape(a)
    if axis is None:
        a, y, g, axis = np.ravel(a), np.ravel(y), np.ravel(g), 0
    a = np.asarray(a, dtype=np.result_type(a, float))
    nonzero = a != 0
    if np.all(nonzero):
        return np.reshape(_reverse_cumsum(g * y, axis) / a, shape)
    safe = np.where(nonzero, a, 1.0)
    first = ~nonzero & (np.cumsum(~nonzero, axis) == 1)              # the first zero of each lane
    past_first = np.cumprod(np.where(first, 1.0, a), axis)             # the products with that zero left out
    out = np.where(nonzero, _reverse_cumsum(g * y, axis) / safe,
                   np.where(first, _reverse_cumsum(g * past_first, axis), 0.0))
    return np.reshape(out, shape)


def cumprod_tangent(t, y, a, axis=None):
    """The tangent of ``y = np.cumprod(a, axis)`` along `t`, exact where `a` has zeros."""
    shape = np.shape(y)
    if axis is None:
        a, y, t, axis = np.ravel(a), np.ravel(y), np.ravel(t), 0
    a = np.asarray(a, dtype=np.result_type(a, float))
    nonzero = a != 0
    if np.all(nonzero):
        return np.reshape(y * np.cumsum(t / a, axis), shape)
    first = ~nonzero & (np.cumsum(~nonzero, axis) == 1)
    past_first = np.cumprod(np.where(first, 1.0, a), axis)
    out = y * np.cumsum(np.where(nonzero, t / np.where(nonzero, a, 1.0), 0.0), axis) \
        + np.cumsum(np.where(first, t, 0.0), axis) * past_first
    return np.reshape(out, shape)


def _no_zero_for_second_derivative(a):
    if np.any(np.equal(a, 0)):
        raise NoDerivativeRule("the second derivative of np.cumprod at an array with a zero entry is not supported",
                               hint="keep the factors away from zero, or differentiate once")


def cumprod_grad_tangent_y(g, t, a, axis=None):
    """The tangent of ``cumprod_grad(g, y, a, axis)`` along a tangent `t` of y (refused where `a` has a zero)."""
    _no_zero_for_second_derivative(a)
    return cumprod_grad(g, t, a, axis)


def cumprod_grad_tangent_a(g, y, a, t, axis=None):
    """The tangent of ``cumprod_grad(g, y, a, axis)`` along a tangent `t` of a (refused where `a` has a zero)."""
    _no_zero_for_second_derivative(a)
    return -cumprod_grad(g, y, a, axis) * t / a


def norm_grad(g, y, x, ord=None, axis=None, keepdims=False):
    """The gradient of ``np.linalg.norm(x, ord, axis, keepdims)``: vector p-norms, matrix 'fro', 'nuc', 1, 2, inf."""
    x = np.asarray(x)
    matrix = (axis is None and x.ndim == 2 or np.ndim(axis) == 1 and len(axis) == 2) and ord is not None
    if not matrix:
        g, y = unreduce(g, x, axis, keepdims), unreduce(y, x, axis, keepdims)
        if ord in (np.inf, -np.inf):
            hit = np.abs(x) == y
            return g * np.sign(x) * hit / unreduce(np.sum(hit, axis, keepdims=True), x, axis, True)
        if ord == 0:
            return np.zeros(x.shape)
        p = 2 if ord is None else ord
        return g * np.sign(x) * divide_or_zero(np.abs(x), y) ** (p - 1)
    axes = tuple(np.array((0, 1) if axis is None else axis) % x.ndim)
    g = np.moveaxis(g if keepdims else np.expand_dims(g, axes), axes, (-2, -1))
    y = np.moveaxis(np.asarray(y) if keepdims else np.expand_dims(y, axes), axes, (-2, -1))
    xm = np.moveaxis(x, axes, (-2, -1))
    if ord == "fro":
        dm = xm / y
    elif ord in ("nuc", 2, -2):
        u, _, vh = np.linalg.svd(xm, full_matrices=False)
        k = 0 if ord == 2 else -1  # the largest or the smallest singular value
        dm = u @ vh if ord == "nuc" else u[..., [k]] @ vh[..., [k], :]
    else:  # 1, -1: extreme column sum of |x|; inf, -inf: extreme row sum
        sums = np.abs(xm).sum(-2 if ord in (1, -1) else -1, keepdims=True)
        hit = sums == y
        dm = np.sign(xm) * hit / hit.sum((-2, -1), keepdims=True)
    return np.moveaxis(g * dm, (-2, -1), axes)


def assert_true(test, message=None):
    """The generated form of ``assert test, message``."""
    assert test, message


def check_scalar(value, function: str) -> None:
    """Refuse a non-scalar output where a gradient needs a scalar."""
    if np.ndim(value) != 0 or isinstance(value, (list, tuple, dict)):
        raise NonScalarOutput(f"grad needs '{function}' to return a scalar, but it returned "
                              f"{type(value).__name__} of shape {np.shape(value)}",
                              hint="use s2sgrad.vjp(f) and pass the output's adjoint, "
                                   "or reduce the output to a scalar (np.sum, np.mean)")


class Work:
    """One piece of a checkpointed loop's backward sweep: run `steps` steps from `state`,
    recording them and then running their adjoints if `reverse`, else just advancing."""

    __slots__ = ("state", "steps", "reverse")

    def __init__(self, state, steps: int, reverse: bool):
        self.state = state
        self.steps = steps
        self.reverse = reverse


def copy_state(state):
    """A copy of a loop's state that later in-place writes cannot change."""
    if isinstance(state, np.ndarray):
        return state.copy()
    if isinstance(state, (list, tuple)):
        return rebuilt(state, [copy_state(v) for v in state])
    if isinstance(state, dict):
        return {k: copy_state(v) for k, v in state.items()}
    return state


class RandomStates:
    """The states of some random number generators (NumPy's legacy global state is `np.random` itself),
    to be put back with `restore`."""

    __slots__ = ("generators", "states")

    def __init__(self, generators):
        self.generators = generators
        self.states = [g.get_state() if hasattr(g, "get_state") else g.bit_generator.state for g in generators]

    def restore(self) -> None:
        for g, state in zip(self.generators, self.states):
            if hasattr(g, "set_state"):
                g.set_state(state)
            else:
                g.bit_generator.state = state


def random_state(*generators) -> RandomStates:
    """The current states of `generators`, saved where code that will run again starts.

        >>> saved = random_state(np.random)
        >>> first = np.random.normal()
        >>> saved.restore()
        >>> np.random.normal() == first
        True
    """
    return RandomStates(generators)


def swap_random_state(saved: RandomStates) -> RandomStates:
    """Put the states in `saved` back; returns the states they replace."""
    now = RandomStates(saved.generators)
    saved.restore()
    return now


def replay(saved: RandomStates, fn, *args):
    """``fn(*args)`` drawing the random numbers it drew when the states in `saved` were current; the
    generators are left as they were before the call."""
    now = swap_random_state(saved)
    try:
        return fn(*args)
    finally:
        now.restore()


class Checkpoints:
    """Carries out a checkpointing schedule (from `s2sgrad.schedules`) for one loop.

    The forward sweep calls ``step(state)`` at the top of every iteration; the
    backward sweep iterates ``backward()`` and, after advancing, hands the new
    state back through ``checkpoints.state = ...``.

    With `randoms` (the generators the loop draws from, see `s2sgrad.analysis.randomness`) each snapshot keeps their
    states too, each restore puts them back, and when the backward sweep is over they are as the forward
    sweep left them.

        >>> from s2sgrad.schedules import Revolve
        >>> checkpoints = Checkpoints(Revolve(snapshots=2), trips=3)
    """

    def __init__(self, schedule, trips=None, randoms=()):
        self.slots: dict = {}
        self.randoms = randoms
        self._random = None                # the generators' states that go with `state`
        self._state = None
        self.position = 0
        self._tracker = schedule.start() if trips is None else None
        self._plan = iter(schedule.plan(max(int(trips), 0))) if trips is not None else None
        self._pending: list = []           # the plan's first actions after its forward part
        self._forward_done = trips is not None and trips <= 0
        self._advancing = 0

    @property
    def state(self):
        """The loop's state where the backward sweep stands (handed back after advancing)."""
        return self._state

    @state.setter
    def state(self, value) -> None:
        self._state = value
        self._random = RandomStates(self.randoms) if self.randoms else None

    def _snapshot(self, state) -> tuple:
        return copy_state(state), RandomStates(self.randoms) if self.randoms else None

    def step(self, state) -> None:
        """The forward sweep is about to run the step at the current position from `state`."""
        if self._tracker is not None:
            snapshot = self._tracker.step()
            if snapshot is not None:
                self.slots[snapshot.slot] = self._snapshot(state)
        elif self._advancing:
            self._advancing -= 1
        elif not self._forward_done:
            for action in self._plan:
                if isinstance(action, Snapshot):
                    self.slots[action.slot] = self._snapshot(state)
                elif isinstance(action, Free):
                    self.slots.pop(action.slot, None)
                elif isinstance(action, Advance):
                    self._advancing = action.steps - 1     # this step is the first of them
                    break
                else:                                      # Reverse or Restore: the forward part is over
                    self.state = copy_state(state)
                    self._pending = [action]
                    self._forward_done = True
                    break
            else:
                self._forward_done = True
        self.position += 1

    def backward(self):
        """The work of the backward sweep, in order."""
        if self._tracker is not None:
            actions = self._tracker.reverse()
        else:
            actions = (a for part in (self._pending, self._plan) for a in part)
        after_forward = RandomStates(self.randoms) if self.randoms else None
        for action in actions:
            if isinstance(action, Snapshot):
                self.slots[action.slot] = (copy_state(self._state), self._random)
            elif isinstance(action, Restore):
                state, self._random = self.slots[action.slot]
                self._state = copy_state(state)
            elif isinstance(action, Free):
                self.slots.pop(action.slot, None)
            elif isinstance(action, (Advance, Reverse)):
                if self._random is not None:
                    self._random.restore()         # the trips draw what they drew in the forward sweep
                yield Work(self._state, action.steps, isinstance(action, Reverse))
                if isinstance(action, Reverse):
                    self._state = self._random = None
        if after_forward is not None:
            after_forward.restore()


def derivative_vjp(derivative, name: str, cotangent, *args):
    """The gradient with respect to argument `name` of ``⟨cotangent, derivative(*args)⟩``, for a derivative
    s2sgrad made called inside a differentiated function (`s2sgrad.api.derivatives.derivative_rule`)."""
    spec = derivative.s2sgrad_derivative
    grad = spec.transformed("vjp", derivative, name)(*args, cotangent)[1]
    if grad is None:                        # every part of the cotangent is a zero
        grad = zeros_like(args[list(spec.params).index(name)])
    return grad


def derivative_jvp(derivative, names: tuple, tangents: tuple, *args):
    """The tangent of ``derivative(*args)`` along `tangents` of the arguments `names`, for a derivative
    s2sgrad made called inside a function forward mode differentiates."""
    return derivative.s2sgrad_derivative.transformed("jvp", derivative, names)(*args, tangents)[1]


def _sort_order(a, axis):
    """Where each element of ``np.sort(a, axis)`` came from (ties in order of appearance), and the axis
    (0 of the flattened array for ``axis=None``)."""
    a = np.asarray(a)
    if axis is None:
        return np.argsort(np.ravel(a), kind="stable"), 0
    return np.argsort(a, axis=axis, kind="stable"), axis


def unsort(g, a, axis=-1):
    """The gradient of ``np.sort(a, axis)``: each element of g goes back where its sorted value came from."""
    order, along = _sort_order(a, axis)
    out = np.zeros(np.shape(order), dtype=np.result_type(np.asarray(g).dtype, float))
    np.put_along_axis(out, order, g, along)
    return np.reshape(out, np.shape(a))


def sorted_like(t, a, axis=-1):
    """`t` in the order ``np.sort(a, axis)`` puts a's elements (the tangent of a sort)."""
    order, along = _sort_order(a, axis)
    return np.take_along_axis(np.ravel(t) if axis is None else np.broadcast_to(t, np.shape(a)), order, along)


def as_column(x):
    """`x` as ``np.c_`` takes it: a number or a vector becomes one column, arrays of two or more axes stay."""
    return np.reshape(x, (-1, 1)) if np.ndim(x) < 2 else x


# ---------------------------------------------------------------- NumPy's in-place functions, made functional

def _copy(a):
    return np.array(a, copy=True)


def _functional_at(ufunc):
    """``ufunc.at(a, indices, b)`` on a copy of `a`, as a function of its own (one rule each)."""
    def at(a, indices, b):
        out = _copy(a)
        ufunc.at(out, indices, b)
        return out
    at.__name__ = at.__qualname__ = f"{ufunc.__name__}_at"
    at.__doc__ = f"``np.{ufunc.__name__}.at(a, indices, b)`` on a copy of `a`: repeats accumulated."
    return at


add_at = _functional_at(np.add)
subtract_at = _functional_at(np.subtract)
maximum_at = _functional_at(np.maximum)
minimum_at = _functional_at(np.minimum)


def extremum_ties(y, a, indices, b):
    """For ``y = maximum_at(a, indices, b)`` (or minimum_at): how many of the candidates for each element
    of y (its old value in `a`, the b's sent to it) equal the result. The gradient is shared among them,
    as `np.maximum`'s is on a tie."""
    count = (np.asarray(a) == y).astype(float)
    picked = np.asarray(y)[indices]
    np.add.at(count, indices, np.broadcast_to(b, np.shape(picked)) == picked)
    return count


def at_copy(ufunc, a, indices, b=None):
    """``ufunc.at(a, indices, b)`` on a copy of `a` (no derivative rule: refused on the differentiated path)."""
    out = _copy(a)
    ufunc.at(out, indices, *(() if b is None else (b,)))
    return out


def written_copy(fn, a, *args, **kwargs):
    """``fn(a, ...)``, a NumPy function that writes into `a` (np.put, np.place, np.fill_diagonal, ...),
    on a copy of `a` (no derivative rule: refused on the differentiated path)."""
    out = _copy(a)
    fn(out, *args, **kwargs)
    return out


def written(g, index):
    """The gradient of the values written by ``x[index] = v``: ``g[index]``, where a repeated index
    keeps only its last write (as NumPy does) and the earlier ones get zero.

        >>> written(np.array([1.0, 2.0, 3.0]), [0, 0, 2])
        array([0., 1., 3.])
    """
    if type(index) is int and type(g) is np.ndarray and g.ndim == 1 and g.dtype == np.float64:
        return g[index]                       # one element of a float64 vector: a copy already, the same value
    g = densify(g)
    part = np.array(g[index], dtype=float, copy=True) if np.ndim(g) else g
    if _may_repeat(index) and np.size(part) > 1:
        # Which write each element of the part is: the same NumPy assignment as the forward write,
        # so where an index repeats, the write that survives is the one NumPy kept.
        order = np.arange(np.size(part)).reshape(np.shape(part))
        owner = np.full(np.shape(g), -1, dtype=np.intp)
        owner[index] = order
        part[owner[index] != order] = 0.0
    return part


def _may_repeat(index) -> bool:
    """Whether an index can name one element twice: it has an integer array or list in it (a basic
    index, or a boolean mask, never does)."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if isinstance(part, list) or isinstance(part, np.ndarray) and part.dtype.kind != "b" and part.ndim:
            return True
    return False


# ---------------------------------------------------------------- forward mode and higher order

__all__ += ["broadcast_like", "stack_push", "stack_pop", "stack_pop_rows", "einsum_tangent", "einsum_grad_tangent"]


def broadcast_like(t, y):
    """The tangent `t` spread to the shape of `y`: the tangent of ``a + b`` is ``da`` alone
    where b's tangent is zero, and b may have widened the result.

        >>> broadcast_like(1.0, np.zeros(2)).tolist()
        [1.0, 1.0]
    """
    shape = np.shape(y)
    return t if np.shape(t) == shape else np.broadcast_to(t, shape)


def stack_push(stack, value):
    """``stack.push(value)`` as a function of the stack (how gradient code is read back to be differentiated).

        >>> stack_push(Stack(), 1.0)
        [1.0]
    """
    stack.append(value)
    return stack


def stack_pop(stack):
    """``value = stack.pop()`` as a function of the stack: returns ``(stack, value)``.

        >>> stack_pop(Stack([1.0, 2.0]))
        ([1.0], 2.0)
    """
    return stack, stack.pop()


def stack_pop_rows(stack, n):
    """``rows = stack.pop_rows(n)`` as a function of the stack: returns ``(stack, rows)``.

        >>> stack_pop_rows(Stack([np.zeros(1), np.ones(1)]), 2)
        ([], array([[1.],
               [0.]]))
    """
    return stack, Stack.pop_rows(stack, n)


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
