"""The runtime helpers of gradients generated for arrays of another array namespace (Dask, array-api-strict,
PyTorch, JAX, CuPy): the names generated code calls (`unbroadcast`, `unreduce`, `matmul_grad_a`, `zeros_like`,
`complete`, `Stack`, ...) written with the array API standard, each taking the namespace of its arguments
(`array_api_compat.array_namespace`) and making no NumPy array. A module generated for such arrays imports them
after `s2sgrad.runtime`'s, so that they stand where NumPy's would (see `backend.namespaces`).

    >>> import array_api_strict as xp
    >>> unbroadcast(xp.ones((3, 2)), xp.ones(2))
    Array([3., 3.], dtype=array_api_strict.float64)
    >>> unreduce(1.0, xp.zeros(2))
    Array([1., 1.], dtype=array_api_strict.float64)
"""
from __future__ import annotations

import math

import numpy as np

from .checkpoints import RowBatches as _NumpyRowBatches
from .control import check_scalar as _check_numpy_scalar
from .gradients import rebuilt
from .records import is_record, record_complete
from .stacks import Stack as _NumpyStack

_NUMBERS = (bool, int, float, complex)


def namespace_of(*values):
    """The array namespace of `values` (Python numbers and None say nothing), through `array_api_compat`."""
    import array_api_compat
    return array_api_compat.array_namespace(*(v for v in values if v is not None and type(v) not in _NUMBERS))


def _shape(x) -> tuple:
    return () if x is None or type(x) in _NUMBERS else tuple(x.shape)


def shape_of(x) -> tuple:
    """``np.shape(x)`` of an array of any namespace or a Python number.

        >>> import array_api_strict as xp
        >>> shape_of(xp.ones((2, 3))), shape_of(1.0)
        ((2, 3), ())
    """
    return _shape(x)


def length_of(x) -> int:
    """``len(x)``: of an array, the size of its first axis (the array API gives arrays no len)."""
    return len(x) if isinstance(x, (list, tuple, dict, str, range)) else _shape(x)[0]


def rows_of(x):
    """What ``for row in x`` walks: a list's items, an array's rows (the array API gives arrays no iteration)."""
    if isinstance(x, (list, tuple, dict, str, range)) or not hasattr(x, "shape"):
        return x
    return (x[i, ...] for i in range(_shape(x)[0]))


def ndim_of(x) -> int:
    """``np.ndim(x)`` of an array of any namespace or a Python number."""
    return len(_shape(x))


def size_of(x) -> int:
    """``np.size(x)`` of an array of any namespace or a Python number."""
    return math.prod(_shape(x))


def unbroadcast(g, x):
    """Sum `g` over the axes along which `x` was broadcast, so that it has x's shape."""
    shape = _shape(x)
    if _shape(g) == shape:
        return g
    return sum_to(g, shape)


def sum_to(g, shape):
    """Sum `g` over its broadcast axes down to `shape` (``unbroadcast`` with the shape known)."""
    xp = namespace_of(g)
    lead = g.ndim - len(shape)
    if lead > 0:
        g = xp.sum(g, axis=tuple(range(lead)))
    ones = tuple(axis for axis, size in enumerate(shape) if size == 1 and g.shape[axis] != 1)
    return xp.sum(g, axis=ones, keepdims=True) if ones else g


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the gradient of a reduction over `axis` back to the shape of `x` (a Python number `g` is
    spread over an array made like `x`, which keeps x's chunks on Dask)."""
    shape = _shape(x)
    if type(g) in _NUMBERS:
        return g if not shape else namespace_of(x).zeros_like(x, dtype=_float_dtype(x)) + g
    xp = namespace_of(g)
    if not keepdims and axis is not None and g.ndim < len(shape):
        for a in sorted(a % len(shape) for a in (axis if isinstance(axis, tuple) else (axis,))):
            g = xp.expand_dims(g, axis=a)
    return xp.broadcast_to(g, shape)


def broadcast_like(t, y):
    """The tangent `t` spread to the shape of `y`."""
    shape = _shape(y)
    if _shape(t) == shape:
        return t
    if type(t) in _NUMBERS:
        return namespace_of(y).zeros_like(y, dtype=_float_dtype(y)) + t
    return namespace_of(t).broadcast_to(t, shape)


def matmul_grad_a(g, a, b):
    """The gradient of ``a @ b`` with respect to `a`, for vectors, matrices and stacks of them."""
    xp = namespace_of(g, a, b)
    if b.ndim == 1:
        return unbroadcast(g[..., None] * b, a) if a.ndim > 1 else g * b
    if a.ndim == 1:
        return b @ g if g.ndim == 1 else unbroadcast(xp.matmul(g[..., None, :], xp.matrix_transpose(b))[..., 0, :], a)
    return unbroadcast(g @ xp.matrix_transpose(b), a)


def matmul_grad_b(g, a, b):
    """The gradient of ``a @ b`` with respect to `b`, for vectors, matrices and stacks of them."""
    xp = namespace_of(g, a, b)
    if a.ndim == 1:
        return unbroadcast(a[:, None] * xp.expand_dims(g, axis=-2), b) if b.ndim > 1 else g * a
    if b.ndim == 1:
        return unbroadcast((xp.matrix_transpose(a) @ g[..., None])[..., 0], b)
    return unbroadcast(xp.matrix_transpose(a) @ g, b)


def _as_array(xp, g, like):
    return xp.asarray(g, dtype=_float_dtype(like)) if type(g) in _NUMBERS else g


def _tensordot_axes(a, b, axes):
    na, nb = ndim_of(a), ndim_of(b)
    if isinstance(axes, int):
        return list(range(na - axes, na)), list(range(axes))
    axes_a, axes_b = ([ax] if isinstance(ax, int) else list(ax) for ax in axes)
    return [i % na for i in axes_a], [i % nb for i in axes_b]


def _argsort(order: list) -> tuple:
    return tuple(sorted(range(len(order)), key=order.__getitem__))


def tensordot_grad_a(g, a, b, axes=2):
    """The gradient of ``np.tensordot(a, b, axes)`` with respect to `a` (also used for dot and inner)."""
    xp = namespace_of(g, a, b)
    axes_a, axes_b = _tensordot_axes(a, b, axes)
    free_a = [i for i in range(ndim_of(a)) if i not in axes_a]
    free_b = [i for i in range(ndim_of(b)) if i not in axes_b]
    g = _as_array(xp, g, b)
    ga = xp.tensordot(g, b, axes=(list(range(len(free_a), g.ndim)), free_b))
    return xp.permute_dims(ga, _argsort(free_a + [axes_a[axes_b.index(j)] for j in sorted(axes_b)]))


def tensordot_grad_b(g, a, b, axes=2):
    """The gradient of ``np.tensordot(a, b, axes)`` with respect to `b` (also used for dot and inner)."""
    xp = namespace_of(g, a, b)
    axes_a, axes_b = _tensordot_axes(a, b, axes)
    free_a = [i for i in range(ndim_of(a)) if i not in axes_a]
    free_b = [i for i in range(ndim_of(b)) if i not in axes_b]
    gb = xp.tensordot(a, _as_array(xp, g, a), axes=(free_a, list(range(len(free_a)))))
    return xp.permute_dims(gb, _argsort([axes_b[axes_a.index(j)] for j in sorted(axes_a)] + free_b))


def unstack(g, x, axis=0):
    """The gradient of ``np.stack(x, axis)`` for a list x: one slice per element."""
    return list(namespace_of(g).unstack(g, axis=axis))


def unconcatenate(g, arrays, axis=0, ndmin=1):
    """The gradient of ``np.concatenate(arrays, axis)`` (arrays of at least `ndmin` axes): g cut into one piece
    per array."""
    xp = namespace_of(g)
    if axis is None:
        g, axis, sizes = xp.reshape(g, (-1,)), 0, [size_of(x) for x in arrays]
    else:
        sizes = [((1,) * (ndmin - ndim_of(x)) + _shape(x))[axis] for x in arrays]
    pieces, start = [], 0
    for x, size in zip(arrays, sizes):
        index = (slice(None),) * (axis % g.ndim) + (slice(start, start + size), ...)
        pieces.append(xp.reshape(g[index], _shape(x)))
        start += size
    return pieces


def xp_dot(a, b):
    """``np.dot(a, b)`` with the array API: a matrix product for vectors and matrices, a product with a number."""
    if type(a) in _NUMBERS or type(b) in _NUMBERS or a.ndim == 0 or b.ndim == 0:
        return a * b
    return namespace_of(a, b).tensordot(a, b, axes=([-1], [-2 if b.ndim > 1 else -1]))


def xp_outer(a, b):
    """``np.outer(a, b)`` with the array API."""
    xp = namespace_of(a, b)
    return xp.reshape(a, (-1,))[:, None] * xp.reshape(b, (-1,))[None, :]


def xp_transpose(x, axes=None):
    """``np.transpose(x, axes)`` with the array API (`permute_dims`; no axes: reversed)."""
    return namespace_of(x).permute_dims(x, tuple(range(x.ndim))[::-1] if axes is None else tuple(axes))


def xp_swapaxes(x, a: int, b: int):
    """``np.swapaxes(x, a, b)`` with the array API."""
    axes = list(range(x.ndim))
    axes[a], axes[b] = axes[b], axes[a]
    return namespace_of(x).permute_dims(x, tuple(axes))


def xp_broadcast_to(xp, a, shape):
    """``np.broadcast_to(a, shape)`` in the namespace `xp` (a Python number too)."""
    if type(a) in _NUMBERS:
        return xp.full(shape, a, dtype=xp.float64 if type(a) is float else None)
    return xp.broadcast_to(a, tuple(shape))


def xp_expand_dims(xp, a, axis):
    """``np.expand_dims(a, axis)`` in the namespace `xp`, for several axes too (of a Python number: of the
    namespace's 0-d array of it)."""
    axes = axis if isinstance(axis, tuple) else (axis,)
    if type(a) in _NUMBERS:
        a = xp.asarray(a)
    ndim = a.ndim + len(axes)
    for each in sorted(x % ndim for x in axes):
        a = xp.expand_dims(a, axis=each)
    return a


def xp_where(xp, condition, a, b):
    """``np.where(condition, a, b)`` in the namespace `xp` (Python numbers for `a` and `b` too)."""
    return xp.where(condition, a, b)


TAKING_NAMESPACE = frozenset({"xp_array", "xp_asarray", "xp_broadcast_to", "xp_empty", "xp_expand_dims", "xp_full",
                              "xp_ones", "xp_sum_of", "xp_where", "xp_zeros"})
"""The helpers that take the namespace first (their arguments may all be Python numbers)."""


def xp_sum_of(xp, a, axis=None, dtype=None, keepdims=False):
    """``np.sum(a, axis, dtype=dtype)``: a mask counted in `dtype` (the array API sums numbers alone)."""
    if dtype is not None and a.dtype == xp.bool:
        a = xp.astype(a, dtype)
    return xp.sum(a, axis=axis, dtype=dtype, keepdims=keepdims)


def float_dtype(*values):
    """The floating dtype of a gradient of `values` (arrays of one namespace and Python numbers): the arrays'
    floating dtypes promoted, float64 where none is floating."""
    arrays = [v for v in values if v is not None and type(v) not in _NUMBERS]
    if not arrays:
        return np.float64
    xp = namespace_of(*arrays)
    floating = [a.dtype for a in arrays if xp.isdtype(a.dtype, ("real floating", "complex floating"))]
    return xp.result_type(*floating) if floating else xp.float64


def _float_dtype(x):
    xp = namespace_of(x)
    return x.dtype if xp.isdtype(x.dtype, ("real floating", "complex floating")) else xp.float64


def like(x):
    """`x` as the backward sweep keeps it when it reads only x's shape: itself (a lazy or device array)."""
    return x


def zeros_like(x):
    """A zero gradient for `x`: 0.0 for a Python number, a floating array of x's namespace for an array, and so
    on for containers."""
    if isinstance(x, (list, tuple)):
        return rebuilt(x, [None if v is None else zeros_like(v) for v in x])
    if isinstance(x, dict):
        return {k: None if v is None else zeros_like(v) for k, v in x.items()}
    if type(x) in _NUMBERS:
        return 0j if type(x) is complex else 0.0
    if is_record(x):
        return record_complete(None, x, complete)
    return namespace_of(x).zeros_like(x, dtype=_float_dtype(x))


def grad_or_zeros(g, x):
    """`g`, or a zero gradient shaped like `x` where `g` is None."""
    return zeros_like(x) if g is None else g


def complete(g, x):
    """The gradient handed to the user for `x`: zeros where `g` is None, an array of x's namespace (on Dask with
    x's chunks), and never an alias of a mutable array."""
    if g is None:
        return zeros_like(x)
    if isinstance(x, (list, tuple)):
        return rebuilt(x, [complete(gi, xi) for gi, xi in zip(g, x)])
    if isinstance(x, dict):
        return {k: complete(g.get(k), v) for k, v in x.items()}
    if is_record(x):
        return record_complete(g, x, complete)
    if type(x) in _NUMBERS:
        return g
    import array_api_compat
    xp = namespace_of(x)
    if type(g) in _NUMBERS:
        return xp.zeros_like(x, dtype=_float_dtype(x)) + g
    if array_api_compat.is_dask_array(g):
        return g.rechunk(x.chunks) if g.chunks != x.chunks and g.shape == x.shape else g
    if array_api_compat.is_jax_array(g):
        return g
    return xp.asarray(g, copy=True)


def check_scalar(value, function: str) -> None:
    """Refuse an output that is not a scalar or an array of one element where a gradient needs a scalar."""
    if isinstance(value, (list, tuple, dict)) or type(value) in _NUMBERS or isinstance(value, np.generic):
        return _check_numpy_scalar(value, function)
    if size_of(value) != 1:
        return _check_numpy_scalar(np.empty(_shape(value)), function)


def output_seed(value, seed, function: str):
    """The adjoint `seed` of a gradient's output `value`, shaped like it."""
    check_scalar(value, function)
    return seed if ndim_of(value) == 0 else namespace_of(value).zeros_like(value, dtype=_float_dtype(value)) + seed


def scatter(g, x, index):
    """The gradient of ``x[index]``: `g` placed at `index` in zeros shaped like x. A basic index (integers,
    slices, ``None``, ``...``) reads each element once: `g` is written into fresh zeros (``.at[].set`` on JAX,
    whose arrays are immutable); an integer array along the first axis adds its repeats (``.at[].add`` on
    JAX, a one-hot matrix product elsewhere)."""
    import array_api_compat
    xp = namespace_of(x, g)
    out = xp.zeros_like(x, dtype=_float_dtype(x))
    if array_api_compat.is_jax_array(out):
        return out.at[index].set(g) if _is_basic(index) else out.at[index].add(g)
    if _is_basic(index):
        out[index] = g
        return out
    rows = xp.reshape(xp.asarray(index), (-1,))
    onehot = xp.astype(xp.reshape(rows, (-1, 1)) == xp.reshape(xp.arange(_shape(x)[0]), (1, -1)), out.dtype)
    flat = xp.reshape(xp.broadcast_to(g, (*_shape(index), *_shape(x)[1:])), (rows.shape[0], -1))
    return xp.reshape(xp.matrix_transpose(onehot) @ flat, _shape(x))


def _is_basic(index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, slice)) for p in parts)


def xp_asarray(xp, value, dtype=None):
    """``np.array(value)``: a list of arrays stacked (the array API nests none), anything else as an array."""
    if isinstance(value, (list, tuple)) and any(hasattr(v, "shape") for v in value):
        stacked = xp.stack([xp_asarray(xp, v) for v in value])
        return stacked if dtype is None else xp.astype(stacked, dtype)
    return xp.asarray(value, dtype=dtype)


xp_array = xp_asarray


def xp_zeros(xp, shape, dtype=None):
    """``np.zeros(shape)``: float64 unless told (as NumPy; PyTorch's and JAX's own default is float32)."""
    return xp.zeros(shape, dtype=xp.float64 if dtype is None else dtype)


def xp_ones(xp, shape, dtype=None):
    """``np.ones(shape)``, float64 unless told."""
    return xp.ones(shape, dtype=xp.float64 if dtype is None else dtype)


def xp_empty(xp, shape, dtype=None):
    """``np.empty(shape)``, float64 unless told."""
    return xp.empty(shape, dtype=xp.float64 if dtype is None else dtype)


def xp_full(xp, shape, value, dtype=None):
    """``np.full(shape, value)``, float64 for a float unless told."""
    return xp.full(shape, value, dtype=xp.float64 if dtype is None and type(value) is float else dtype)


def _array_index(index):
    """`index` reading whole trailing axes (``a[i]`` as ``a[i, ...]``, as the array API wants it)."""
    parts = index if isinstance(index, tuple) else (index,)
    return index if any(p is Ellipsis for p in parts) else (*parts, ...)


def xp_add_at(a, index, value):
    """``a[index] += value`` (a list's item too): in place where the namespace writes in place, else
    (JAX) a new array."""
    if isinstance(a, (list, dict)):
        a[index] += value
        return a
    if _immutable(a) and not hasattr(a, "rechunk"):
        return a.at[index].add(value)
    index = _array_index(index)
    a[index] = a[index] + value
    return a


def xp_set_at(a, index, value):
    """``a[index] = value`` (a list's item too), as `xp_add_at`."""
    if isinstance(a, (list, dict)):
        a[index] = value
        return a
    if _immutable(a) and not hasattr(a, "rechunk"):
        return a.at[index].set(value)
    a[_array_index(index)] = value
    return a


def _immutable(x) -> bool:
    import array_api_compat
    return array_api_compat.is_dask_array(x) or array_api_compat.is_jax_array(x)


def copy_state(state):
    """A copy of a loop's state that later in-place writes cannot change (Dask and JAX arrays never change)."""
    if isinstance(state, (list, tuple)):
        return rebuilt(state, [copy_state(v) for v in state])
    if isinstance(state, dict):
        return {k: copy_state(v) for k, v in state.items()}
    if type(state) in _NUMBERS or not hasattr(state, "shape") or _immutable(state):
        return state
    return namespace_of(state).asarray(state, copy=True)


class RowBatches(_NumpyRowBatches):
    """`checkpoints.RowBatches` with the array API: its sum is its own (never written into a gradient's buffer,
    which Dask and JAX cannot write into); generated code adds `total()` to the gradient."""

    __slots__ = ()

    def __init__(self, limit: int, into=None):
        super().__init__(limit)

    def add(self, rows, columns=None) -> None:
        if _shape(rows)[0]:
            self.rows.append(rows)
            if columns is not None:
                self.columns.append(columns)
            self.count += _shape(rows)[0]
            if self.count >= self.limit:
                self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        xp = namespace_of(*self.rows)
        rows = self.rows[0] if len(self.rows) == 1 else xp.concat(self.rows)
        if self.columns:
            part = xp.matrix_transpose(rows) @ (self.columns[0] if len(self.columns) == 1 else xp.concat(self.columns))
        else:
            part = xp.sum(rows, axis=0)
        self.sum = part if self.sum is None else self.sum + part
        self.rows, self.columns, self.count = [], [], 0


class Stack(_NumpyStack):
    """The stack of primal values, popping rows with ``xp.stack`` (a lazy array stays lazy)."""

    def pop_rows(self, n: int):
        """Pop the last `n` values at once, as the rows of one array of their namespace (the last pushed first)."""
        start = len(self) - n
        rows = self[start:]
        del self[start:]
        rows.reverse()
        return namespace_of(*rows).stack(rows)


__all__ = ["broadcast_like", "check_scalar", "complete", "copy_state", "float_dtype", "grad_or_zeros", "length_of",
           "like", "matmul_grad_a", "matmul_grad_b", "ndim_of", "output_seed", "RowBatches", "rows_of", "scatter",
           "shape_of", "size_of", "Stack", "sum_to", "tensordot_grad_a", "tensordot_grad_b", "unbroadcast",
           "unconcatenate", "unreduce", "unstack", "xp_add_at", "xp_array", "xp_asarray", "xp_broadcast_to", "xp_dot",
           "xp_empty", "xp_expand_dims", "xp_full", "xp_ones", "xp_outer", "xp_set_at", "xp_sum_of", "xp_swapaxes",
           "xp_transpose", "xp_where", "xp_zeros", "zeros_like"]
