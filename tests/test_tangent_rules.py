"""Every tangent (forward-mode) rule against central finite differences, on the same calls as the adjoint
rules (tests/test_rules.py) plus the runtime helpers generated gradients call; and the symbolic zeros:
an argument without a tangent adds no arithmetic on zeros to the generated code.

The rules are inlined at one call site (see tangent_harness.py), not run through `s2sgrad.jvp`.
"""
import ast

import numpy as np
import pytest
from rule_harness import Case, random_like
from tangent_harness import check_tangent, rule_jvp
from test_rules import ARGS_AND_KWARGS, CASES, COMPLEX_CASES, HAND_CHECKED, Layer, arrays, mapping, normal, with_zeros

from s2sgrad import runtime
from s2sgrad.ir import primitives
from s2sgrad.rules import rule_for, tangent_rule_for
from s2sgrad.rules.registry import _RULES, _TANGENT_ONLY

# --- the runtime helpers of generated gradients: linear in the gradient, the rest gives shapes -----------


def case(primitive, *args, wrt=(0,), name="", **kwargs):
    return Case(primitive, args, kwargs, tuple(wrt), name)


HELPER_CASES = [
    case(runtime.unbroadcast, normal(3, 4), normal(4), name="unbroadcast"),
    case(runtime.unbroadcast, normal(3, 4), normal(3, 1), name="unbroadcast-keepdims"),
    case(runtime.sum_to, normal(3, 4), (3, 1), name="sum_to"),
    case(runtime.unreduce, normal(3), normal(3, 4), 1, name="unreduce"),
    case(runtime.unreduce, normal(3, 1), normal(3, 4), 1, True, name="unreduce-keepdims"),
    case(runtime.scatter, normal(2), normal(5), np.array([1, 1]), name="scatter"),
    case(runtime.scatter, normal(3, 2), normal(4, 2), np.array([0, 2, 2]), name="scatter-rows"),
    case(runtime.seq_scatter, normal(3), [np.zeros(3), np.zeros(2)], 0, name="seq_scatter"),
    case(runtime.seq_written, lambda rng: [rng.standard_normal(3), rng.standard_normal(2)], 1, np.zeros(2),
         name="seq_written"),
    case(runtime.seq_unwritten, lambda rng: [rng.standard_normal(3), rng.standard_normal(2)],
         [np.zeros(3), np.zeros(4)], 1, np.zeros(2), name="seq_unwritten"),
    case(runtime.seq_unrepeat, lambda rng: [rng.standard_normal(3), rng.standard_normal(3)], [np.zeros(3)],
         name="seq_unrepeat"),
    case(runtime.densify, normal(3), name="densify"),
    case(runtime.add_grads, normal(3), normal(3), wrt=(0, 1), name="add_grads"),
    case(runtime.add_grads, lambda rng: [rng.standard_normal(2), rng.standard_normal(3)],
         lambda rng: [rng.standard_normal(2), rng.standard_normal(3)], wrt=(0, 1), name="add_grads-lists"),
    case(runtime.grad_or_zeros, normal(3), normal(3), name="grad_or_zeros"),
    case(runtime.seq_add_at, lambda rng: [rng.standard_normal(3), rng.standard_normal(2)], normal(2),
         [np.zeros(3), np.zeros(2)], 1, wrt=(0, 1), name="seq_add_at"),
    case(runtime.no_grads, normal(3), name="no_grads"),
    case(runtime.complete, normal(3), normal(3), name="complete"),
    case(runtime.unstack, normal(2, 3), [np.zeros(3), np.zeros(3)], name="unstack"),
    case(runtime.unconcatenate, normal(5, 2), [np.zeros((2, 2)), np.zeros((3, 2))], name="unconcatenate"),
    case(runtime.untile, normal(2, 6), normal(2, 3), (1, 2), name="untile"),
    case(runtime.unrepeat, normal(6), normal(3), 2, name="unrepeat"),
    case(runtime.undiagonal, normal(3), normal(3, 4), name="undiagonal"),
    case(runtime.untake, normal(3), normal(5), [0, 0, 4], name="untake"),
    case(runtime.matmul_grad_a, normal(3, 5), normal(3, 4), normal(4, 5), wrt=(0, 2), name="matmul_grad_a"),
    case(runtime.matmul_grad_a, normal(3), normal(3, 4), normal(4), wrt=(0, 2), name="matmul_grad_a-vector"),
    case(runtime.matmul_grad_b, normal(3, 5), normal(3, 4), normal(4, 5), wrt=(0, 1), name="matmul_grad_b"),
    case(runtime.matmul_grad_b, normal(3), normal(3, 4), normal(4), wrt=(0, 1), name="matmul_grad_b-vector"),
    case(runtime.fitted, normal(3, 5), np.zeros((3, 4)), [1], name="fitted"),
    case(runtime.rfft_grad, lambda rng: rng.standard_normal(5) + 1j * rng.standard_normal(5), np.zeros(8),
         name="rfft_grad"),
    case(runtime.irfft_grad, normal(8), np.zeros(5, complex), name="irfft_grad"),
    case(runtime.hfft_grad, normal(8), np.zeros(5, complex), name="hfft_grad"),
    case(runtime.ihfft_grad, lambda rng: rng.standard_normal(5) + 1j * rng.standard_normal(5), np.zeros(8),
         name="ihfft_grad"),
    case(runtime.rfftn_grad, lambda rng: rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)),
         np.zeros((3, 4)), name="rfftn_grad"),
    case(runtime.irfftn_grad, normal(3, 4), np.zeros((3, 3), complex), name="irfftn_grad"),
    case(runtime.kron_grad_a, normal(6, 6), normal(2, 3), normal(3, 2), wrt=(0, 2), name="kron_grad_a"),
    case(runtime.kron_grad_b, normal(6, 6), normal(2, 3), normal(3, 2), wrt=(0, 1), name="kron_grad_b"),
    case(runtime.tensordot_grad_a, normal(3, 5), normal(3, 4), normal(4, 5), 1, wrt=(0, 2),
         name="tensordot_grad_a"),
    case(runtime.tensordot_grad_b, normal(3, 5), normal(3, 4), normal(4, 5), 1, wrt=(0, 1),
         name="tensordot_grad_b"),
    case(runtime.einsum_grad, normal(3, 5), "ij,jk->ik", lambda rng: (rng.standard_normal((3, 4)),
                                                                       rng.standard_normal((4, 5))),
         wrt=(0, 2), name="einsum_grad"),
    case(runtime.broadcast_like, normal(4), normal(3, 4), name="broadcast_like"),
    case(runtime.stack_push, lambda rng: runtime.Stack([rng.standard_normal(2)]), normal(2), wrt=(0, 1),
         name="stack_push"),
    case(runtime.stack_pop, lambda rng: runtime.Stack([rng.standard_normal(2), rng.standard_normal(3)]),
         name="stack_pop"),
    case(runtime.stack_pop_rows, lambda rng: runtime.Stack([rng.standard_normal(3) for _ in range(3)]), 2,
         name="stack_pop_rows"),
]
if hasattr(runtime, "written"):
    HELPER_CASES.append(case(runtime.written, normal(5), np.array([1, 3]), name="written"))

HELPER_CASES += [
    case(runtime.unsort, normal(3, 4), normal(3, 4), 0, name="unsort"),
    case(runtime.unsort, normal(12), normal(3, 4), None, name="unsort-none"),
    case(runtime.sorted_like, normal(3, 4), normal(3, 4), name="sorted_like"),
    case(runtime.sorted_like, normal(3, 4), normal(3, 4), None, name="sorted_like-none"),
    case(runtime.uncast, normal(3), normal(3), float, name="uncast"),
    case(runtime.uncast, normal(3), normal(3), int, name="uncast-int"),
    case(runtime.cast_tangent, normal(3), np.float64, name="cast_tangent"),
    case(runtime.divide_or_zero, normal(3), lambda rng: rng.uniform(0.5, 2.0, 3), wrt=(0, 1), name="divide_or_zero"),
    case(runtime.divide_or_zero, normal(3), np.array([0.0, 1.5, 0.0]), wrt=(0,), name="divide_or_zero-zeros"),
    case(runtime.product_of_others, normal(5), name="product_of_others"),
    case(runtime.product_of_others, with_zeros(5, at=((1,),)), name="product_of_others-zero"),
    case(runtime.product_of_others, with_zeros(5, at=((1,), (3,))), name="product_of_others-zeros2"),
    case(runtime.product_of_others, with_zeros(5, at=((0,), (1,), (3,))), name="product_of_others-zeros3"),
    case(runtime.product_of_others, with_zeros(2, 3, at=((1,), (3,))), 1, name="product_of_others-axis"),
    case(runtime.product_of_others, with_zeros(2, 3, at=((1,), (4,))), (0, 1), name="product_of_others-axes"),
    case(runtime.cumprod_grad, normal(5), normal(5), lambda rng: rng.uniform(0.5, 1.5, 5), wrt=(0, 1, 2),
         name="cumprod_grad"),
    case(runtime.cumprod_grad, normal(2, 3), normal(2, 3), lambda rng: rng.uniform(0.5, 1.5, (2, 3)), 1,
         wrt=(0, 1, 2), name="cumprod_grad-axis"),
]
# the gradients of Python's builtins max, min, sorted, list, math.prod
HELPER_CASES += [
    case(runtime.extremum_grads, normal(), (np.array([0.5, 2.0, 1.0]),), 2.0, name="extremum_grads-array"),
    case(runtime.extremum_grads, normal(), (1.0, 2.0, 2.0), 2.0, name="extremum_grads-ties"),
    case(runtime.extremum_grads, normal(), (1.0, -2.0), -2.0, abs, name="extremum_grads-key"),
    case(runtime.default_grad, normal(), ([],), 0.5, name="default_grad"),
    case(runtime.extremum_tangent, lambda rng: (rng.standard_normal(3),), (np.array([0.5, 2.0, 1.0]),), 2.0,
         name="extremum_tangent"),
    case(runtime.picked_grads, normal(), np.zeros(3), 1, name="picked_grads"),
    case(runtime.unsorted_grads, lambda rng: list(rng.standard_normal(3)), [2.0, 1.0, 3.0], [1, 0, 2],
         name="unsorted_grads"),
    case(runtime.sorted_tangent, lambda rng: list(rng.standard_normal(3)), [1, 0, 2], name="sorted_tangent"),
    case(runtime.listed_grads, lambda rng: list(rng.standard_normal(3)), np.zeros(3), name="listed_grads"),
    case(runtime.product_grads, normal(), lambda rng: list(rng.standard_normal(3)), wrt=(0, 1),
         name="product_grads"),
    case(runtime.product_grads, normal(), normal(3), normal(), wrt=(0, 1, 2), name="product_grads-array-start"),
]

HELPER_CASES += [
    case(runtime.undiff, normal(4, 3), 2, 0, name="undiff"),
    case(runtime.ungradient, lambda rng: (rng.standard_normal((4, 3)), rng.standard_normal((4, 3))), np.zeros((4, 3)),
         0.5, name="ungradient"),
    case(runtime.unpad, normal(5, 6), np.zeros((3, 4)), ((1, 1), (2, 0)), "reflect", name="unpad"),
    case(runtime.untake_along_axis, normal(3, 2), np.zeros((3, 4)), np.array([[0, 0], [3, 1], [2, 2]]), 1,
         name="untake_along_axis"),
    case(runtime.full_convolution, normal(4), np.zeros(6), np.zeros(3), "valid", name="full_convolution"),
    case(runtime.weights_like, normal(3), np.zeros((3, 4)), 0, name="weights_like"),
    case(runtime.signal_full, normal(3, 4), np.zeros((4, 5)), np.zeros((2, 3)), "same", name="signal_full"),
    case(runtime.unselect, normal(3, 4), [np.array([[True], [False], [True]]), np.array([True, True, False, False])],
         [np.zeros((3, 4)), np.zeros(4)], name="unselect"),
]
# the gradients of dicts, unpacking, bound calls and records, and the tangents of dict items and record fields
BOUND = lambda rng: (rng.standard_normal(3), rng.standard_normal(4), rng.standard_normal(), {"z": rng.standard_normal(2)})  # noqa: E731
BOUND_ARGS = ([np.zeros(3)], {"z": np.zeros(2)}, (np.zeros(4), 0.0))
HELPER_CASES += [
    case(runtime.dict_unmade, mapping(a=(3,), b=(2,)), ("a", "b", "a"), name="dict_unmade"),
    case(runtime.dict_got, normal(3), {"a": np.zeros(3)}, "a", name="dict_got"),
    case(runtime.dict_of_values, arrays((3,), (2,)), {"a": np.zeros(3), "b": np.zeros(2)}, name="dict_of_values"),
    case(runtime.dict_of_values, lambda rng: [(0.0, rng.standard_normal(3)), (0.0, rng.standard_normal(2))],
         {"a": np.zeros(3), "b": np.zeros(2)}, True, name="dict_of_values-items"),
    case(runtime.dict_items_tangent, mapping(a=(3,), b=(2,)), name="dict_items_tangent"),
    case(runtime.unpacked_grad, lambda rng: [rng.standard_normal(3), [rng.standard_normal(2), rng.standard_normal(4)],
                                             rng.standard_normal(1)], [np.zeros(3), np.zeros(2), np.zeros(4),
                                                                       np.zeros(1)], 1, 1, "list", name="unpacked_grad"),
    case(runtime.unpacked_grad, lambda rng: (rng.standard_normal(2), tuple(rng.standard_normal((3, 2)))),
         np.zeros((4, 2)), 1, 0, "tuple", name="unpacked_grad-array"),
    case(runtime.filled_grad, arrays((3,), (2,), (4,)), [np.zeros(3), np.zeros(2)], 1, [np.zeros(2), np.zeros(4)],
         name="filled_grad"),
    case(runtime.filled_grad, arrays((3,), (2,), (4,)), [np.zeros(3), np.zeros(2)], 1, [np.zeros(2), np.zeros(4)],
         True, name="filled_grad-defaults"),
    *[case(runtime.bound_grad, BOUND, ARGS_AND_KWARGS, *BOUND_ARGS, part, name=f"bound_grad-{part}")
      for part in ("args", "kwargs", "defaults")],
    case(runtime.field_grad, normal(3), Layer(np.zeros(3), 0.0, 2), "W", name="field_grad"),
    case(runtime.without_field, mapping(W=(3,), b=()), "W", name="without_field"),
    case(runtime.written_field, mapping(W=(3,), b=()), "W", name="written_field"),
    case(runtime.field_tangent, mapping(W=(3,), b=()), Layer(np.zeros(3), 0.0, 2), "W", name="field_tangent"),
]
ALL_CASES = CASES + HELPER_CASES


def _id(c):
    return c.name or getattr(c.primitive, "__name__", "?")


@pytest.mark.parametrize("case", [pytest.param(c, id=_id(c)) for c in ALL_CASES])
def test_tangent_matches_finite_differences(case):
    for seed in (0, 1):
        rng = np.random.default_rng(seed + 100)
        args, kwargs = case.values(rng)
        check_tangent(case.primitive, args, kwargs, case.wrt, seed)


@pytest.mark.parametrize("case", [pytest.param(c, id=_id(c)) for c in COMPLEX_CASES])
def test_tangent_of_complex_values_matches_finite_differences(case):
    """Forward mode does not know dtypes: a tangent rule of a function complex values may reach holds for them."""
    rng = np.random.default_rng(100)
    args, kwargs = case.values(rng)
    check_tangent(case.primitive, args, kwargs, case.wrt, 0)


# --- coverage -------------------------------------------------------------------------------------------

def test_every_adjoint_rule_has_a_tangent_twin():
    missing = [r.primitive for r in _RULES.values() if r.tangent is None]
    assert not missing, f"adjoint rules without a tangent rule: {missing}"


def test_every_tangent_rule_is_tested():
    tested = {id(c.primitive) for c in ALL_CASES} | HAND_CHECKED
    primitives_with_tangents = [r.primitive for r in _RULES.values()] + [r.primitive for r in _TANGENT_ONLY.values()]
    untested = [p for p in primitives_with_tangents if id(p) not in tested]
    assert not untested, f"tangent rules without a finite-difference case: {untested}"


def test_every_runtime_helper_is_differentiable_or_constant():
    """Generated gradients may call any runtime helper: forward mode must know each one."""
    from s2sgrad.rules import is_nondifferentiable
    internal = {"SparseGrad", "Like", "while_loop", "if_else", "Checkpoints", "Work", "copy_state",
                "RowBatches",                    # (of checkpointed loops, which forward mode refuses)
                "norm_grad", "einsum_tangent", "einsum_grad_tangent", "product_of_others_tangent",
                "product_tangent", "product_grads_tangent",
                "cumprod_grad_tangent_y", "cumprod_grad_tangent_a", "cumprod_tangent",
                "at_copy", "written_copy",       # (NumPy's in-place functions without a rule: refused where active)
                "random_draw",                   # a draw's value moves with its location: refused where active
                "replay",                        # read back as swap_random_state calls
                "derivative_vjp", "derivative_jvp",   # refused by forward mode, with their own message
                "format_string",                 # an f-string: no derivative flows through its text (refused)
                # adjoints and tangents of decompositions: forward over them is refused as having no rule
                "eigh_grad", "eigh_tangent", "eig_grad", "eig_tangent", "eigvals_grad", "eigvals_tangent",
                "cholesky_grad", "cholesky_tangent", "svd_grad", "svd_tangent", "pinv_grad", "pinv_tangent",
                "matrix_power_grad", "matrix_power_tangent", "tensorinv_grad", "tensorinv_tangent",
                "tensorsolve_grad_a", "tensorsolve_grad_b", "tensorsolve_tangent", "multi_dot_grad",
                "multi_dot_tangent", "cross_grad", "vector_norm_grad",
                "scipy_special", "scipy_signal"}  # modules, imported when first used: their functions have rules
    unknown = [name for name in runtime.__all__ if name not in internal and callable(getattr(runtime, name))
               and tangent_rule_for(getattr(runtime, name)) is None and not is_nondifferentiable(getattr(runtime, name))]
    assert not unknown, f"runtime helpers with neither a tangent rule nor a nondifferentiable mark: {unknown}"


def test_runtime_helpers_have_no_adjoint():
    """A helper with only a tangent rule must not look differentiable to reverse mode."""
    for rule in _TANGENT_ONLY.values():
        assert rule_for(rule.primitive) is None


# --- symbolic zeros ---------------------------------------------------------------------------------------

NEEDS_ZEROS = {id(primitives.list_append), id(primitives.setitem), id(primitives.seq_setitem),
               id(primitives.seq_concat), id(runtime.stack_push), id(np.append), id(np.select), id(np.ediff1d),
               id(runtime.dict_get), id(runtime.unpack_filled), id(runtime.bind_call), id(runtime.with_field),
               id(runtime.seq_add_at)}


def _zero_arithmetic(tree) -> list[str]:
    """``zeros_like(...)`` calls and arithmetic with a literal 0 in generated code."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "zeros_like":
            found.append(ast.unparse(node))
        if isinstance(node, ast.BinOp) and any(isinstance(s, ast.Constant) and s.value == 0
                                               for s in (node.left, node.right)):
            found.append(ast.unparse(node))
    return found


@pytest.mark.parametrize("case", [pytest.param(c, id=_id(c)) for c in ALL_CASES if len(c.wrt) > 1
                                  and id(c.primitive) not in NEEDS_ZEROS])
def test_inactive_argument_adds_no_zero_arithmetic(case):
    rng = np.random.default_rng(0)
    args, kwargs = case.values(rng)
    for w in case.wrt:
        tangent = random_like(rng, kwargs[w] if isinstance(w, str) else args[w])
        _, expansion = rule_jvp(case.primitive, args, kwargs, {w: tangent})
        code = ast.Module([*expansion.statements, ast.Expr(expansion.value)], [])
        assert not _zero_arithmetic(code), ast.unparse(code)


def test_zero_tangents_simplify():
    _, expansion = rule_jvp(np.multiply, [np.ones(3), np.ones(3)], {}, {0: np.ones(3)})
    assert ast.unparse(expansion.value) == "darg0 * arg1"
    _, expansion = rule_jvp(np.subtract, [np.ones(3), np.ones(3)], {}, {1: np.ones(3)})
    assert ast.unparse(expansion.value) == "broadcast_like(-darg1, y)"     # shapes unknown: b may widen
    _, expansion = rule_jvp(np.add, [np.ones(3), np.ones((2, 3))], {}, {0: np.ones(3)})
    assert ast.unparse(expansion.value) == "broadcast_like(darg0, y)"
    _, expansion = rule_jvp(np.where, [np.ones(3) > 0, np.ones(3), np.ones(3)], {}, {1: np.ones(3)})
    assert ast.unparse(expansion.value) == "broadcast_like(np.where(arg0, darg1, 0.0), y)"


def test_defaults_left_out_of_the_linear_call():
    _, expansion = rule_jvp(np.sum, [np.ones((2, 3))], {"axis": 1}, {0: np.ones((2, 3))})
    assert ast.unparse(expansion.value) == "np.sum(darg0, axis=1)"
    _, expansion = rule_jvp(np.linalg.norm, [np.ones(3)], {}, {0: np.ones(3)})
    assert ast.unparse(expansion.value) == "divide_or_zero(np.sum(arg0 * darg0), y)"
    _, expansion = rule_jvp(np.power, [np.ones(3), 2], {}, {0: np.ones(3)})
    assert ast.unparse(expansion.value) == "darg0 * 2 * arg0"
