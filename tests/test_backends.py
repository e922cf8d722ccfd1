"""The same generated gradient on other array namespaces (issue 16): array-api-strict, Dask, PyTorch CPU tensors and
JAX arrays, each case's gradient compared with the NumPy gradient (itself checked against finite differences);
a backend whose package is missing is skipped. Refusals are checked against their message and the user's line."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import s2sgrad as sg
from s2sgrad.errors import UnsupportedSyntax
from tests.gradcheck import assert_grad_matches_fd

try:
    import array_api_compat
except ImportError:                      # (the NumPy cases run without it)
    array_api_compat = None

SCHEDULE = sg.Revolve(snapshots=2)


def logistic(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def mlp(W1, W2, X):
    h = np.tanh(X @ W1)
    return np.sum((h @ W2) ** 2) / X.shape[0]


def broadcasting(x, b):
    return np.sum(np.sin(x) * b + x ** 2 - np.maximum(x, b) / (1.0 + b * b))


def reductions(x, b):
    return np.sum(np.mean(x ** 2, axis=1)) + np.sum(np.sum(np.exp(x), axis=0) * b) + np.max(x) * np.min(b)


def indexing(x, b):
    return np.sum(x[1:3, :] ** 2) + x[0, 1] * b[2] + np.sum(x[:, 0] * b[0]) + np.sum(x.T @ x)


def shapes(x, b):
    y = np.reshape(x, (-1,))
    z = np.concatenate([y, b], axis=0)
    return np.sum(np.transpose(x) * b[:, None]) + np.dot(z, z) + np.sum(np.stack([b, b * b]))


def rnn(W, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + x)
    return np.sum(h * h)


def while_scalar(x, b):
    t = np.float64(0.0)
    while t < 1.0:
        x = np.tanh(x * b) + 0.5 * x
        t = t + 0.25
    return np.sum(x)


def checkpointed(W, xs):
    h = np.zeros(W.shape[0])
    for i in sg.checkpointed(range(xs.shape[0]), SCHEDULE):
        h = np.tanh(W @ h + xs[i, :])
    return np.sum(h)


def log_determinant(A):
    """The seed of ``[1]`` reaches the rule as a Python number (``expand_dims`` of it)."""
    return np.linalg.slogdet(A)[1] + np.sum(np.linalg.inv(A))


def elementwise_out(x, b):
    return x * np.exp(b)


RNG = np.random.default_rng(3)
DATA = {
    "logistic": (RNG.normal(size=3), RNG.normal(size=(12, 3)), (RNG.random(12) > 0.5).astype(float)),
    "mlp": (RNG.normal(size=(3, 5)) * 0.5, RNG.normal(size=(5, 2)), RNG.normal(size=(12, 3))),
    "pair": (RNG.normal(size=(6, 3)), RNG.normal(size=3)),
    "rnn": (RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(8, 3))),
    "matrix": (np.eye(3) * 2.0 + RNG.normal(size=(3, 3)) * 0.2,),
}
CASES = {
    "logistic": (logistic, "logistic", 0), "mlp": (mlp, "mlp", (0, 1)), "broadcasting": (broadcasting, "pair", (0, 1)),
    "reductions": (reductions, "pair", (0, 1)), "indexing": (indexing, "pair", (0, 1)),
    "shapes": (shapes, "pair", (0, 1)), "rnn": (rnn, "rnn", (0, 1)), "while": (while_scalar, "pair", (0, 1)),
    "checkpointed": (checkpointed, "rnn", (0, 1)), "linalg": (log_determinant, "matrix", 0),
}


class Backend:
    """How one namespace's arrays are made from NumPy's and read back, and the rounding its dtype allows."""

    def __init__(self, name: str, module: str, to, back, rtol=1e-10):
        self.name, self.module, self.to, self.back, self.rtol = name, module, to, back, rtol

    def available(self) -> bool:
        return importlib.util.find_spec(self.module) is not None


def _strict(x):
    import array_api_strict
    return array_api_strict.asarray(x)


def _dask(x):
    import dask.array as da
    return da.from_array(x, chunks=(max(1, x.shape[0] // 3),) + x.shape[1:]) if x.ndim else da.from_array(x)


def _torch(x):
    import torch
    return torch.asarray(x)


def _jax(x):
    import jax.numpy as jnp
    return jnp.asarray(x)


def _numpy_of(x):
    if isinstance(x, tuple):
        return tuple(_numpy_of(v) for v in x)
    if isinstance(x, float) or isinstance(x, np.ndarray):
        return np.asarray(x)
    module = type(x).__module__.partition(".")[0]
    if module == "dask":
        return np.asarray(x.compute())
    if module == "torch":
        return x.detach().numpy()
    return np.from_dlpack(x) if module == "array_api_strict" else np.asarray(x)


BACKENDS = [Backend("array_api_strict", "array_api_strict", _strict, _numpy_of),
            Backend("dask", "dask", _dask, _numpy_of),
            Backend("torch", "torch", _torch, _numpy_of),
            Backend("jax", "jax", _jax, _numpy_of, rtol=2e-4)]


def _backend(name: str) -> Backend:
    backend = next(b for b in BACKENDS if b.name == name)
    if not backend.available():
        pytest.skip(f"{backend.module} is not installed")
    return backend


def _close(got, want, rtol):
    got, want = _numpy_of(got), want
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("case", list(CASES))
def test_numpy_reference_matches_finite_differences(case):
    f, data, wrt = CASES[case]
    assert_grad_matches_fd(f, DATA[data], wrt=wrt)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", [b.name for b in BACKENDS])
def test_grad_equals_numpys(name, case):
    backend = _backend(name)
    if name == "array_api_strict" and case == "rnn":
        pytest.skip("array-api-strict arrays are not iterable: `for x in xs` itself cannot run on them")
    if name == "dask" and case == "linalg":
        pytest.skip("Dask's linalg has no slogdet: refused (test_a_function_the_namespace_lacks_is_refused)")
    f, data, wrt = CASES[case]
    args = DATA[data]
    want = sg.grad(f, wrt=wrt)(*args)
    got = sg.grad(f, wrt=wrt)(*map(backend.to, args))
    for g in got if isinstance(got, tuple) else (got,):
        assert type(g).__module__.partition(".")[0] == type(backend.to(args[0])).__module__.partition(".")[0]
    _close(got, want, backend.rtol)


@pytest.mark.parametrize("name", [b.name for b in BACKENDS])
def test_value_and_grad_and_vjp(name):
    backend = _backend(name)
    args = DATA["mlp"]
    value, grads = sg.value_and_grad(mlp, wrt=(0, 1))(*map(backend.to, args))
    want_value, want_grads = sg.value_and_grad(mlp, wrt=(0, 1))(*args)
    _close(value, np.asarray(want_value), backend.rtol)
    _close(grads, want_grads, backend.rtol)
    x, b = DATA["pair"]
    seed = np.cos(x)
    out, grad_x = sg.vjp(elementwise_out)(backend.to(x), backend.to(b), backend.to(seed))
    want_out, want_x = sg.vjp(elementwise_out)(x, b, seed)
    _close(out, want_out, backend.rtol)
    _close(grad_x, want_x, backend.rtol)


def test_dask_gradient_is_lazy_with_the_arguments_chunks():
    da = pytest.importorskip("dask.array")
    X = da.random.default_rng(0).normal(size=(40, 3), chunks=(5, 3))
    w = da.from_array(DATA["logistic"][0], chunks=1)
    y = (da.random.default_rng(1).random(40, chunks=5) > 0.5).astype(float)
    g = sg.grad(logistic)(w, X, y)
    assert isinstance(g, da.Array) and g.chunks == w.chunks
    np.testing.assert_allclose(g.compute(), sg.grad(logistic)(w.compute(), X.compute(), y.compute()), rtol=1e-12)
    gX = sg.grad(logistic, wrt=1)(w, X, y)
    assert gX.chunks == X.chunks


def test_generated_code_names_the_namespace_once():
    pytest.importorskip("array_api_strict")
    x, b = DATA["pair"]
    source = sg.source(shapes, wrt=(0, 1), args=(_strict(x), _strict(b)))
    assert "import array_api_strict as xp" in source and "np." not in source.split("import", 3)[-1]
    assert "xp.concat(" in source and "xp.permute_dims(" not in source or "transpose(" in source


def no_array_api_form(x):
    y = np.sum(x ** 2)
    return y + np.sum(np.polyval(x, 2.0))


@pytest.mark.parametrize("name", [b.name for b in BACKENDS])
def test_a_call_without_array_api_form_is_refused_at_its_line(name):
    backend = _backend(name)
    with pytest.raises(UnsupportedSyntax, match="has no array API form") as error:
        sg.grad(no_array_api_form)(backend.to(np.ones(3)))
    assert error.value.location.line == no_array_api_form.__code__.co_firstlineno + 2


def test_a_function_the_namespace_lacks_is_refused_at_its_line():
    """``np.linalg.slogdet`` has an array API form that Dask's namespace does not provide."""
    dask_array = pytest.importorskip("dask.array")
    with pytest.raises(UnsupportedSyntax, match="np.linalg.slogdet has no array API form") as error:
        sg.grad(log_determinant)(dask_array.from_array(DATA["matrix"][0], chunks=3))
    assert error.value.location.line == log_determinant.__code__.co_firstlineno + 2


def namespaced_user_code(w, X):
    xp = array_api_compat.array_namespace(X)
    h = xp.tanh(X @ w)
    return xp.sum(xp.concat([h, xp.permute_dims(X, (1, 0))[0, ...]]) ** 2)


@pytest.mark.parametrize("name", ["numpy"] + [b.name for b in BACKENDS])
def test_user_code_written_with_array_namespace(name):
    if array_api_compat is None:
        pytest.skip("array_api_compat is not installed")
    w, X = DATA["logistic"][0], DATA["logistic"][1]
    want = assert_grad_matches_fd(namespaced_user_code, (w, X))
    if name != "numpy":
        backend = _backend(name)
        _close(sg.grad(namespaced_user_code)(backend.to(w), backend.to(X)), want, backend.rtol)


@pytest.mark.parametrize("name", [b.name for b in BACKENDS])
def test_forward_mode_is_refused_on_other_namespaces(name):
    backend = _backend(name)
    x, b = DATA["pair"]
    with pytest.raises(sg.S2SGradError, match="forward mode .* runs on NumPy arrays"):
        sg.jvp(broadcasting)(backend.to(x), backend.to(b), backend.to(x))


def test_a_dask_array_of_unknown_shape_is_refused():
    da = pytest.importorskip("dask.array")
    x = da.from_array(np.arange(6.0), chunks=2)
    with pytest.raises(sg.S2SGradError, match="shape .* is not known"):
        sg.grad(lambda v: np.sum(v * v))(x[x > 2.0])


def names_a_value_xp(x):
    xp = x * 2.0
    return np.sum(xp * x)


def test_a_name_generated_code_binds_for_the_namespace_is_refused():
    """``xp`` is the namespace in generated code for other arrays: a variable of the user's with that name is
    refused there with the hint to rename it (NumPy arguments are not concerned)."""
    strict = pytest.importorskip("array_api_strict")
    np.testing.assert_allclose(sg.grad(names_a_value_xp)(np.ones(2)), 4.0 * np.ones(2))
    with pytest.raises(UnsupportedSyntax, match="'xp' is the one generated code for array_api_strict arrays gives"):
        sg.grad(names_a_value_xp)(strict.asarray(np.ones(2)))
