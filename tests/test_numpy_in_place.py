"""NumPy functions that write into an argument (``np.add.at``, ``out=``, ``np.copyto``, ``np.put``, ...), and
other calls that used to give zero, NaN or wrong gradients: ``np.r_``/``np.c_``, ``np.einsum`` in the sublist
form, norms and standard deviations at zero.

Each in-place function is a functional write of a new version of its (local) first argument, as
``y[i] = v`` is: those with a rule are checked against finite differences in grad and jvp, the others
are refused at the user's line where they are on the differentiated path and run where they are not.
"""
import importlib.util
import itertools
import textwrap

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd
from test_forward import check_jvp

import s2sgrad as sg

_counter = itertools.count()


def module(tmp_path, source: str):
    """The functions of `source` (NumPy imported as np), from a file of their own."""
    path = tmp_path / f"m{next(_counter)}.py"
    path.write_text("import numpy as np\n\nG = np.arange(3.0)\n\n" + textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def line_of(mod, text: str) -> int:
    lines = open(mod.__file__).read().splitlines()
    return next(k + 1 for k, line in enumerate(lines) if text in line)


RNG = np.random.default_rng(0)
X = RNG.standard_normal(5)
V = RNG.standard_normal(4)

# --- writes with rules: grad and jvp against finite differences ---------------------------------------------

WITH_RULES = {
    "scatter-add (message passing)": ("""
        def f(x, v):
            y = np.zeros(5)
            np.add.at(y, [0, 2, 2, 4], v)         # node 2 receives two messages
            return np.sum(np.tanh(y) * x)
    """, (X, V)),
    "scatter-add into a parameter": ("""
        def f(x, v):
            np.add.at(x, [1, 1, 3, 0], v * v)
            return np.sum(x * x)
    """, (X, V)),
    "histogram loss": ("""
        def f(x, v):
            counts = np.zeros(3)
            bins = np.array([0, 1, 1, 2, 0])
            np.add.at(counts, bins, np.exp(x))
            return np.sum((counts - np.array([1.0, 2.0, 0.5])) ** 2)
    """, (X, V)),
    "scatter-add rows, pairs and a loop": ("""
        def f(x, v):
            y = np.outer(x[:3], x[:3])
            for k in range(2):
                np.add.at(y, (np.array([0, 2, 0]), np.array([1, 1, 1])), v[:3] * k)
                np.subtract.at(y, np.array([2, 2]), x[3:].reshape(2, 1))
            return np.sum(y * y)
    """, (X, V)),
    "maximum.at and minimum.at": ("""
        def f(x, v):
            y = x * 1.0
            np.maximum.at(y, [0, 0, 2, 4], v)
            np.minimum.at(y, [1, 3], v[:2] * 0.5)
            return np.sum(y * np.arange(5.0))
    """, (X, V)),
    "out= of a ufunc": ("""
        def f(x, v):
            y = np.zeros(5)
            np.multiply(x, 2.0, out=y)
            z = np.exp(y, out=y)
            return np.sum(y * x) + np.sum(z)
    """, (X, V)),
    "out= with where=": ("""
        def f(x, v):
            y = x * 3.0
            np.sin(x, out=y, where=x > 0)
            return np.sum(y * y)
    """, (X, V)),
    "out= of clip, matmul, dot and a reduction": ("""
        def f(x, v):
            y = np.zeros(5)
            np.clip(x, -0.5, 0.5, out=y)
            m = np.zeros((4, 4))
            np.matmul(np.outer(v, v), np.outer(v, v), out=m)
            s = np.zeros(4)
            np.dot(m, v, out=s)
            t = np.zeros(4)
            np.sum(m, axis=0, out=t)
            return np.sum(y) + np.sum(s * t)
    """, (X, V)),
    "out= as a tuple, in place of the first argument": ("""
        def f(x, v):
            y = x * 1.0
            np.add(y, v[0], out=(y,))
            np.square(y, out=y)
            return np.sum(y)
    """, (X, V)),
    "in branches and a while loop": ("""
        def f(x, v):
            y = x * 1.0
            k = 0
            while k < 3:
                if k % 2 == 0:
                    np.add.at(y, [k, k + 1], v[:2])
                else:
                    np.tanh(y, out=y)
                k = k + 1
            return np.sum(y * y)
    """, (X, V)),
    "np.copyto": ("""
        def f(x, v):
            y = np.zeros(5)
            np.copyto(y, x * x)
            np.copyto(y, v[0], where=x > 0)
            return np.sum(y * x)
    """, (X, V)),
}


@pytest.mark.parametrize("name", list(WITH_RULES))
def test_in_place_functions_with_rules(name, tmp_path):
    source, args = WITH_RULES[name]
    f = module(tmp_path, source).f
    assert_grad_matches_fd(f, list(args), wrt=(0, 1))
    check_jvp(f, list(args), wrt=(0, 1))


def test_scatter_add_hand_derived(tmp_path):
    f = module(tmp_path, """
        def f(v):
            y = np.zeros(3)
            np.add.at(y, [0, 0, 2], v)
            return np.sum(y * np.array([1.0, 10.0, 100.0]))
    """).f
    assert sg.grad(f)(np.ones(3)).tolist() == [1.0, 1.0, 100.0]


def test_maximum_at_shares_ties_as_maximum_does(tmp_path):
    f = module(tmp_path, """
        def f(a, b):
            y = a * 1.0
            np.maximum.at(y, [0, 0, 1], b)
            return np.sum(y)
    """).f
    ga, gb = sg.grad(f, wrt=(0, 1))(np.array([1.0, 5.0]), np.array([1.0, 1.0, 2.0]))
    assert ga.tolist() == [1 / 3, 1.0] and gb.tolist() == [1 / 3, 1 / 3, 0.0]
    g1, g2 = sg.grad(module(tmp_path, """
        def f(a, b):
            return np.sum(np.maximum(a, b))
    """).f, wrt=(0, 1))(np.array([1.0]), np.array([1.0]))
    assert g1.tolist() == g2.tolist() == [0.5]


def test_in_place_writes_leave_the_arguments_alone(tmp_path):
    f = module(tmp_path, """
        def f(x, v):
            np.add.at(x, [0, 0], v[:2])
            np.copyto(v, 0.0)
            return np.sum(x * x) + np.sum(v)
    """).f
    x, v = X.copy(), V.copy()
    sg.grad(f, wrt=(0, 1))(x, v)
    assert np.array_equal(x, X) and np.array_equal(v, V)


# --- writes without rules: refused on the differentiated path, run off it ------------------------------------

REFUSED = [
    ("np.put(y, [0, 2], x[:2])", "np.put"),
    ("np.place(y, y > 0, x[:1])", "np.place"),
    ("np.putmask(y, y > 0, x)", "np.putmask"),
    ("np.fill_diagonal(y, 0.0)", "np.fill_diagonal"),
    ("np.put_along_axis(y, np.array([0, 1]), x[:2], 0)", "np.put_along_axis"),
    ("np.random.shuffle(y)", "np.random.shuffle"),
    ("np.multiply.at(y, [0, 0], x[:2])", "np.multiply.at"),
    ("np.divide.at(y, [1], 2.0)", "np.divide.at"),
    ("np.ndarray.fill(y, 1.0)", "np.ndarray.fill"),
    ("np.ndarray.sort(y)", "np.ndarray.sort"),
]


@pytest.mark.parametrize("call, label", REFUSED, ids=[label for _, label in REFUSED])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_in_place_functions_without_rules_are_refused(call, label, mode, tmp_path):
    mod = module(tmp_path, f"""
        def f(x):
            y = x * 2.0
            {call}
            return np.sum(y * y)
    """)
    with pytest.raises(sg.NoDerivativeRule) as caught:
        sg.grad(mod.f)(X) if mode == "grad" else sg.jvp(mod.f)(X, np.ones(5))
    assert label in caught.value.message and "writes into its first argument" in caught.value.message
    assert caught.value.location.line == line_of(mod, call)


OFF_THE_PATH = {                    # the write, and what it does to y = c * 2.0, written as values
    "np.put": ("np.put(y, [0, 2], c[:2])", "y[[0, 2]] = c[:2]"),
    "np.place": ("np.place(y, y > 0, c[:1])", "y[y > 0] = c[0]"),
    "np.putmask": ("np.putmask(y, y > 0, c)", "y = np.where(y > 0, c, y)"),
    "np.fill_diagonal": ("np.fill_diagonal(y, 0.0)", "y = y * (1.0 - np.eye(5))"),
    "np.put_along_axis": ("np.put_along_axis(y, np.array([0, 1]), c[:2], 0)", "y[[0, 1]] = c[:2]"),
    "np.multiply.at": ("np.multiply.at(y, [0, 0], c[:2])", "y[0] = y[0] * c[0] * c[1]"),
}


@pytest.mark.parametrize("name", list(OFF_THE_PATH))
def test_in_place_functions_without_rules_run_off_the_differentiated_path(name, tmp_path):
    call, equivalent = OFF_THE_PATH[name]
    shape = "np.outer(c, c)" if name == "np.fill_diagonal" else "c"
    mod = module(tmp_path, f"""
        def f(x, c):
            y = {shape} * 2.0
            {call}
            return np.sum(x * y)

        def g(x, c):
            y = {shape} * 2.0
            {equivalent}
            return np.sum(x * y)
    """)
    c = np.array([0.5, -1.0, 2.0, 0.25, -0.75])
    x = np.outer(X, X) if name == "np.fill_diagonal" else X
    value, grad = sg.value_and_grad(mod.f)(x, c)
    assert np.isclose(value, mod.g(x, c)) and np.isclose(value, mod.f(x, c))
    np.testing.assert_allclose(grad, sg.grad(mod.g)(x, c))


WRITES_ELSEWHERE = [
    ("np.add.at(G, [0], x[0])", "writes into its first argument, which must be a local array"),
    ("np.add.at(y[1:], [0], x[0])", "writes into its first argument, which must be a local array"),
    ("np.exp(x, out=y[:2])", "out= must name a local array"),
    ("np.exp(x, out=G)", "out= must name a local array"),
    ("G.sort()", "changes a global array in place"),
    ("y.fill(1.0)", "changes its object in place"),
    ("y.sort()", "changes its object in place"),
    ("y.resize(3)", "changes its object in place"),
]


@pytest.mark.parametrize("call, message", WRITES_ELSEWHERE, ids=[c for c, _ in WRITES_ELSEWHERE])
def test_writes_into_what_is_not_a_local_array_are_refused(call, message, tmp_path):
    mod = module(tmp_path, f"""
        def f(x):
            y = x * 2.0
            {call}
            return np.sum(y * y)
    """)
    with pytest.raises(sg.UnsupportedSyntax) as caught:
        sg.grad(mod.f)(X)
    assert message in caught.value.message
    assert caught.value.location.line == line_of(mod, call)


def test_a_user_functions_out_parameter_is_an_argument(tmp_path):
    f = module(tmp_path, """
        def scaled(x, out=None):
            return x * 3.0 if out is None else x * out

        def f(x):
            y = x * 2.0
            z = scaled(x, out=y)
            return np.sum(z * y)
    """).f
    assert_grad_matches_fd(f, [X])


def test_a_name_for_the_array_written_is_stale_after_the_write(tmp_path):
    mod = module(tmp_path, """
        def f(x):
            y = x * 2.0
            z = y
            np.add.at(y, [0], 1.0)
            return np.sum(z * x)
    """)
    with pytest.raises(sg.UnsupportedSyntax) as caught:
        sg.grad(mod.f)(X)
    assert caught.value.location.line == line_of(mod, "return np.sum(z * x)")


# --- writes into integer arrays truncate: no gradient flows through them -----------------------------------------

INTEGER_WRITES = {
    "setitem into a local int array": """
        def f(x, n):
            y = np.zeros(3, dtype=int)
            y[0] = x[0] * 3.0
            return np.sum(y * x) + x[1]
    """,
    "setitem in a loop": """
        def f(x, n):
            y = np.zeros(3, dtype=np.int32)
            for k in range(2):
                y[k] = x[k] * 3.0
            return np.sum(y * x)
    """,
    "setitem into an int argument": """
        def f(x, n):
            n[0] = x[0] * 3.0
            return np.sum(n * x)
    """,
    "copyto and out= into an int array": """
        def f(x, n):
            y = np.zeros(3, dtype=int)
            np.copyto(y, x * 3.0, casting="unsafe")
            z = np.zeros(3, dtype=bool)
            np.greater(x, 1.0, out=z)
            return np.sum(y * x) + np.sum(z * x)
    """,
    "add.at into an int array": """
        def f(x, n):
            y = np.zeros(3, dtype=int)
            np.add.at(y, [0, 0], np.array([2, 3]))
            return np.sum(y * x)
    """,
}


@pytest.mark.parametrize("name", list(INTEGER_WRITES))
def test_writes_into_integer_arrays_pass_no_gradient(name, tmp_path):
    f = module(tmp_path, INTEGER_WRITES[name]).f
    x = np.array([0.7, 1.2, 2.05])
    n = np.array([4, 5, 6])
    value, g = sg.value_and_grad(f)(x, n.copy())
    assert np.isclose(value, f(x, n.copy()))
    assert_grad_matches_fd(f, [x, n.copy()])
    if "argument" not in name:          # (forward mode is not specialized on the arguments' dtypes)
        check_jvp(f, [x, n.copy()])


# --- np.r_, np.c_, np.einsum's sublist form ---------------------------------------------------------------------

ASSEMBLED = {
    "np.r_": "np.sum(np.r_[x, 2.0 * v, x[0]] * np.arange(10.0))",
    "np.c_ of vectors": "np.sum(np.c_[x[:4], v, v * v] * np.arange(12.0).reshape(4, 3))",
    "np.c_ of matrices": "np.sum(np.c_[np.outer(x, v), np.outer(x, x)] ** 2)",
    "np.r_ of constants": "np.sum(np.r_[0:3, 5.0] * x[:4])",
    "np.sort then a weighted sum": "np.sum(np.sort(x * v[0]) * np.arange(5.0)) + np.sum(np.sort(np.outer(x, v), 0)[-1])",
    "einsum sublists": "np.sum(np.einsum(np.outer(x, v), [0, 1], np.outer(v, x), [1, 2], [0, 2]) ** 2)",
    "einsum sublists, implicit output": "np.einsum(x, [0], x * v[0], [0])",
    "einsum sublists with Ellipsis": "np.sum(np.einsum(np.outer(x, v), [Ellipsis, 1], v, [1], [Ellipsis]) ** 2)",
}


@pytest.mark.parametrize("name", list(ASSEMBLED))
def test_index_concatenations_and_einsum_sublists(name, tmp_path):
    f = module(tmp_path, f"""
        def f(x, v):
            return {ASSEMBLED[name]}
    """).f
    assert_grad_matches_fd(f, [X, V], wrt=(0, 1))
    check_jvp(f, [X, V], wrt=(0, 1))


def test_r_with_slices_of_values_is_refused(tmp_path):
    mod = module(tmp_path, """
        def f(x):
            return np.sum(np.r_[x, 0:3])
    """)
    with pytest.raises(sg.UnsupportedSyntax, match="slices or directives"):
        sg.grad(mod.f)(X)


def test_einsum_sublists_that_are_not_literal_are_refused(tmp_path):
    mod = module(tmp_path, """
        def f(x):
            axes = [0]
            return np.einsum(x, axes, x, axes)
    """)
    with pytest.raises(sg.UnsupportedSyntax, match="sublist form"):
        sg.grad(mod.f)(X)


# --- at zero: the subgradient of least norm -----------------------------------------------------------------------

def norm(x):
    return np.linalg.norm(x)


def norm_squared(x):
    return np.linalg.norm(x) ** 2


def norms_of_rows(x):
    return np.sum(np.linalg.norm(x, axis=1))


def norm_3(x):
    return np.linalg.norm(x, 3)


def std_of_a_constant(x):
    return np.std(x * 0.0 + x[0])


def std_squared(x):
    return np.std(x) ** 2


def stds_of_rows(x):
    return np.sum(np.std(x, axis=1))


def hypot(x):
    return np.hypot(x[0], x[1])


AT_ZERO = [
    (norm, np.zeros(3), np.zeros(3)), (norm_squared, np.zeros(3), np.zeros(3)),
    (norms_of_rows, np.array([[0.0, 0.0], [3.0, 4.0]]), np.array([[0.0, 0.0], [0.6, 0.8]])),
    (norm_3, np.zeros(3), np.zeros(3)), (std_of_a_constant, np.array([1.0, 2.0, 3.0]), np.zeros(3)),
    (std_squared, np.ones(3), np.zeros(3)),
    (stds_of_rows, np.array([[1.0, 1.0], [0.0, 2.0]]), np.array([[0.0, 0.0], [-0.5, 0.5]])),
    (hypot, np.zeros(2), np.zeros(2)),
]


@pytest.mark.parametrize("f, x, expected", AT_ZERO, ids=[f.__name__ for f, _, _ in AT_ZERO])
def test_norms_at_zero_take_the_zero_subgradient(f, x, expected):
    g = sg.grad(f)(x)
    np.testing.assert_allclose(g, expected, atol=1e-12)
    _, t = sg.jvp(f)(x, np.ones_like(x))
    assert np.isfinite(t)


def sqrt(x):
    return np.sqrt(x)


def cumprod_sum(x):
    return np.sum(np.cumprod(x))


def test_sqrt_at_zero_is_still_infinite():
    """Where the limit exists (+inf), it is kept: only the norm-like rules choose a subgradient."""
    with np.errstate(divide="ignore"):
        assert sg.grad(sqrt)(0.0) == np.inf


def test_second_derivative_of_cumprod_with_a_zero_is_refused():
    with pytest.raises(sg.NoDerivativeRule, match="cumprod"):
        sg.hvp(cumprod_sum)(np.array([1.0, 0.0, 2.0]), np.ones(3))
    np.testing.assert_allclose(sg.hessian(cumprod_sum)(np.array([1.0, 2.0, 3.0])),
                               [[0, 1 + 3, 2], [4, 0, 1], [2, 1, 0]])


def linspace_of(x, y, num):
    return np.linspace(x, y, num) * 2.0


def spaces_of(x, y, num):
    return np.sum(np.logspace(x, y, num)) + np.sum(np.geomspace(x, y + 1.0, num))


@pytest.mark.parametrize("num", [0, 1, 2, 5])
def test_ranges_of_any_length_in_forward_and_reverse_mode(num):
    """``np.linspace`` with 0 or 1 points too (their tangents broadcast to one step's shape, which exists
    where there is no step)."""
    t = np.linspace(0.0, 1.0, num)
    _, tangent = sg.jvp(linspace_of, wrt=(0, 1))(1.2, 3.4, num, (1.0, -1.0))
    np.testing.assert_allclose(tangent, 2.0 * ((1.0 - t) - t), atol=1e-14)
    _, (gx, gy) = sg.vjp(linspace_of, wrt=(0, 1))(1.2, 3.4, num, np.ones(num))
    assert np.isclose(gx, 2.0 * np.sum(1.0 - t)) and np.isclose(gy, 2.0 * np.sum(t))
    _, tangent = sg.jvp(spaces_of, wrt=(0, 1))(0.5, 1.5, num, (1.0, 1.0))
    eps = 1e-6
    numeric = (spaces_of(0.5 + eps, 1.5 + eps, num) - spaces_of(0.5 - eps, 1.5 - eps, num)) / (2 * eps)
    assert np.isclose(tangent, numeric, rtol=1e-6, atol=1e-8)
