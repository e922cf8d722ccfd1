"""What makes a first call fast keeps generation exactly as it was: `ir.trees.walk` is `ast.walk`,
`ir.trees.copy_tree` is `copy.deepcopy`, a called function's effects are found once per generation (and never
across generations, nor where a recursive call cut its analysis short), a function is parsed once per generation,
fresh names are those tried from ``_1`` on, coalescing finds the interference of copies as among all names, the
module is printed once, the cache directory is not scanned at the first write."""
from __future__ import annotations

import ast
import copy
import importlib.util
import inspect
import itertools
import random
import textwrap

import gast
import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg
from s2sgrad import guards
from s2sgrad.api import generation
from s2sgrad.backend import coalesce as coalesce_module
from s2sgrad.backend import source_files
from s2sgrad.backend.coalesce import coalesce, live_in
from s2sgrad.frontend import lower, parse
from s2sgrad.ir.names import Names
from s2sgrad.ir.syntax import origin, origin_of
from s2sgrad.ir.trees import Transformer, copy_tree, dumps, walk
from s2sgrad.pipeline import driver
from s2sgrad.transforms.reverse.assignments import Reuse

_modules = itertools.count()


def load(tmp_path, source: str):
    path = tmp_path / f"first_call_{next(_modules)}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def trees():
    """Syntax trees of every shape the stages walk: s2sgrad's own modules (ast and gast), generated code."""
    for module in (driver, lower, generation):
        source = inspect.getsource(module)
        yield ast.parse(source)
        yield gast.parse(source)
    yield ast.parse(sg.source(lambda x: np.sum(np.sin(x) * x)))


@pytest.mark.parametrize("tree", list(trees()))
def test_walk_yields_what_ast_walk_yields_in_its_order(tree):
    assert [id(n) for n in walk(tree)] == [id(n) for n in ast.walk(tree)]


def test_walk_takes_a_nodes_children_before_yielding_it():
    def names_seen(walker):
        seen = []
        for node in walker(ast.parse("a = b + c")):
            if isinstance(node, ast.BinOp):
                node.left = ast.Name("changed", ast.Load())
            if isinstance(node, ast.Name):
                seen.append(node.id)
        return seen
    assert names_seen(walk) == names_seen(ast.walk) == ["a", "b", "c"]


@pytest.mark.parametrize("tree", list(trees())[:3])
def test_copy_tree_is_deepcopy(tree):
    copied, expected = copy_tree(tree), copy.deepcopy(tree)
    assert ast.dump(copied, include_attributes=True) == ast.dump(expected, include_attributes=True)
    original = {id(n) for n in walk(tree)}
    assert not original & {id(n) for n in walk(copied)}


def test_copy_tree_copies_annotations_and_keeps_shared_nodes_shared():
    from s2sgrad.errors import Location
    where = Location("f.py", 3, 0, "y = x")
    shared = ast.Name("x", ast.Load())
    stmt = origin(ast.Assign([ast.Name("y", ast.Store())], ast.BinOp(shared, ast.Add(), shared)), where)
    stmt.note = ["a", "list"]                     # a mutable annotation is copied, as deepcopy copies it
    copied = copy_tree(stmt)
    assert origin_of(copied) == where
    assert copied.note == stmt.note and copied.note is not stmt.note
    assert copied.value.left is copied.value.right and copied.value.left is not shared
    copied.value.left.id = "z"
    assert shared.id == "x"


def test_a_list_of_statements_copies_as_a_list():
    body = ast.parse("a = 1\nb = a").body
    copied = copy_tree(body)
    assert isinstance(copied, list) and [ast.unparse(s) for s in copied] == ["a = 1", "b = a"]
    assert all(c is not s for c, s in zip(copied, body))


def rewriters(base):
    """Transformers of every kind of result, on `base`: a node replaced, removed, expanded to several."""
    class Renamed(base):
        def visit_Name(self, node):
            return ast.Name(node.id + "_r", node.ctx) if len(node.id) % 2 else node

    class Pruned(base):
        def visit_Expr(self, node):
            return None

        def visit_Pass(self, node):
            return [ast.Pass(), ast.Pass()]

        def visit_keyword(self, node):
            self.generic_visit(node)
            return None if node.arg == "x" else node

    class Contexts(base):                 # visits nodes without fields, and constants
        def visit_Load(self, node):
            return ast.Load()

        def visit_Constant(self, node):
            return ast.Constant(repr(node.value))
    return Renamed, Pruned, Contexts


@pytest.mark.parametrize("tree", list(trees())[::2])
def test_transformer_rewrites_as_node_transformer_does(tree):
    for fast, plain in zip(rewriters(Transformer), rewriters(ast.NodeTransformer)):
        ours, theirs = fast().visit(copy_tree(tree)), plain().visit(copy_tree(tree))
        assert ast.dump(ours, include_attributes=True) == ast.dump(theirs, include_attributes=True)


@pytest.mark.parametrize("tree", list(trees()))
def test_dumps_is_ast_dump_of_every_node(tree):
    texts = dumps(tree)
    assert all(texts[id(node)] == ast.dump(node) for node in walk(tree))


def test_reuse_reads_the_tree_as_it_is_where_a_node_appears_twice():
    """A replacement inside a shared node changes what its second place prints (as `ast.dump` sees it)."""
    computed = {ast.dump(ast.parse(e, mode="eval").body): n for e, n in [("np.cos(x)", "c"), ("np.sin(c)", "s")]}
    shared = ast.parse("np.sin(np.cos(x))", mode="eval").body
    tree = ast.BinOp(shared, ast.Add(), shared)
    assert ast.unparse(Reuse(computed).visit(tree)) == "np.sin(c) + s"
    assert ast.unparse(Reuse(computed).visit(ast.parse("np.sin(np.cos(x)) * np.cos(x)", mode="eval").body)) \
        == "np.sin(c) * c"


# ---------------------------------------------------------------- effects, once per generation

CHAIN = """
import numpy as np

def g4(v):
    return np.tanh(v)

def g3(v):
    return g4(v) * 2.0

def g2(v):
    return g3(v) + v

def g1(v):
    return g2(v) * g4(v)

def f(x):
    return np.sum(g1(x) * x)
"""


def test_each_called_function_is_lowered_for_its_effects_once_per_generation(tmp_path, monkeypatch):
    module = load(tmp_path, CHAIN)
    parsed = []
    original = lower.parse_function
    monkeypatch.setattr(lower, "parse_function", lambda fn: parsed.append(fn.__name__) or original(fn))
    monkeypatch.setattr(driver, "lower_function", lower.lower_function)
    x = np.array([0.3, -0.2, 0.5])
    sg.grad(module.f)(x)                           # one generation
    for name in ("g1", "g2", "g3", "g4"):          # (a chain n deep lowered each one up to n times)
        assert parsed.count(name) <= 2, parsed     # once for its effects, once to generate its derivative


def test_each_called_function_is_parsed_once_per_generation(tmp_path, monkeypatch):
    module = load(tmp_path, CHAIN)
    parsed = []
    original = parse._parse
    monkeypatch.setattr(parse, "_parse", lambda fn: parsed.append(fn.__name__) or original(fn))
    x = np.array([0.3, -0.2, 0.5])
    sg.grad(module.f)(x)                           # one generation
    assert sorted(parsed) == ["f", "g1", "g2", "g3", "g4"]      # (lowered twice each: for effects, then itself)
    assert_grad_matches_fd(module.f, [x])
    with guards.recording():
        first, second = parse.parse_function(module.g1), parse.parse_function(module.g1)
    assert first.tree is second.tree and first.closure == second.closure and first.closure is not second.closure


def test_a_parsed_functions_nodes_are_those_of_its_tree():
    parsed = parse.parse_function(lambda x: x * 2.0)
    assert [id(n) for n in parsed.nodes] == [id(n) for n in gast.walk(parsed.tree)]
    parsed.tree = gast.parse("def g(y):\n    return y + 1.0").body[0]          # (as a constructor's builder does)
    assert [id(n) for n in parsed.nodes] == [id(n) for n in gast.walk(parsed.tree)]


def _fresh_from_one(names, hint, owner=False, reserve=False):
    """What `Names.fresh` and `Names.reserve` hand out, trying ``hint``, ``hint_1``, ``hint_2``, ... each time."""
    if not reserve and not owner:
        hint = hint.strip("_") or "t"
    candidate, k = hint, 0
    while candidate in names.taken or (candidate in names.reserved and (
            reserve or not (owner and candidate == hint and candidate not in names.own))):
        k += 1
        candidate = f"{hint}_{k}"
    return candidate


def test_fresh_names_are_those_tried_from_the_first_number():
    rng = random.Random(3)
    names, reference = Names({"x", "t_3", "like"}), Names({"x", "t_3", "like"})
    for _ in range(600):
        hint, owner, reserve = rng.choice(["t", "x", "dx", "like", "t_2", "_t"]), rng.random() < 0.3, \
            rng.random() < 0.2
        expected = _fresh_from_one(reference, hint, owner, reserve)
        (reference.reserved if reserve else reference.taken).add(expected)
        got = names.reserve(hint) if reserve else names.fresh(hint, owner=owner)
        assert got == expected
        if rng.random() < 0.05:                    # (the driver reserves the names a function uses)
            extra = {f"{rng.choice(['t', 'dx'])}_{rng.randrange(40)}"}
            names.reserved |= extra
            reference.reserved |= extra


def test_the_cache_directory_is_cleaned_when_the_process_exits_not_at_its_first_write(tmp_path, monkeypatch):
    monkeypatch.setenv(source_files.ENVIRONMENT_VARIABLE, str(tmp_path))
    monkeypatch.setattr(source_files, "_writes", {})
    cleaned, registered = [], []
    monkeypatch.setattr(source_files, "clean", cleaned.append)
    monkeypatch.setattr(source_files.atexit, "register", lambda fn, *args: registered.append((fn, args)))
    for k in range(source_files.CLEAN_EVERY):
        source_files.write_source(f"x = {k}\n", "m.f.df_dx")
    assert cleaned == [str(tmp_path)] and registered == [(source_files._clean_at_exit, (str(tmp_path),))]


def test_the_memo_lives_as_long_as_its_recording():
    assert guards.memo() is None
    with guards.recording():
        outer = guards.memo()
        outer["k"] = 1
        with guards.recording():
            assert guards.memo() == {}             # a nested generation starts afresh
        assert guards.memo() is outer
    assert guards.memo() is None and outer == {}


WRITER = """
import numpy as np

def scale(v):
    v[:] = v * 2.0

def pure_scale(v):
    return v * 2.0

def f(x):
    y = x * 1.0
    scale(y)
    return np.sum(y * y)
"""


def test_a_redefined_helper_is_lowered_again_for_its_effects(tmp_path):
    module = load(tmp_path, WRITER)
    x = np.array([0.5, -1.0])
    assert_grad_matches_fd(module.f, [x], expected=8.0 * x)
    module.scale = module.pure_scale                 # no longer changes its argument
    assert_grad_matches_fd(module.f, [x], expected=2.0 * x)


MUTUAL = """
import numpy as np

def even(v, n):
    if n <= 0:
        return v
    return odd(v * 1.5, n - 1)

def odd(v, n):
    if n <= 0:
        return np.sin(v)
    return even(np.sin(v), n - 1)

def f(x):
    return np.sum(even(x, 3) * odd(x, 2))
"""


def test_effects_cut_short_at_a_recursive_call_are_not_kept_for_the_generation(tmp_path, monkeypatch):
    module = load(tmp_path, MUTUAL)
    kept = []
    original = guards.memo

    def memo():
        found = original()
        if found is not None:
            kept.append(found)
        return found
    monkeypatch.setattr(guards, "memo", memo)
    assert_grad_matches_fd(module.f, [np.array([0.3, 0.7])])
    names = {entry[0].__name__ for found in kept for key, entry in found.items() if key[0] == "effects"}
    assert not names & {"even", "odd"}


# ---------------------------------------------------------------- coalescing, printing

def test_coalesce_merges_copies_only_where_their_names_are_never_live_together():
    fn = ast.parse(textwrap.dedent("""
        def f(x):
            a = x * 2.0
            a_1 = a
            c = a_1 + a
            a_2 = c
            t = a_2 * x
            u = t
            return u + a_2
    """)).body[0]
    assert ast.unparse(coalesce(fn, temporary={"t", "u"})).splitlines()[1:] == [
        "    a = x * 2.0", "    c = a + a", "    a_2 = c", "    u = a_2 * x", "    return u + a_2"]
    assert live_in(fn.body) == {"x"}


def test_coalesce_finds_the_interference_of_copies_among_all_names():
    fn = ast.parse(textwrap.dedent("""
        def f(x, n):
            a = x * 2.0
            b = a
            s = 0.0
            for i in range(n):
                c = b + s
                s_1 = c
                if c > 0:
                    d = s_1
                    s = d * a
                else:
                    s = s_1
                e, g = s, c
            h = e + g
            return h + b
    """)).body[0]
    copies = list(coalesce_module._all_copies(fn.body))
    candidates = {name for pair in copies for name in pair}
    every, some = coalesce_module._Liveness(), coalesce_module._Liveness(candidates)
    assert every.block(fn.body, set(), set()) == some.block(fn.body, set(), set())
    assert len(copies) == 6 and all(every.interfering(a, b) == some.interfering(a, b)
                                    for a in candidates for b in candidates)


def test_the_compiled_source_is_the_printed_module(tmp_path):
    module = load(tmp_path, CHAIN)
    assert generation.generated(module.f, ["x"], "grad").source == sg.source(module.f)
    made = driver.GradientModule()
    made.gradient(module.f, ["x"], "grad")
    made.compile("<first call test>")
    assert made.compiled_source == made.source()
