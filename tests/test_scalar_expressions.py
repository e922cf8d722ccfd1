"""Arithmetic on numbers written as one expression (`backend/scalar_expressions.py`, `backend/numbers.py`).

The rewrites must give the same gradients bit for bit: random programs are differentiated with and without
them and compared with np.array_equal; the mechanism is asserted on the generated code.
"""
import ast
import importlib.util
import random
import textwrap

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd
from program_grammar import ALL_FEATURES, EXTRA_FEATURES, GLOBAL_FEATURES, RandomChooser, generate

import s2sgrad as sg
from s2sgrad.backend.numbers import number_names
from s2sgrad.backend.scalar_expressions import scalar_expressions
from s2sgrad.optimizations import ALL

WITH = ALL - {"coefficient_arrays"}          # (which forms coefficients for all trips: equal to rounding)
WITHOUT = WITH - {"scalar_expressions"}


def rewritten(text: str, inputs=(), temporary=()) -> str:
    fn = ast.parse(textwrap.dedent(text)).body[0]
    return ast.unparse(scalar_expressions(fn, set(inputs), temporary=set(temporary)))


def same(text: str) -> str:
    return ast.unparse(ast.parse(textwrap.dedent(text)).body[0])


# ---------------------------------------------------------------- which names hold numbers

@pytest.mark.parametrize("binding, number", [
    ("t = a * 2.0 + b", True), ("t = math.cos(a) - np.sin(b)", True), ("t = -a ** 2", True),
    ("t = float(a)", True), ("t = np.zeros(())", False), ("t = np.array(a)", False), ("t = x * a", False),
    ("t = a @ b", False), ("t = f(a)", False), ("t = x[0]", False), ("t, u = pair", False),
    ("t = np.add(a, b, out=o)", False), ("t = math.prod(x)", False)])
def test_a_name_is_a_number_where_every_value_bound_to_it_is(binding, number):
    fn = ast.parse(f"def f(a, b, x):\n    {binding}\n    t += a\n    return t").body[0]
    assert ("t" in number_names(fn, {"a", "b"})) is number


def test_a_stack_pops_numbers_where_only_numbers_are_pushed_and_it_is_not_passed_on():
    text = "def f(a, x):\n    s = Stack()\n    s.push(a)\n    s.push({})\n{}    t = s.pop()\n    return t"
    assert "t" in number_names(ast.parse(text.format("a * 2", "")).body[0], {"a"})
    assert "t" not in number_names(ast.parse(text.format("x", "")).body[0], {"a"})
    assert "t" not in number_names(ast.parse(text.format("a", "    g(s)\n")).body[0], {"a"})


def test_a_name_bound_by_a_loop_or_a_parameter_not_known_is_not_a_number():
    fn = ast.parse("def f(a, b, xs):\n    for i in xs:\n        a = a + i\n    return a + b").body[0]
    assert number_names(fn, {"a", "b"}) == {"b"}
    assert number_names(fn, {"a"}) == set()


def test_the_target_of_a_loop_over_a_range_and_a_length_are_ints():
    text = "def f(a, xs):\n    for i in range(3):\n        a = a + i\n    n = len(xs)\n    return a + n"
    assert number_names(ast.parse(text).body[0], {"a"}) == {"a", "i", "n"}
    shadowed = "def f(a, range):\n    for i in range(3):\n        a = a + i\n    return a"
    assert number_names(ast.parse(shadowed).body[0], {"a"}) == set()
    assert number_names(ast.parse("def f(xs, len):\n    n = len(xs)\n    return n").body[0], set()) == set()


# ---------------------------------------------------------------- the rewrites

def test_consecutive_contributions_to_a_number_merge_in_their_order():
    assert rewritten("""
        def f(a, b, c, d):
            d = d * 0.5
            e = a * c
            d += a * b
            d -= b
            return d, e""", {"a", "b", "c", "d"}) == same("""
        def f(a, b, c, d):
            e = a * c
            d = d * 0.5 + a * b - b
            return (d, e)""")


def test_a_temporary_read_once_is_written_where_it_is_read():
    assert rewritten("""
        def f(y, g):
            t = 0.1 * y
            u = g * t
            return u""", {"y", "g"}, {"t"}) == same("""
        def f(y, g):
            u = g * (0.1 * y)
            return u""")


@pytest.mark.parametrize("text", [
    # read twice
    "def f(a):\n    t = a * 2\n    u = t + t\n    return u",
    # still read after
    "def f(a):\n    t = a * 2\n    u = t + 1\n    return u * t",
    # a name it reads is bound in between
    "def f(a):\n    t = a * 2\n    a = 3.0\n    u = t + a\n    return u",
    # read by the next trip
    "def f(a):\n    t = a\n    for i in range(3):\n        u = t * 2\n        t = u + a\n    return t",
    # an array
    "def f(a, x):\n    t = x * 2\n    u = t + a\n    return u",
    # a stack popped: never moved
    "def f(a):\n    s = Stack()\n    s.push(a)\n    t = s.pop()\n    a = 2.0\n    u = t * a\n    return u",
    # the read is under a condition
    "def f(a, b):\n    t = a * 2\n    u = t if b > 0 else 1.0\n    return u",
])
def test_what_cannot_be_shown_the_same_is_left_alone(text):
    assert rewritten(text, {"a", "b"}, {"t"}) == same(text)


def test_a_copy_read_by_an_addition_into_an_element_reads_the_number():
    assert rewritten("def f(x, a, i):\n    t = a\n    x[i] += t\n    return x", {"a"}, {"t"}) \
        == same("def f(x, a, i):\n    x[i] += a\n    return x")


def test_arrays_keep_their_in_place_additions():
    text = "def f(x, a):\n    dx = x * 2\n    dx += a * x\n    dx += a\n    return dx"
    assert rewritten(text, {"a"}, {"dx"}) == same(text)


def test_a_copy_of_a_number_reads_the_number_until_it_is_bound_again():
    assert rewritten("""
        def f(x, s, dy):
            dprod = dy
            dx = dprod * s
            dy = dy * 0.5 + dprod * x
            return dx, dy""", {"x", "s", "dy"}, {"dprod"}) == same("""
        def f(x, s, dy):
            dx = dy * s
            dy = dy * 0.5 + dy * x
            return (dx, dy)""")


def scalar_loop(x, n):
    y = x
    i = 0
    while i < n:
        y = np.sin(y) * x + 0.5 * y + 0.25
        i += 1
    return y


def two_lines(x):
    y = x * 2.0
    y = y * y + 1.0
    return y


def test_a_scalar_loops_backward_trip_is_as_short_as_a_hand_written_one():
    source = sg.source(scalar_loop, args=(0.3, 10), optimize=WITH)
    loop = source.split("for _ in range(trips):")[1].split("\n    dx += dy")[0]
    assert [line.split("  #")[0].strip() for line in loop.strip().splitlines()] == [
        "sin = sin_stack.pop()", "y = y_stack.pop()", "dx += dy * sin", "dy = dy * 0.5 + dy * x * math.cos(y)"]
    assert_grad_matches_fd(scalar_loop, (0.3, 10))
    assert sg.grad(scalar_loop, optimize=WITH)(0.3, 50) == sg.grad(scalar_loop, optimize=WITHOUT)(0.3, 50)


def test_the_users_lines_stay_lines_and_arrays_are_not_numbers():
    forward = sg.source(two_lines, args=(0.3,)).split("# backward sweep")[0]
    assert "y = x * 2.0  #" in forward and "y * y + 1.0  #" in forward
    zero_d = sg.source(scalar_loop, args=(np.array(0.3), 10))     # a 0-d array: added to in place
    assert "dprod = dy" in zero_d and "dx += dprod * sin" in zero_d
    assert sg.grad(scalar_loop)(np.array(0.3), 10) == sg.grad(scalar_loop, optimize=WITH)(0.3, 10)


# ---------------------------------------------------------------- random programs, bit for bit

def _program(seed: int, directory):
    rng = random.Random(seed)
    features = ALL_FEATURES | (GLOBAL_FEATURES | EXTRA_FEATURES if seed % 2 else frozenset())
    program = generate(RandomChooser(rng), features)
    args = [round(rng.uniform(-1.5, 1.5), 2) for p in program.params if p != program.array]
    if program.array is not None:
        args.append(np.array([round(rng.uniform(-1.5, 1.5), 2) for _ in range(3)]))
    path = directory / f"scalar_expressions_{seed}.py"
    path.write_text(program.module_source())
    spec = importlib.util.spec_from_file_location(f"scalar_expressions_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, program.name), args


def _identical(a, b) -> bool:
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_identical, a, b))
    return type(a) is type(b) and np.shape(a) == np.shape(b) and np.array_equal(a, b, equal_nan=True) \
        and np.asarray(a).dtype == np.asarray(b).dtype


def test_random_programs_get_the_same_gradients_bit_for_bit(tmp_path):
    rewritten_programs = 0
    for seed in range(14):
        fn, args = _program(seed, tmp_path)
        wrt = list(range(len(args)))
        try:
            expected = sg.value_and_grad(fn, wrt=wrt, optimize=WITHOUT)(*args)
        except sg.S2SGradError:
            continue
        assert _identical(sg.value_and_grad(fn, wrt=wrt, optimize=WITH)(*args), expected), seed
        rewritten_programs += sg.source(fn, wrt=wrt, args=args, optimize=WITH) != sg.source(
            fn, wrt=wrt, args=args, optimize=WITHOUT)
    assert rewritten_programs >= 3
