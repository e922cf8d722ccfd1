"""Names for one object that NumPy functions, containers and called helpers make: a change in place
through one is seen through the other (refused where the two would differ from Python), and programs
that only look alike stay right."""
import inspect

import numpy as np
import pytest
import view_cases as c
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg

X = np.array([0.3, 0.5, 0.7, 0.9])


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


STALE = [
    # function, line read, message fragment
    (c.list_of_slices, "# read: parts", "'parts' may have been changed in place through 'y'"),
    (c.appended_slices, "# read: parts", "'parts' may have been changed in place through 'y'"),
    (c.tuple_unpacked, "# read: y", "'y' may have been changed in place through 'a'"),
    (c.list_builtin, "# read: rows", "'rows' may have been changed in place through 'y'"),
    (c.element_of_list_changed, "# read: y", "'y' may have been changed in place through 'first'"),
    (c.helper_scales_argument, "# read: y", "'y' may have been changed in place by the call of 'scale_in_place'"),
    (c.helper_changes_through_alias, "# read: y",
     "'y' may have been changed in place by the call of 'write_through_alias'"),
    (c.helper_changes_argument_of_alias, "# read: y", "'y' may have been changed in place through 'z'"),
    (c.helper_returning_in_branches, "# read: y", "by the call of 'fill_in_branches'"),
    (c.helper_in_loop_condition, "while filled_count", "'y' may be changed in place by the call of 'filled_count'"),
    (c.helper_in_conditional_expression, "# read: y", "by the call of 'filled_count'"),
    (c.helper_changes_a_view, "# read: y", "'y' may have been changed in place by the call of 'scale_in_place'"),
    (c.helper_changes_an_alias, "# read: y", "by the call of 'scale_in_place'"),
    (c.helper_returns_a_view, "# read: v", "'v' may have been changed in place through 'y'"),
    (c.recurrence_kept_in_list, "# read: hs", "'hs' may be changed in place by the call of 'step' in this loop"),
    (c.diagonal_read_after_write, "# read: d", "'d' may have been changed in place through 'B'"),
    (c.reshape_written, "# read: y", "'y' may have been changed in place through 'v'"),
    (c.unknown_function_result, "# read: v", "'v' may have been changed in place through 'y'"),
    (c.concatenated_lists, "# read: p", "'p' may have been changed in place through 'e'"),
    (c.rows_changed, "for row in B", "'B' may be changed in place through 'row' in this loop"),
    (c.zipped_rows, "# read: pairs", "'pairs' may have been changed in place through 'B'"),
]


@pytest.mark.parametrize("fn, text, message", STALE, ids=[case[0].__name__ for case in STALE])
def test_read_after_a_change_through_another_name_is_refused(fn, text, message):
    with pytest.raises(sg.UnsupportedSyntax) as info:
        sg.grad(fn)(X.copy())
    assert message in info.value.message
    assert info.value.location.filename == c.__file__
    assert info.value.location.line == line_of(fn, text)
    assert info.value.hint


def test_the_refusal_of_a_call_names_the_call_line_and_says_what_to_do():
    with pytest.raises(sg.UnsupportedSyntax) as info:
        sg.grad(c.helper_scales_argument)(X.copy())
    assert f"see line {line_of(c.helper_scales_argument, 'scale_in_place(y')}" in info.value.message
    assert "return the new value instead of changing its argument" in info.value.hint


REFUSED_WRITES = [
    (c.calls_with_default, "return changes_default", "changes the default value of its parameter 'a'"),
    (c.alias_of_global, "a[0] = 5.0", "'a' may be the module-level object 'G'"),
    (c.alias_of_attribute, "w *= 2.0", "'w' may be the module-level object 'CONFIG'"),
    (c.helper_changes_global, "a[1] = x[0]", "'a' may be the module-level object 'G'"),
    (c.result_is_a_global, "r[0] = x[0]", "'r' may be the module-level object 'G'"),
    (c.write_broadcast, "v[0, 0] = 1.0", "'v' may be a read-only view made by np.broadcast_to"),
    (c.write_diagonal_in_list, "d *= 2.0", "'d' may be a read-only view made by np.diagonal"),
]


@pytest.mark.parametrize("fn, text, message", REFUSED_WRITES, ids=[case[0].__name__ for case in REFUSED_WRITES])
def test_writes_that_would_change_something_else_are_refused(fn, text, message):
    with pytest.raises(sg.UnsupportedSyntax) as info:
        sg.grad(fn)(X.copy())
    assert message in info.value.message
    where = fn if text in inspect.getsource(fn) else c.changes_global
    assert info.value.location.line == line_of(where, text)


RIGHT = [c.list_changed_not_its_items, c.helper_changes_argument_not_read, c.helper_returns_a_new_array,
         c.recurrence_through_helper,
         # a variable passed as a parameter the callee changes by index or appends to: rebound to its new value
         c.helper_changes_argument, c.helper_appends, c.helper_changes_in_loop, c.nested_changes_parameter,
         c.helper_without_return, c.helper_called_with_keywords, c.helper_statement_in_loop]


@pytest.mark.parametrize("fn", RIGHT, ids=[fn.__name__ for fn in RIGHT])
def test_lookalikes_stay_right(fn):
    value, _ = sg.value_and_grad(fn)(X.copy())
    assert np.isclose(value, fn(X.copy()), rtol=1e-13)
    assert_grad_matches_fd(fn, (X.copy(),), 0)


def test_the_view_table_knows_every_view_function():
    from s2sgrad.frontend.views import view_of
    for fn in (np.reshape, np.asarray, np.asanyarray, np.squeeze, np.transpose, np.ravel, np.expand_dims,
               np.atleast_1d, np.atleast_2d, np.swapaxes, np.moveaxis, np.broadcast_to, np.diagonal, np.split,
               np.flip, np.real, sg.stop_gradient):
        assert view_of(fn) in ("first", "any"), fn
    assert view_of(np.array) is None and view_of(np.array, {"copy"}) == "any"
    assert view_of(np.sin) is None and view_of(np.add, {"out"}) == "out"
    assert view_of(np.copy) is None and view_of(np.concatenate) is None
    assert view_of(lambda a: a) == "any"                   # unknown: may return its argument
