"""Exact rewrites of generated arithmetic (s2sgrad/peephole.py): what they write, and that the rewritten
expression gives the original's result bit for bit."""
import ast

import numpy as np
import pytest

import s2sgrad as sg
from s2sgrad.backend.peephole import simplify_arithmetic

REWRITES = [
    ("dx += -(d * y) * y", "dx -= d * y * y"),
    ("dx -= -d * y", "dx += d * y"),
    ("z = a + -b * c", "z = a - b * c"),
    ("z = -a + b", "z = b - a"),
    ("z = a - -b", "z = a + b"),
    ("z = a / -b + c", "z = c - a / b"),
    ("z = -(-a * b)", "z = a * b"),
    ("z = -a * -b", "z = a * b"),
    ("z = 2 * (a * 0.5 / b * c)", "z = a / b * c"),
    ("z = 2 * (0.5 / b)", "z = 1.0 / b"),
    ("z = 4 * (a * 0.5)", "z = 2.0 * a"),
    ("z = 2 * (a * b / c * y)", "z = 2 * a * b / c * y"),
    ("z = (a / c * y) * 0.5", "z = 0.5 * a / c * y"),
    ("z = [m[:4], m[4:]][1]", "z = m[4:]"),
    ("z = grad_or_zeros(m[:, 1:3], b)", "z = m[:, 1:3]"),
]

KEPT = [
    "z = -a * b",               # a lone negation costs the same inside or outside
    "z = -2 * a",
    "z = 3 * (a * 0.5)",        # 3 is not a power of two: 3 * 0.5 would round differently in general
    "z = 2 * (a * 0.5)",        # the factors cancel, and nothing else makes an integer a float
    "z = grad_or_zeros(m[0], b)",          # an element might be a missing gradient (None) of a list
    "z = [a, b][k]",
]


@pytest.mark.parametrize("before, after", REWRITES)
def test_rewrites(before, after):
    assert ast.unparse(simplify_arithmetic(ast.parse(before))) == after


@pytest.mark.parametrize("text", KEPT)
def test_left_alone(text):
    assert ast.unparse(simplify_arithmetic(ast.parse(text))) == ast.unparse(ast.parse(text))


@pytest.mark.parametrize("before, after", REWRITES + [(k, k) for k in KEPT])
def test_same_bits(before, after):
    rng = np.random.default_rng(0)
    values = {n: rng.standard_normal(1000) * 10.0 ** rng.integers(-30, 30, 1000) for n in "abcdy"}
    values["dx"] = rng.standard_normal(1000)
    results = []
    for text in (before, ast.unparse(simplify_arithmetic(ast.parse(before)))):
        scope = {k: v.copy() for k, v in values.items()}
        scope["m"], scope["k"] = scope["a"].reshape(50, 20), 1
        exec(text, {"grad_or_zeros": sg.runtime.grad_or_zeros}, scope)
        results.append(scope.get("z", scope["dx"]))
    np.testing.assert_array_equal(results[0], results[1])


def chain(x):
    a = np.sin(x) * np.cos(x)
    return np.sum(np.sqrt(1.0 + x * x) + a)


def test_generated_code_subtracts_rather_than_adds_a_negation():
    x = np.random.default_rng(1).standard_normal(5)
    text = sg.source(chain, args=(x,)).split("# backward sweep")[1]
    assert "dx -= " in text and "-(" not in text and "0.5" not in text      # 2 * (d * 0.5 / e * x): d / e * x
    assert sg.grad(chain)(x) == pytest.approx(np.cos(x) ** 2 - np.sin(x) ** 2 + x / np.sqrt(1 + x * x), rel=1e-12)


def several_terms(x):
    e = np.sqrt(1.0 + x * x)
    return np.sum(np.log1p(x * x) * e + x / e)


def test_the_seed_is_not_spread_to_an_array_where_every_use_is_a_factor_of_one():
    x = np.random.default_rng(2).standard_normal(6)
    text = sg.source(several_terms, args=(x,)).split("# backward sweep")[1]
    assert "broadcast_to" not in text and "-dsum * " in text
    e = np.sqrt(1.0 + x * x)
    expected = 2 * x / (1 + x * x) * e + np.log1p(x * x) * x / e + 1 / e - x * x / e ** 3
    np.testing.assert_allclose(sg.grad(several_terms)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(sg.grad(several_terms)(x), sg.grad(several_terms, optimize=False)(x), rtol=1e-12)
