"""What s2sgrad/dtypes.py infers ahead of running is what NumPy then does, or unknown (None)."""
import numpy as np
import pytest

from s2sgrad.analysis.dtypes import REAL, Dtypes, dtype_of, is_real
from s2sgrad.frontend.lower import lower_function
from s2sgrad.ir.nodes import Var


def tanh_layer(W, h, b):
    return np.tanh(W @ h + b) * 2.0


def scaled(x, n):
    return x * (n + 1) / 3


def counted(x, n):
    y = x
    i = 0
    while i < n:
        y = y * 0.5 + 1
        i += 1
    return y


def reduced(x):
    return np.sum(x ** 2) + np.mean(x)


def compared(x):
    return (x > 0.5) * x


def allocated(x):
    return np.zeros(3) + np.ones(3, dtype=np.float32) * x[0]


def gathered(x, idx):
    return x[idx] - x[0]


CASES = [
    (tanh_layer, [(np.float64, np.float64, np.float64), (np.float32, np.float32, np.float32),
                  (np.float32, np.float64, np.float32), (np.float32, np.float32, float)]),
    (scaled, [(np.float32, int), (np.int64, int), (np.float64, float), (float, int), (int, int)]),
    (counted, [(np.float32, int), (np.float64, int), (float, int)]),
    (reduced, [(np.float32,), (np.int32,), (np.float64,)]),
    (compared, [(np.float32,), (np.float64,)]),
    (allocated, [(np.float32,), (np.int64,), (np.float64,)]),
]


def sample(dtype, shape):
    if dtype in (int, float):
        return dtype(2)
    return np.ones(shape, dtype) * 0.25 if np.dtype(dtype).kind == "f" else np.ones(shape, dtype)


def inferred(fn, args):
    lowered, _ = lower_function(fn)
    dtypes = Dtypes({p: dtype_of(a) for p, a in zip(lowered.params, args)})
    dtypes.block(lowered.body)
    return dtypes, dtypes.of(lowered.result)


@pytest.mark.parametrize("fn, dtypes", [(fn, d) for fn, ds in CASES for d in ds],
                         ids=lambda v: getattr(v, "__name__", None) or "-".join(getattr(t, "__name__", str(t)) for t in v))
def test_inferred_dtype_is_numpys(fn, dtypes):
    shapes = {tanh_layer: [(3, 3), (3,), (3,)]}.get(fn, [(3,)] * len(dtypes))
    args = [sample(d, s) for d, s in zip(dtypes, shapes)]
    _, descriptor = inferred(fn, args)
    result = fn(*args)
    if type(result) in (int, float, bool):
        assert descriptor is type(result)
    else:
        assert isinstance(descriptor, np.dtype) and descriptor == result.dtype


def test_unknown_operations_give_up():
    dtypes, descriptor = inferred(gathered, [np.ones(3), range(2)])     # an index of a kind not known
    assert descriptor is None and not dtypes.real()
    assert inferred(gathered, [np.ones(3), [0, 1]])[1] == np.float64     # a list's items' descriptors are known


def test_every_value_real():
    assert inferred(tanh_layer, [np.ones((2, 2)), np.ones(2), np.ones(2)])[0].real()
    assert not inferred(tanh_layer, [np.ones((2, 2), complex), np.ones(2), np.ones(2)])[0].real()
    assert not inferred(tanh_layer, [np.ones((2, 2), np.longdouble), np.ones(2), np.ones(2)])[0].real()


def test_descriptors_are_not_confused_with_python_types():
    # np.dtype("f8") == float and np.dtype("f8") == None are both True in NumPy
    assert is_real(np.dtype("f8")) and is_real(float) and is_real(REAL) and not is_real(None)
    assert not is_real(complex) and not is_real(np.dtype("c16"))
    dtypes = Dtypes({"x": np.dtype("f8")})
    assert dtypes.of(Var("x")) == np.dtype("f8") and dtypes.of(Var("y")) is None
    assert not is_real(Dtypes({"x": None}).of(Var("x")))
