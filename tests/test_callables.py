"""Functions as values: lambdas, functools.partial, functions and modules passed as arguments, functions
picked from a dict or a list; each gradient against finite differences, in reverse and forward mode."""
import functools
import inspect
import re
import types

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg
from s2sgrad import d
from s2sgrad.api import generation
from s2sgrad.rules import registry

X = np.array([0.3, -0.7, 1.1])
V = np.array([0.5, 1.0, -2.0])


def relu(t):
    return np.maximum(t, 0.0) * t


def softplus(t):
    return np.log1p(np.exp(t))


def scaled(t, k=1.0):
    return np.sin(t) * k


def ruled_sin(t):
    return np.sin(t)


def _ruled_sin_adjoint(y, t):
    d[t] = d[y] * np.cos(t)


def _ruled_sin_tangent(y, t):
    d[y] = d[t] * np.cos(t)


@pytest.fixture(scope="module", autouse=True)
def ruled_sin_has_rules():
    """`ruled_sin`'s rules, registered for this module's tests only: the rule table is put back afterwards."""
    tables = [registry._RULES, registry._TANGENT_ONLY, registry._NONDIFFERENTIABLE]
    saved = [dict(table) for table in tables]
    sg.adjoint(ruled_sin)(_ruled_sin_adjoint)
    sg.tangent(ruled_sin)(_ruled_sin_tangent)
    yield
    for table, before in zip(tables, saved):
        table.clear()
        table.update(before)


cube = lambda t: t * t * t                                   # noqa: E731
scaled_twice = functools.partial(scaled, k=2.0)
ACTIVATIONS = {"tanh": np.tanh, "relu": relu, "soft": softplus}
ACTIVATION_LIST = [np.sin, softplus]
FUNCTIONS = [np.tanh, np.sin, np.exp, relu, softplus, cube, scaled_twice, functools.partial(np.sum, axis=0),
             ruled_sin]
IDS = ["tanh", "sin", "exp", "relu", "softplus", "lambda", "partial", "partial_np", "with_a_rule"]


def check(f, args, wrt=0):
    """Reverse mode against finite differences, forward mode against reverse mode."""
    grad = assert_grad_matches_fd(f, args, wrt)
    value, tangent = sg.jvp(f, wrt)(*args, V if np.ndim(args[wrt]) else 1.0)
    assert np.isclose(value, f(*args))
    assert np.isclose(tangent, np.sum(grad * (V if np.ndim(args[wrt]) else 1.0)))
    return grad


# ---------------------------------------------------------------- a function passed as an argument

def apply(fn, v):
    return fn(v)


def direct(x, act):
    return np.sum(act(x))


def through_helper(x, act):
    return np.sum(apply(act, x) * x)


def through_nested(x, act):
    def inner(v, scale):
        return act(v) * scale
    return np.sum(inner(x, 2.0))


def through_lambda(x, act):
    g = lambda t: act(t) + t                                # noqa: E731
    return np.sum(g(x))


def passed_to_a_helper_by_keyword(x, act):
    return np.sum(apply(v=x, fn=act) ** 2)


@pytest.mark.parametrize("act", FUNCTIONS, ids=IDS)
@pytest.mark.parametrize("f", [direct, through_helper, through_nested, through_lambda, passed_to_a_helper_by_keyword])
def test_function_argument(f, act):
    check(f, [X, act])


def test_another_function_argument_regenerates():
    df = sg.grad(direct)
    for act, expected in [(np.tanh, 1 - np.tanh(X) ** 2), (np.sin, np.cos(X)), (relu, np.where(X > 0, 2 * X, 0.0)),
                          (np.tanh, 1 - np.tanh(X) ** 2)]:
        assert np.allclose(df(X, act), expected)
    jf = sg.jvp(direct)
    assert np.isclose(jf(X, np.sin, V)[1], np.sum(np.cos(X) * V))
    assert np.isclose(jf(X, np.exp, V)[1], np.sum(np.exp(X) * V))
    hf = sg.hvp(direct)
    assert np.allclose(hf(X, np.sin, V), -np.sin(X) * V)
    assert np.allclose(hf(X, np.exp, V), np.exp(X) * V)


def changeable(t):
    return np.sin(t)


def _square(t):
    return t * t


def test_a_function_argument_given_new_code_regenerates():
    df = sg.grad(direct)
    assert np.allclose(df(X, changeable), np.cos(X))
    code = changeable.__code__
    changeable.__code__ = _square.__code__
    try:
        assert np.allclose(df(X, changeable), 2 * X)
    finally:
        changeable.__code__ = code
    assert np.allclose(df(X, changeable), np.cos(X))


# ---------------------------------------------------------------- a module passed as an argument

def module_sum(xp, x):
    return xp.sum(x * x)


def module_norm(xp, x):
    return xp.linalg.norm(x) + xp.sum(xp.tanh(xp.asarray(x)))


def module_to_helper(xp, x):
    return module_sum(xp, xp.sin(x))


@pytest.mark.parametrize("f", [module_sum, module_norm, module_to_helper])
def test_module_argument(f):
    check(f, [np, X], wrt=1)


@pytest.mark.parametrize("f", [module_sum, module_norm, module_to_helper])
def test_module_argument_code_is_generated_once(f):
    df = sg.grad(f, wrt=1)
    df(np, X)
    before = generation._CACHE_COUNT[0]
    for _ in range(3):
        df(np, X)
    assert generation._CACHE_COUNT[0] == before


def test_module_argument_with_a_changed_function_regenerates():
    xp = types.ModuleType("xp")
    xp.sum, xp.sin, xp.tanh, xp.linalg, xp.asarray = np.sum, np.sin, np.tanh, np.linalg, np.asarray
    df = sg.grad(module_to_helper, wrt=1)
    np.testing.assert_allclose(df(xp, X), 2 * np.sin(X) * np.cos(X), rtol=1e-12)
    xp.sin = np.cos
    np.testing.assert_allclose(df(xp, X), -2 * np.cos(X) * np.sin(X), rtol=1e-12)


def test_module_argument_names_numpy_in_generated_code():
    text = sg.source(module_norm, wrt=1, args=(np, X))
    assert "np.linalg.norm(x)" in text


# ---------------------------------------------------------------- lambdas inside the function

def bound_lambda(x, w):
    sq = lambda t: t * t * w                                # noqa: E731
    return np.sum(sq(x))


def lambda_in_place(x, w):
    return np.sum((lambda t: np.sin(t) * w)(x))


def lambda_with_default(x, w):
    f = lambda t, k=2.0: t * k + w                          # noqa: E731
    return np.sum(f(x) * f(x, 3.0))


def lambda_to_user_function(x, w):
    return np.sum(apply(lambda t: t * w, x) * x)


def lambda_to_nested_helper(x, w):
    def twice(g, v):
        return g(g(v))
    return np.sum(twice(lambda t: np.sin(t) * w, x))


def lambda_calls_lambda(x, w):
    sq = lambda t: t * t                                    # noqa: E731
    h = lambda t: sq(t) * w + sq(w)                         # noqa: E731
    return np.sum(h(x))


def lambda_in_loop(x, w):
    step = lambda t: np.tanh(t * w)                         # noqa: E731
    for _ in range(3):
        x = step(x)
    return np.sum(x)


def lambda_reads_later_value(x, w):
    g = lambda t: t * w                                     # noqa: E731
    w = w * 2.0
    return np.sum(g(x))                                     # reads w as it is at the call, as Python does


@pytest.mark.parametrize("f", [bound_lambda, lambda_in_place, lambda_with_default, lambda_to_user_function,
                               lambda_to_nested_helper, lambda_calls_lambda, lambda_in_loop,
                               lambda_reads_later_value])
@pytest.mark.parametrize("wrt", [0, 1])
def test_lambda(f, wrt):
    check(f, [X, 0.8], wrt)


def test_lambda_differentiated():
    check(lambda x: np.sum(x ** 3), [X])


# ---------------------------------------------------------------- functools.partial inside the function

def helper(v, w=1.0):
    return v * w


def partial_of_user_function(x, w):
    g = functools.partial(helper, w=w)
    return np.sum(g(x) * x)


def partial_of_nested_def(x, w):
    def inner(a, b, c):
        return a * b - c
    g = functools.partial(inner, x, c=w)
    return np.sum(g(np.sin(x)))


def partial_of_numpy(x, w):
    total = functools.partial(np.sum, axis=0)
    return total(x * w)


def nested_partials(x, w):
    def inner(a, b, c):
        return a * b + c
    g = functools.partial(inner, x)
    h = functools.partial(g, c=w * w)
    return np.sum(h(x))


def partial_in_place(x, w):
    return np.sum(functools.partial(helper, w=w)(x))


def partial_bound_early(x, w):
    g = functools.partial(helper, w=w)
    w = w * 3.0                                              # the partial holds the earlier w, as Python's does
    return np.sum(g(x)) + w


def partial_to_user_function(x, w):
    return np.sum(apply(functools.partial(helper, w=w), x))


def global_partial(x, w):
    return np.sum(scaled_twice(x) * w)


def partial_of_lambda(x, w):
    g = functools.partial(lambda a, b: a * b, b=w)
    return np.sum(g(x))


@pytest.mark.parametrize("f", [partial_of_user_function, partial_of_nested_def, partial_of_numpy, nested_partials,
                               partial_in_place, partial_bound_early, partial_to_user_function, global_partial,
                               partial_of_lambda])
@pytest.mark.parametrize("wrt", [0, 1])
def test_partial_inside(f, wrt):
    check(f, [X, 0.8], wrt)


# ---------------------------------------------------------------- functools.partial differentiated

def loss(x, w, b=0.5):
    return np.sum(w * x ** 2 + b * np.sin(x))


@pytest.mark.parametrize("bound, args, wrt, expected", [
    (dict(w=2.0), (X,), 0, 4 * X + 0.5 * np.cos(X)),
    (dict(w=2.0), (X,), "w", np.sum(X ** 2)),
    (dict(w=2.0), (X,), 2, np.sum(np.sin(X))),
    (dict(w=2.0), (X,), ("x", "b"), (4 * X + 0.5 * np.cos(X), np.sum(np.sin(X)))),
    (dict(w=2.0, b=1.5), (X,), 0, 4 * X + 1.5 * np.cos(X)),
])
def test_partial_differentiated(bound, args, wrt, expected):
    p = functools.partial(loss, **bound)
    grad = sg.grad(p, wrt)(*args)
    for g, e in zip(grad if isinstance(wrt, tuple) else [grad], expected if isinstance(wrt, tuple) else [expected]):
        assert np.allclose(g, e)
    value, g = sg.value_and_grad(p, wrt)(*args)
    assert np.isclose(value, p(*args))
    _, g = sg.vjp(p, wrt)(*args, 1.0)
    if not isinstance(wrt, tuple):
        direction = V if np.ndim(expected) else 1.0
        assert np.isclose(sg.jvp(p, wrt)(*args, direction)[1], np.sum(expected * direction))


def test_partial_differentiated_positional_and_second_order():
    p = functools.partial(loss, X)                           # binds x: its parameters are w, b
    assert np.isclose(sg.grad(p)(2.0), np.sum(X ** 2))
    q = functools.partial(loss, w=2.0)
    assert np.allclose(sg.hvp(q)(X, V), (4.0 - 0.5 * np.sin(X)) * V)
    assert np.allclose(sg.hessian(q)(X), np.diag(4.0 - 0.5 * np.sin(X)))
    assert np.allclose(sg.grad(functools.partial(cube_sum, k=2.0))(X), 6 * X ** 2)
    with pytest.raises(sg.WrtError, match="names no argument the partial"):
        sg.grad(p, wrt="x")


def cube_sum(x, k):
    return np.sum(k * cube(x))


# ---------------------------------------------------------------- functions picked from a dict or a list

def local_dict(x, w):
    acts = {"tanh": np.tanh, "relu": relu, "scale": lambda t: t * w}
    return np.sum(acts["relu"](x) + acts["scale"](x) + acts["tanh"](x))


def global_dict(x, w):
    return np.sum(ACTIVATIONS["soft"](x * w))


def global_list(x, w):
    return np.sum(ACTIVATION_LIST[1](x) * ACTIVATION_LIST[0](w))


def picked_then_passed(x, w):
    act = ACTIVATIONS["tanh"]
    return np.sum(apply(act, x * w) + apply(ACTIVATIONS["relu"], x) * w)


@pytest.mark.parametrize("f", [local_dict, global_dict, global_list, picked_then_passed])
@pytest.mark.parametrize("wrt", [0, 1])
def test_picked(f, wrt):
    check(f, [X, 0.8], wrt)


def test_picked_outside_and_passed():
    for name in ACTIVATIONS:
        check(direct, [X, ACTIVATIONS[name]])


# ---------------------------------------------------------------- second order

@pytest.mark.parametrize("f, args", [(direct, [X, softplus]), (through_helper, [X, np.sin]),
                                     (lambda_to_nested_helper, [X, 0.8]), (partial_of_user_function, [X, 0.8]),
                                     (module_sum, [np, X])], ids=["argument", "helper", "lambda", "partial", "module"])
def test_hessian_vector_product(f, args):
    wrt = 1 if args[0] is np else 0
    step = 1e-5
    moved = [list(args), list(args)]
    moved[0][wrt], moved[1][wrt] = args[wrt] + step * V, args[wrt] - step * V
    expected = (sg.grad(f, wrt)(*moved[0]) - sg.grad(f, wrt)(*moved[1])) / (2 * step)
    assert np.allclose(sg.hvp(f, wrt)(*args, V), expected, rtol=1e-5, atol=1e-7)



# ---------------------------------------------------------------- refused, at the user's line

def picks_by_argument(x, name):
    acts = {"tanh": np.tanh, "sin": np.sin}
    return np.sum(acts[name](x))


def binds_in_a_branch(x, flag):
    act = np.sin
    if flag:
        act = np.cos
    return np.sum(act(x))


def make_activation():
    return np.tanh


def calls_a_returned_function(x):
    act = make_activation()
    return np.sum(act(x))


def changes_its_argument(fn, v):
    v[0] = fn(v[0])
    return v


def passes_to_a_mutating_helper(x):
    y = x * 1.0
    changes_its_argument(lambda t: t * 2.0, y)
    return np.sum(y)


def clashing_helper(fn, v):
    w = 2.0
    return fn(v) * w


def passes_a_clashing_lambda(x, w):
    return np.sum(clashing_helper(lambda t: t * w, x))


def loops_over_functions(x):
    s = 0.0
    for act in [np.sin, np.cos]:
        s = s + np.sum(act(x))
    return s


def lambda_to_a_library_function(x):
    return np.sum(np.apply_along_axis(lambda t: t * 2.0, 0, x))


@pytest.mark.parametrize("f, args, text, message, hint", [
    (loops_over_functions, (X,), "for act in", r"list or dict of functions can only be indexed", r"helper"),
    (lambda_to_a_library_function, (X,), "lambda t", r"a lambda can be called, bound to a name", r"def"),
    (picks_by_argument, (X, "tanh"), "acts[name](x)", r"known only when the code runs", r"pass it as an argument"),
    (binds_in_a_branch, (X, True), "if flag", r"'act' is bound to a function inside a branch", r"bind 'act' once"),
    (calls_a_returned_function, (X,), "act(x)", r"computed when the code runs", r"function passed as an argument"),
    (passes_to_a_mutating_helper, (X,), "changes_its_argument(", r"changes an argument in place", r"return"),
    (passes_a_clashing_lambda, (X, 0.5), "clashing_helper(", r"reads 'w', a name 'clashing_helper' uses", r"rename"),
])
def test_refused_at_the_line(f, args, text, message, hint):
    with pytest.raises(sg.S2SGradError, match=message) as info:
        sg.grad(f)(*args)
    lines, start = inspect.getsourcelines(f)
    line = start + next(k for k, source in enumerate(lines) if text in source)
    assert info.value.location.line == line
    assert re.search(hint, info.value.hint or "")


# ---------------------------------------------------------------- a lambda differentiated, among others on its line

make_power = lambda y: lambda x: np.power(x, y)             # noqa: E731


def test_lambda_among_others_on_its_line():
    power = make_power(2.5)
    assert np.isclose(sg.grad(power)(1.5), 2.5 * 1.5 ** 1.5)
    pair = (lambda x: x * 2.0, lambda x: np.sin(x) * 3.0)
    assert np.isclose(sg.grad(pair[1])(1.0), 3 * np.cos(1.0))
    assert np.isclose(sg.grad(pair[0])(1.0), 2.0)
    assert np.isclose(sg.jvp(pair[1])(1.0, 1.0)[1], 3 * np.cos(1.0))
