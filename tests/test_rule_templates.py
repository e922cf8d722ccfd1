"""A mistake in a rule template raises `RuleTemplateError` (an `S2SGradError`) at the template's own file and line,
as it is registered."""
import inspect
import math

import numpy as np
import pytest
import template_mistakes as mistakes

import s2sgrad as sg
from s2sgrad.rules import RuleTemplateError, registry, rule_for
from s2sgrad.rules.tables import broadcasting, elementwise


@pytest.fixture(autouse=True)
def rule_table_as_it_was():
    """The rules a test registers go with it (test_rules.py asserts every rule has a finite-difference case)."""
    saved, optional = (dict(registry._RULES), dict(registry._TANGENT_ONLY)), list(registry._OPTIONAL)
    yield
    for table, before in zip((registry._RULES, registry._TANGENT_ONLY), saved):
        table.clear()
        table.update(before)
    registry._OPTIONAL[:] = optional          # (SciPy's rules, if loaded meanwhile, are loaded again when needed)


def marked_line(template) -> int:
    lines, first = inspect.getsourcelines(template)
    return first + next(k for k, line in enumerate(lines) if "# here" in line)


def registering(register, template):
    with pytest.raises(RuleTemplateError) as info:
        register(template)
    error = info.value
    assert isinstance(error, sg.S2SGradError)
    assert error.location.filename == inspect.getsourcefile(mistakes)
    assert error.location.line == marked_line(template)
    assert str(error).startswith(f"{error.location.filename}:{error.location.line}:")
    return error


@pytest.mark.parametrize("template, message", [
    (mistakes.adjoint_of_no_parameter, "d[z] assigns the adjoint of 'z', which is not a parameter of the template "
                                       "adjoint_of_no_parameter(y, x)"),
    (mistakes.adjoint_reads_an_argument, "d[x]: an adjoint template reads only the adjoint of its result, d[y]"),
    (mistakes.misspelled_parameter, "'xx' is neither a parameter of the template misspelled_parameter(y, x)"),
    (mistakes.statement_not_inlined, "a rule template is straight-line assignments (to one name or one d[...]); "
                                     "it cannot inline if statements"),
])
def test_adjoint_template_mistakes(template, message):
    error = registering(sg.adjoint(mistakes.triple), template)
    assert message in error.message
    assert rule_for(mistakes.triple) is None


@pytest.mark.parametrize("template, message", [
    (mistakes.tangent_reads_no_parameter, "d[z] reads the tangent of 'z', which is not a parameter of the template "
                                          "tangent_reads_no_parameter(y, x)"),
    (mistakes.tangent_sets_an_argument, "d[x]: a tangent template sets only the tangent of its result, d[y]"),
    (mistakes.tangent_sets_nothing, "the tangent template tangent_sets_nothing(y, x) sets no d[y]"),
])
def test_tangent_template_mistakes(template, message):
    error = registering(sg.tangent(mistakes.triple), template)
    assert message in error.message


def test_a_parameter_the_primitive_does_not_take():
    error = registering(sg.adjoint(np.sum), mistakes.sum_with_a_wrong_parameter)
    assert "has a parameter 'array', which sum(a, axis=None" in error.message
    assert rule_for(np.sum).template.__name__ == "sum"          # the built-in rule stays


def test_the_error_shows_the_line():
    error = registering(sg.adjoint(mistakes.triple), mistakes.misspelled_parameter)
    assert "d[x] = 3.0 * d[y] * xx" in str(error)
    assert error.location.col == inspect.getsource(mistakes.misspelled_parameter).splitlines()[1].index("xx")


def test_a_partial_that_is_no_lambda():
    with pytest.raises(RuleTemplateError, match="a partial is a lambda expression"):
        elementwise(mistakes.triple, mistakes.partial)


def test_partials_with_different_parameters():
    with pytest.raises(RuleTemplateError) as info:
        broadcasting(mistakes.triple, lambda g, y, x1, x2: g,
                     lambda g, y, a, b: g)

    assert info.value.location.filename == __file__
    assert info.value.location.line == inspect.currentframe().f_lineno - 3       # the second lambda
    assert info.value.location.col == 21
    assert "the partials of one function take the same parameters (g, y, x1, x2)" in info.value.message


def test_a_math_twin_needs_math_functions():
    with pytest.raises(RuleTemplateError) as info:
        elementwise(mistakes.partial, lambda g, y, x: g * np.sign(x), scalar=math.fabs)
    assert info.value.location.line == inspect.currentframe().f_lineno - 1
    assert "np.sign has no twin in math" in info.value.message


def test_a_table_rule_is_inlined_like_a_template():
    def cube(x):
        return x ** 3
    elementwise(cube, lambda g, y, x: g * 3.0 * x * x)

    def f(x):
        return np.sum(cube(x))
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(sg.grad(f)(x), 3.0 * x * x)
    np.testing.assert_allclose(sg.jvp(f)(x, np.ones(2)), (f(x), np.sum(3.0 * x * x)))
