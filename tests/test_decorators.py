"""A decorated function is the decorator's wrapper: what runs is what is differentiated, both when it is the
function differentiated and when a differentiated function calls it. A ``functools.wraps`` wrapper passing
``*args, **kwargs`` on gets the parameters of the function it wraps; where a wrapper cannot be transformed it
is refused at its line. ``__wrapped__`` of a user's function is never followed instead. Functions cached with
``functools.lru_cache`` are refused where a gradient would flow through the cache.
"""
from __future__ import annotations

import importlib.util
import inspect
import itertools
import sys

import numpy as np
import pytest

import s2sgrad as sg

# name -> a decorator; each changes the value, so the undecorated gradient would be wrong
DECORATORS = {
    "wraps, *args and **kwargs": '''
def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)
    return wrapper
''',
    "wraps, *args only": '''
def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args) - 1.5 * fn(*args) ** 2
    return wrapper
''',
    "wraps, named parameters": '''
def deco(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return np.sin(fn(x))
    return wrapper
''',
    "no wraps, named parameters": '''
def deco(fn):
    def wrapper(x):
        return fn(x) * fn(x)
    return wrapper
''',
    "statements before the call": '''
def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        out = out * out + out
        return out
    return wrapper
''',
    "decorator with arguments": '''
def scaled(factor):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return factor * fn(*args, **kwargs)
        return wrapper
    return decorate

deco = scaled(3.0)
''',
    "two decorators stacked": '''
def twice(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)
    return wrapper

def squared(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) ** 2
    return wrapper

def deco(fn):
    return twice(squared(fn))
''',
}

INNERS = {
    "one parameter": ("def inner(x):\n    return np.sum(np.sin(x) * x)\n", ""),
    "a parameter with a default": ("def inner(x, p=1.5):\n    return np.sum(np.sin(x) * x) * p\n", ""),
}

_COUNTER = itertools.count()


def load(tmp_path, source: str):
    name = f"s2sgrad_decorated_{next(_COUNTER)}"
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def decorated_module(tmp_path, decorator: str, inner: str):
    body = inner.replace("def inner", "@deco\ndef f")
    return load(tmp_path, "import functools\nimport numpy as np\n" + DECORATORS[decorator] + "\n\n" + body +
                "\n\ndef caller(x):\n    return f(x) * 1.5 + np.sum(x)\n")


X = np.array([0.3, -0.7, 1.1])
V = np.array([0.5, 1.0, -2.0])
EPS = 1e-6


def numeric_grad(f, x):
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = EPS
        g[k] = (f(x + e) - f(x - e)) / (2 * EPS)
    return g


def numeric_hvp(f, x, v):
    step = 1e-3
    return (numeric_grad(f, x + step * v) - numeric_grad(f, x - step * v)) / (2 * step)


def check_all_transforms(f):
    """grad, value_and_grad, vjp, jvp and hvp of `f` against finite differences of `f` itself."""
    g = numeric_grad(f, X)
    np.testing.assert_allclose(sg.grad(f)(X), g, rtol=1e-6, atol=1e-8)
    value, grad = sg.value_and_grad(f)(X)
    assert value == pytest.approx(f(X))
    np.testing.assert_allclose(grad, g, rtol=1e-6, atol=1e-8)
    value, grad = sg.vjp(f)(X, 0.5)
    np.testing.assert_allclose(grad, 0.5 * g, rtol=1e-6, atol=1e-8)
    value, tangent = sg.jvp(f)(X, V)
    assert value == pytest.approx(f(X))
    assert tangent == pytest.approx((f(X + EPS * V) - f(X - EPS * V)) / (2 * EPS), rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(sg.hvp(f)(X, V), numeric_hvp(f, X, V), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("inner", list(INNERS))
@pytest.mark.parametrize("decorator", list(DECORATORS))
@pytest.mark.parametrize("position", ["differentiated", "called"])
def test_the_wrapper_is_differentiated(tmp_path, decorator, inner, position):
    if decorator == "wraps, named parameters" or decorator == "no wraps, named parameters":
        if inner == "a parameter with a default":
            pytest.skip("a wrapper with named parameters has its own signature")
    module = decorated_module(tmp_path, decorator, INNERS[inner][0])
    undecorated = numeric_grad(_inner_of(module), X)
    assert not np.allclose(numeric_grad(module.f, X), undecorated), "the decorator must change the gradient"
    check_all_transforms(module.f if position == "differentiated" else module.caller)


def _inner_of(module):
    fn = module.f
    while True:
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        if "fn" not in cells:
            return fn
        fn = cells["fn"].cell_contents


def test_the_signature_is_that_of_the_wrapped_function(tmp_path):
    module = decorated_module(tmp_path, "wraps, *args and **kwargs", INNERS["a parameter with a default"][0])
    df = sg.grad(module.f, wrt=(0, "p"))
    dx, dp = df(X, p=2.0)
    np.testing.assert_allclose(dx, numeric_grad(lambda x: module.f(x, p=2.0), X), rtol=1e-6)
    assert dp == pytest.approx((module.f(X, 2.0 + EPS) - module.f(X, 2.0 - EPS)) / (2 * EPS), rel=1e-6)


def test_a_hand_set_wrapped_is_not_followed(tmp_path):
    """``__wrapped__`` on a plain function names some other function: the function's own code runs."""
    module = load(tmp_path, "import numpy as np\n\ndef g(x):\n    return np.sum(x ** 3)\n\n"
                            "def h(x):\n    return np.sum(x)\n\ng.__wrapped__ = h\n\n"
                            "def caller(x):\n    return g(x) * 2.0\n")
    check_all_transforms(module.g)
    check_all_transforms(module.caller)


REFUSED = {
    "args read": ('''
def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(args[0]) * 2.0
    return wrapper
''', "uses 'args' other than passing it on", 5),
    "argument added": ('''
def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, 2.0, **kwargs)
    return wrapper
''', "passes on its arguments with others added or left out", 5),
    "kwargs dropped": ('''
def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args)
    return wrapper
''', "passes on its arguments with others added or left out", 5),
    "passed to another function": ('''
def other(y, z=1.0):
    return y * z

def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return other(*args, **kwargs)
    return wrapper
''', "passes its arguments on to a function whose parameters are not those it claims", 8),
    "a parameter besides *args": ('''
def deco(fn):
    @functools.wraps(fn)
    def wrapper(x, *args):
        return fn(x, *args)
    return wrapper
''', "takes parameters besides", 4),
}


@pytest.mark.parametrize("case", list(REFUSED))
@pytest.mark.parametrize("position", ["differentiated", "called"])
def test_a_wrapper_that_cannot_be_transformed_is_refused(tmp_path, case, position):
    decorator, message, line = REFUSED[case]
    source = "import functools\nimport numpy as np\n" + decorator + \
        "\n\n@deco\ndef f(x):\n    return np.sum(x * x)\n\n\ndef caller(x):\n    return f(x) * 1.5\n"
    module = load(tmp_path, source)
    with pytest.raises(sg.UnsupportedSyntax, match=message.replace("*", r"\*")) as info:
        sg.grad(module.f if position == "differentiated" else module.caller)(X)
    assert info.value.location.line == line + 2           # two import lines come first
    assert info.value.location.filename == module.__file__


CACHED = '''
import functools
import numpy as np


@functools.lru_cache
def cached(x):
    return x * x


@functools.cache
def basis(n):
    return float(n) * 2.0


def through_cache(x):
    return cached(x) + x


def beside_cache(x):
    return x * basis(3)
'''


def test_a_cached_function_is_refused(tmp_path):
    module = load(tmp_path, CACHED)
    with pytest.raises(sg.SourceNotFound, match="cached with functools.lru_cache") as info:
        sg.grad(module.cached)(3.0)
    assert "cached.__wrapped__" in info.value.hint
    with pytest.raises(sg.NoDerivativeRule, match="cached with functools.lru_cache") as info:
        sg.grad(module.through_cache)(3.0)
    assert info.value.location.line == inspect.getsourcelines(module.through_cache)[1] + 1
    with pytest.raises(sg.NoDerivativeRule, match="cached with functools.lru_cache") as info:
        sg.jvp(module.through_cache)(3.0, 1.0)                      # forward mode refuses it alike
    assert info.value.location.line == inspect.getsourcelines(module.through_cache)[1] + 1
    assert sg.grad(module.cached.__wrapped__)(3.0) == 6.0          # the undecorated function, asked for


def test_a_cached_function_called_without_gradient_is_called(tmp_path):
    module = load(tmp_path, CACHED)
    assert sg.grad(module.beside_cache)(3.0) == 6.0
    assert module.basis.cache_info().hits + module.basis.cache_info().misses >= 1


def test_own_derivatives_are_not_taken_for_their_function():
    """s2sgrad's own derivatives do not unwrap to the function they differentiate (a transform of one
    differentiates the derivative), and check_grad of one checks the derivative's own gradient."""
    def f(x):
        return np.sum(np.sin(x) * x)
    assert inspect.unwrap(sg.grad(f)) is not f
    assert sg.source(sg.grad(f)) != sg.source(f)
    assert sg.check_grad(sg.grad(lambda v: np.sin(v) * v), 0.7) < 1e-6
