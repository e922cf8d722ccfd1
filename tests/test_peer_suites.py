"""The peer-suite adapters (benchmarks/suites) classify a tiny fake autograd suite and a fake Tangent
functions.py correctly: a right derivative passes, a refusal is `refused`, a wrong rule is `wrong`, a
complex input and an autograd-only function are counted apart."""
import textwrap

import numpy as np

from benchmarks.suites import checks, run_autograd, run_tangent

FAKE_AUTOGRAD_TEST = '''
import autograd.numpy as np
import autograd.numpy.random as npr
import s2sgrad as sg
from autograd import grad
from autograd.test_util import check_grads, combo_check


def doubled(x):
    return 2.0 * x


@sg.adjoint(doubled)
def doubled_wrong(y, x):
    d[x] = 3.0 * d[y]              # the derivative is 2: this rule is wrong on purpose


def test_right():
    def fun(x, y):
        return np.sum(np.tanh(x) * y)
    check_grads(fun)(npr.randn(3), npr.randn(3))


def test_library_function():
    combo_check(np.sum, [0])([npr.randn(2, 3)], axis=[None, 0], keepdims=[True, False])


def test_refused():
    def fun(x):
        return eval("x")
    check_grads(fun, modes=["rev"])(1.0)


def test_wrong():
    def fun(x):
        return np.sum(doubled(x))
    check_grads(fun, modes=["rev"])(npr.randn(2))


def test_complex():
    check_grads(np.sin)(1.0 + 0.5j)


def test_direct_assertion():
    def fun(x):
        return x * x
    assert grad(fun)(3.0) == 6.0


def test_autograd_only():
    def fun(x):
        return np.sum(np.make_diagonal(x, offset=0))
    check_grads(fun)(npr.randn(3))
'''

FAKE_TANGENT_FUNCTIONS = '''
import numpy as np
import tangent
from tangent import insert_grad_of


def tanh(a):
    return np.tanh(a)


def sum_(x):
    return np.sum(x)


def evaluated(a):
    return eval("a")
'''


def test_autograd_adapter_classifies_a_fake_suite(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_fake.py").write_text(FAKE_AUTOGRAD_TEST)
    raw = run_autograd.run(tmp_path, tmp_path / "out.json")
    rows = {test.split("::")[1]: row for test, row in run_autograd.classified(raw).items()}
    assert {name: row["rev"] for name, row in rows.items()} == {
        "test_right": "passed", "test_library_function": "passed", "test_refused": "refused",
        "test_wrong": "wrong", "test_complex": "complex", "test_direct_assertion": "passed",
        "test_autograd_only": "no-numpy"}
    assert rows["test_right"]["fwd"] == rows["test_right"]["rev2"] == "passed"
    assert "vjp . v" in rows["test_wrong"]["failure"]["message"]


def test_tangent_adapter_checks_every_numpy_function(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "functions.py").write_text(textwrap.dedent(FAKE_TANGENT_FUNCTIONS))
    results = run_tangent.run(tmp_path)
    assert {name: r["rev"].status for name, r in results.items()} == {
        "tanh": "passed", "sum_": "passed", "evaluated": "refused"}


def test_a_kink_passes_with_either_one_sided_derivative():
    def relu(x):
        return np.maximum(x, 0.0)
    assert checks.check_vjp(relu, (np.array([0.0, 1.0, -1.0]),), {}, 0).status == "passed"
