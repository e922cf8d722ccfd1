"""Each optimization is visible in the generated code, and optimize=False (the naive scheme) turns it off
while computing the same gradient."""
import numpy as np

import s2sgrad as sg

import optimization_cases as cases

rng = np.random.default_rng(0)


def both(fn, args, wrt=0):
    """Optimized and naive source, after checking that both give the same gradient."""
    fast = sg.grad(fn, wrt)(*args)
    slow = sg.grad(fn, wrt, optimize=False)(*args)
    for a, b in zip(fast if isinstance(wrt, tuple) else [fast], slow if isinstance(wrt, tuple) else [slow]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    return sg.source(fn, wrt, args=args), sg.source(fn, wrt, args=args, optimize=False)


def test_push_only_what_the_backward_sweep_reads():
    fast, slow = both(cases.loop, (0.7, 5))
    assert fast.count(".push(") == 2 and "i_stack" not in fast          # y and sin; not the counter
    assert slow.count(".push(") > fast.count(".push(")


def test_inactive_values_get_no_adjoint_code():
    fast, _ = both(cases.unused_branch, (rng.standard_normal(3), rng.standard_normal(3)))
    assert "dw" not in fast and "dcos" not in fast


def test_symbolic_zeros():
    fast, slow = both(cases.reuse, (rng.standard_normal(3),))
    assert "zeros_like" not in fast and "zeros_like" in slow


def test_equal_contributions_and_constant_folding():
    fast, slow = both(cases.square_and_power, (rng.standard_normal(3),))
    assert "2 - 1" not in fast and "** (2 - 1)" in slow.replace("**(2 - 1)", "** (2 - 1)")
    assert "2 * (" in fast                                     # x * x: one product, doubled


def test_primal_values_are_reused():
    fast, slow = both(cases.reuse, (rng.standard_normal(3),))
    assert "np.cos(x)" not in fast.split("# backward sweep")[1]
    assert "np.cos(x)" in slow.split("# backward sweep")[1]


def test_in_place_accumulation_and_batched_weight_gradients():
    W, h, xs = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3), rng.standard_normal((4, 3))
    fast, slow = both(cases.rnn, (W, h, xs), wrt=(0, 1, 2))
    assert "dW += dmatmul_rows.T @ h_rows" in fast and "_rows.append(" in fast
    assert "dW += " not in slow and "dW = dW + " in slow


def test_unbroadcast_only_where_shapes_differ():
    x, b = rng.standard_normal((2, 3)), rng.standard_normal(3)
    fast, slow = both(cases.broadcast, (x, b), wrt=(0, 1))
    assert "unbroadcast" not in fast and "sum_to(" in fast        # x needs none; b is summed over rows
    assert slow.count("unbroadcast") == 2


def test_sparse_gradient_of_a_gather():
    W, idx = rng.standard_normal((50, 4)), np.array([3, 3, 7])
    g = sg.grad(cases.gather, sparse=True)(W, idx)
    assert g.values.shape == (3, 4)
    np.testing.assert_allclose(g.dense(), sg.grad(cases.gather, optimize=False)(W, idx))


def test_writes_in_place():
    fast, slow = both(cases.writes, (rng.standard_normal(5),))
    assert "y[i] = " in fast and "setitem(" not in fast.split("# backward sweep")[0]
    assert "setitem(y" in slow


def test_batched_sums_are_not_added_into_a_read_only_broadcast():
    W, h, xs = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3), rng.standard_normal((4, 3))
    assert sg.check_grad(cases.rnn_and_weight_sum, W, h, xs) < 1e-7
    assert "dW += " not in sg.source(cases.rnn_and_weight_sum, args=(W, h, xs))


def test_batched_sums_leave_the_callers_seed_alone():
    W, h, xs = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3), rng.standard_normal((4, 3))
    seed = np.ones((3, 3))
    _, dW = sg.vjp(cases.rnn_plus_weight)(W, h, xs, seed)
    np.testing.assert_array_equal(seed, np.ones((3, 3)))
    assert not np.shares_memory(dW, seed)
