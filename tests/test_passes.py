"""The back end's passes, one at a time on small functions, and the loop that runs them in order
(s2sgrad/pipeline/driver.py: GRADIENT_PASSES, run_passes; forward mode's FORWARD_PASSES)."""
import ast
import textwrap

import pytest

from s2sgrad.backend.codegen import comment_line, render
from s2sgrad.ir.names import Names
from s2sgrad.ir.syntax import noted, with_shape
from s2sgrad.optimizations import ALL, OPTIMIZATIONS
from s2sgrad.pipeline.driver import GRADIENT_PASSES, BackwardSweep, GeneratedFunction, Pass, run_passes
from s2sgrad.pipeline.forward import FORWARD_PASSES
from s2sgrad.transforms.reverse import RowStack

PASSES = {p.name: p for p in FORWARD_PASSES}


def function(text: str) -> ast.FunctionDef:
    return ast.parse(textwrap.dedent(text)).body[0]


def code(text: str, temporaries=(), **fields) -> GeneratedFunction:
    names = Names()
    names.temporary |= set(temporaries)
    return GeneratedFunction(function(text), names, **fields)


def after(name: str, generated: GeneratedFunction) -> str:
    return ast.unparse(ast.fix_missing_locations(PASSES[name].run(generated).node))


def same(text: str) -> str:
    return ast.unparse(function(text))


def test_the_passes_in_order_and_the_optimizations_that_switch_them():
    assert [(p.name, p.optimization) for p in GRADIENT_PASSES] == [
        ("unshare", None), ("fold", None), ("drop_broadcasts", "drop_broadcasts"),
        ("simplify_arithmetic", "simplify_arithmetic"), ("vectorize", "vectorize"), ("coalesce", None),
        ("range_loops", None), ("scalar_expressions", "scalar_expressions"),
        ("coefficient_arrays", "coefficient_arrays"),
        ("merge_collections", "batched_accumulation")]
    assert FORWARD_PASSES == (PASSES["unpack_tuples"], *GRADIENT_PASSES)
    assert all(p.optimization in OPTIMIZATIONS for p in FORWARD_PASSES if p.optimization is not None)


def test_run_passes_runs_each_in_turn_and_skips_those_switched_off():
    seen = []

    def step(label):
        def run(generated):
            seen.append(label)
            return generated
        return run

    passes = [Pass("a", step("a")), Pass("b", step("b"), "vectorize"), Pass("c", step("c"), "reuse")]
    generated = code("def f(x):\n    return x")
    assert run_passes(generated, passes, {"reuse"}) is generated
    assert seen == ["a", "c"]
    seen.clear()
    run_passes(generated, passes, ALL)
    assert seen == ["a", "b", "c"]


def test_unshare_gives_a_node_used_twice_a_copy_of_its_own():
    fn = function("def f(x):\n    return x")
    shared = ast.Name("t", ast.Load())
    fn.body[0].value = ast.BinOp(shared, ast.Mult(), shared)
    node = PASSES["unshare"].run(GeneratedFunction(fn, Names())).node
    product = node.body[0].value
    assert product.left is not product.right and ast.unparse(node.body[0]) == "return t * t"


def test_fold_inlines_a_temporary_read_once_and_only_a_temporary():
    text = """
        def f(x):
            t = np.sin(x)
            y = np.cos(x)
            return t * y
        """
    assert after("fold", code(text, temporaries={"t", "y"})) == same("def f(x):\n    return np.sin(x) * np.cos(x)")
    assert after("fold", code(text, temporaries={"t"})) == \
        same("def f(x):\n    y = np.cos(x)\n    return np.sin(x) * y")


def test_fold_keeps_fixed_names_and_moves_no_call_across_an_impure_one():
    text = """
        def f(x):
            t = np.sin(x)
            r = g_forward(x)
            return t * r
        """
    assert after("fold", code(text, temporaries={"t"}, fixed=frozenset({"t"}))) == same(text)
    assert after("fold", code(text, temporaries={"t"}, impure_calls=frozenset({"g_forward"}))) == same(text)
    assert after("fold", code(text, temporaries={"t"})) == \
        same("def f(x):\n    r = g_forward(x)\n    return np.sin(x) * r")
    pops = """
        def f(s):
            t = s.pop()
            u = s.pop()
            return u - t
        """
    assert after("fold", code(pops, temporaries={"t", "u"})) == same(pops)


def test_fold_writes_a_loop_that_tests_first_as_while_c():
    text = """
        def f(x):
            while True:
                if not x < 5.0:
                    break
                x = x * 2
            return x
        """
    assert after("fold", code(text)) == same("def f(x):\n    while x < 5.0:\n        x = x * 2\n    return x")


def test_drop_broadcasts_where_the_other_factor_has_the_shape():
    fn = function("def f(e, v, w):\n    return np.broadcast_to(e, (3,)) * v + np.broadcast_to(e, (3,)) * w")
    with_shape(fn.body[0].value.left.right, (3,))            # v has shape (3,); w's shape is unknown
    result = PASSES["drop_broadcasts"].run(GeneratedFunction(fn, Names())).node
    assert ast.unparse(result) == same("def f(e, v, w):\n    return e * v + np.broadcast_to(e, (3,)) * w")


def test_drop_broadcasts_through_a_name_every_read_of_which_is_such_a_factor():
    fn = function("""
        def f(e, v):
            b = np.broadcast_to(e, (2, 2))
            return -b * v
        """)
    with_shape(fn.body[1].value.right, (2, 2))
    result = PASSES["drop_broadcasts"].run(GeneratedFunction(fn, Names())).node
    assert ast.unparse(result) == same("def f(e, v):\n    return -e * v")


def test_simplify_arithmetic_turns_an_added_negation_into_a_subtraction():
    assert after("simplify_arithmetic", code("def f(g, a, b):\n    g += -(a * b)\n    return g")) == \
        same("def f(g, a, b):\n    g -= a * b\n    return g")


BACKWARD = """
    def f_backward(dh, trips):
        for _ in range(trips):
            h = h_stack.pop()
            dz = dh * (1.0 - h * h)
            dh = dz
        return dh
    """


def backward_code(trip_loops) -> GeneratedFunction:
    generated = code(BACKWARD)
    loops = [generated.node.body[0]] if trip_loops else []
    generated.backward = BackwardSweep(None, loops, {"h_stack": RowStack((3,), None)})
    return generated


def test_vectorize_computes_the_primal_only_terms_of_all_trips_before_the_loop():
    assert after("vectorize", backward_code(trip_loops=True)) == same("""
        def f_backward(dh, trips):
            h_rows = h_stack.pop_rows(trips)
            h_terms = 1.0 - h_rows * h_rows
            for h_term in h_terms:
                dz = dh * h_term
                dh = dz
            return dh
        """)


def test_vectorize_rewrites_only_the_loops_the_reverse_stage_handed_over_and_only_in_the_backward_sweep():
    assert after("vectorize", backward_code(trip_loops=False)) == same(BACKWARD)
    generated = backward_code(trip_loops=True)
    generated.node.body.insert(1, comment_line("backward sweep"))
    generated.backward.after = generated.node.body[1]        # the loop comes before the backward sweep
    unchanged = ast.unparse(generated.node)
    assert after("vectorize", generated) == unchanged
    assert after("vectorize", code(BACKWARD)) == same(BACKWARD)     # no backward sweep at all


def test_backward_sweep_starts_after_its_line_or_at_the_top():
    body = [ast.Pass(), comment_line("backward sweep"), ast.Pass()]
    assert BackwardSweep(body[1]).start(body) == 2
    assert BackwardSweep(None).start(body) == 0


def test_coalesce_gives_a_value_and_its_copy_one_name_unless_fixed():
    text = """
        def f(x):
            y_1 = x * 2
            y_2 = y_1
            return y_2
        """
    assert after("coalesce", code(text, temporaries={"y_1", "y_2"})) == same("def f(x):\n    y = x * 2\n    return y")
    assert after("coalesce", code(text, fixed=frozenset({"y_1", "y_2"}))) == same(text)


def test_merge_collections_makes_lists_of_one_value_one_list():
    text = """
        def f(xs):
            a_rows = []
            b_rows = []
            for x in xs:
                a_rows.append(x)
                b_rows.append(x)
            a_rows = np.array(a_rows)
            b_rows = np.array(b_rows)
            return a_rows @ b_rows.T
        """
    assert after("merge_collections", code(text)) == same("""
        def f(xs):
            a_rows = []
            for x in xs:
                a_rows.append(x)
            a_rows = np.array(a_rows)
            return a_rows @ a_rows.T
        """)


def test_unpack_tuples_reads_a_popped_pair_in_one_assignment():
    text = """
        def f(h_stack):
            popped = stack_pop(h_stack)
            h_stack = popped[0]
            h = popped[1]
            return h
        """
    assert after("unpack_tuples", code(text)) == same("def f(h_stack):\n    h_stack, h = stack_pop(h_stack)\n    return h")


@pytest.mark.parametrize("optimizations, expected", [
    (ALL, "def f(g, a, b):\n    g -= a * b\n    return g"),
    (ALL - {"simplify_arithmetic"}, "def f(g, a, b):\n    g += -(a * b)\n    return g"),
])
def test_all_passes_together(optimizations, expected):
    text = "def f(g, a, b):\n    t = -(a * b)\n    g += t\n    return g"
    assert ast.unparse(run_passes(code(text, temporaries={"t"}), GRADIENT_PASSES, optimizations).node) == \
        same(expected)


def test_render_prints_a_note_and_the_sweep_lines():
    fn = function("def f(x):\n    s = Stack()\n    return x")
    fn.body = [comment_line("forward sweep"), noted(fn.body[0], "for dx"), fn.body[1]]
    assert render([fn]) == "def f(x):\n    # forward sweep\n    s = Stack()  # for dx\n    return x\n"
