"""Part of stage 3: what can be known about dtypes before running.

Generated code is specialized on the dtypes of the arguments, as on their shapes,
so NumPy's own type resolution can be run ahead: ``np.tanh(W @ h + b)`` with
float64 arrays is float64. Each name gets a *descriptor*:

- a NumPy dtype: an array (or NumPy scalar) of that dtype;
- ``int``, ``float``, ``bool`` or ``complex``: a Python number (NumPy treats it
  as "weak": ``x * 2.0`` keeps x's dtype);
- ``REAL``: real numbers of at most 64 bits, or no numbers at all (a shape, a
  slice, a tuple of such), dtype otherwise unknown;
- ``None``: unknown.

Every rule is NumPy's own resolution or gives up: optimizations that write a
result into an existing array rely on it, and a wrong dtype there would round.

    >>> import numpy as np
    >>> from s2sgrad.frontend.lower import lower_function
    >>> def f(x):
    ...     return np.sum(np.tanh(x) * 2.0)
    >>> dtypes = Dtypes({"x": np.dtype("float64")})
    >>> dtypes.block(lower_function(f)[0].body)
    >>> dtypes.real(), dtypes.of(Var("tanh"))
    (True, dtype('float64'))
"""
from __future__ import annotations

import builtins
import operator
from dataclasses import dataclass

import numpy as np

from ..ir import primitives
from ..ir.nodes import Assign, Const, Global, Op, Var
from .dataflow import Forward

REAL = "real"
PYTHON_NUMBERS = (bool, int, float, complex)
FLOAT64 = np.dtype(np.float64)

OPERATOR_UFUNCS = {
    operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply, operator.truediv: np.true_divide,
    operator.floordiv: np.floor_divide, operator.mod: np.remainder, operator.pow: np.power,
    operator.matmul: np.matmul, operator.neg: np.negative, operator.pos: np.positive, builtins.abs: np.absolute,
    operator.lt: np.less, operator.le: np.less_equal, operator.gt: np.greater, operator.ge: np.greater_equal,
    operator.eq: np.equal, operator.ne: np.not_equal, np.dot: np.matmul,
}
REDUCTIONS = {np.sum, np.mean, np.max, np.min, np.prod, np.amax, np.amin, np.std, np.var}
ALLOCATIONS = {np.zeros, np.ones, np.empty}
SAME_DTYPE = {np.transpose, np.reshape, np.ravel, np.squeeze, np.expand_dims, np.copy, np.negative,
              np.zeros_like, np.ones_like, np.empty_like, np.atleast_1d, np.atleast_2d}
FFT_COMPLEX = {np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn, np.fft.rfft,
               np.fft.rfft2, np.fft.rfftn, np.fft.ihfft}
FFT_REAL = {np.fft.irfft, np.fft.irfft2, np.fft.irfftn, np.fft.hfft}
REAL_PARTS = {np.real, np.imag, np.angle}
SIZES = {np.shape, builtins.len, np.ndim, np.size}
HOLDERS = {builtins.range, primitives.make_tuple, primitives.make_list}
JOINED = {primitives.seq_concat, primitives.seq_repeat}       # lists and tuples added or repeated


MAX_ITEMS = 16              # the longest list, tuple or dict whose items' descriptors are known


@dataclass(frozen=True)
class Items:
    """The descriptors of the items of a list, tuple or dict argument, by key (a list's keys: 0, 1, ...).

        >>> Items.of({"W": np.ones(2), "b": 1.0}).item("b"), Items.of([np.ones(2)] * 2).joined()
        (<class 'float'>, dtype('float64'))
    """
    pairs: tuple                # ((key, descriptor), ...)
    by_key: bool = False        # a dict's (else a list's or tuple's, by position)

    @staticmethod
    def of(value) -> Items | None:
        if len(value) > MAX_ITEMS:
            return None
        by_key = type(value) is dict
        pairs = value.items() if by_key else enumerate(value)
        return Items(tuple((key, dtype_of(item)) for key, item in pairs), by_key)

    def item(self, key):
        if not self.by_key:
            return self.pairs[key][1] if type(key) is int and -len(self.pairs) <= key < len(self.pairs) else None
        return next((d for k, d in self.pairs if type(k) is type(key) and k == key), None)

    def joined(self):
        """The descriptor every item has (None: not one)."""
        first = self.pairs[0][1] if self.pairs else None
        return first if all(same(d, first) for _, d in self.pairs) else None

    def sliced(self, part: slice) -> Items | None:
        return None if self.by_key else Items(tuple(enumerate(d for _, d in self.pairs[part])))


def dtype_of(value):
    """The descriptor of an argument's value (what generated code is specialized on)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    if type(value) in PYTHON_NUMBERS:
        return type(value)
    if type(value) in (list, tuple, dict):
        return Items.of(value)
    return None


def is_python_number(descriptor) -> bool:
    # (a dtype compares equal to Python types and to None: np.dtype("f8") == float == None)
    return isinstance(descriptor, type) and descriptor in PYTHON_NUMBERS


def same(a, b) -> bool:
    return type(a) is type(b) and a == b


def is_real(descriptor) -> bool:
    """Real numbers of at most 64 bits (or no numbers)?"""
    if descriptor is REAL or is_python_number(descriptor) and descriptor is not complex:
        return True
    if isinstance(descriptor, Items):
        return all(is_real(d) for _, d in descriptor.pairs)
    return isinstance(descriptor, np.dtype) and descriptor.kind in "biuf" and descriptor.itemsize <= 8


class Dtypes(Forward):
    """Descriptors of the names of one lowered function (`facts`: name -> descriptor), found by a forward walk
    (`block`) whose loops run until their variables' descriptors settle (the lattice is short: this ends)."""

    def __init__(self, known: dict):
        super().__init__(known)
        self.items: dict = {}                    # name of a list or tuple -> its items' descriptors

    def of(self, atom):
        if isinstance(atom, Var):
            return self.facts.get(atom.name)
        value = atom.value
        if isinstance(atom, Global) and isinstance(value, (np.ndarray, np.generic)) or type(value) in PYTHON_NUMBERS:
            return dtype_of(value)
        if value is None or isinstance(value, (str, slice)) or value is Ellipsis or _int_tuple(value):
            return REAL
        return None

    def real(self) -> bool:
        """Is every value of the function real, of at most 64 bits? (Then so is every adjoint.)"""
        return all(is_real(d) for d in self.facts.values())

    def is_complex(self, name: str) -> bool:
        return _complex(self.facts.get(name))

    def touches_complex(self, target: str, op: Op) -> bool:
        """Does the call `target = op` have a complex argument or result?"""
        return self.is_complex(target) or any(_complex(self.of(a)) for a in [*op.args, *op.kwargs.values()])

    def unknown(self, target: str, op: Op) -> bool:
        """Is the dtype of the result of `target = op`, or of one of its arguments, not known (it may be complex)?"""
        return self.facts.get(target) is None or any(self.of(a) is None for a in [*op.args, *op.kwargs.values()]
                                                    if isinstance(a, Var))

    # ---------------------------------------------------------------- rules

    def op(self, op: Op):
        fn, args, kwargs = op.fn, [self.of(a) for a in op.args], op.kwargs
        if fn is primitives.setitem and args and isinstance(args[0], np.dtype):   # an array written keeps its dtype
            return args[0]
        if any(a is None for a in args):
            return None
        ufunc = OPERATOR_UFUNCS.get(fn, fn if isinstance(fn, np.ufunc) else None)
        if ufunc is not None and not kwargs and len(args) == ufunc.nin:
            if all(is_python_number(a) for a in args):    # Python's own arithmetic, or NumPy's on them
                return _on_samples(fn, args)
            return _resolve(ufunc, args)
        if fn in REDUCTIONS and args and set(kwargs) <= {"axis", "keepdims"}:
            return _on_samples(fn, args[:1])
        if fn in ALLOCATIONS:
            return _dtype_argument(kwargs.get("dtype", op.args[1] if len(op.args) > 1 else None), op)
        if fn in SAME_DTYPE and args and set(kwargs) <= {"axes", "axis", "newshape", "shape"}:
            return args[0] if isinstance(args[0], np.dtype) or args[0] is REAL else None
        if fn in (operator.getitem, primitives.seq_getitem) and (isinstance(args[0], np.dtype) or args[0] is REAL):
            return args[0]
        if fn in (operator.getitem, primitives.seq_getitem) and isinstance(args[0], Items) and len(op.args) == 2:
            return self.item(args[0], op.args[1])
        if fn is np.arange and not kwargs:
            return _on_samples(fn, args)
        if fn in (np.concatenate, np.stack) and len(op.args) == 1 and isinstance(op.args[0], Var) \
                and set(kwargs) <= {"axis"}:
            items = self.items.get(op.args[0].name)
            return np.result_type(*items) if items and all(isinstance(d, np.dtype) for d in items) else None
        if fn is primitives.astype and len(op.args) == 2:
            return _dtype_argument(op.args[1], op)
        if fn is np.where and len(args) == 3 and not kwargs:
            return _resolve(np.add, args[1:])
        if (fn in FFT_COMPLEX or fn in FFT_REAL or fn in REAL_PARTS) and args and isinstance(args[0], np.dtype):
            part = np.empty(0, args[0]).real.dtype
            if fn in FFT_COMPLEX:
                return np.result_type(args[0], np.complex64)
            return part if fn in (np.real, np.imag) else np.result_type(part, np.float32)
        if fn in (np.fft.fftshift, np.fft.ifftshift) and args:
            return args[0]
        if fn in SIZES or (fn in HOLDERS or fn in JOINED) and all(is_real(a) for a in args):
            return REAL
        if fn is builtins.float and len(args) == 1 and is_real(args[0]):
            return float
        return None

    def item(self, items: Items, key):
        """The descriptor of ``seq[key]``: by a constant key or slice, or the one every item has."""
        if isinstance(key, Const) and isinstance(key.value, slice):
            return items.sliced(key.value)
        if isinstance(key, Const) and type(key.value) in (int, str):
            return items.item(key.value)
        return items.joined() if self.of(key) is int else None

    # ---------------------------------------------------------------- the walk's facts

    fact = of

    def transfer(self, stmt: Assign):
        if isinstance(stmt.value, Op) and stmt.value.fn in HOLDERS:
            self.items[stmt.target] = [self.of(a) for a in stmt.value.args]
        return self.op(stmt.value) if isinstance(stmt.value, Op) else self.of(stmt.value)

    def join(self, a, b):
        return _join(a, b)

    def same(self, a, b) -> bool:
        return same(a, b)


def _complex(descriptor) -> bool:
    return descriptor is complex or isinstance(descriptor, np.dtype) and descriptor.kind == "c"


def _join(a, b):
    if same(a, b):
        return a
    if _complex(a) and _complex(b):            # (a Python complex and a NumPy one: the wider NumPy dtype)
        return np.result_type(*[np.complex128 if d is complex else d for d in (a, b)])
    return REAL if is_real(a) and is_real(b) else None


def _resolve(ufunc: np.ufunc, args: list):
    """The result of `ufunc` on values of these descriptors, by NumPy's own resolution."""
    if any(a is REAL for a in args):
        return REAL if all(is_real(a) for a in args) else None
    try:
        return ufunc.resolve_dtypes((*args, *[None] * ufunc.nout))[-1]
    except (TypeError, ValueError):
        return None


def _on_samples(fn, args: list):
    """The descriptor of `fn` on ones of these descriptors (dtypes do not depend on values, NEP 50)."""
    if any(a is REAL for a in args):
        return REAL if all(is_real(a) for a in args) else None
    samples = [a(1) if is_python_number(a) else np.ones(2, a) for a in args]
    try:
        with np.errstate(all="ignore"):
            result = fn(*samples)
    except (TypeError, ValueError, ArithmeticError):
        return None
    if type(result) in PYTHON_NUMBERS:
        return type(result)
    return getattr(result, "dtype", None)


def _dtype_argument(atom, op: Op):
    """The dtype an allocation or astype names, float64 when it names none."""
    if atom is None:
        return FLOAT64 if op.fn in ALLOCATIONS else None
    value = atom.value if isinstance(atom, (Const, Global)) else None
    try:
        return np.dtype(value) if value is not None else None
    except TypeError:
        return None


def _int_tuple(value) -> bool:
    return isinstance(value, tuple) and all(type(v) is int for v in value)


__all__ = ["Dtypes", "REAL", "dtype_of", "is_real"]
