"""recompute_cheap: a loop trip's backward code computes cheap arithmetic of what it has anyway again, instead
of popping it. The pushes are asserted on the generated code; every gradient against finite differences."""
import importlib.util
import random
import re

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd, finite_difference

import s2sgrad as sg
from s2sgrad.optimizations import ALL

WITHOUT = ALL - {"recompute_cheap"}


def scalar(y0, n):
    y = y0
    i = 0
    while i < n:
        y = y + 0.002 * (np.sin(y) * 1.01 + 0.1 * y * y - 0.05 * y * y * y)
        i += 1
    return y


def ode(x0, A, T):
    x = x0
    t = 0.0
    while t < T:
        dt = 0.01 / (1.0 + x @ x)
        x = x + dt * (np.tanh(A @ x) - 0.1 * x)
        t = t + dt
    return np.sum(x)


def pushed(source: str) -> list[str]:
    return re.findall(r"\w+\.push\((.*)\)", source)


def test_the_scalar_loop_pushes_y_alone():
    source = sg.source(scalar, args=(0.5, 1000))
    assert pushed(source) == ["y"]
    per_trip = sg.source(scalar, args=(0.5, 1000), optimize=ALL - {"coefficient_arrays"})
    assert "ddiff * (0.1 * y)" in per_trip.split("# backward sweep")[1]          # computed again where it is read
    assert sorted(pushed(sg.source(scalar, args=(0.5, 1000), optimize=WITHOUT))) == ["prod", "prod_3", "prod_4", "y"]


def test_the_scalar_loop_gradient():
    assert_grad_matches_fd(scalar, (0.5, 40))
    assert sg.grad(scalar)(0.5, 40) == pytest.approx(sg.grad(scalar, optimize=WITHOUT)(0.5, 40), rel=1e-15)


def ode_args():
    rng = np.random.default_rng(0)
    return [rng.uniform(-0.5, 0.5, 8), rng.uniform(-0.5, 0.5, (8, 8)), 0.0915]   # 10 trips, t ends 4e-4 past T


def test_the_ode_loop_pushes_x_tanh_and_one_scalar():
    source = sg.source(ode, args=ode_args())
    names = sorted(pushed(source))
    assert len(names) == 3 and names[1:] == ["tanh", "x"] and names[0] in ("dt", "sum_1")
    backward = source.split("# backward sweep")[1]
    assert "0.01 / sum_1" in backward or "0.01 / (1.0 +" in backward           # dt, computed again
    assert "diff" not in " ".join(pushed(source))
    assert "diff_rows = tanh_rows - prod_rows" in backward and "prod_rows = 0.1 * x_1_rows" in backward  # vectorize
    assert "for x, diff, tanh_term in zip(x_1_rows, diff_rows, tanh_terms):" in backward
    assert len(pushed(sg.source(ode, args=ode_args(), optimize=WITHOUT))) == 5
    per_trip = ALL - {"vectorize", "rows_in_place"}        # an array is computed again only as rows
    assert sorted(pushed(sg.source(ode, args=ode_args(), optimize=per_trip))) == ["diff", names[0], "tanh", "x"]


def test_the_ode_loop_gradient():
    args = ode_args()
    assert_grad_matches_fd(ode, args, (0, 1))
    for got, expected in zip(sg.grad(ode, (0, 1))(*args), sg.grad(ode, (0, 1), optimize=WITHOUT)(*args)):
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)


# ---------------------------------------------------------------- loop bodies from a tiny grammar

class Bodies:
    """Loop bodies ``a = e1; y = y + 0.05 * e2`` of + - * / and ** 2 over the loop variable y, a captured
    array c and constants; one np.sin, np.tanh or np.exp somewhere in them."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.transcendental = self.rng.choice(["np.sin", "np.tanh", "np.exp"])
        self.placed = False

    def leaf(self, names) -> str:
        return self.rng.choice([*names, *names, "0.5", "1.5", "2.0"])

    def expr(self, names, depth: int) -> str:
        if depth == 0 or self.rng.random() < 0.2:
            return self.leaf(names)
        a, b = self.expr(names, depth - 1), self.expr(names, depth - 1)
        form = self.rng.choice(["+", "-", "*", "*", "/", "**", "neg", "f"])
        if form == "f" and not self.placed:
            self.placed = True
            return f"{self.transcendental}(0.5 * {a})"
        if form == "/":
            return f"({a}) / (2.0 + {b} * {b})"
        if form == "**":
            return f"({a}) ** 2"
        if form == "neg":
            return f"-({a})"
        return f"({a} {form if form != 'f' else '+'} {b})"

    def source(self, kind: str) -> str:
        first = self.expr(["y", "c"], 3)
        second = self.expr(["y", "c", "a"], 3)
        if not self.placed:
            second = f"{self.transcendental}(0.5 * {second})"
        return (f"import numpy as np\n\n\ndef body(x, c, n):\n    y = x\n    i = 0\n    while i < n:\n"
                f"        a = {first}\n        y = y + 0.05 * np.tanh({second})\n        i += 1\n"
                f"    return {'np.sum(y)' if kind == 'vector' else 'y'}\n")


SEEDS = range(24)


@pytest.fixture(scope="module")
def bodies(tmp_path_factory) -> dict:
    """seed -> (the function, its arguments)."""
    directory, out = tmp_path_factory.mktemp("bodies"), {}
    for seed in SEEDS:
        kind = "vector" if seed % 2 else "scalar"
        path = directory / f"body_{seed}.py"
        path.write_text(Bodies(seed).source(kind))
        spec = importlib.util.spec_from_file_location(f"body_{seed}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        rng = np.random.default_rng(seed)
        x, c = (rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)) if kind == "vector" else (0.3, 0.7)
        out[seed] = module.body, (x, c, 4)
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_grammar_bodies_give_the_same_gradient_with_and_without(seed, bodies):
    fn, args = bodies[seed]
    on = sg.grad(fn, (0, 1))(*args)
    off = sg.grad(fn, (0, 1), optimize=WITHOUT)(*args)
    for g, h, k in zip(on, off, (0, 1)):
        np.testing.assert_allclose(g, h, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(g, finite_difference(fn, list(args), k), rtol=1e-5, atol=1e-8)


def test_grammar_bodies_push_less(bodies):
    """No body pushes more, most push less (the sweep above checks their gradients)."""
    counts = [(len(pushed(sg.source(fn, (0, 1), args=args))),
               len(pushed(sg.source(fn, (0, 1), args=args, optimize=WITHOUT)))) for fn, args in bodies.values()]
    assert all(on <= off for on, off in counts)
    assert sum(on < off for on, off in counts) > len(counts) // 2, counts


# ---------------------------------------------------------------- with the other parts of reverse mode

def branchy(x, n):
    y = x
    i = 0
    while i < n:
        s = 0.3 * y
        if i % 2 == 0:
            y = y + s * np.sin(y)
        else:
            q = s * s
            y = y - 0.1 * q * np.cos(y)
        i += 1
    return y


def nested(x, c, n):
    y = x
    i = 0
    while i < n:
        u = 0.5 * y
        j = 0
        while j < 2:
            y = y + 0.1 * u * np.sin(y * c)
            j += 1
        i += 1
    return y


def test_branches_inside_loops():
    source = sg.source(branchy, args=(0.3, 5))
    assert sorted(pushed(source)) == ["cos", "sin", "test", "y"]          # not s = 0.3 * y, nor q = s * s
    assert_grad_matches_fd(branchy, (0.3, 5))


def test_nested_loops():
    args = (0.3, 0.7, 3)
    names = pushed(sg.source(nested, (0, 1), args=args))
    assert "y" in names and "prod_1" not in names                           # prod_1 = y * c, c captured
    assert_grad_matches_fd(nested, args, (0, 1))


def test_checkpointed_loops():
    args = (0.3, 0.7, 6)
    got = sg.grad(nested, (0, 1), checkpoint=sg.Periodic(every=2))(*args)
    for g, h in zip(got, sg.grad(nested, (0, 1))(*args)):
        np.testing.assert_allclose(g, h, rtol=1e-13)
    np.testing.assert_allclose(sg.grad(scalar, checkpoint=sg.Periodic(every=3))(0.5, 10),
                               sg.grad(scalar)(0.5, 10), rtol=1e-14)
    source = sg.source(ode, (0, 1), args=ode_args(), checkpoint=sg.Periodic(every=3))
    assert "diff_stack.push(diff)" in source and "dt_stack" not in source    # no rows: the array is pushed
    for g, h in zip(sg.grad(ode, (0, 1), checkpoint=sg.Periodic(every=3))(*ode_args()),
                    sg.grad(ode, (0, 1))(*ode_args())):
        np.testing.assert_allclose(g, h, rtol=1e-13)


def test_forward_mode_over_the_gradient():
    hv = sg.hvp(branchy)(0.3, 5, 1.0)
    expected = (sg.grad(branchy)(0.3 + 1e-5, 5) - sg.grad(branchy)(0.3 - 1e-5, 5)) / 2e-5
    assert hv == pytest.approx(expected, rel=1e-6)
    second = sg.jvp(sg.grad(scalar))(0.5, 6, 1.0)
    expected = (sg.grad(scalar)(0.5 + 1e-5, 6) - sg.grad(scalar)(0.5 - 1e-5, 6)) / 2e-5
    assert second[1] == pytest.approx(expected, rel=1e-6)


def negative_bases(x):
    return (-0.5) ** 2 * x + (-2) ** 3 * x * x + (-1.5) ** 2 * np.sin(x)


def test_a_negative_number_raised_to_a_power_keeps_its_sign():
    """(-0.5) ** 2 is printed with its parentheses (not -0.5 ** 2, which Python reads as -(0.5 ** 2))."""
    value, grad = sg.value_and_grad(negative_bases)(0.3)
    assert value == pytest.approx(negative_bases(0.3), rel=1e-15)
    assert grad == pytest.approx(0.25 - 16 * 0.3 + 2.25 * np.cos(0.3), rel=1e-14)
    assert sg.jvp(negative_bases)(0.3, 1.0)[1] == pytest.approx(grad, rel=1e-14)
    assert "(-0.5) ** 2" in sg.source(negative_bases, args=(0.3,), mode="value_and_grad")
