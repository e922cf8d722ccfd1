"""The dtype a gradient is computed in: its values' own floating dtype, as NumPy's promotion gives it (NEP 50).

A gradient of float32 values is float32, of float16 values float16, of integers float64. A Python number
is "weak" (it takes the dtype of the array it meets), so it widens nothing; a NumPy float64 array or scalar
is not. Helpers that make a new array for a gradient (zeros, a scatter's target, a broadcast seed) take
its dtype from here, never NumPy's default float64.

    >>> import numpy as np
    >>> float_dtype(np.ones(2, dtype=np.float32)), float_dtype(np.ones(2, dtype=int)), float_dtype(1.0)
    (dtype('float32'), dtype('float64'), dtype('float64'))
    >>> float_dtype(2.0, np.ones(2, dtype=np.float16))
    dtype('float16')
    >>> weak(1.0, np.ones(2, dtype=np.float32))
    np.float32(1.0)
"""
from __future__ import annotations

import numpy as np

PYTHON_NUMBERS = (bool, int, float, complex)


def float_dtype(*values) -> np.dtype:
    """The floating (or complex) dtype of a gradient of `values`: arrays, NumPy scalars, dtypes, Python numbers,
    and anything with a ``dtype`` (a `Like`); None (a zero gradient) says nothing."""
    parts = [v if isinstance(v, np.dtype) or type(v) in PYTHON_NUMBERS else _dtype(v) for v in values if v is not None]
    return np.result_type(*parts, 0.0)


def _dtype(value) -> np.dtype:
    dtype = getattr(value, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else np.asarray(value).dtype


def weak(g, x):
    """`g`, a Python number, as a NumPy scalar of the dtype it takes in arithmetic with `x` (NumPy makes a new
    array of a Python float float64; in ``g * x`` it is x's dtype); any other `g` as it is."""
    if type(g) in PYTHON_NUMBERS and isinstance(getattr(x, "dtype", None), np.dtype):
        return float_dtype(g, x).type(g)
    return g
