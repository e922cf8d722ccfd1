"""Errors name the user's file, line and column, show the line with a caret, and say what to do."""
import inspect
import re

import error_cases
import numpy as np
import pytest

import s2sgrad as sg

FILE = error_cases.__file__


def line_of(fn, text: str) -> int:
    """The file line number of the first line of `fn` containing `text`."""
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def raised(fn, *args, wrt=0):
    with pytest.raises(sg.S2SGradError) as info:
        sg.grad(fn, wrt=wrt)(*args)
    return info.value


def assert_points_at(error, fn, text, column_text=None):
    """The error names FILE:line:col of `text` in `fn`, shows that line, and a caret under `column_text`."""
    line = line_of(fn, text)
    source_line = inspect.getsourcelines(fn)[0][line - inspect.getsourcelines(fn)[1]]
    message = str(error)
    header, shown, caret = message.splitlines()[:3]
    col = source_line.index(column_text or source_line.strip()) + 1
    assert header.startswith(f"{FILE}:{line}:{col}: "), header
    assert shown == source_line.rstrip()
    assert caret == " " * (col - 1) + "^"
    assert error.location.line == line


CASES = [
    # function, line text, caret text, error class, message pattern, hint pattern
    (error_cases.uses_try, "return x * 2", "return", sg.UnsupportedSyntax, r"'return'.* inside a 'try' block",
     r"return after it"),
    (error_cases.uses_with, "with open", "open", sg.UnsupportedSyntax, r"context managers that change no value",
     r"move"),
    (error_cases.uses_yield, "yield x", "yield", sg.UnsupportedSyntax, r"generators", r"return a list"),
    (error_cases.uses_global, "global COUNT", "global", sg.UnsupportedSyntax, r"'COUNT' is declared global and "
     r"assigned", r"return the new value"),
    (error_cases.defines_class, "class Box", "class", sg.UnsupportedSyntax, r"class definition", r"outside"),
    (error_cases.calls_without_rule, "np.nanmedian", "np.nanmedian", sg.NoDerivativeRule,
     r"no derivative rule for np\.nanmedian", r"@sg\.adjoint\(np\.nanmedian\)"),
    (error_cases.attribute_write, "x.flags", "x.flags", sg.UnsupportedSyntax, r"assignment to an attribute", r"local"),
    (error_cases.while_else, "(y := x)", "y :=", sg.UnsupportedSyntax, r"assignment expression .* only on some "
     r"paths", r"statement of its own"),
    (error_cases.sets_a_view, "return np.sum(v)", "v)", sg.UnsupportedSyntax,
     r"'v' may have been changed in place through 'y'.*line \d+", r"copy"),
    (error_cases.undefined_after_loop, "return z", "z", sg.UnsupportedSyntax,
     r"'z' is assigned inside a loop or branch", r"initial value"),
    (error_cases.bad_schedule, "checkpointed", "12", sg.UnsupportedSyntax, r"not a checkpointing schedule",
     r"Revolve"),
    (error_cases.vector_output, "return x * 2.0", "return", sg.NonScalarOutput, r"scalar.*shape \(3,\)",
     r"vjp"),
    (error_cases.complex_in_between, "return np.linalg.norm(z) ** 2", "np.linalg.norm", sg.UnsupportedSyntax,
     r"np.linalg.norm is called on a complex value between 'x' and the output.*not known to hold for complex",
     r"real and imaginary parts"),
    (error_cases.adds_into_a_list_element, "ys[0] += x", "ys[0]", sg.UnsupportedSyntax,
     r"augmented assignment to a list element changes the element itself", r"ys\[i\] = ys\[i\] \+"),
    (error_cases.evaluates_a_string, "eval(", "eval(", sg.UnsupportedSyntax, r"eval\(\) runs or reads code",
     r"write the computation out"),
    (error_cases.executes_a_string, "exec(", "exec(", sg.UnsupportedSyntax, r"exec\(\) runs or reads code",
     r"write the computation out"),
    (error_cases.reverses_enumerate, "reversed(enumerate", "reversed(", sg.UnsupportedSyntax,
     r"reversed\(\) of enumerate or zip is not reversible", r"reversed\(list\(enumerate"),
    (error_cases.calls_an_unhashable_callable, "UNHASHABLE(x)", "UNHASHABLE", sg.NoDerivativeRule,
     r"no derivative rule for UNHASHABLE", r"@sg\.adjoint\(UNHASHABLE\)"),
    (error_cases.returns_a_comparison, "return total > 0.0", "total >", sg.NonScalarOutput,
     r"the output of returns_a_comparison is a truth value, which has no gradient", r"not the condition"),
    (error_cases.returns_np_all, "return np.all", "np.all", sg.NonScalarOutput,
     r"the output of returns_np_all is a truth value", r"not the condition"),
    *[(fn, "return", column, sg.NoDerivativeRule,
       label + r" of a differentiated value gives text or an identity, through which no derivative can be followed",
       r"stop_gradient")
      for fn, column, label in [(error_cases.through_str, "str(", r"str\(\)"),
                                (error_cases.through_repr, "repr(", r"repr\(\)"),
                                (error_cases.through_format, "format(", r"format\(\)"),
                                (error_cases.through_an_f_string, 'f"', "an f-string"),
                                (error_cases.through_hash, "hash(", r"hash\(\)"),
                                (error_cases.through_id, "id(", r"id\(\)")]],
    *[(fn, "return", text, sg.NoDerivativeRule,
       r"no derivative rule for " + re.escape(label), r"@sg\.adjoint")
      for fn, text, label in [(error_cases.through_unique, "np.unique(", "np.unique"),
                              (error_cases.through_heaviside, "np.heaviside(", "np.heaviside")]],
    (error_cases.through_a_random_draw, "return", "np.random.normal(", sg.NoDerivativeRule,
     r"no derivative rule for np\.random\.normal: a random draw has no gradient with respect to its parameters",
     r"reparametrization"),
]


@pytest.mark.parametrize("fn, text, column, kind, message, hint", CASES, ids=[c[0].__name__ for c in CASES])
def test_error_points_at_the_user_line(fn, text, column, kind, message, hint):
    error = raised(fn, np.ones(3))
    assert type(error) is kind
    assert_points_at(error, fn, text, column)
    assert re.search(message, error.message), error.message
    assert re.search(hint, error.hint), error.hint


LIBRARY_CALLS = [
    (error_cases.through_a_scipy_special_function, "scipy.special.kv("),
    (error_cases.through_a_scipy_stats_method, "scipy.stats.norm.ppf("),
    (error_cases.through_a_numpy_python_function, "np.nanvar("),
    (error_cases.through_the_standard_library, "statistics.fmean("),
    (error_cases.through_an_installed_package, "scipy.optimize.rosen("),
]


@pytest.mark.skipif(error_cases.scipy is None, reason="scipy is not installed")
@pytest.mark.parametrize("mode", ["grad", "jvp"])
@pytest.mark.parametrize("fn, call", LIBRARY_CALLS, ids=[c[0].__name__ for c in LIBRARY_CALLS])
def test_library_function_without_rule_is_refused_at_the_users_call(fn, call, mode):
    """SciPy's, NumPy's, the standard library's and an installed package's functions are applied by their rule,
    never transformed as the user's code: without one, the error is at the user's call, not in their source."""
    x = np.array([0.3, 0.6, 0.9])
    with pytest.raises(sg.NoDerivativeRule) as info:
        sg.grad(fn)(x) if mode == "grad" else sg.jvp(fn)(x, np.ones(3))
    assert_points_at(info.value, fn, call, call)
    label = call.rstrip("(")
    assert re.search(r"no (derivative|forward-mode \(tangent\)) rule for " + re.escape(label), info.value.message)
    assert re.escape(label) in info.value.hint or label in info.value.hint


def test_integer_argument_in_wrt():
    with pytest.raises(sg.WrtError, match=r"argument 'n' of recursive is an integer.*no gradient") as info:
        sg.grad(error_cases.recursive, wrt=1)(1.0, 3)
    assert_points_at(info.value, error_cases.recursive, "def recursive", "def")
    with pytest.raises(sg.WrtError, match=r"integer"):
        sg.grad(lambda v: np.sum(v * 2))(np.arange(3))


@pytest.mark.parametrize("wrt, pattern", [("z", r"wrt='z' names no argument of recursive \(its arguments: x, n\)"),
                                          (5, r"wrt=5 is out of range: recursive has 2 positional argument"),
                                          ((0, 0), r"twice"), (1.5, r"index or name")])
def test_bad_wrt(wrt, pattern):
    with pytest.raises(sg.WrtError, match=pattern) as info:
        sg.grad(error_cases.recursive, wrt=wrt)
    assert_points_at(info.value, error_cases.recursive, "def recursive", "def")


@pytest.mark.parametrize("transform", [sg.grad, sg.vjp, sg.jvp, sg.hvp, sg.hessian])
def test_every_wrt_error_points_at_the_def(transform):
    with pytest.raises(sg.WrtError) as info:
        transform(error_cases.recursive, wrt="z")
    assert_points_at(info.value, error_cases.recursive, "def recursive", "def")
    with pytest.raises(sg.WrtError) as info:
        args = (1.0, 3, 1.0) if transform in (sg.vjp, sg.jvp, sg.hvp) else (1.0, 3)
        transform(error_cases.recursive, wrt=1)(*args)
    assert_points_at(info.value, error_cases.recursive, "def recursive", "def")


def test_text_made_from_a_value_and_never_read_back_is_fine(capsys):
    x = np.array([0.5, 1.5, 2.0])
    error_cases.prints_and_formats(x)
    printed = capsys.readouterr().out
    np.testing.assert_allclose(sg.grad(error_cases.prints_and_formats)(x), 2.0 * np.ones(3))
    assert capsys.readouterr().out == printed                  # the f-string as Python formats it
    assert sg.jvp(error_cases.prints_and_formats)(x, np.ones(3))[1] == pytest.approx(6.0)
    assert capsys.readouterr().out == printed


def test_source_not_found():
    namespace = {"np": np}
    exec("def made_by_exec(x):\n    return x * 2\n", namespace)
    with pytest.raises(sg.SourceNotFound, match="cannot find the source") as info:
        sg.grad(namespace["made_by_exec"])(1.0)
    assert "exec" in info.value.hint
    with pytest.raises(sg.SourceNotFound, match="not a Python function"):
        sg.grad(np.sin)(1.0)


def test_every_error_is_an_s2sgrad_error():
    for kind in (sg.UnsupportedSyntax, sg.NoDerivativeRule, sg.NonScalarOutput, sg.WrtError, sg.SourceNotFound):
        assert issubclass(kind, sg.S2SGradError)


def test_unknown_option():
    with pytest.raises(sg.S2SGradError, match="unknown option"):
        sg.grad(error_cases.vector_output, optimise=False)(np.ones(3))


def test_complex_values_are_refused_also_where_only_the_result_shows_them():
    # gradients through complex values would be wrong (no complex convention): refused, never returned
    for call in (lambda: sg.grad(error_cases.complex_through_unknown_dtype)(np.ones(3)),
                 lambda: sg.jvp(error_cases.complex_in_between)(np.ones(3), np.ones(3)),
                 lambda: sg.hvp(error_cases.complex_in_between)(np.ones(3), np.ones(3))):
        with pytest.raises(sg.UnsupportedSyntax, match=r"complex value (lies )?between 'x' and the output") as info:
            call()
        assert info.value.location is not None and "real and imaginary parts" in info.value.hint


def test_complex_argument_in_wrt():
    with pytest.raises(sg.WrtError, match=r"argument 'x' of complex_in_between is complex"):
        sg.grad(error_cases.complex_in_between)(np.ones(3) + 1j)


@pytest.mark.parametrize("transform", ["grad", "jvp", "hvp"])
def test_a_keyword_the_rule_does_not_know_is_refused_at_the_call(transform):
    x = np.ones(3)
    args = (x,) if transform == "grad" else (x, x)
    with pytest.raises(sg.S2SGradError, match=r"does not match the derivative rule of sum: got an unexpected "
                                              r"keyword argument 'where'") as info:
        getattr(sg, transform)(error_cases.sum_where)(*args)
    assert_points_at(info.value, error_cases.sum_where, "np.sum(", "np.sum(")
