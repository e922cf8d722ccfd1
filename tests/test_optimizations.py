"""Each optimization is a pass of its own: switching off that one alone changes the generated code in the
way asserted here, and the gradient stays the same. optimize=False switches them all off."""
import math
from pathlib import Path

import numpy as np
import optimization_cases as cases
import pytest

import s2sgrad as sg
from s2sgrad.optimizations import ALL, NEEDS, needing, resolve

rng = np.random.default_rng(0)


def vector(n):
    return rng.standard_normal(n)


def grads(fn, args, wrt, optimize) -> list:
    out = sg.grad(fn, wrt, optimize=optimize)(*args)
    return list(out) if isinstance(wrt, tuple) else [out]


def without(name, fn, args, wrt, base=ALL):
    """The source with the optimizations `base`, and with those but `name` (and those that need it), after
    checking that both give the same gradient."""
    off = base - {name} - needing(name)
    for fast, slow in zip(grads(fn, args, wrt, base), grads(fn, args, wrt, off)):
        np.testing.assert_allclose(slow, fast, rtol=1e-12)
    return sg.source(fn, wrt, args=args, optimize=base), sg.source(fn, wrt, args=args, optimize=off)


def backward(source: str) -> str:
    return source.split("# backward sweep")[1]


def forward(source: str) -> str:
    return source.split("# backward sweep")[0]


# ---------------------------------------------------------------- one expectation per optimization

EXPECTED: dict = {}          # name -> (function, arguments, wrt, check of (optimized source, source without it), base)
PER_TRIP = ALL - {"coefficient_arrays"}     # (scalar loops whose backward trips are seen one by one)


def expect(name, fn, args, wrt=0, base=ALL):
    def register(check):
        EXPECTED[name] = (fn, args, wrt, check, base)
        return check
    return register


@expect("activity", cases.unused_branch, (vector(3), vector(3)))
def no_adjoint_code_for_values_independent_of_wrt(fast, slow):
    assert "dw" not in fast and "dw = " in slow                 # w is not differentiated


@expect("symbolic_zeros", cases.reuse, (vector(3),))
def no_zero_buffers(fast, slow):
    assert "zeros_like" not in fast and "zeros_like(x) + " in slow


@expect("to_be_recorded", cases.loop, (0.7, 5))
def push_only_what_the_backward_sweep_reads(fast, slow):
    assert fast.count(".push(") == 2 and "i_stack" not in fast          # y and sin; not the counter
    assert slow.count(".push(") > 2 and "i_stack.push(i)" in slow
    assert "i_stack = Stack()  # the backward sweep does not read it (to_be_recorded is off)" in slow


@expect("shape_only_pushes", cases.grows, (vector(3), 4))
def push_only_the_shape_of_what_is_read_for_its_shape(fast, slow):
    assert "prod_shape_stack.push(like(prod))" in fast
    assert "push(like(" not in slow and "prod_stack.push(prod)" in slow


@expect("carried_pushes", cases.rnn, (vector((3, 3)) * 0.5, vector(3), vector((4, 3))), (0, 1, 2))
def a_value_the_next_trip_starts_with_is_pushed_once(fast, slow):
    assert "h_stack_1" not in fast and "reads it one trip earlier" in fast
    assert "h_stack_1.push(h_1)" in slow and "one trip earlier" not in slow


@expect("recompute_cheap", cases.polynomial_loop, (0.7, 5), base=PER_TRIP)
def cheap_values_are_computed_again_not_pushed(fast, slow):
    assert fast.count(".push(") == 1 and "y_stack.push(y)" in fast         # not prod = 0.1 * y
    assert "dsum * (0.1 * y)" in backward(fast)                          # computed again where it is read
    assert slow.count(".push(") == 2 and "prod_stack.push(prod)" in slow and "prod = 0.1 * y" not in backward(slow)


@expect("reuse", cases.reuse, (vector(3),))
def primal_values_are_reused(fast, slow):
    assert "np.cos(x)" not in backward(fast) and "np.cos(x)" in backward(slow)


@expect("merge_twins", cases.square_and_power, (vector(3),))
def equal_contributions_are_merged(fast, slow):
    assert fast.count("dx += ") == 1 and "2 * dsum_1 * x" in fast       # x * x: one product, doubled
    assert slow.count("dx += ") == 2 and "2 * dsum_1" not in slow


@expect("constant_folding", cases.square_and_power, (vector(3),))
def constants_are_folded(fast, slow):
    assert "2 - 1" not in fast and "2 - 1" in slow


@expect("shapes", cases.broadcast, (vector((2, 3)), vector(3)), (0, 1))
def unbroadcast_only_where_shapes_differ(fast, slow):
    assert "unbroadcast" not in fast and "sum_to(" in fast        # x needs none; b is summed over rows
    assert slow.count("unbroadcast") == 2 and "sum_to(" not in slow


@expect("dot", cases.scale, (0.3, vector(3)))
def the_sum_of_a_product_of_vectors_is_a_dot_product(fast, slow):
    assert "np.cos(prod) @ v" in fast and "np.sum(" not in backward(fast)
    assert "@" not in slow and "np.sum(" in backward(slow)


@expect("drop_broadcasts", cases.square, (vector(3),))
def no_broadcast_in_a_product_with_a_value_of_the_shape(fast, slow):
    assert "broadcast_to" not in fast and "np.broadcast_to(dsum, (n_x,)) * x" in slow


@expect("simplify_arithmetic", cases.negated_terms, (vector(3),))
def a_negated_term_is_subtracted(fast, slow):
    assert "dx -= da * sin * sin" in fast and "-(" not in backward(fast) and "0.5" not in backward(fast)
    assert "dx += -(da * sin) * sin" in slow and "2 * (da * 0.5 / sqrt * x)" in slow


@expect("float_math", cases.loop, (0.7, 5), base=PER_TRIP)
def scalar_backward_code_uses_math(fast, slow):
    assert "math.cos(y)" in fast and "np.cos" not in fast
    assert "math." not in slow and "np.cos(y)" in slow


@expect("scalar_expressions", cases.polynomial, (0.7, 5), base=PER_TRIP)
def arithmetic_on_numbers_is_one_expression(fast, slow):
    assert "dy = dy + dprod_3 * (prod * y_1) + dprod * prod + 0.5 * dprod * y_1 + 2 * ddiff * y_1" in fast
    assert "dy +=" not in fast and "prod_2" not in fast
    assert "prod_2 = prod * y_1" in slow and slow.count("dy += ") == 3


@expect("coefficient_arrays", cases.loop, (0.7, 5))
def a_float_loops_coefficients_are_formed_for_all_trips_at_once(fast, slow):
    assert "y_rows = y_stack.pop_floats(trips)" in fast and "sin_values = sin_stack.pop_floats(trips).tolist()" in fast
    assert "dy_factors = (x * np.cos(y_rows)).tolist()" in fast
    assert "for sin, dy_factor in zip(sin_values, dy_factors):" in fast
    assert "dx = dx + dy * sin" in fast and "dy = dy * dy_factor" in fast and ".pop()" not in fast
    assert "pop_floats" not in slow and "dy = dy * x * math.cos(y)" in slow


@expect("dead_primal_code", cases.loss_with_unread_parts, (vector(3),))
def the_forward_sweep_computes_what_the_backward_sweep_reads(fast, slow):
    assert "np.exp" not in fast and "check_scalar" not in fast and "np.sum" not in fast
    assert "unused = np.exp(x) * 3.0" in slow and "check_scalar(np.sum(y * z), 'loss_with_unread_parts')" in slow


@expect("in_place_accumulation", cases.loop, (0.7, 5), base=PER_TRIP)
def adjoints_accumulate_in_place(fast, slow):
    assert "dx += dy * sin" in fast
    assert "+=" not in backward(slow) and "dx = dx + dy * sin" in slow


@expect("in_place_writes", cases.writes, (vector(5),))
def writes_run_in_place(fast, slow):
    assert "y[i] = " in fast and "setitem(" not in forward(fast)
    assert "y[i] = " not in forward(slow) and "setitem(y" in forward(slow)


@expect("batched_accumulation", cases.rnn, (vector((3, 3)) * 0.5, vector(3), vector((4, 3))), (0, 1, 2))
def weight_gradients_are_summed_once_after_the_loop(fast, slow):
    assert "dW = dmatmul_rows.T @ h_rows" in fast and "dW = zeros_like" not in fast
    assert "_rows.append(" not in slow and "_rows.T @" not in slow and "dW += np.outer(dmatmul, h" in slow


@expect("vectorize", cases.rnn, (vector((3, 3)) * 0.5, vector(3), vector((4, 3))), (0, 1, 2))
def primal_arithmetic_of_a_backward_loop_runs_on_all_trips_at_once(fast, slow):
    assert "h_stack.pop_rows(trips + 1)" in fast and "dmatmul_rows = h_2_rows * h_2_rows" in fast
    assert "pop_rows" not in slow and "dmatmul = dh * (1.0 - h_2 * h_2)" in slow


@expect("rows_in_place", cases.rnn, (vector((3, 3)) * 0.5, vector(3), vector((4, 3))), (0, 1, 2))
def products_are_written_into_the_rows_of_terms(fast, slow):
    assert "np.subtract(1.0, dmatmul_rows, out=dmatmul_rows)" in fast
    assert "for dmatmul in dmatmul_rows:" in fast and "dmatmul *= dh" in fast and ".append(" not in fast
    assert "h_2_terms = 1.0 - h_2_rows * h_2_rows" in slow and "dmatmul = dh * h_2_term" in slow
    assert "dmatmul_rows.append(dmatmul)" in slow and "dmatmul_rows = np.array(dmatmul_rows)" in slow


@pytest.mark.parametrize("name", list(sg.OPTIMIZATIONS))
def test_switching_one_off_changes_only_the_code(name):
    fn, args, wrt, check, base = EXPECTED[name]  # a new optimization needs an expectation above
    check(*without(name, fn, args, wrt, base))


def test_every_expectation_names_an_optimization():
    assert set(EXPECTED) == set(sg.OPTIMIZATIONS)


# ---------------------------------------------------------------- what optimize= accepts

def test_false_is_the_empty_set_and_true_is_every_optimization():
    kinds = ("scalar", "int")
    assert resolve(False) == frozenset() and resolve(True) == frozenset(sg.OPTIMIZATIONS)
    assert sg.api.reverse.generated(cases.loop, ["x"], "grad", kinds, optimize=False) \
        is sg.api.reverse.generated(cases.loop, ["x"], "grad", kinds, optimize=[])
    assert sg.api.reverse.generated(cases.loop, ["x"], "grad", kinds, optimize=True) \
        is sg.api.reverse.generated(cases.loop, ["x"], "grad", kinds, optimize=list(sg.OPTIMIZATIONS))


def test_different_sets_do_not_share_generated_code():
    kinds = ("scalar", "int")
    everything = sg.api.reverse.generated(cases.loop, ["x"], "grad", kinds)
    one_less = sg.api.reverse.generated(cases.loop, ["x"], "grad", kinds, optimize=ALL - {"float_math"})
    assert one_less is not everything and one_less.source != everything.source


def test_naive_scheme_gives_the_same_gradient():
    W, h, xs = vector((3, 3)) * 0.5, vector(3), vector((4, 3))
    for fast, slow in zip(grads(cases.rnn, (W, h, xs), (0, 1, 2), True),
                          grads(cases.rnn, (W, h, xs), (0, 1, 2), False)):
        np.testing.assert_allclose(slow, fast, rtol=1e-12)


def test_unknown_name_is_an_error_with_the_names_as_hint():
    with pytest.raises(sg.S2SGradError, match="unknown optimization") as error:
        sg.grad(cases.loop, optimize={"resue"})
    assert "did you mean 'reuse'" in error.value.hint
    assert all(name in error.value.hint for name in sg.OPTIMIZATIONS)


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_an_optimization_without_the_one_it_needs_is_an_error(name):
    needed = NEEDS[name]
    with pytest.raises(sg.S2SGradError, match=f"optimization '{name}' needs '{needed}'") as error:
        sg.grad(cases.loop, optimize=ALL - {needed} - (needing(needed) - {name}))
    assert error.value.hint == f"add '{needed}', or leave out '{name}'"


def test_optimize_takes_a_collection_of_names_not_one():
    with pytest.raises(sg.S2SGradError, match="collection of optimization names") as error:
        sg.grad(cases.loop, optimize="reuse")
    assert "OPTIMIZATIONS" in error.value.hint


def test_sparse_gradients_need_symbolic_zeros():
    with pytest.raises(sg.S2SGradError, match="sparse=True needs the optimization 'symbolic_zeros'"):
        sg.grad(cases.gather, sparse=True, optimize=False)


def test_sparse_gradient_of_a_gather():
    W, idx = rng.standard_normal((50, 4)), np.array([3, 3, 7])
    g = sg.grad(cases.gather, sparse=True)(W, idx)
    assert g.values.shape == (3, 4)
    np.testing.assert_allclose(g.dense(), sg.grad(cases.gather, optimize=False)(W, idx))


def test_every_optimization_is_documented():
    design = (Path(__file__).parent.parent / "docs" / "design.md").read_text()
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    for name, description in sg.OPTIMIZATIONS.items():
        assert f"| `{name}` |" in design                  # a row of the table in "Optimizations"
        assert f"`{name}`" in readme
        assert "\n" not in description
    for name, needed in NEEDS.items():
        assert f"needs {needed}" in sg.OPTIMIZATIONS[name]


# ---------------------------------------------------------------- left out only where nothing can tell

def test_value_and_grad_still_computes_the_value_grad_leaves_out():
    x = vector(3)
    value, grad = sg.value_and_grad(cases.loss_with_unread_parts)(x)
    assert value == cases.loss_with_unread_parts(x)
    np.testing.assert_allclose(grad, np.cos(2 * x), rtol=1e-12)              # d/dx sum(sin x cos x)
    assert "np.sum(y * z)" in sg.source(cases.loss_with_unread_parts, args=(x,), mode="value_and_grad")


def test_a_recurrence_written_into_an_array_costs_o1_per_step_backward():
    x = vector(50)
    fast = backward(sg.source(cases.recurrence_written, args=(x,)))
    assert "dy[i] = 0.0" in fast and "dy[diff] += " in fast
    assert "setitem(" not in fast and "scatter(" not in fast and "dy_" not in fast     # one buffer, no copies
    slow = backward(sg.source(cases.recurrence_written, args=(x,),
                              optimize=set(sg.OPTIMIZATIONS) - {"in_place_accumulation"}))
    assert "setitem(densify(" in slow
    expected = sg.grad(cases.recurrence_written, optimize=False)(x)
    np.testing.assert_array_equal(sg.grad(cases.recurrence_written)(x), expected)
    assert sg.check_grad(cases.recurrence_written, x[:8]) < 1e-7


@pytest.mark.parametrize("fn, error", [(cases.unread_broadcast_error, ValueError),
                                       (cases.unread_index_error, IndexError)])
def test_unread_code_that_may_raise_still_runs(fn, error):
    with pytest.raises(error):
        fn(vector(3))
    with pytest.raises(error):
        sg.grad(fn)(vector(3))


# ---------------------------------------------------------------- in place only into the gradient's own buffers

def test_batched_sums_are_not_added_into_a_read_only_broadcast():
    W, h, xs = vector((3, 3)) * 0.5, vector(3), vector((4, 3))
    assert sg.check_grad(cases.rnn_and_weight_sum, W, h, xs) < 1e-7
    assert "dW += " not in sg.source(cases.rnn_and_weight_sum, args=(W, h, xs))


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_seed_carried_through_a_loop_of_any_trips_is_left_alone(n):
    x, w = vector(2), vector(2)
    seed = np.array([1.0, 2.0])
    _, (dx, dw) = sg.vjp(cases.seed_carried_through_a_loop, (0, 1))(x, w, n, seed)
    np.testing.assert_array_equal(seed, [1.0, 2.0])
    assert not np.shares_memory(dx, seed) and not np.shares_memory(dw, seed)
    _, (slow_dx, slow_dw) = sg.vjp(cases.seed_carried_through_a_loop, (0, 1), optimize=False)(x, w, n, seed)
    np.testing.assert_allclose(dx, slow_dx, rtol=1e-14)
    np.testing.assert_allclose(dw, slow_dw, rtol=1e-14)


def test_batched_sums_leave_the_callers_seed_alone():
    W, h, xs = vector((3, 3)) * 0.5, vector(3), vector((4, 3))
    seed = np.ones((3, 3))
    _, dW = sg.vjp(cases.rnn_plus_weight)(W, h, xs, seed)
    np.testing.assert_array_equal(seed, np.ones((3, 3)))
    assert not np.shares_memory(dW, seed)


def test_float_math_twins_give_numpys_results_bit_for_bit():
    from s2sgrad.transforms.adjoint_templates import SCALAR_TWINS
    values = np.concatenate([rng.standard_normal(20000) * scale for scale in (1e-3, 1.0, 10.0, 1e4)])
    for numpy_name, math_name in SCALAR_TWINS.items():
        numpy_f, math_f = getattr(np, numpy_name), getattr(math, math_name)
        assert all(math_f(v) == numpy_f(v) for v in values.tolist()), numpy_name
