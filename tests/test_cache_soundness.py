"""Generated code is cached, and the world it was generated in can change between two calls: a global is
rebound (a number, an array of the same or another shape or dtype, a new object), a closure cell is changed
through ``nonlocal``, a helper is redefined, decorated, given new defaults or new code, an attribute of a
global module or object changes. After each change every derivative must be that of the function as it now
is: checked against finite differences of the function's own new value, through grad, value_and_grad, vjp,
jvp and hvp, for the derivative object made before the change and for a fresh one.

Each test imports its own copy of the module `WORLD` (written to a temporary file), so changes do not leak.
"""
from __future__ import annotations

import gc
import importlib.util
import itertools
import linecache
import os
import sys
import textwrap
import weakref

import numpy as np
import pytest

import s2sgrad as sg
from s2sgrad import d
from s2sgrad.api import generation
from s2sgrad.api import reverse as api
from s2sgrad.backend import source_files
from s2sgrad.rules import registry

WORLD = '''
import functools
import types

import numpy as np

lam = 2.0
flag = True
data = np.array([1.0, 2.0, 3.0])
shape = (3,)
settings = types.SimpleNamespace(lam=0.5, inner=types.SimpleNamespace(scale=1.5))
cfg = types.ModuleType("cfg")
cfg.lam = 0.25


class Model:
    def __init__(self, w):
        self.w = w

    def weight(self):
        return self.w


class Other:
    def weight(self):
        return -3.0


model = Model(1.5)


def helper(x):
    return np.sin(x)


def other_helper(x):
    return x ** 3


def power(x, p=2.0):
    return (x * x + 1.0) ** (p / 2)


def doubled(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)
    return wrapper


def f_number(x):
    return np.sum(np.sin(x) * lam)


def f_scalar(x):
    return np.sin(x) * x * lam + helper(x) * cfg.lam


def f_flag(x):
    if flag:
        return np.sum(x * x)
    return np.sum(np.sin(x))


def f_data(x):
    return np.sum(np.sin(x) * data * x)


def f_shape(x):
    return np.sum(np.reshape(x, shape) ** 2 * data)


def f_model(x):
    return np.sum(x * x) * model.weight()


def f_model_attribute(x):
    return np.sum(np.cos(x) * model.w)


def f_helper(x):
    return np.sum(helper(x) * x)


def f_power(x):
    return np.sum(power(x))


def f_own_default(x, p=2.0):
    return np.sum(x ** p)


def f_settings(x):
    return np.sum(x * x) * settings.lam + np.sum(x ** 3) * settings.inner.scale


def f_cfg(x):
    return np.sum(np.exp(x) * cfg.lam)


def f_everything(x):
    return np.sum(helper(x) * data * lam) + np.sum(power(x)) * cfg.lam + settings.inner.scale * np.sum(x ** 3)


def make_closure():
    c = 1.0

    def f(x):
        return np.sum(np.sin(x) * c * x)

    def bump(value):
        nonlocal c
        c = value
    return f, bump


f_cell, bump = make_closure()
'''

REDEFINED_HELPER = '''
def helper(x):
    return np.cos(x) * 3.0 + x
'''

_COUNTER = itertools.count()


@pytest.fixture
def world(tmp_path):
    """A fresh copy of WORLD, imported from a file."""
    name = f"s2sgrad_world_{next(_COUNTER)}"
    path = tmp_path / f"{name}.py"
    path.write_text(WORLD)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(name, None)


def redefine(module, source: str) -> None:
    """Run a new definition in the module's namespace, as a notebook cell run again does (its source is
    registered in linecache, as IPython registers a cell's)."""
    filename = f"<cell {next(_COUNTER)}>"
    text = textwrap.dedent(source)
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    exec(compile(text, filename, "exec"), module.__dict__)


# ---------------------------------------------------------------- finite differences of the function itself

EPS = 1e-6


def numeric_grad(f, x):
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[k] += EPS
        down[k] -= EPS
        g[k] = (f(up) - f(down)) / (2 * EPS)
    return g


def numeric_hvp(f, x, v):
    step = 1e-3
    return (numeric_grad(f, x + step * v) - numeric_grad(f, x - step * v)) / (2 * step)


X = np.array([0.3, -0.7, 1.1])
DIRECTION = np.array([0.5, 1.0, -2.0])
SEED = 0.7


def transforms():
    """name -> (make the derivative, call it at X, the expected result from f alone, tolerance)."""
    return {
        "grad": (sg.grad, lambda d: d(X), lambda f: numeric_grad(f, X), 1e-6),
        "value_and_grad": (sg.value_and_grad, lambda d: d(X), lambda f: (f(X), numeric_grad(f, X)), 1e-6),
        "vjp": (sg.vjp, lambda d: d(X, SEED), lambda f: (f(X), SEED * numeric_grad(f, X)), 1e-6),
        "jvp": (sg.jvp, lambda d: d(X, DIRECTION),
                lambda f: (f(X), (f(X + EPS * DIRECTION) - f(X - EPS * DIRECTION)) / (2 * EPS)), 1e-6),
        "hvp": (sg.hvp, lambda d: d(X, DIRECTION), lambda f: numeric_hvp(f, X, DIRECTION), 1e-4),
    }


TRANSFORMS = list(transforms())


def assert_close(got, expected, tol, what):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), what
        for g, e in zip(got, expected):
            assert_close(g, e, tol, what)
        return
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(expected, dtype=float), rtol=tol,
                               atol=tol, err_msg=what)


def check_through_change(transform: str, f, change) -> None:
    """The derivative before `change`, then (the same object, and a fresh one) after it, each against finite
    differences of `f` as it is at that moment."""
    make, call, expected, tol = transforms()[transform]
    derivative = make(f)
    assert_close(call(derivative), expected(f), tol, f"{transform} before the change")
    before = expected(f)
    change()
    after = expected(f)
    assert not np.allclose(np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in
                                           (before if isinstance(before, tuple) else (before,))]),
                           np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in
                                           (after if isinstance(after, tuple) else (after,))])), \
        "the change must change the derivative, or the test proves nothing"
    assert_close(call(derivative), after, tol, f"{transform} of the same derivative after the change")
    assert_close(call(make(f)), after, tol, f"{transform} of a fresh derivative after the change")


# ---------------------------------------------------------------- every way the world can change

def _helper_code(m):
    m.helper.__code__ = m.other_helper.__code__


def _helper_decorated(m):
    m.helper = m.doubled(m.helper)


def _settings_replaced(m):
    m.settings = type(m.settings)(lam=-1.0, inner=type(m.settings)(scale=4.0))


def _settings_inner(m):
    m.settings.inner.scale = -2.0


CHANGES = {
    # name: (function, change of the world)
    "number rebound": ("f_number", lambda m: setattr(m, "lam", 10.0)),
    "number becomes an int": ("f_number", lambda m: setattr(m, "lam", 3)),
    "number becomes an array": ("f_number", lambda m: setattr(m, "lam", np.array([1.0, -1.0, 2.0]))),
    "flag folded in": ("f_flag", lambda m: setattr(m, "flag", False)),
    "array of the same shape": ("f_data", lambda m: setattr(m, "data", np.array([4.0, -5.0, 6.0]))),
    "array of another shape": ("f_data", lambda m: setattr(m, "data", np.arange(6.0).reshape(2, 3))),
    "array of another dtype": ("f_data", lambda m: setattr(m, "data", np.array([3.0, 1.0, -2.0], np.float32))),
    "array of ints": ("f_data", lambda m: setattr(m, "data", np.array([3, 1, -2]))),
    "array changed in place": ("f_data", lambda m: m.data.__setitem__(0, -7.0)),
    "tuple rebound": ("f_shape", lambda m: setattr(m, "shape", (3, 1))),
    "new object of the class whose method is called": ("f_model", lambda m: setattr(m, "model", m.Model(4.0))),
    "object of another class": ("f_model", lambda m: setattr(m, "model", m.Other())),
    "attribute of the object": ("f_model_attribute", lambda m: setattr(m.model, "w", -2.5)),
    "new object read through an attribute": ("f_model_attribute", lambda m: setattr(m, "model", m.Model(0.5))),
    "cell changed through nonlocal": ("f_cell", lambda m: m.bump(5.0)),
    "helper redefined (a cell run again)": ("f_helper", lambda m: redefine(m, REDEFINED_HELPER)),
    "helper name rebound": ("f_helper", lambda m: setattr(m, "helper", m.other_helper)),
    "helper's code replaced": ("f_helper", _helper_code),
    "helper decorated": ("f_helper", _helper_decorated),
    "helper's defaults changed": ("f_power", lambda m: setattr(m.power, "__defaults__", (3.0,))),
    "own defaults changed": ("f_own_default", lambda m: setattr(m.f_own_default, "__defaults__", (3.0,))),
    "attribute of a global object": ("f_settings", lambda m: setattr(m.settings, "lam", 4.0)),
    "global object replaced": ("f_settings", _settings_replaced),
    "attribute chain changed deep": ("f_settings", _settings_inner),
    "module attribute (cfg.lam)": ("f_cfg", lambda m: setattr(m.cfg, "lam", -3.0)),
}


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("change", list(CHANGES))
def test_derivative_follows_the_world(world, change, transform):
    name, act = CHANGES[change]
    check_through_change(transform, getattr(world, name), lambda: act(world))


@pytest.mark.parametrize("change", ["lam", "helper", "cfg.lam"])
def test_second_derivative_follows_the_world(world, change):
    """grad(grad(f)): forward mode over the generated gradient, both cached."""
    f = world.f_scalar
    second = sg.grad(sg.grad(f))

    def numeric(x, h=1e-4):
        return (f(x + h) - 2 * f(x) + f(x - h)) / h ** 2
    assert second(0.7) == pytest.approx(numeric(0.7), rel=1e-5, abs=1e-6)
    before = numeric(0.7)
    if change == "lam":
        world.lam = -4.0
    elif change == "helper":
        world.helper = world.other_helper
    else:
        world.cfg.lam = 9.0
    assert numeric(0.7) != pytest.approx(before, rel=1e-3)
    assert second(0.7) == pytest.approx(numeric(0.7), rel=1e-5, abs=1e-6)
    assert sg.grad(sg.grad(f))(0.7) == pytest.approx(numeric(0.7), rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "vjp"])
def test_a_derivative_follows_its_arguments(world, transform):
    """Kinds, shapes and dtypes of the arguments change between calls of one derivative."""
    f = world.f_number
    derivative = getattr(sg, transform)(f)
    for x in (0.4, np.float32(0.4), np.array([0.1, 0.2]), np.array([[0.1], [-0.3]]), np.array([0.5, 1.5], np.float32),
              np.ones(3)):
        args = (x, SEED) if transform == "vjp" else (x,)
        out = derivative(*args)
        gradient = out if transform == "grad" else out[1]
        expected = numeric_grad(f, x) * (SEED if transform == "vjp" else 1.0)
        np.testing.assert_allclose(np.asarray(gradient, dtype=float), expected, rtol=1e-5, atol=1e-6)
        assert np.shape(gradient) == np.shape(x)


def test_many_changes_in_a_row(world):
    """A value changed every call (a training loop rebinding its data) is taken in every time."""
    derivative = sg.grad(world.f_data)
    for k in range(5):
        world.data = np.array([1.0, 2.0, 3.0]) * (k + 1)
        np.testing.assert_allclose(derivative(X), numeric_grad(world.f_data, X), rtol=1e-6, atol=1e-8)


def test_two_functions_naming_one_global(world):
    """f and its helper (from another module) read one name for one object; after it is rebound in one module
    only, the two differ: the generated code, which has one namespace, is refused rather than giving both
    the same value."""
    other = type(world)("other")
    redefine(other, "import numpy as np\nscale = 2.0\n\ndef part(x):\n    return np.sum(x * scale)\n")
    world.scale = other.scale
    world.part = other.part
    redefine(world, "def f_both(x):\n    return part(x) * scale\n")
    derivative = sg.grad(world.f_both)
    np.testing.assert_allclose(derivative(X), numeric_grad(world.f_both, X), rtol=1e-6)
    world.scale = 5.0
    with pytest.raises(sg.UnsupportedSyntax, match="two functions use the global name 'scale'"):
        derivative(X)


@pytest.fixture
def rule_table_kept():
    """The rule registered here is taken out of the table afterwards."""
    tables = [registry._RULES, registry._TANGENT_ONLY, registry._NONDIFFERENTIABLE]
    saved, optional = [dict(table) for table in tables], list(registry._OPTIONAL)
    yield
    for table, before in zip(tables, saved):
        table.clear()
        table.update(before)
    registry._OPTIONAL[:] = optional          # (SciPy's rules, if loaded meanwhile, are loaded again when needed)


def test_a_rule_registered_later_is_used(world, rule_table_kept):
    """Registering a rule changes how a call is differentiated: code generated before is not reused."""
    redefine(world, "def opaque(x):\n    return x * 2.0\n\ndef f_opaque(x):\n    return np.sum(opaque(x))\n")
    assert np.allclose(sg.grad(world.f_opaque)(X), 2.0)

    @sg.adjoint(world.opaque)
    def opaque_adjoint(y, x):
        d[x] = d[y] * 5.0                 # a deliberately different rule, to see it used
    assert np.allclose(sg.grad(world.f_opaque)(X), 5.0)


POOL = [
    lambda m, r: setattr(m, "lam", float(r.normal())),
    lambda m, r: setattr(m, "lam", int(r.integers(1, 4))),
    lambda m, r: setattr(m, "data", r.normal(size=3)),
    lambda m, r: setattr(m, "data", r.normal(size=(2, 3)).astype(r.choice([np.float32, np.float64]))),
    lambda m, r: m.data.__setitem__(int(r.integers(0, m.data.shape[-1])), float(r.normal())),
    lambda m, r: setattr(m.cfg, "lam", float(r.normal())),
    lambda m, r: setattr(m.settings.inner, "scale", float(r.normal())),
    lambda m, r: setattr(m, "settings", type(m.settings)(lam=0.0, inner=type(m.settings)(scale=float(r.normal())))),
    lambda m, r: setattr(m, "helper", [m.other_helper, m.power, m.doubled(m.other_helper)][int(r.integers(0, 3))]),
    lambda m, r: redefine(m, f"def helper(x):\n    return np.cos(x) * {float(r.normal())!r}\n"),
    lambda m, r: setattr(m.power, "__defaults__", (float(r.integers(1, 5)),)),
    lambda m, r: None,                                    # nothing changes
]


@pytest.mark.parametrize("seed", range(int(os.environ.get("S2SGRAD_CACHE_SEQUENCES", "4"))))
def test_random_sequences_of_changes(world, seed):
    """Changes of several kinds, one after another (and some undone), between calls of derivatives made
    once and made afresh."""
    rng = np.random.default_rng(seed)
    f = world.f_everything
    kept = sg.value_and_grad(f)
    for step in range(10):
        POOL[int(rng.integers(0, len(POOL)))](world, rng)
        expected = numeric_grad(f, X)
        value, gradient = kept(X)
        assert value == pytest.approx(f(X), rel=1e-9), f"step {step}"
        np.testing.assert_allclose(gradient, expected, rtol=1e-5, atol=1e-6, err_msg=f"step {step}")
        np.testing.assert_allclose(sg.grad(f)(X), expected, rtol=1e-5, atol=1e-6, err_msg=f"step {step}")


# ---------------------------------------------------------------- caches are weak and bounded

def collect() -> None:
    """Garbage-collect until cycles held by weak references' callbacks are gone too."""
    for _ in range(3):
        gc.collect()


def _generated_count() -> int:
    return len(generation._CACHE) + len(generation._FORWARD_CACHE)


def _generated_lines() -> int:
    return sum(1 for name in linecache.cache if name.startswith(source_files.cache_directory()))


def test_fresh_lambdas_leave_nothing_behind():
    """A new closure per training step: its generated code goes when the closure goes."""
    count = int(os.environ.get("S2SGRAD_CACHE_LAMBDAS", "200"))
    collect()
    entries, lines = _generated_count(), _generated_lines()
    alive = []
    for k in range(count):
        w = float(k)
        f = lambda x: x * x * w            # noqa: E731  (a new function object each step)
        alive.append(weakref.ref(f))
        assert sg.grad(f)(2.0) == 4.0 * w
        del f
    collect()
    assert sum(ref() is not None for ref in alive) == 0, "generated code keeps the functions alive"
    assert _generated_count() <= entries + 1
    # the texts of gone functions leave linecache when code is next generated (see guards.forget_lines_with)
    assert sg.grad(lambda x: x * x)(1.0) == 2.0
    assert _generated_lines() <= lines + 2


def test_fresh_lambdas_through_forward_mode():
    collect()
    entries = _generated_count()
    alive = []
    for k in range(20):
        f = lambda x: x * x * x            # noqa: E731
        alive.append(weakref.ref(f))
        assert sg.jvp(f)(2.0, 1.0) == (8.0, 12.0)
        assert sg.hvp(f)(2.0, 1.0) == 12.0
        del f
    collect()
    assert sum(ref() is not None for ref in alive) == 0
    assert _generated_count() <= entries + 4


def test_one_derivative_keeps_a_bounded_number_of_specializations():
    derivative = sg.grad(lambda x: np.sum(x * x))
    for n in range(1, api.CACHE_LIMIT + 10):
        np.testing.assert_allclose(derivative(np.ones(n)), 2.0 * np.ones(n))
    assert len(derivative.generated) <= api.CACHE_LIMIT
    for table in generation._CACHE.tables.values():
        assert len(table) <= table.limit


def test_a_gone_function_leaves_linecache_at_the_next_generation():
    """Not while it is collected: a collection may run inside `linecache.checkcache` (a traceback being
    printed), which fails when an entry goes while it iterates over them."""
    w = 3.0
    g = lambda x: x * w                    # noqa: E731
    df = sg.api.generation.generated(g, ["x"], "grad")
    filename = df.__code__.co_filename
    del df, g
    collect()
    assert filename in linecache.cache
    linecache.checkcache()
    assert sg.grad(lambda x: x * x * x)(1.0) == 3.0
    assert filename not in linecache.cache
