"""Python's builtins as people use them on differentiated values: ``max``/``min`` (two or more arguments, an
iterable, ``key=``, ``default=``), ``sum``, ``sorted``, ``list``/``tuple``, ``map``, ``functools.reduce``,
``divmod``, ``abs``, ``pow``, ``round``, the casts, ``math.prod``/``math.fsum``, the attributes of arrays,
``zip``/``enumerate`` as values, in loops and helpers.

Each builtin is swept over the kinds of arguments Python accepts for it (a float, a NumPy scalar, a 0-d array,
a 1-D array, a list of floats, a list of size-1 arrays, a tuple, a generator): `grad` against central finite
differences (`gradcheck.assert_grad_matches_fd`), `jvp` against the directional difference, and the forward
value and its type against the plain function's. Ties follow `np.maximum` (shared) without a key and go
to the item returned with one; Python's own errors (an empty sequence, ``pow`` of floats with a modulus)
are raised by the forward sweep.
"""
import functools
import importlib.util
import itertools
import math

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg

# How an argument of each kind is made from the differentiated vector x (three floats).
SCALARS = {"float": "float({})", "np.float64": "np.float64({})", "0d": "np.array({})"}
ITERABLES = {
    "list": "[float(x[0]), x[1] * 2.0, float(x[2])]",
    "tuple": "(x[0], x[1] * 2.0, x[2])",
    "array": "x * 2.0",
    "generator": "(v * v for v in x)",
    "list-of-arrays": "[x[0:1], x[1:2] * 2.0, x[2:3]]",
}
# Each builtin over an iterable, and the kinds it is swept over (math.fsum takes numbers only; the builtins
# that become loops, over fewer, to keep the sweep short).
OVER_ITERABLES = {
    "max": ("max({})", ITERABLES),
    "min": ("min({})", ITERABLES),
    "max-key": ("max({}, key=abs)", ITERABLES),
    "min-nested-key": ("min({}, key=key)", ITERABLES),
    "max-default": ("max({}, default=x[0])", ITERABLES),
    "sum": ("sum({})", ITERABLES),
    "sum-start": ("sum({}, x[0])", ITERABLES),
    "sorted": ("sorted({})[0] * 3.0 + sorted({})[-1]", ITERABLES),
    "sorted-reverse": ("sorted({}, reverse=True)[1]", ITERABLES),
    "sorted-key": ("sorted({}, key=abs)[0] + sorted({}, key=key, reverse=True)[0] * 2.0", ITERABLES),
    "list": ("list({})[1] * list({})[2]", ITERABLES),
    "tuple": ("tuple({})[0] * 2.0 + tuple({})[2]", ITERABLES),
    "map": ("sum(map(np.sin, {})) + sum(list(map(square, {})))", ("list", "list-of-arrays", "generator")),
    "reduce": ("functools.reduce(np.multiply, {})", ITERABLES),
    "reduce-start": ("functools.reduce(add_square, {}, x[1])", ITERABLES),
    "math.prod": ("math.prod({})", ITERABLES),
    "math.prod-start": ("math.prod({}, start=x[2])", ITERABLES),
    "math.fsum": ("math.fsum({})", {k: v for k, v in ITERABLES.items() if k != "list-of-arrays"}),
    "zip": ("list(zip({}, {}))[1][0] * list(zip({}, x))[2][1]", ("list", "array", "generator")),
    "enumerate": ("sum([i * v for i, v in list(enumerate({}))]) + list(enumerate({}, 2))[1][0] * x[0]",
                  ("list", "tuple", "array")),
}
# Builtins of numbers, over pairs of scalar kinds.
OF_NUMBERS = {
    "max-2": "max({a}, {b})",
    "min-2": "min({a}, {b})",
    "max-3": "max({a}, {b}, 0.25)",
    "min-3-key": "min({a}, {b}, -0.5, key=abs)",
    "max-nested-key": "max({a}, {b}, key=key)",
    "divmod": "divmod({a}, 0.3)[1] * {b} + divmod({a}, 0.3)[0]",
    "abs": "abs({a}) * {b}",
    "pow": "pow({a}, 3) + pow(abs({b}), {a}) + pow(2.0, {b})",
    "round": "round({a}) * {b} + round({b}, 1) + {a}",
    "float": "float({a}) * {b}",
    "np.float64": "np.float64({a}) * {b}",
    "int": "int({a} * 10.0) * {b}",
}

PAIRS = [("float", "float"), ("np.float64", "float"), ("0d", "np.float64")]

HELPERS = '''
import functools
import math

import numpy as np


def square(v):
    return v * v


def add_square(a, b):
    return a + b * b


def scored(v):
    return max(v, 0.1 * v) * min(v, 2.0)

'''


def _reduced(result: str) -> str:
    """A scalar of `result` (a number or a size-1 array) that keeps its gradient."""
    return f"np.sum({result}) * 1.5"


def programs() -> dict:
    out = {}
    for (name, (template, kinds)), (kind, make) in itertools.product(OVER_ITERABLES.items(), ITERABLES.items()):
        if kind in kinds:
            out[f"{name}[{kind}]"] = (["def key(v):", "    return -v * v"],
                                      _reduced(template.replace("{}", make)))
    for (name, template), (a, b) in itertools.product(OF_NUMBERS.items(), PAIRS):
        if name == "round" and "0d" in (a, b):
            continue                                  # (Python's round takes no array)
        call = template.format(a=SCALARS[a].format("x[0]"), b=SCALARS[b].format("x[1] * 2.0"))
        out[f"{name}[{a},{b}]"] = (["def key(v):", "    return -v * v"], _reduced(call))
    return out


PROGRAMS = programs()
# Constructs around the builtins: loops, helpers, attributes of arrays, validation.
PROGRAMS.update({
    "in-a-loop": (["s = 0.0", "for i in range(len(x)):", "    s = max(s, x[i] * x[i]) + min(x[i], 0.5)"], "s"),
    "in-a-helper": (["def h(a, b):", "    return max(a, b) * min(a, b) + sum([a, b])"],
                    "h(x[0], x[1]) + h(x[2], x[0]) + scored(x[1])"),
    "helper-maps": (["ys = list(map(scored, x))"], "sum(sorted(ys)[1:]) * ys[0]"),
    "dtype": (["z = np.zeros(3, dtype=x.dtype) + np.zeros_like(x, dtype=x.dtype)"],
              "np.sum((z + x.astype(x.dtype)) ** 2)"),
    "shape": ([], "np.sum(x) * (x.shape[0] + x.ndim + x.size + len(x))"),
    "T-real-imag": ([], "np.sum(x.T * x.real + x.imag + x)"),
    "any-all": (["s = np.sum(x * x) if any(x > 0.0) and all(x < 5.0) else 0.0"], "s"),
    "isinstance": (["s = np.sum(x) if isinstance(x, np.ndarray) and not isinstance(x, list) else 0.0"], "s * x[0]"),
    "range-len": (["s = 0.0", "for i in range(len(x)):", "    s = s + x[i] * i"], "s"),
    "reduce-nested": (["def mul(a, b):", "    return a * b + 0.5 * b"], "functools.reduce(mul, x) + x[0]"),
    "map-two": (["def mul(a, b):", "    return a * b"], "sum(map(mul, x, x[::-1]))"),
    "zip-pairs": (["pairs = list(zip(x, x * 2.0))"], "pairs[0][1] * pairs[2][0]"),
    "max-of-rows": (["rows = [x[0:1] * x[1], x[1:2]]"], "np.sum(max(rows)) + np.sum(min(rows, key=np.sum))"),
    "max-tie-key": ([], "max(x[0], -x[0], key=abs) * 2.0"),
    "list-range": ([], "np.sum(np.array(list(range(3))) * x) + tuple(range(1, 3))[1] * x[0]"),
    "in-a-while-condition": (["def key(v):", "    return -v * v", "s, k = 0.0, 0", "while sum(map(square, x * s)) + max(x * s, key=key) < 2.0 and k < 9:",
                              "    s, k = s + 0.3, k + 1"], "s * x[0] + sum([v * s for v in x])"),
})


def source() -> str:
    parts = [HELPERS]
    for k, (name, (lines, result)) in enumerate(PROGRAMS.items()):
        body = "".join(f"    {line}\n" for line in lines)
        parts.append(f"# {name}\ndef f{k}(x):\n{body}    return {result}\n\n")
    return "\n".join(parts)


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    path = tmp_path_factory.mktemp("python_builtins") / "builtin_programs.py"
    path.write_text(source())
    spec = importlib.util.spec_from_file_location(path.stem, path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


X = np.array([0.45, -0.7, 1.3])
T = np.array([0.3, -0.8, 0.5])


def _function(module, name):
    return getattr(module, f"f{list(PROGRAMS).index(name)}")


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_grad_and_jvp_match_finite_differences(name, module):
    f = _function(module, name)
    grad = assert_grad_matches_fd(f, [X.copy()], rtol=1e-5, atol=1e-7)
    value, tangent = sg.jvp(f)(X.copy(), T.copy())
    expected = f(X.copy())
    assert value == expected and type(value) is type(expected), (value, expected)
    assert tangent == pytest.approx(float(grad @ T), rel=1e-7, abs=1e-10)


SECOND_ORDER = ["max[list]", "sorted-key[array]", "math.prod[list-of-arrays]", "reduce[tuple]", "in-a-helper",
                "max-default[generator]", "divmod[np.float64,float]", "map[list]"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_hvp_matches_differences_of_the_gradient(name, module):
    f = _function(module, name)
    h = 1e-5
    numeric = (sg.grad(f)(X + h * T) - sg.grad(f)(X - h * T)) / (2 * h)
    assert np.allclose(sg.hvp(f)(X.copy(), T.copy()), numeric, rtol=1e-5, atol=1e-6)


# --- what the forward sweep returns is what Python returns --------------------------------------------

def _returns(x):
    a, b = float(x[0]), float(x[1])
    return (max(a, b), min(x[0], x[1]), max(np.array(a), b), sorted([b, a]), sorted(x), list(x), tuple(x),
            max(x), divmod(a, 0.3), round(a), round(a, 1), abs(x[1]), pow(a, 2), list(map(abs, x)),
            max([], default=None), list(zip(x, [a, b, a])), list(enumerate(x)), math.prod([a, b]), math.fsum(x))


def _same(value, expected):
    assert type(value) is type(expected), (value, expected)
    if isinstance(expected, (list, tuple)):
        assert len(value) == len(expected)
        for v, e in zip(value, expected):
            _same(v, e)
    else:
        assert value is expected or value == expected or np.array_equal(value, expected), (value, expected)


def test_the_forward_sweep_returns_what_python_returns():
    value, _ = sg.jvp(_returns)(X.copy(), T.copy())
    _same(value, _returns(X.copy()))


def _max_picks_the_first_of_equal_items(x):
    a = float(x[0])
    pair = [a, a + 0.0]
    return max(pair) is pair[0]


def test_max_returns_the_first_maximal_item():
    value, _ = sg.jvp(_max_picks_the_first_of_equal_items)(X.copy(), T.copy())
    assert value is True


# --- ties, and errors Python raises ------------------------------------------------------------------

def _tied(x):
    return max(x[0], 0.45) + min(x[1], x[1]) + max(x[2], -x[2], key=abs)


def test_ties_share_without_a_key_and_go_to_the_item_returned_with_one():
    """``max(x0, 0.45)`` at x0 = 0.45 shares (the central difference); ``min(x1, x1)`` is x1; with a key,
    ``max(x2, -x2, key=abs)`` is x2 for every x2 > 0, so its gradient is 1."""
    assert sg.grad(_tied)(X.copy()).tolist() == [0.5, 1.0, 1.0]
    assert sg.jvp(_tied)(X.copy(), np.ones(3))[1] == 2.5


def _empty_max(x):
    return max([v for v in x if v > 10.0]) * x[0]


def _empty_reduce(x):
    return functools.reduce(np.add, [v for v in x if v > 10.0]) * x[0]


def _pow_with_modulus(x):
    return pow(float(x[0]), 2.0, 3) * x[0]


def _max_of_a_matrix(x):
    return max(np.outer(x, x)) * x[0]


@pytest.mark.parametrize("fn, error, message", [
    (_empty_max, ValueError, "max\\(\\) arg is an empty sequence"),
    (_empty_reduce, TypeError, "reduce\\(\\) of empty iterable with no initial value"),
    (_pow_with_modulus, TypeError, "3rd argument not allowed unless all arguments are integers"),
    (_max_of_a_matrix, ValueError, "truth value of an array"),
], ids=["max-empty", "reduce-empty", "pow-modulus", "max-matrix"])
def test_python_errors_are_raised_as_python_raises_them(fn, error, message):
    with pytest.raises(error, match=message):
        fn(X.copy())
    for derivative in (lambda: sg.grad(fn)(X.copy()), lambda: sg.jvp(fn)(X.copy(), T.copy())):
        with pytest.raises(error, match=message):
            derivative()


# --- the item max, sorted, list or reduce returns is the list's own object ----------------------------

def _first(a, b):
    return a


def _through_max(x):
    rows = [x[0:2] * 1.0, x[1:3] * 2.0]
    m = max(rows, key=np.sum)
    m += 1.0
    return np.sum(rows[0]) + np.sum(rows[1])


def _through_sorted(x):
    rows = [x[0:2] * 1.0, x[1:3] * 2.0]
    m = sorted(rows, key=np.sum)[0]
    m += 1.0
    return np.sum(rows[0])


def _through_reduce(x):
    rows = [x[0:2] * 1.0, x[1:3] * 2.0]
    m = functools.reduce(_first, rows)
    m += 1.0
    return np.sum(rows[0])


@pytest.mark.parametrize("fn", [_through_max, _through_sorted, _through_reduce])
def test_a_change_in_place_of_the_item_returned_is_seen_or_refused(fn):
    with pytest.raises(sg.UnsupportedSyntax, match="may have been changed in place through 'm'"):
        sg.grad(fn)(X.copy())


def _numbers(a, b):
    m = max(a, b * 2.0)
    m += 1.0
    n = min([a, b])
    n *= 2.0
    return m * a + b + n


def test_numbers_picked_are_numbers():
    assert_grad_matches_fd(_numbers, [0.5, 0.3], wrt=(0, 1))
