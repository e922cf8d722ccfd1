"""Generated gradients are specialized on shape patterns (ranks, axes of size 1, which sizes are equal), not on
sizes: a call with new sizes of the same pattern reuses the code, one with another pattern regenerates, and
every gradient matches finite differences."""
import operator
import types

import numpy as np
import pytest

import s2sgrad as sg
from s2sgrad.analysis.shapes import Shapes
from s2sgrad.api import generation
from s2sgrad.ir.nodes import Const, Op, Var
from s2sgrad.ir.sizes import Size, shape_patterns, size_sum
from tests.gradcheck import assert_grad_matches_fd, finite_difference


def bias_vector(x, b):
    return np.sum(np.sin(x + b) * x)


def matmul_chain(X, W, v):
    return np.sum(np.tanh(X @ W) @ v)


def reductions(x):
    centered = x - np.mean(x, axis=0, keepdims=True)
    return np.sum(np.max(centered, axis=1) ** 2) + np.sum(np.sum(x * x, axis=0))


def indexing(x):
    return np.sum(x[0] * x[-1]) + np.sum(x[:, 0] ** 2) + np.sum(x[::-1] * x) + np.sum(x[:2] ** 3)


def loop_over_rows(W, U, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h * h)


def zeros_of_length(x):
    z = np.zeros(x.shape[0])
    for k in range(x.shape[1]):
        z = z + np.sin(x[:, k])
    return np.sum(z * z)


def reshaped(x, w):
    return np.sum(np.reshape(x, (x.shape[0], -1)) @ w)


def joined(x, y):
    return np.sum(np.concatenate([x, y * 2.0], axis=0) ** 2) + np.sum(np.stack([x, y]) ** 3)


def mlp(W1, b1, W2, X):
    H = np.tanh(X @ W1 + b1)
    return np.mean((H @ W2) ** 2)


# each case: the function, the gradient's wrt, and its arguments for sizes (n, d)
CASES = {
    "bias (d,)": (bias_vector, (0, 1), lambda r, n, d: (r.normal(size=(n, d)), r.normal(size=d))),
    "bias (1,)": (bias_vector, (0, 1), lambda r, n, d: (r.normal(size=(n, d)), r.normal(size=1))),
    "bias ()": (bias_vector, (0, 1), lambda r, n, d: (r.normal(size=(n, d)), np.array(0.3))),
    "matmul": (matmul_chain, (0, 1, 2), lambda r, n, d: (r.normal(size=(n, d)), r.normal(size=(d, d)),
                                                         r.normal(size=d))),
    "reductions": (reductions, 0, lambda r, n, d: (r.normal(size=(n, d)),)),
    "indexing": (indexing, 0, lambda r, n, d: (r.normal(size=(n, d)),)),
    "loop": (loop_over_rows, (0, 1, 2, 4), lambda r, n, d: (0.5 * r.normal(size=(d, d)), r.normal(size=(d, 2)),
                                                            r.normal(size=d), r.normal(size=(n, 2)),
                                                            r.normal(size=d))),
    "zeros": (zeros_of_length, 0, lambda r, n, d: (r.normal(size=(n, d)),)),
    "reshape": (reshaped, (0, 1), lambda r, n, d: (r.normal(size=(n, d)), r.normal(size=d))),
    "joined": (joined, (0, 1), lambda r, n, d: (r.normal(size=(n, d)), r.normal(size=(n, d)))),
    "mlp": (mlp, (0, 1, 2), lambda r, n, d: (r.normal(size=(d, 3)), r.normal(size=3), r.normal(size=(3, 2)),
                                             r.normal(size=(n, d)))),
}

# (n, d) in turn, and whether that call generates code: new sizes of a seen pattern do not; a 1 appearing
# and two sizes becoming equal or unequal do
# (the cases' constant sizes, 2 and 3, are not among them)
SIZES = [((4, 5), True), ((6, 7), False), ((8, 4), False), ((1, 5), True), ((5, 5), True), ((6, 6), False),
         ((7, 4), False), ((6, 1), True)]


def generations() -> int:
    return generation._CACHE_COUNT[0]


@pytest.mark.parametrize("case", list(CASES))
def test_new_sizes_reuse_the_code_and_new_patterns_regenerate(case):
    f, wrt, make = CASES[case]
    f = types.FunctionType(f.__code__, f.__globals__, f.__name__)     # code cached for this case alone
    r = np.random.default_rng(0)
    for (n, d), generates in SIZES:
        args = make(r, n, d)
        before = generations()
        assert_grad_matches_fd(f, args, wrt)
        made = generations() - before
        assert (made > 0) == generates, f"{case} at n={n}, d={d}: {made} generations"


@pytest.mark.parametrize("mode", ["jvp", "hvp"])
@pytest.mark.parametrize("case", ["bias (d,)", "matmul", "reductions", "loop", "mlp"])
def test_forward_mode_reuses_its_code_at_new_sizes(case, mode):
    f, wrt, make = CASES[case]
    f = types.FunctionType(f.__code__, f.__globals__, f.__name__)     # code cached for this case alone
    wrt = wrt if isinstance(wrt, int) else wrt[0]
    derivative = (sg.jvp if mode == "jvp" else sg.hvp)(f, wrt)
    gradient = sg.grad(f, wrt)
    r = np.random.default_rng(4)
    eps = 1e-6
    for (n, d), generates in SIZES:
        args = list(make(r, n, d))
        v = r.normal(size=np.shape(args[wrt]))
        before = generations()
        out = derivative(*args, v)
        made = generations() - before
        assert (made > 0) == generates, f"{case} {mode} at n={n}, d={d}: {made} generations"
        moved = [list(args), list(args)]
        moved[0][wrt], moved[1][wrt] = args[wrt] + eps * v, args[wrt] - eps * v
        if mode == "jvp":
            np.testing.assert_allclose(out[1], (f(*moved[0]) - f(*moved[1])) / (2 * eps), rtol=1e-5, atol=1e-7)
        else:
            expected = (gradient(*moved[0]) - gradient(*moved[1])) / (2 * eps)
            np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_one_generated_function_serves_every_size_of_a_pattern():
    df = sg.grad(loop_over_rows, (0, 1, 2))
    r = np.random.default_rng(1)
    before = generations()
    for n in (3, 8, 20):
        df(*CASES["loop"][2](r, n, 4))
    assert generations() - before <= 1


def test_shapes_print_as_the_sizes_read_from_the_arguments():
    x, b = np.ones((5, 3)), np.ones(3)
    source = sg.source(bias_vector, wrt=(0, 1), args=(x, b))
    assert "d_x = x.shape[1]" in source and "sum_to(dsum_1, (d_x,))" in source
    assert "n_x" not in source                                 # only what is read is bound


def test_forward_mode_and_checkpointed_loops_at_new_sizes():
    r = np.random.default_rng(2)
    for n in (3, 6):
        x = r.normal(size=(n, 2))
        v = r.normal(size=(n, 2))
        _, tangent = sg.jvp(reductions)(x, v)
        eps = 1e-6
        assert np.isclose(tangent, (reductions(x + eps * v) - reductions(x - eps * v)) / (2 * eps), rtol=1e-5)
        hv = sg.hvp(reductions)(x, v)
        assert np.all(np.isfinite(hv))

    def checkpointed(W, xs, h0):
        h = h0
        for t in sg.checkpointed(range(xs.shape[0]), sg.Periodic(2)):
            h = np.tanh(W @ h + xs[t])
        return np.sum(h)
    for n in (4, 9):
        assert_grad_matches_fd(checkpointed, (0.5 * r.normal(size=(3, 3)), r.normal(size=(n, 3)), np.zeros(3)), 0)


def test_patterns_name_classes_of_equal_sizes():
    assert shape_patterns([(5, 1, 3), (3, 5), "scalar"]) == ((Size(0), 1, Size(1)), (Size(1), Size(0)), "scalar")
    assert shape_patterns([(300, 7)]) == shape_patterns([(30, 700)])


@pytest.mark.parametrize("fn, args, expected", [
    (np.add, [(Size(0), Size(1)), (Size(1),)], (Size(0), Size(1))),
    (np.add, [(Size(0), 1), (1, Size(1))], (Size(0), Size(1))),
    (np.add, [(Size(0),), (Size(1),)], None),                    # an error at run time: no fact
    (np.add, [(Size(0),), (3,)], (Size(0),)),                     # equal, or an error at run time: the first
    (np.add, [(3,), (Size(0),)], (3,)),
    (np.add, [(Size(0),), (3,), (4,)], None),
])
def test_symbolic_broadcasting_is_exact_or_gives_up(fn, args, expected):
    shapes = Shapes({f"a{k}": s for k, s in enumerate(args)})
    token = shapes.op(Op(fn, [Var(f"a{k}") for k in range(len(args))]))
    assert (token if isinstance(token, tuple) else None) == expected


@pytest.mark.parametrize("index, expected", [
    (0, (Size(1),)), (slice(None), (Size(0), Size(1))), (slice(None, None, -1), (Size(0), Size(1))),
    ((Ellipsis, None), (Size(0), Size(1), 1)), (slice(None, 3), None), (slice(1, None), None),
    ((slice(None), 0), (Size(0),)),
])
def test_symbolic_indexing_is_exact_or_gives_up(index, expected):
    shapes = Shapes({"x": (Size(0), Size(1))})
    token = shapes.op(Op(operator.getitem, [Var("x"), Const(index)]))
    assert (token if isinstance(token, tuple) else None) == expected


def test_a_concatenation_of_symbolic_parts_has_the_sum_of_their_sizes():
    shapes = Shapes({"h": (Size(0),), "x": (Size(1),), "W": (Size(2), Size(3))})
    shapes.block([])
    shapes.items["parts"] = [Var("h"), Var("x")]
    joined = shapes.op(Op(np.concatenate, [Var("parts")]))
    assert joined == (size_sum([Size(0), Size(1)]),)
    shapes.facts["hx"] = joined
    assert shapes.op(Op(operator.matmul, [Var("W"), Var("hx")])) == (Size(2),)    # (W's columns: equal, or an error)
    shapes.items["twice"] = [Var("h"), Var("h")]
    assert shapes.op(Op(np.concatenate, [Var("twice")])) != (Size(0),)


def test_which_stacks_are_popped_as_rows_is_chosen_at_the_size_that_generates_the_code():
    r = np.random.default_rng(3)
    small = CASES["loop"][2](r, 5, 8)
    large = CASES["loop"][2](r, 5, 300)
    assert "pop_rows" in sg.source(loop_over_rows, (0, 1, 2), args=small)
    f = types.FunctionType(loop_over_rows.__code__, loop_over_rows.__globals__, "loop_over_rows")
    assert "pop_rows" not in sg.source(f, (0, 1, 2), args=large)
    df = sg.grad(f, (0, 1, 2))
    df(*large)
    before = generations()
    other = CASES["loop"][2](r, 3, 4)
    grads = df(*other)                                                   # the same pattern: the same code
    assert generations() == before
    for k, g in zip((0, 1, 2), grads):
        np.testing.assert_allclose(g, finite_difference(loop_over_rows, list(other), k), rtol=1e-6, atol=1e-8)


def test_value_and_grad_and_vjp_reuse_their_code_at_new_sizes():
    r = np.random.default_rng(4)
    f = types.FunctionType(mlp.__code__, mlp.__globals__, "mlp")
    value_and_grad, vjp = sg.value_and_grad(f, 0), sg.vjp(f, 0)
    for k, n in enumerate((4, 6, 9)):
        args = CASES["mlp"][2](r, n, 5)
        before = generations()
        value, g = value_and_grad(*args)
        value_2, g_2 = vjp(*args, 2.0)
        assert (generations() > before) == (k == 0)
        assert value == value_2 == f(*args)
        expected = finite_difference(f, list(args), 0)
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(g_2, 2.0 * expected, rtol=1e-6, atol=1e-8)


def gufunc_vecdot(p0, p1):
    return np.sum(np.vecdot(p0, p1) * WEIGHTS)


def gufunc_matmul(A, x):
    return np.sum(np.matmul(A, x) * x)


WEIGHTS = np.array([0.5, -1.0, 2.0])
RNG = np.random.default_rng(7)


@pytest.mark.parametrize("f, args", [(gufunc_vecdot, (RNG.standard_normal((3, 4)), RNG.standard_normal(4))),
                                     (gufunc_matmul, (RNG.standard_normal((4, 4)), RNG.standard_normal(4)))],
                         ids=["vecdot", "matmul"])
def test_generalized_ufuncs_are_not_elementwise(f, args):
    """np.vecdot and np.matmul are ufuncs with core dimensions: their results do not have their arguments'
    broadcast shape (the shape analysis must not treat them as elementwise)."""
    assert_grad_matches_fd(f, args, wrt=(0, 1))
