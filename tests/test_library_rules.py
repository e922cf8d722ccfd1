"""The rules of NumPy's Python functions and of SciPy's through the whole pipeline, where the sweep of
test_api_surface.py cannot reach: the ways users import SciPy's functions, arguments with no derivative,
symmetric covariances, points on a simplex, and the conventions at kinks (ties of a median or a
maximum with `initial`, np.interp at its knots, np.partition's equal values, np.nan_to_num).
"""
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg

pytest.importorskip("scipy")
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402
from scipy.special import gammaln, logsumexp  # noqa: E402
from scipy.stats import multivariate_normal, norm  # noqa: E402

st = scipy.stats
X = np.array([0.3, 0.6, 0.9])


def imported_in_every_way(x):
    return (np.sum(norm.logpdf(x, 1.0, 2.0)) + np.sum(st.t.logpdf(x, 3.0)) + np.sum(gammaln(x + 2.0))
            + logsumexp(x) + np.sum(scipy.stats.norm.cdf(x, scale=2.0)) + np.sum(scipy.special.expit(x)))


def test_scipy_functions_however_imported():
    assert_grad_matches_fd(imported_in_every_way, [X])
    _, tangent = sg.jvp(imported_in_every_way)(X, np.ones(3))
    assert np.isclose(tangent, np.sum(sg.grad(imported_in_every_way)(X)))


def test_import_s2sgrad_does_not_import_scipy():
    code = "import sys, s2sgrad; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": ":".join(sys.path)})
    assert out.stdout.strip() == "False"


def order_is_active(x):
    return np.sum(scipy.special.polygamma(x, x))


def degrees_of_freedom_of_a_cdf(x):
    return np.sum(st.t.cdf(1.0, x))


def knots_of_interp(x):
    return np.interp(0.5, x, np.array([1.0, 2.0, 4.0]))


def frozen_distribution(x):
    return np.sum(norm(0.0, 1.0).logpdf(x))


@pytest.mark.parametrize("mode", ["grad", "jvp"])
@pytest.mark.parametrize("fn, message", [(order_is_active, "scipy.special.polygamma has no derivative in its order n"),
                                         (degrees_of_freedom_of_a_cdf, "in its degrees of freedom df"),
                                         (knots_of_interp, "np.interp has no derivative rule in its knots xp")])
def test_an_argument_without_derivative_is_refused(fn, message, mode):
    with pytest.raises(sg.NoDerivativeRule, match=message) as info:
        sg.grad(fn)(X) if mode == "grad" else sg.jvp(fn)(X, np.ones(3))
    assert info.value.location.filename == __file__ and "stop_gradient" in info.value.hint


def test_a_method_of_a_frozen_distribution_is_refused():
    with pytest.raises(sg.S2SGradError) as info:
        sg.grad(frozen_distribution)(X)
    assert info.value.location.filename == __file__


COV_POINTS = np.array([[0.3, -0.2, 0.5], [1.0, 0.1, -0.4]])


def covariance_from_a_factor(a):
    return np.sum(multivariate_normal.logpdf(COV_POINTS, np.zeros(3), a @ a.T + np.eye(3))) \
        + multivariate_normal.entropy(np.zeros(3), a @ a.T + np.eye(3)) \
        + np.sum(multivariate_normal.pdf(COV_POINTS, np.ones(3), a @ a.T + np.eye(3)))


def test_symmetric_covariance():
    a = np.array([[1.0, 0.2, 0.0], [0.3, 0.8, 0.1], [-0.2, 0.4, 1.1]])
    assert_grad_matches_fd(covariance_from_a_factor, [a])
    _, tangent = sg.jvp(covariance_from_a_factor)(a, np.ones((3, 3)))
    assert np.isclose(tangent, np.sum(sg.grad(covariance_from_a_factor)(a)))


def dirichlet_of_a_softmax(z, alpha):
    return st.dirichlet.logpdf(scipy.special.softmax(z), alpha) + st.dirichlet.pdf(scipy.special.softmax(z), alpha)


def test_dirichlet_on_the_simplex():
    z, alpha = np.array([0.2, -0.4, 0.9]), np.array([1.5, 2.0, 3.0])
    assert_grad_matches_fd(dirichlet_of_a_softmax, [z, alpha], wrt=(0, 1))


# --- the conventions at kinks ---------------------------------------------------------------------------

def median(x):
    return np.median(x)


def test_median_of_an_even_count_is_the_mean_of_the_middle_two():
    assert sg.grad(median)(np.array([3.0, 1.0, 4.0, 2.0])).tolist() == [0.5, 0.0, 0.0, 0.5]


def test_median_ties_share_evenly():
    assert sg.grad(median)(np.array([2.0, 1.0, 2.0])).tolist() == [0.5, 0.0, 0.5]
    assert np.allclose(sg.grad(median)(np.array([2.0, 2.0, 2.0, 1.0])), [1 / 3, 1 / 3, 1 / 3, 0.0])
    _, tangent = sg.jvp(median)(np.array([2.0, 1.0, 2.0]), np.array([1.0, 5.0, 3.0]))
    assert tangent == 2.0


def max_with_initial(x):
    return np.max(x, initial=2.0)


def test_max_with_initial_shares_a_tie_with_initial():
    assert sg.grad(max_with_initial)(np.array([2.0, 1.0])).tolist() == [0.5, 0.0]
    assert sg.grad(max_with_initial)(np.array([0.0, 1.0])).tolist() == [0.0, 0.0]


def interp_at(x):
    return np.interp(x, np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 3.0]))


def test_interp_at_a_knot_has_the_slope_to_its_right():
    assert sg.grad(interp_at)(1.0) == 0.5                     # slopes 2 to the left, 0.5 to the right
    assert sg.grad(interp_at)(0.0) == 2.0
    assert sg.grad(interp_at)(3.0) == 0.0 and sg.grad(interp_at)(-1.0) == 0.0 and sg.grad(interp_at)(4.0) == 0.0
    assert sg.jvp(interp_at)(1.0, 1.0)[1] == 0.5


def partition_sum(x):
    return np.sum(np.partition(x, 1)[:2] * np.array([1.0, 10.0]))


def test_partition_ties_give_the_gradient_to_one_element():
    g = sg.grad(partition_sum)(np.array([1.0, 1.0, 0.0]))
    assert sorted(g.tolist()) == [0.0, 1.0, 10.0]


def nan_to_num_sum(x):
    return np.sum(np.nan_to_num(x, nan=3.0, posinf=5.0) * np.array([1.0, 2.0, 3.0]))


def test_nan_to_num_passes_the_gradient_only_where_finite():
    assert sg.grad(nan_to_num_sum)(np.array([1.0, np.nan, np.inf])).tolist() == [1.0, 0.0, 0.0]


def test_the_issues_examples_in_user_code(tmp_path):
    """The NumPy functions the issue lists, called as a user calls them, in one program."""
    path = tmp_path / "issue_examples.py"
    path.write_text(textwrap.dedent("""
        import numpy as np

        def f(x):
            m = np.reshape(x, (3, 4))
            a, b = np.split(m, 2, axis=1)
            parts = np.array_split(x, 3) + np.hsplit(m, 2) + np.vsplit(m, 3)
            s = np.select([x > 0.5, x < -0.5], [x * 2.0, x ** 2], default=x)
            total = np.sum(np.diff(x)) + np.sum(np.sort(x)[::2]) + np.max(x, initial=0.0) + np.amin(x, initial=1.0)
            total = total + np.sum(np.pad(m, 1)) + np.median(m) + np.average(m, axis=0, weights=[1.0, 2.0, 3.0])[1]
            total = total + np.sum(np.take_along_axis(m, np.argsort(m, axis=1), axis=1)[:, 0])
            total = total + np.sum(np.convolve(x, x[:3])) + np.polyval(x[:4], 0.7) + np.sum(np.column_stack([a, b]))
            total = total + np.sum(np.dstack([a, b]) ** 2) + np.sum(np.append(x, a)) + np.sum(np.gradient(m)[1] ** 2)
            total = total + np.sum(np.partition(x, 3)[:3]) + np.sum(np.rot90(m) * np.arange(12.0).reshape(4, 3))
            total = total + np.sum(np.rollaxis(m[None], 2) ** 2) + np.sum(np.nan_to_num(x)) + np.sum(s)
            total = total + np.sum(np.interp(x, [-1.0, 0.0, 2.0], [1.0, 3.0, 2.0]))
            return total + sum(np.sum(p ** 2) for p in parts)
    """))
    sys.path.insert(0, str(tmp_path))
    try:
        import issue_examples
    finally:
        sys.path.remove(str(tmp_path))
    x = np.random.default_rng(0).standard_normal(12)
    g = assert_grad_matches_fd(issue_examples.f, [x])
    _, tangent = sg.jvp(issue_examples.f)(x, np.ones(12))
    assert np.isclose(tangent, np.sum(g))


WEIGHTS = np.array([0.5, 1.0, 2.0, 1.5])


def weighted_logsumexp(a):
    return np.sum(np.exp(a) * logsumexp(a, b=WEIGHTS, axis=0, keepdims=True))


def test_hvp_where_a_rule_chooses_a_global_argument_or_a_default():
    """The rule's ``1.0 if b is None else b`` on a module-level array, written as a branch by forward mode over
    the gradient, keeps the global's name read-only (it was bound as a local, and the Hessian code raised)."""
    x, v = np.array([0.1, 0.5, -0.3, 0.2]), np.array([0.3, -1.0, 0.4, 0.8])
    gradient = sg.grad(weighted_logsumexp)
    expected = (gradient(x + 1e-5 * v) - gradient(x - 1e-5 * v)) / 2e-5
    np.testing.assert_allclose(sg.hvp(weighted_logsumexp)(x, v), expected, rtol=1e-6, atol=1e-8)
