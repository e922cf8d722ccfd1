"""Random small programs: the original, its lowered form and its gradient must agree.

Programs come from the grammar in ``program_grammar.py``: assignments of smooth,
bounded ufunc expressions over two or three floats (and optionally one array of
shape (3,)), ``for`` loops over ``range`` and over the array, ``while`` loops
(known and data-dependent trip counts, always bounded by a counter),
``if``/``elif``/``else``, ``break``, ``continue`` and early ``return``, nested a
few deep, and calls of helper functions (module-level, nested, recursive; see the
grammar). For each program and arguments the test

1. writes the program to a real ``.py`` file under pytest's temporary directory,
   imports it (so that ``inspect.getsource`` works) and runs it;
2. runs ``s2sgrad.source(f, stage="lowered")`` as Python and checks that it returns
   exactly (bit for bit) what the original returns;
3. computes ``s2sgrad.grad(f, wrt=all arguments)``, checks that the array argument
   was not modified, and compares every component with central finite differences
   (eps 1e-6, rtol 1e-5, atol 1e-7). A strongly curved program (a chaotic map
   iterated in a loop) can defeat eps 1e-6, so a mismatch is retried with eps/10
   and eps/100 before it counts as a failure.

Arguments that bring a data-dependent comparison within ``MARGIN`` of switching
(finite differences across a switch are meaningless), or a value that is not
finite, are discarded. s2sgrad may refuse, with its documented UnsupportedSyntax,
a program that changes an array in place while a second name may refer to it, or
a number it does not know to be one (a helper's result or parameter) that way.

A failure's message holds the program's source, its arguments and, for a wrong
gradient, the generated gradient code.

Sizes: the hypothesis test checks ``S2SGRAD_PROGRAMS`` programs (default 40) and
the fixed-seed sweep (plain ``random.Random(seed)``, no shrinking, reports every
failing seed) ``S2SGRAD_SWEEP`` programs (default: 100, or ``S2SGRAD_PROGRAMS``
if larger), so CI stays short. The helper sweep checks ``S2SGRAD_HELPER_PROGRAMS``
programs (default 20) in which every program calls helpers, and checks every tenth
also through ``jvp`` (against ``<grad, v>``) and ``hvp`` (against differences of
``grad``); the builtin sweep, ``S2SGRAD_BUILTIN_PROGRAMS`` programs (default 20) with Python's builtins in
their expressions (``max``, ``min``, ``abs``, ``sum``, ``sorted``, ``pow``, ``math.fsum``; their ties and kinks
are instrumented like comparisons), likewise. A larger local run::

    S2SGRAD_PROGRAMS=2000 S2SGRAD_HELPER_PROGRAMS=10000 pytest tests/test_random_programs.py

Constructs that hit a known library bug (``KNOWN_BUGS``) are left out of these two
tests; each has a minimal reproducer at the end of this file, marked
``xfail(strict=True)``, which turns into a failure once the bug is fixed (then
drop the reproducer's marker and the entry in ``KNOWN_BUGS``).
``S2SGRAD_ALL_FEATURES=1`` puts those constructs back into the random tests.
Programs the random tests once found wrong are kept as plain regression tests.
"""
from __future__ import annotations

import functools
import importlib.util
import itertools
import math
import operator
import os
import random
import traceback

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from program_grammar import ALL_FEATURES, EXTRA_FEATURES, HELPER_RATES, DrawChooser, Program, RandomChooser, generate

import s2sgrad
from s2sgrad import runtime
from s2sgrad.frontend.lower import assert_true
from s2sgrad.ir import primitives

PROGRAMS = int(os.environ.get("S2SGRAD_PROGRAMS", "40"))
SWEEP = int(os.environ.get("S2SGRAD_SWEEP", str(max(100, PROGRAMS))))
HELPER_SWEEP = int(os.environ.get("S2SGRAD_HELPER_PROGRAMS", "20"))
BUILTIN_SWEEP = int(os.environ.get("S2SGRAD_BUILTIN_PROGRAMS", "20"))
HIGHER_EVERY = 10       # the helper sweep checks jvp and hvp on every tenth program

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-7
MARGIN = 1e-3           # a data-dependent comparison closer than this to switching discards the arguments
LIMIT = 1e6             # so does a result larger than this

# Constructs known to hit a library bug, switched off in the random tests (unless
# S2SGRAD_ALL_FEATURES is set); each has a strict xfail reproducer below.
KNOWN_BUGS: frozenset[str] = frozenset()
FEATURES = ALL_FEATURES if os.environ.get("S2SGRAD_ALL_FEATURES") else ALL_FEATURES - KNOWN_BUGS

_files = itertools.count()


class Discard(Exception):
    """These arguments are unsuitable for finite differences (near a branch switch, or not finite)."""


class Refused(Exception):
    """s2sgrad refused the program with the documented error for an in-place change seen through
    a second name for the same array (``y = x; x += 1; ... y``), a limitation it is allowed."""


# Programs that may change an array in place while a second name refers to it.
ALIASING = frozenset({"array_alias", "iter_alias"})
# A value a helper returns, and a helper's parameter, are not known to be numbers or one-dimensional
# arrays (helpers are not specialized on their arguments): `q = h(a); p = q; q += 1.0` and
# `x = h(x); a = x[0]; x[0] = 1.0; ... a` are refused like an array's alias.
CALLS = frozenset({"helpers", "nested_def", "recursion", "lambdas", "partial"})


def refused(program: Program, error: Exception) -> bool:
    used = program.features_used
    message = str(error) if isinstance(error, s2sgrad.UnsupportedSyntax) else ""
    return "changed in place through" in message and bool(used & (ALIASING | CALLS)) \
        or "changed in place by the call of" in message and bool(used & CALLS)


# --- running one program -----------------------------------------------------------

def load(program, directory) -> object:
    """Write the program to a fresh module file and import it; returns the function."""
    n = next(_files)
    path = directory / f"random_program_{n}.py"
    path.write_text(program.module_source())
    spec = importlib.util.spec_from_file_location(f"s2sgrad_random_program_{n}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, program.name)


def lowered_namespace(fn) -> dict:
    ns = dict(fn.__globals__)
    ns.update(np=np, math=math, operator=operator, assert_true=assert_true)
    ns.update({name: getattr(runtime, name) for name in runtime.__all__})
    ns.update({name: getattr(primitives, name)
               for name in ("make_tuple", "make_list", "seq_getitem", "astype", "not_in")})
    return ns


def fresh(args):
    return [np.array(a, dtype=float) if isinstance(a, np.ndarray) else a for a in args]


def smallest_margin(program: Program, args) -> float:
    """How close the data-dependent comparisons of a run at `args` come to switching."""
    margins = [math.inf]
    ops = {"<": operator.lt, ">": operator.gt}

    def cmp(left, right, op):
        margins.append(abs(float(left) - float(right)))
        return ops[op](left, right)

    def gaps(fn):
        def instrumented(*args, **kwargs):       # how close the items came to a tie (an exact one is right)
            values = sorted(float(v) for v in (args[0] if len(args) == 1 else args))
            margins.extend(b - a for a, b in zip(values, values[1:]) if b > a)
            return fn(*args, **kwargs)
        return instrumented

    def kink(value):
        margins.extend(m for m in np.abs(np.ravel(value)).tolist() if m > 0)
        return abs(value)

    ns = {"np": np, "math": math, "functools": functools, "__cmp__": cmp, "__max__": gaps(max), "__min__": gaps(min),
          "__sorted__": gaps(sorted), "__abs__": kink}
    exec(compile(program.source(instrument=True), "<instrumented>", "exec"), ns)
    ns[program.name](*fresh(args))
    return min(margins)


def finite_difference(fn, args, k: int, eps: float):
    """Central differences of `fn` with respect to argument `k`."""
    def at(value):
        moved = fresh(args)
        moved[k] = value
        return float(fn(*moved))
    a = args[k]
    if not isinstance(a, np.ndarray):
        return (at(a + eps) - at(a - eps)) / (2 * eps)
    g = np.zeros_like(a, dtype=float)
    for idx in np.ndindex(a.shape):
        up, down = a.copy(), a.copy()
        up[idx] += eps
        down[idx] -= eps
        g[idx] = (at(up) - at(down)) / (2 * eps)
    return g


def close(g, n) -> bool:
    return bool(np.all(np.abs(g - n) <= ATOL + RTOL * np.maximum(np.abs(n), np.abs(g))))


def describe(program: Program, args, what: str) -> str:
    shown = ", ".join(repr(a.tolist()) if isinstance(a, np.ndarray) else repr(a) for a in args)
    arrays = "" if program.array is None else f"  # {program.array} is np.array(...)"
    return (f"{what}\n--- program ---\n{program.source()}--- arguments ---\n"
            f"{program.name}({shown}){arrays}\n")


def check(program: Program, args, directory) -> None:
    """Run all the checks; raises Discard for unsuitable arguments, Refused for a documented
    refusal, AssertionError on a failure."""
    args = [np.asarray(a, dtype=float) if isinstance(a, (list, np.ndarray)) else float(a) for a in args]
    fn = load(program, directory)
    expected = fn(*fresh(args))
    if not np.isfinite(expected) or abs(expected) > LIMIT:
        raise Discard("not finite")
    if smallest_margin(program, args) < MARGIN:
        raise Discard("near a branch switch")

    # the lowered form, run as Python, computes exactly what the original computes
    stage = "lowered"
    try:
        lowered = s2sgrad.source(fn, stage="lowered", args=args)
        ns = lowered_namespace(fn)
        exec(compile(lowered, f"<lowered {program.name}>", "exec"), ns)
        got = ns[program.name](*fresh(args))
    except Exception as e:
        if refused(program, e):
            raise Refused(str(e)) from None
        raise AssertionError(describe(program, args, f"{stage}: raised\n{traceback.format_exc(limit=-4)}")) from None
    assert np.shape(got) == np.shape(expected) and float(got) == float(expected), describe(
        program, args, f"lowered form returns {got!r}, the original {expected!r}\n--- lowered ---\n{lowered}")

    # the gradient against central finite differences
    stage = "grad"
    passed = fresh(args)
    try:
        grads = s2sgrad.grad(fn, wrt=tuple(range(len(args))))(*passed)
    except Exception as e:
        if refused(program, e):
            raise Refused(str(e)) from None
        raise AssertionError(describe(program, args, f"{stage}: raised\n{traceback.format_exc(limit=-4)}")) from None
    for a, p in zip(args, passed):
        assert not isinstance(a, np.ndarray) or np.array_equal(a, p), describe(
            program, args, f"grad modified its array argument: {a.tolist()} became {p.tolist()}")
    assert len(grads) == len(args), describe(program, args, f"grad returned {len(grads)} gradients")
    for k, (g, a) in enumerate(zip(grads, args)):
        g = np.asarray(runtime.densify(g), dtype=float)
        assert g.shape == np.shape(a), describe(
            program, args, f"gradient of argument {k} ({program.params[k]}) has shape {g.shape}")
        # A strongly curved program (a chaotic map iterated in a loop) needs a smaller step:
        # the truncation error of central differences is eps**2 / 6 times the third derivative.
        numeric = []
        for eps in (EPS, EPS / 10, EPS / 100):
            numeric.append(finite_difference(fn, args, k, eps))
            if close(g, numeric[-1]):
                break
        else:
            shown = ", ".join(f"{np.asarray(n).tolist()!r} (eps={EPS / 10 ** i:g})" for i, n in enumerate(numeric))
            raise AssertionError(describe(
                program, args, f"gradient of argument {k} ({program.params[k]}): s2sgrad {g.tolist()!r}, "
                f"finite differences {shown}\n--- gradient ---\n"
                + s2sgrad.source(fn, wrt=tuple(range(len(args))))))


def check_higher(program: Program, args, directory) -> None:
    """Forward mode and forward over reverse, after `check` passed: ``jvp`` along a direction v
    against ``<grad, v>``, and ``hvp`` along v against central differences of ``grad`` along v."""
    args = [np.asarray(a, dtype=float) if isinstance(a, (list, np.ndarray)) else float(a) for a in args]
    fn = load(program, directory)
    wrt = tuple(range(len(args)))
    rng = np.random.default_rng(len(program.source()))
    direction = tuple(rng.uniform(-1.0, 1.0, np.shape(a)) if isinstance(a, np.ndarray) else float(rng.uniform(-1, 1))
                      for a in args)
    gradient = s2sgrad.grad(fn, wrt=wrt)
    grads = [np.asarray(runtime.densify(g), dtype=float) for g in gradient(*fresh(args))]
    for stage in ("jvp", "hvp"):
        try:
            if stage == "jvp":
                value, tangent = s2sgrad.jvp(fn, wrt=wrt)(*fresh(args), direction)
            else:
                products = s2sgrad.hvp(fn, wrt=wrt)(*fresh(args), direction)
        except Exception:
            raise AssertionError(describe(program, args, f"{stage}: raised\n{traceback.format_exc(limit=-4)}")) \
                from None
        if stage == "jvp":
            expected = sum(float(np.sum(g * v)) for g, v in zip(grads, direction))
            assert np.isclose(float(tangent), expected, rtol=1e-7, atol=1e-9), describe(
                program, args, f"jvp along {direction}: {float(tangent)!r}, <grad, v> {expected!r}")
            continue
        assert len(products) == len(args), describe(program, args, f"hvp returned {len(products)} products")
        numeric = []
        for eps in (1e-5, 1e-6, 1e-4):
            up = [a + eps * np.asarray(v) if isinstance(a, np.ndarray) else a + eps * v
                  for a, v in zip(args, direction)]
            down = [a - eps * np.asarray(v) if isinstance(a, np.ndarray) else a - eps * v
                    for a, v in zip(args, direction)]
            numeric.append([(np.asarray(runtime.densify(u), dtype=float) - np.asarray(runtime.densify(d), dtype=float))
                            / (2 * eps) for u, d in zip(gradient(*up), gradient(*down))])
            if all(np.shape(h) == np.shape(a) and np.allclose(h, n, rtol=1e-4, atol=1e-6)
                   for h, n, a in zip(products, numeric[-1], args)):
                break
        else:
            raise AssertionError(describe(
                program, args, f"hvp along {direction}: {[np.asarray(h).tolist() for h in products]}, "
                f"differences of grad {[[n.tolist() for n in ns] for ns in numeric]}\n--- hvp ---\n"
                + s2sgrad.source(fn, wrt=wrt, mode="hvp", args=args)))


# --- strategies ----------------------------------------------------------------------

# values on a grid of 0.01, so that reproducers read well
values = st.integers(-150, 150).map(lambda n: n / 100)


@st.composite
def cases(draw, features=FEATURES):
    program = generate(DrawChooser(draw), features)
    args = [draw(values) for p in program.params if p != program.array]
    if program.array is not None:
        args.append(np.array(draw(st.lists(values, min_size=3, max_size=3))))
    return program, args


def random_case(seed: int, features=FEATURES, helpers: bool = False, rates=None):
    rng = random.Random(seed)
    program = generate(RandomChooser(rng), features, rates=HELPER_RATES, max_depth=2) if helpers \
        else generate(RandomChooser(rng), features, rates=rates)
    args = [round(rng.uniform(-1.5, 1.5), 2) for p in program.params if p != program.array]
    if program.array is not None:
        args.append(np.array([round(rng.uniform(-1.5, 1.5), 2) for _ in range(3)]))
    return program, args


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    return tmp_path_factory.mktemp("random_programs")


# --- the tests -------------------------------------------------------------------------

@settings(max_examples=PROGRAMS, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(case=cases())
def test_random_program(case, directory):
    program, args = case
    try:
        check(program, args, directory)
    except Discard:
        assume(False)
    except Refused:
        pass


def test_fixed_seed_sweep(directory):
    """SWEEP programs from `random.Random(seed)`: cheap, no shrinking; reports every failure."""
    failures, discarded = [], 0
    for seed in range(SWEEP):
        program, args = random_case(seed)
        try:
            check(program, args, directory)
        except Discard:
            discarded += 1
        except Refused:
            pass
        except AssertionError as e:
            failures.append(f"=== seed {seed} ===\n{e}")
    assert discarded <= SWEEP // 5, f"{discarded} of {SWEEP} programs discarded: the grammar needs tuning"
    assert not failures, f"{len(failures)} of {SWEEP} programs failed; the first:\n" + "\n".join(failures[:3])


def _sweep_with_higher(count: int, case, directory) -> set:
    """`count` programs `case(seed)` checked, every tenth also through jvp and hvp; at most a quarter discarded,
    none failing. Returns the features the programs used."""
    failures, discarded, used = [], 0, set()
    for seed in range(count):
        program, args = case(seed)
        used |= program.features_used
        try:
            check(program, args, directory)
            if seed % HIGHER_EVERY == 0:
                check_higher(program, args, directory)
        except Discard:
            discarded += 1
        except Refused:
            pass
        except AssertionError as e:
            failures.append(f"=== seed {seed} ===\n{e}")
    assert discarded <= count // 4, f"{discarded} of {count} programs discarded: the grammar needs tuning"
    assert not failures, f"{len(failures)} of {count} programs failed; the first:\n" + "\n".join(failures[:3])
    return used


def test_helper_sweep(directory):
    """HELPER_SWEEP programs that call helpers (module-level functions, nested defs, recursive ones)
    in every way the grammar knows, from `random.Random(seed)`; every tenth also through jvp and hvp."""
    _sweep_with_higher(HELPER_SWEEP, lambda seed: random_case(seed, helpers=True), directory)


def test_builtin_sweep(directory):
    """BUILTIN_SWEEP programs with Python's builtins in their expressions (`EXTRA_FEATURES`), from
    `random.Random(seed)`; every tenth also through jvp and hvp."""
    used = _sweep_with_higher(BUILTIN_SWEEP, lambda seed: random_case(seed, FEATURES | EXTRA_FEATURES,
                                                                       rates={"builtins": 0.5}), directory)
    assert "builtins" in used


def test_grammar_covers_every_construct():
    """The sweeps' programs use every construct of the grammar."""
    used = set()
    for seed in range(200):          # (generation only: cheap)
        used |= random_case(seed)[0].features_used | random_case(seed, helpers=True)[0].features_used
    assert not FEATURES - used, f"never generated: {sorted(FEATURES - used)}"


# --- minimal reproducers of known bugs ---------------------------------------------------

class Fixed(Program):
    """A hand-written program, checked like a generated one."""

    def __init__(self, text: str, array: str | None = None, may_refuse: bool = False):
        head = text.splitlines()[0]
        params = [p.strip() for p in head[head.index("(") + 1:head.index(")")].split(",")]
        super().__init__("f", params, array, [], {"array_alias"} if may_refuse else set())
        self.text = text

    def source(self, instrument: bool = False) -> str:
        return self.text


# Programs this test once found wrong, kept as regression tests.
FOUND = [
    # `for v in x` must run over the array x refers to when the loop starts; the lowered
    # form and the gradient index the rebound x instead: lowered 17.0 (original 6.0),
    # gradient [1, 2, 4] (finite differences [1, 1, 1]).
    pytest.param(Fixed("""def f(x):
    s = 0.0
    for v in x:
        x = x * 2.0
        s = s + v
    return s
""", array="x"), [np.array([1.0, 2.0, 3.0])], id="for-over-rebound-array"),
    # An in-place change through a second name is refused with a clear error outside
    # loops (`y = x; x *= 2.0; return np.sum(y)`), but inside a loop it is missed: the
    # lowered form returns 6.0 (original 12.0), the gradient [1, 1, 1] (should be [2, 2, 2]).
    # Either a correct result or the refusal passes this test.
    pytest.param(Fixed("""def f(x):
    y = x
    for i in range(1):
        x *= 2.0
    return np.sum(y)
""", array="x", may_refuse=True), [np.array([1.0, 2.0, 3.0])], id="alias-changed-in-loop"),
    # On floats (and NumPy scalars) `d += b` rebinds d, nothing changes in place, yet
    # this is refused: UnsupportedSyntax "'c' may have been changed in place through
    # 'd'", by `source(f, stage="lowered")` and, since `c` comes from a ufunc, also by
    # `grad(f, wrt=(0, 1))(0.5, 2.0)`. (With `c = a` instead, `grad` specializes on the
    # float argument and is right, 3.0 and 0.5; the lowered stage still refuses.)
    pytest.param(Fixed("""def f(a, b):
    c = np.sin(a)
    d = c
    d += b
    return c * d
"""), [0.5, 2.0], id="float-alias-refused"),
    # An `if` nested in an `else`, differentiated with respect to both float arguments:
    # the code specialized on float arguments reused the seed `dsum` as the adjoint of
    # `a` in the inner branch (`da = dsum; dsum = da * 0.5`) and returned d/da = 0.5,
    # the seed unchanged (finite differences: -0.3).
    pytest.param(Fixed("""def f(a, c):
    if c > 0.0:
        pass
    else:
        if c < 0.0:
            a = a * 0.5
        a = a * c
    return 2.0 * c + a
"""), [-0.67, -0.6], id="nested-branch-float-seed-reused"),
    # The gradient of `x` starts as the broadcast seed of np.sum (a read-only view) and
    # the loop over x's rows then adds into it in place: "ValueError: output array is
    # read-only". Expected gradient [1, 1, 7].
    pytest.param(Fixed("""def f(x):
    c = 0.0
    for v in x:
        c = v * v
    return c + np.sum(x)
""", array="x"), [np.array([1.0, 2.0, 3.0])], id="sum-seed-read-only"),
]


@pytest.mark.parametrize("program, args", FOUND)
def test_found_program(program, args, directory):
    try:
        check(program, args, directory)
    except Refused:
        assert "array_alias" in program.features_used, "refused a program that changes nothing in place"
