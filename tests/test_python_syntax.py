"""Python as people write it around the arithmetic: signatures of every kind and the calls binding to them, dicts
as values, assignment expressions, loop ``else`` clauses, a loop's variable read after it, starred assignment,
``enumerate`` with a start, ``reversed``, ``raise``, ``with``, ``try``, ``global``, ``import`` and ``del`` inside
a differentiated function. Each case is checked against central finite differences through `grad` (and
`value_and_grad`, `vjp`) and, where forward mode reaches it, `jvp`; what stays refused is refused at the user's
line, saying why.
"""
from __future__ import annotations

import copy
import math
import re
import warnings

import numpy as np
import pytest

import s2sgrad as sg
from s2sgrad.errors import S2SGradError, UnsupportedSyntax, WrtError

X = np.array([0.3, -0.7, 1.1])
Y = np.array([1.2, 0.4, -0.5])
GLOBAL_SCALE = 1.5


# --- checking a case -----------------------------------------------------------------------

def _replaced(args, kwargs, wrt, value):
    args, kwargs = list(args), dict(kwargs)
    if isinstance(wrt, int):
        args[wrt] = value
    else:
        kwargs[wrt] = value
    return args, kwargs


def _point(args, kwargs, wrt):
    return args[wrt] if isinstance(wrt, int) else kwargs[wrt]


def _numeric(f, args, kwargs, wrt, direction, eps=1e-6):
    base = np.asarray(_point(args, kwargs, wrt), dtype=float)

    def at(t):
        moved = base + t * direction
        a, k = _replaced(args, kwargs, wrt, moved if base.ndim else float(moved))
        return float(f(*copy.deepcopy(a), **copy.deepcopy(k)))
    return (at(eps) - at(-eps)) / (2 * eps)


def check(f, args, kwargs=None, wrt=0, forward=True):
    """grad, value_and_grad, vjp (and jvp) of `f` at ``f(*args, **kwargs)`` with respect to `wrt` (a positional
    argument's index, as JAX counts them, or the name of a keyword argument) against central differences."""
    kwargs = kwargs or {}
    point = np.asarray(_point(args, kwargs, wrt), dtype=float)
    rng = np.random.default_rng(0)
    g = np.asarray(sg.grad(f, wrt)(*args, **kwargs), dtype=float)
    assert g.shape == point.shape
    for k in np.ndindex(point.shape):
        e = np.zeros(point.shape)
        e[k] = 1.0
        assert math.isclose(g[k], _numeric(f, args, kwargs, wrt, e), rel_tol=1e-6, abs_tol=1e-7), (k, g)
    value, g2 = sg.value_and_grad(f, wrt)(*args, **kwargs)
    np.testing.assert_allclose(value, f(*copy.deepcopy(args), **copy.deepcopy(kwargs)))
    np.testing.assert_allclose(g2, g)
    _, g3 = sg.vjp(f, wrt)(*args, 2.0, **kwargs)
    np.testing.assert_allclose(g3, 2 * g)
    if forward:
        direction = rng.standard_normal(point.shape)
        tangent = direction if point.ndim else float(direction)
        value, along = sg.jvp(f, wrt)(*args, tangent, **kwargs)
        np.testing.assert_allclose(value, f(*copy.deepcopy(args), **copy.deepcopy(kwargs)))
        assert math.isclose(along, _numeric(f, args, kwargs, wrt, direction), rel_tol=1e-6, abs_tol=1e-7)
    return g


# --- signatures ----------------------------------------------------------------------------

def keyword_only(x, *, scale=2.0):
    return np.sum(np.sin(x) * scale ** 2)


def keyword_only_without_default(x, *, scale, shift=0.5):
    return np.sum(np.sin(x * scale) + shift * x)


def positional_only(x, /, y):
    return np.sum(x * y ** 2)


def star_args(*xs):
    return np.sum(xs[0] * np.cos(xs[1])) + len(xs)


def named_then_star(a, *rest):
    total = a * 1.0
    for r in rest:
        total = total + np.sin(r) * a
    return np.sum(total)


def star_kwargs(x, **options):
    return np.sum(x * options["w"] + options.get("b", 0.0))


def every_kind(a, /, b, *rest, c=1.0, **options):
    s = np.sum(a * b * c)
    for r in rest:
        s = s + np.sum(r ** 2)
    return s * options.get("k", 1.0)


def _helper(v, *, k=2.0, **extra):
    return v * k + extra.get("b", 0.0)


def _spread(a, b, c=3.0):
    return a * b + c


def calls_helpers_by_keyword(x):
    options = {"b": 1.0}
    return np.sum(_helper(x, k=3.0) + _helper(x, **options) * x + _helper(*[x]) ** 2)


def calls_with_star(x, y):
    pair = (x, y)
    rest = [y]
    return np.sum(_spread(*pair) + _spread(x, *rest) * x)


def calls_with_both_stars(x, y):
    return np.sum(_spread(*[x], **{"b": y}) * _spread(*(y, x), **{}) + _helper(*[x], **{"b": y}))


def calls_with_double_star(x, y):
    kw = {"a": x, "b": y}
    return np.sum(_spread(**kw) * _spread(x, **{"b": y, "c": x}))


def nested_signatures(x):
    def inner(a, *bs, scale=1.0, **more):
        return a * scale + sum(bs) + more.get("z", 0.0)
    return np.sum(inner(x, x, x * 2, scale=4.0) * inner(*(x, x), z=x))


SIGNATURES = [
    (keyword_only, (X,), {"scale": 1.5}, 0),
    (keyword_only, (X,), {"scale": 1.5}, "scale"),
    (keyword_only, (X,), {}, 0),
    (keyword_only_without_default, (X,), {"scale": 0.7}, "scale"),
    (keyword_only_without_default, (X,), {"scale": 0.7, "shift": 2.0}, "shift"),
    (positional_only, (X, Y), {}, 0),
    (positional_only, (X, Y), {}, 1),
    (star_args, (X, Y), {}, 1),
    (named_then_star, (0.8, X, Y), {}, 0),
    (named_then_star, (0.8, X, Y), {}, 2),
    (star_kwargs, (X,), {"w": 0.5, "b": 2.0}, 0),
    (every_kind, (X, Y, X, Y), {"c": 3.0, "k": 2.0}, 1),
    (every_kind, (X, Y, X, Y), {"c": 3.0, "k": 2.0}, 3),
    (every_kind, (X, Y, X, Y), {"c": 3.0, "k": 2.0}, "c"),
    (calls_helpers_by_keyword, (X,), {}, 0),
    (calls_with_star, (X, Y), {}, 0),
    (calls_with_star, (X, Y), {}, 1),
    (calls_with_double_star, (X, Y), {}, 1),
    (calls_with_both_stars, (X, Y), {}, 0),
    (calls_with_both_stars, (X, Y), {}, 1),
    (nested_signatures, (X,), {}, 0),
]


@pytest.mark.parametrize("f, args, kwargs, wrt", SIGNATURES,
                         ids=[f"{c[0].__name__}-{c[3]}" for c in SIGNATURES])
def test_signatures(f, args, kwargs, wrt):
    check(f, args, kwargs, wrt)


def test_an_index_counts_positional_arguments_as_jax_does():
    """``grad(f, 0)`` of ``def f(*xs)`` is the gradient in the first argument; a tuple wrt gives a tuple; the
    name of ``*xs`` gives the gradient of the whole tuple; forward mode takes the tuple whole."""
    ga, gb = sg.grad(star_args, (0, 1))(X, Y)
    np.testing.assert_allclose(ga, np.cos(Y))
    np.testing.assert_allclose(gb, -X * np.sin(Y))
    whole = sg.grad(star_args, "xs")(X, Y)
    assert isinstance(whole, tuple) and len(whole) == 2
    np.testing.assert_allclose(whole[1], gb)
    _, along = sg.jvp(star_args, "xs")(X, Y, (np.ones(3), np.zeros(3)))
    assert math.isclose(along, np.sum(np.cos(Y)))
    _, along = sg.jvp(star_args, 1)(X, Y, np.ones(3))
    assert math.isclose(along, np.sum(gb))
    with pytest.raises(WrtError, match=r"designates an item of \*xs"):
        sg.hvp(star_args, 0)
    with pytest.raises(WrtError, match=r"wrt=1 is out of range: keyword_only has 1 positional") as info:
        sg.grad(keyword_only, 1)
    assert "wrt='scale'" in info.value.hint


def _plain_decorator(fn):
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) * 2.0
    return wrapper


@_plain_decorator
def decorated(x, scale=1.0):
    return np.sum(np.sin(x) * scale)


def calls_decorated(x):
    return decorated(x, scale=3.0) + decorated(x)


def test_a_wrapper_passing_on_star_args_without_wraps_is_differentiated():
    """``def wrapper(*args, **kwargs)`` without functools.wraps: argument 0 is the first positional argument."""
    np.testing.assert_allclose(sg.grad(decorated)(X, scale=0.5), np.cos(X))
    np.testing.assert_allclose(sg.grad(calls_decorated)(X), 8.0 * np.cos(X))
    np.testing.assert_allclose(sg.jvp(calls_decorated)(X, np.ones(3))[1], 8.0 * np.sum(np.cos(X)))


def test_second_order_through_keyword_only_parameters():
    h = sg.hvp(keyword_only_without_default, 0)(X, np.ones(3), scale=0.7)
    np.testing.assert_allclose(h, -0.49 * np.sin(0.7 * X))


# --- dicts as values -----------------------------------------------------------------------

def dict_display(x, y):
    d = {"a": x, "b": y * 2.0}
    return np.sum(d["a"] * d["b"])


def dict_call(x, y):
    d = dict(a=x, b=np.sin(y))
    return np.sum(d["a"] ** 2 * d["b"])


def dict_comprehension(x):
    d = {"a": x, "b": x * 2.0}
    e = {k: np.cos(v) * 3.0 for k, v in d.items()}
    return np.sum(e["a"] + e["b"] * e["a"])


def dict_methods(x, y):
    d = {"p": x, "q": y}
    values = d.values()
    pairs = d.items()
    s = 0.0
    for v in values:
        s = s + np.sum(v ** 2)
    for k, v in pairs:
        s = s + np.sum(v) * len(k)
    return s + np.sum(d.get("q", x)) + np.sum(d.get("missing", 2.0 * x)) + len(d) * ("p" in d)


def dict_written(x, y):
    d = {}
    d["a"] = x
    d["b"] = y * x
    d["a"] = d["a"] * 3.0
    return np.sum(d["a"] * d["b"])


def dict_of_layers(x):
    params = {f"w{i}": x * (i + 1) for i in range(3)}
    h = x
    for name in params:
        h = np.tanh(h * params[name])
    return np.sum(h)


def _saxpy(val):
    return val["a"] * val["b"] + val["c"]


def dict_passed_to_a_helper(x, y):
    made = dict([("a", x)], b=y)
    copied = dict(made, c=np.sin(x))
    built = {k: v * 2.0 for k, v in copied.items()}
    return np.sum(_saxpy(dict(a=x, b=y, c=x * y)) + _saxpy(copied) * _saxpy(built))


def set_comprehension(x):
    sizes = {len(str(k)) for k in range(12)}
    return np.sum(x) * len(sizes)


DICTS = [(dict_display, (X, Y), 0), (dict_display, (X, Y), 1), (dict_call, (X, Y), 1), (dict_call, (X, Y), 0),
         (dict_comprehension, (X,), 0), (dict_methods, (X, Y), 0), (dict_methods, (X, Y), 1),
         (dict_written, (X, Y), 0), (dict_written, (X, Y), 1), (dict_of_layers, (X,), 0), (set_comprehension, (X,), 0),
         (dict_passed_to_a_helper, (X, Y), 0), (dict_passed_to_a_helper, (X, Y), 1)]


@pytest.mark.parametrize("f, args, wrt", DICTS, ids=[f"{c[0].__name__}-{c[2]}" for c in DICTS])
def test_dicts(f, args, wrt):
    check(f, args, wrt=wrt)


def test_a_dict_argument_read_with_get_and_values():
    def f(p):
        return np.sum(p.get("w", 0.0) * 2.0) + sum(np.sum(v) for v in p.values())
    g = sg.grad(f)({"w": X, "b": Y})
    np.testing.assert_allclose(g["w"], 3.0)
    np.testing.assert_allclose(g["b"], 1.0)


# --- statements and expressions --------------------------------------------------------------

def walrus_in_condition(x):
    if (s := np.sum(x ** 2)) > 1.0:
        return s * np.sum(x)
    return s


def walrus_in_comprehension(x):
    kept = [y * 2.0 for v in x if (y := np.sin(v)) > -0.5]
    return sum(kept)


def walrus_in_while_header(x):
    k = 0
    total = 0.0
    while (k := k + 1) < 4:
        total = total + x[k - 1] * k
    return total


def for_else(x):
    s = 0.0
    for v in x:
        if v > 5.0:
            break
        s = s + v * v
    else:
        s = s * 2.0
    return s


def for_else_broken(x):
    s = 0.0
    for v in x:
        s = s + v
        if v < 0.0:
            break
    else:
        s = s * 10.0
    return s * x[0]


def while_else(x):
    s, k = 1.0, 0
    while k < 3:
        s = s * x[k]
        k += 1
    else:
        s = s + x[0]
    return s


def read_after_loop(x):
    for i in range(3):
        y = x[i] * 2.0
    return x[i] * y


def starred_assignment(x):
    a, *rest = x
    *init, last = [x[0], x[1] * 2.0, x[2]]
    first, *middle, end = (x[2], x[0], x[1], x[0])
    return a * np.sum(np.array(rest)) + last * init[1] + first * middle[1] * end


def enumerate_with_start(x):
    s = 0.0
    for k, v in enumerate(x, 1):
        s = s + k * v
    for k, v in enumerate(x, start=2):
        s = s + k * v * v
    return s


def reversed_sequences(x, y):
    s = 0.0
    for v in reversed(x):
        s = s * 0.5 + v
    for k in reversed(range(3)):
        s = s * 0.9 + x[k]
    for k, v in reversed(list(enumerate(y))):
        s = s * 0.7 + k * v
    for a, b in reversed(list(zip(x, y))):
        s = s * 0.8 + a * b
    return s


def raises_for_bad_input(x, n):
    if x.shape[0] != n:
        raise ValueError(f"x has {x.shape[0]} elements, not {n}")
    assert n > 0, "n must be positive"
    return np.sum(np.sin(x))


def with_errstate(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x ** 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = y * 2.0
    return np.sum(y)


def try_except_else_finally(a, b):
    try:
        inverse = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        z = np.sum(a) * b
    else:
        z = np.sum(inverse) * b
    finally:
        z = z + 1.0
    return z


def _checked(v):
    if v[0] < 0:
        raise ValueError("negative")
    return v * 2.0


def try_around_a_helper(x):
    try:
        y = _checked(x)
    except (ValueError, KeyError) as error:
        y = x * 3.0 + len(str(error))
    return np.sum(y * x)


def reads_a_global(x):
    global GLOBAL_SCALE
    return np.sum(x * GLOBAL_SCALE)


def imports_inside(x):
    import math as m

    import numpy as numpy_module
    from numpy import sin
    return numpy_module.sum(sin(x)) * m.pi


def deletes_a_name(x):
    y = x * 2.0
    z = y + 1.0
    del y
    return np.sum(z * x)


def nonlocal_read(x):
    k = 2.0

    def inner(v):
        nonlocal k
        return v * k
    return np.sum(inner(x))


def fstring_kept(x, n):
    d = {}
    for i in range(n):
        d[f"w{i:02d}"] = x * i
    return np.sum(d["w01"] * d[f"w{n - 1:02d}"]) + len(f"{n}")


SYNTAX = [(walrus_in_condition, (X,), 0), (walrus_in_condition, (X * 0.1,), 0), (walrus_in_comprehension, (X,), 0),
          (walrus_in_while_header, (X,), 0), (for_else, (X,), 0), (for_else_broken, (X,), 0),
          (for_else_broken, (np.abs(X),), 0), (while_else, (X,), 0), (read_after_loop, (X,), 0),
          (starred_assignment, (X,), 0), (enumerate_with_start, (X,), 0), (reversed_sequences, (X, Y), 0),
          (reversed_sequences, (X, Y), 1), (raises_for_bad_input, (X, 3), 0), (with_errstate, (X,), 0),
          (try_except_else_finally, (np.array([[2.0, 0.5], [0.5, 1.0]]), 0.7), 0),
          (try_except_else_finally, (np.array([[2.0, 0.5], [0.5, 1.0]]), 0.7), 1),
          (try_except_else_finally, (np.array([[1.0, 2.0], [2.0, 4.0]]), 0.7), 1),
          (try_around_a_helper, (np.abs(X),), 0), (try_around_a_helper, (-np.abs(X),), 0),
          (reads_a_global, (X,), 0), (imports_inside, (X,), 0), (deletes_a_name, (X,), 0), (nonlocal_read, (X,), 0),
          (fstring_kept, (X, 3), 0)]


@pytest.mark.parametrize("f, args, wrt", SYNTAX, ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(SYNTAX)])
def test_syntax(f, args, wrt):
    check(f, args, wrt=wrt)


def test_the_forward_sweep_raises_what_the_function_raises():
    with pytest.raises(ValueError, match="x has 3 elements, not 4"):
        sg.grad(raises_for_bad_input)(X, 4)
    with pytest.raises(ValueError, match="x has 3 elements, not 4"):
        sg.jvp(raises_for_bad_input)(X, 4, np.ones(3))
    with pytest.raises(AssertionError, match="n must be positive"):
        sg.grad(raises_for_bad_input)(X[:0], 0)


def test_a_loop_variable_after_no_trip_is_unbound_as_in_python():
    def f(x, n):
        for i in range(n):
            pass
        return x[i] * 2.0
    np.testing.assert_allclose(sg.grad(f)(X, 2), [0.0, 2.0, 0.0])
    with pytest.raises(UnboundLocalError):
        f(X, 0)
    with pytest.raises(UnboundLocalError):
        sg.grad(f)(X, 0)


def test_try_runs_the_block_on_copies_and_keeps_the_random_state():
    def f(x):
        x[0] = 5.0
        try:
            x[1] = x[1] + np.random.uniform()
        except ValueError:
            pass
        return np.sum(x * x)
    np.random.seed(3)
    expected = 2 * np.array([5.0, X[1] + np.random.uniform(), X[2]])
    np.random.seed(3)
    got = sg.grad(f)(X.copy())
    np.testing.assert_allclose(got * np.array([0.0, 1.0, 1.0]), expected * np.array([0.0, 1.0, 1.0]))


# --- what stays refused, at the user's line --------------------------------------------------

def _returns_inside_try(x):
    try:
        return np.sum(x)
    except ValueError:
        return 0.0


def _partial_state_in_try(x):
    y = x
    try:
        y = x * 2.0
        z = np.linalg.inv(np.outer(x, x))
    except np.linalg.LinAlgError:
        z = 0.0
    return np.sum(y) + np.sum(z)


def _try_reads_a_nested_def(x):
    def scaled(v):
        return v * 2.0
    try:
        y = scaled(x)
    except Exception:
        y = x
    return np.sum(y)


def _unknown_context(x):
    with open("data.txt"):
        y = x * 2.0
    return np.sum(y)


def _errstate_raise(x):
    with np.errstate(divide="raise"):
        y = np.log(x)
    return np.sum(y)


def _assigns_a_global(x):
    global GLOBAL_SCALE
    GLOBAL_SCALE = 2.0
    return np.sum(x)


def _walrus_on_one_path(x):
    if np.sum(x) > 0 and (y := np.sum(x ** 2)) > 1:
        return y
    return np.sum(x)


def _reads_deleted(x):
    y = x * 2.0
    del y
    return np.sum(y)  # noqa: F821


def _reversed_enumerate(x):
    s = 0.0
    for k, v in reversed(enumerate(x)):
        s = s + k * v
    return s


def _yields(x):
    yield x


def _star_fills_around_keywords(x):
    rest = [x]
    return np.sum(_spread(*rest, b=x))


def _bare_raise(x):
    raise


REFUSED = [
    (_returns_inside_try, "return np.sum(x)", r"'return'.* inside a 'try' block", r"return after it"),
    (_partial_state_in_try, "try:", r"'y' is bound or changed inside the try block before its last statement",
     r"every except block"),
    (_try_reads_a_nested_def, "y = scaled(x)", r"the try block reads 'scaled'", r"module level"),
    (_unknown_context, 'open("data.txt")', r"context managers that change no value", r"move the with block"),
    (_errstate_raise, '"raise"', r"np.errstate is supported with 'ignore'", r"check the values"),
    (_assigns_a_global, "global GLOBAL_SCALE", r"declared global and assigned", r"return the new value"),
    (_walrus_on_one_path, "y := ", r"only on some paths", r"statement of its own"),
    (_reads_deleted, "return np.sum(y)", r"read after 'del y'", None),
    (_reversed_enumerate, "reversed(enumerate(x))", r"not reversible", r"reversed\(list\(enumerate"),
    (_yields, "yield x", r"generators", r"return a list"),
    (_bare_raise, "raise", r"bare 'raise'", r"by name"),
    (_star_fills_around_keywords, "_spread(*rest, b=x)", r"from a starred argument around others given by name",
     r"one by one or by name"),
]


@pytest.mark.parametrize("f, text, message, hint", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_refused_at_the_users_line(f, text, message, hint):
    with pytest.raises(S2SGradError, match=message) as info:
        sg.grad(f)(X)
    error = info.value
    assert isinstance(error, UnsupportedSyntax)
    assert error.location.filename == __file__
    assert text in error.location.text
    if hint is not None:
        assert error.hint is not None and re.search(hint, error.hint)


HVP = [(dict_display, (X, Y)), (dict_passed_to_a_helper, (X, Y)), (dict_methods, (X, Y)), (dict_comprehension, (X,)), (starred_assignment, (X,)),
       (calls_with_both_stars, (X, Y)), (calls_with_star, (X, Y)), (read_after_loop, (X,)),
       (try_except_else_finally, (np.array([[2.0, 0.5], [0.5, 1.0]]), 0.7)), (enumerate_with_start, (X,))]


@pytest.mark.parametrize("f, args", HVP, ids=[c[0].__name__ for c in HVP])
def test_hessian_vector_products(f, args):
    """Forward mode over the generated gradient, through the helpers these constructs use, against differences of
    the gradient."""
    v = np.random.default_rng(1).standard_normal(np.shape(args[0]))
    eps = 1e-6
    grad = sg.grad(f)
    moved = [(args[0] + t * v,) + tuple(args[1:]) for t in (eps, -eps)]
    numeric = (np.asarray(grad(*moved[0])) - np.asarray(grad(*moved[1]))) / (2 * eps)
    np.testing.assert_allclose(sg.hvp(f)(*args, v), numeric, rtol=1e-5, atol=1e-6)
