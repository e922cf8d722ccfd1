"""Backward loops over floats with their coefficients formed for all trips at once (`backend/coefficients.py`,
`backend/polynomials.py`): the gradient equals the one trip by trip to rounding and matches finite differences."""
import ast
import re

import coefficient_cases as cases
import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg
from s2sgrad.backend.polynomials import Polynomial
from s2sgrad.optimizations import ALL

PER_TRIP = ALL - {"coefficient_arrays"}

COUNTED_DOWN = [cases.counter_in_body, cases.counter_while, cases.counter_from_two, cases.counter_nested,
                cases.counter_term]
POPPING_NOTHING = [cases.counter_factor, cases.counter_alone]
VECTORIZED = [cases.euler, cases.two_carried, cases.quotients, cases.powers, cases.nested, cases.read_after,
              *COUNTED_DOWN]
LEFT_AS_IT_IS = [cases.branch_in_body,
                 cases.math_calls]           # (the dtypes of math's results are not followed: no float rows)


def _args(fn):
    return (0.35, 7)


@pytest.mark.parametrize("fn", VECTORIZED + LEFT_AS_IT_IS + POPPING_NOTHING, ids=lambda f: f.__name__)
def test_the_gradient_is_the_one_trip_by_trip_to_rounding_and_matches_finite_differences(fn):
    args = _args(fn)
    np.testing.assert_allclose(sg.grad(fn)(*args), sg.grad(fn, optimize=PER_TRIP)(*args), rtol=1e-13)
    assert_grad_matches_fd(fn, args)
    assert sg.grad(fn)(0.35, 0) == sg.grad(fn, optimize=PER_TRIP)(0.35, 0)       # no trip at all


@pytest.mark.parametrize("fn", VECTORIZED, ids=lambda f: f.__name__)
def test_the_backward_loop_pops_nothing_and_does_float_operations_on_its_adjoints(fn):
    backward = sg.source(fn, args=_args(fn)).split("# backward sweep")[1]
    assert re.search(r"\.pop_floats\(\w*trips", backward) and "math." not in backward and ".pop()" not in backward.split("for ")[-1]
    innermost = max(len(line) - len(line.lstrip()) for line in backward.splitlines() if line.strip())
    trip = "".join(line for line in backward.splitlines() if line.startswith(" " * innermost))
    assert "np." not in trip and ".pop()" not in trip


@pytest.mark.parametrize("fn", COUNTED_DOWN + [cases.counter_factor], ids=lambda f: f.__name__)
def test_a_counted_down_counter_is_formed_for_all_trips_and_nothing_is_copied(fn):
    backward = sg.source(fn, args=_args(fn)).split("# backward sweep")[1]
    assert re.search(r"(\w+)_rows = np\.arange\(\1 - 1, \1 - 1 - \w*trips\w*, -1\)", backward), backward
    assert not re.search(r"\b\w+ = \w+ - 1\b", backward) and not re.search(r"\bdy_\d+ = dy\b", backward)


def test_a_counter_read_as_it_is_is_the_loops_target():
    backward = sg.source(cases.counter_alone, args=(0.35, 7)).split("# backward sweep")[1]
    assert "    for i in range(i - 1, i - 1 - trips, -1):\n" in backward and "i = i - 1" not in backward


COUNTED_LOOP = """
def f(x, n, dy=1.0):
    y = x
    y_stack = Stack()
    i = START
    while i < n:
        y_stack.push(y)
        y = np.cos(y) * 0.9 + 0.01 * i * y
        i = i + 1
    trips = len(range(n))
    for _ in range(trips):
        dy_2 = dy
        TRIP
        y = y_stack.pop()
        dy = dy_2 * (0.01 * i) - dy_2 * 0.9 * math.sin(y)
    return dy * i
"""
COUNTED = "i = i - 1"


@pytest.mark.parametrize("start, trip, formed", [
    ("0", COUNTED, True),                                           # i read after the loop: i - trips there
    ("0.5", COUNTED, False),                                        # not an int
    ("0", "x = i\n        i = i - 1", False),                       # read before it is counted down
    ("0", "i = i - 1\n        i = i * 1", False),                   # bound again
])
def test_the_pass_on_a_counted_down_counter_keeps_the_values(start, trip, formed):
    import math

    from s2sgrad.backend.coefficients import coefficient_arrays
    from s2sgrad.ir.names import Names
    from s2sgrad.runtime import Stack

    text = COUNTED_LOOP.replace("START", start).replace("TRIP", trip)
    fn = ast.parse(text).body[0]
    coefficient_arrays(fn, 0, [fn.body[-2]], {"x", "n", "dy"}, Names({n.id for n in ast.walk(fn)
                                                                           if isinstance(n, ast.Name)}))
    rewritten = ast.unparse(ast.fix_missing_locations(fn))
    assert ("np.arange(i - 1, i - 1 - trips, -1)" in rewritten) == formed, rewritten
    assert ("\n    i = i - trips\n    return dy * i" in rewritten) == formed, rewritten
    for n in (0, 1, 6):
        values = []
        for code in (text, rewritten):
            space = {"np": np, "math": math, "Stack": Stack}
            exec(code, space)
            values.append(space["f"](0.35, n))
        np.testing.assert_allclose(values[1], values[0], rtol=1e-13)


def test_loops_with_a_branch_are_left_as_they_are():
    assert "pop_floats" not in sg.source(cases.branch_in_body, args=(0.35, 7))


def test_the_polynomial_loop_is_one_factor_per_trip():
    source = sg.source(cases.euler, args=(0.35, 7))
    assert "dy_factors = (1.0 - 0.15 * STEP * y_1_rows ** 2 + 0.2 * STEP * y_1_rows + 1.01 * STEP * " \
           "np.cos(y_1_rows)).tolist()" in source
    assert "for dy_factor in dy_factors:\n        dy = dy * dy_factor" in source


def test_higher_order_and_switching_it_off():
    assert "pop_floats" not in sg.source(cases.euler, args=(0.35, 7), optimize=PER_TRIP)
    np.testing.assert_allclose(sg.hvp(cases.euler)(0.35, 7, 1.0), sg.hvp(cases.euler)(0.35, 7, 1.0))
    h = 1e-5
    fd = (sg.grad(cases.euler)(0.35 + h, 7) - sg.grad(cases.euler)(0.35 - h, 7)) / (2 * h)
    np.testing.assert_allclose(sg.hvp(cases.euler)(0.35, 7, 1.0), fd, rtol=1e-6)


def _poly(text, names):
    def build(node):
        if isinstance(node, ast.BinOp):
            a, b = build(node.left), build(node.right)
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}[type(node.op)] \
                if not isinstance(node.op, ast.Div) else a * b.reciprocal()
        if isinstance(node, ast.Constant):
            return Polynomial.constant(node.value)
        return Polynomial.factor(node)
    return build(ast.parse(text, mode="eval").body)


@pytest.mark.parametrize("text", ["h * (0.1 * y) + h * y * 0.1", "(a + b) * (a - b)", "1.0 - y * y * 0.05 / h",
                                  "(y + 1.0) / (y * y + 2.0) - a * a * a", "x - x + 0.0"])
def test_polynomials_keep_the_value(text):
    values = {"h": 0.3, "y": -1.7, "a": 2.5, "b": 0.25, "x": 4.0}
    rendered = ast.unparse(_poly(text, values).render())
    assert abs(eval(rendered, {}, values) - eval(text, {}, values)) <= 1e-14 * (1 + abs(eval(text, {}, values)))


# ---------------------------------------------------------------- random straight-line float loops

def _expression(rng, names, depth):
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(names + [repr(round(rng.uniform(-1, 1), 2))])
    a, b = _expression(rng, names, depth - 1), _expression(rng, names, depth - 1)
    return rng.choice([f"({a} + {b})", f"({a} - {b})", f"{a} * {b}", f"0.5 * {a} * {b}", f"{a} / (1.5 + {b} * {b})",
                       f"np.sin({a})", f"np.cos({b})", f"np.tanh({a} * {b})", f"np.exp(-{a} * {a})",
                       f"np.tanh({a}) ** 2", f"np.sin({b}) ** 3", f"np.sqrt(1.0 + {a} * {a})"])


def _random_loop(seed, directory):
    import importlib.util
    import random
    rng = random.Random(seed)
    body = [f"        t = {_expression(rng, ['x', 'y', 'z'], 3)}",
            f"        y = np.tanh({_expression(rng, ['x', 'y', 'z', 't'], 3)})",
            f"        z = 0.5 * z + 0.25 * np.sin({_expression(rng, ['x', 'y', 't'], 2)})"]
    loop = "    for _ in range(n):\n" if seed % 2 else "    i = 0\n    while i < n:\n        i += 1\n"
    text = "import numpy as np\n\n\ndef f(x, n):\n    y = x\n    z = 0.3\n" + loop + "\n".join(body) + \
        "\n    return y * z + y\n"
    path = directory / f"random_loop_{seed}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"random_loop_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def test_random_float_loops_get_the_gradient_trip_by_trip_to_rounding(tmp_path):
    for seed in range(16):
        fn = _random_loop(seed, tmp_path)
        assert ".pop_floats(trips)" in sg.source(fn, args=(0.4, 6)), seed
        for n in (0, 1, 6):
            np.testing.assert_allclose(sg.grad(fn)(0.4, n), sg.grad(fn, optimize=PER_TRIP)(0.4, n),
                                       rtol=1e-12, atol=1e-15, err_msg=str(seed))
        if seed < 4:
            assert_grad_matches_fd(fn, (0.4, 6))
