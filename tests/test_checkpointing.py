"""Checkpointed loops (issue 4, items 2 and 3): Periodic, Revolve and Online schedules,
chosen per loop with ``s2sgrad.checkpointed(...)`` in the loop header or per call with
``checkpoint=``.  Gradients must equal store-all's to 1e-12 relative.

s2sgrad evaluates a marker's schedule once, from the module's names, when it generates
code; so the loops below are written once, as a template, and instantiated as one module
per schedule (and one without markers, the store-all reference) in a temporary directory.
Every loop body appends to the module-level list ``STEPS``, which counts body executions.
"""
from __future__ import annotations

import importlib.util
import re
import sys
import tracemalloc
from math import comb, isqrt

import numpy as np
import pytest

import s2sgrad as sg
from s2sgrad.schedules import Advance, optimal_forward_steps
from s2sgrad.schedules.levels import LevelRule

TEMPLATE = '''
import numpy as np
import s2sgrad as sg
from s2sgrad import Online, Periodic, Revolve

STEPS = []


def helper(y, a):
    return np.sin(y) * a + 0.5 * y


def helper_loop(y, a, k):
    for j in range(k):
        y = np.tanh(y * a) + 0.1 * y
    return y


def for_simple(x, a, n):
    y = x
    for i in sg.checkpointed(range(n), SCHEDULE):
        STEPS.append(1)
        y = y + 0.1 * np.tanh(a * y + 0.01 * i)
    return np.sum(y * y)


def while_simple(x, a, n):
    y = x
    t = 0.0
    while sg.checkpointed(t < n - 0.5, SCHEDULE):
        STEPS.append(1)
        y = y + 0.1 * np.tanh(a * y) * (1.0 + 0.1 * t)
        t = t + 1.0
    return np.sum(y * y)


def while_data(x, a, n):
    y = x
    k = 0
    while sg.checkpointed(k < n and np.sum(y * y) < 1e6, SCHEDULE):
        STEPS.append(1)
        y = y * 1.05 + 0.1 * np.sin(a * y)
        k = k + 1
    return np.sum(y)


def for_branches(x, a, n):
    y = x
    s = 0.0
    for i in sg.checkpointed(range(n), SCHEDULE):
        STEPS.append(1)
        z = y
        for j in range(3):
            if np.sum(z) > 0:
                z = np.sin(z) * a
            else:
                z = np.cos(z) + a
        k = 0
        while k < i % 3:
            z = z * 0.9
            k = k + 1
        if i % 2 == 0:
            y = y + 0.1 * z
        else:
            y = y - 0.05 * z * z
        s = s + np.sum(y) * 0.01
    return np.sum(y * y) + s


def while_branches(x, a, n):
    y = x
    t = 0.0
    while sg.checkpointed(t < n - 0.5, SCHEDULE):
        STEPS.append(1)
        if np.sum(y) > 0.0:
            for j in range(2):
                y = np.sin(y) * a + 0.1
        else:
            y = np.cos(y) * a
        t = t + 1.0
    return np.sum(y * y)


def for_inplace(x, a, n):
    y = np.zeros(n + 1)
    y[0] = x[0]
    for i in sg.checkpointed(range(n), SCHEDULE):
        STEPS.append(1)
        y[i + 1] = np.sin(y[i]) * a + x[1]
    return np.sum(y ** 2)


def for_ring(x, a, n):
    y = np.zeros(3)
    y[0] = x[0]
    y[1] = x[1]
    y[2] = x[2]
    for i in sg.checkpointed(range(n), SCHEDULE):
        STEPS.append(1)
        y[i % 3] = np.sin(y[(i + 1) % 3]) * a + 0.5 * y[i % 3]
    return np.sum(y ** 2)


def for_trace(x, a, n):
    h = x
    out = np.zeros(n)
    for i in sg.checkpointed(range(n), SCHEDULE):
        STEPS.append(1)
        h = np.tanh(h * a + 0.1)
        out[i] = h[0] * h[1]
    return np.sum(out * out) + np.sum(h)


def while_inplace(x, a, n):
    y = np.zeros(3)
    y[0] = x[0]
    k = 0
    while sg.checkpointed(k < n, SCHEDULE):
        STEPS.append(1)
        y[(k + 1) % 3] = np.sin(y[k % 3]) * a + 0.5 * x[k % 3]
        k = k + 1
    return np.sum(y ** 2)


def for_calls(x, a, n):
    y = x
    for i in sg.checkpointed(range(n), SCHEDULE):
        STEPS.append(1)
        y = helper(y, a)
        y = helper_loop(y, a, 2)
    return np.sum(y * y)


def while_calls(x, a, n):
    y = x
    t = 0.0
    while sg.checkpointed(t < n - 0.5, SCHEDULE):
        STEPS.append(1)
        y = helper_loop(helper(y, a), a, 1)
        t = t + 1.0
    return np.sum(y * y)
'''

KINDS = ["for_simple", "while_simple", "while_data", "for_branches", "while_branches",
         "for_inplace", "for_ring", "for_trace", "while_inplace", "for_calls", "while_calls"]
LENGTHS = [0, 1, 2, 7, 50]
SCHEDULES = ["Periodic(every=1)", "Periodic(every=3)", "Periodic(every=64)",
             "Revolve(snapshots=1)", "Revolve(snapshots=2)", "Revolve(snapshots=5)",
             "Online(snapshots=1)", "Online(snapshots=2)", "Online(snapshots=5)"]
X = np.array([0.3, -0.2, 0.5])
A = 0.8



def schedule_of(text):
    return eval(text, {"Periodic": sg.Periodic, "Revolve": sg.Revolve, "Online": sg.Online})


_MODULES: dict = {}


@pytest.fixture(scope="module")
def load(tmp_path_factory):
    """load(schedule_text): the template with that schedule in every marker; load(None):
    the template without markers (store-all)."""
    root = tmp_path_factory.mktemp("checkpointed")

    def load(schedule):
        if schedule not in _MODULES:
            if schedule is None:
                text = re.sub(r"sg\.checkpointed\((.+), SCHEDULE\)", r"\1", TEMPLATE)
            else:
                text = TEMPLATE.replace("SCHEDULE", schedule)
            name = f"checkpointed_loops_{len(_MODULES)}"
            path = root / f"{name}.py"
            path.write_text(text)
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            _MODULES[schedule] = module
        return _MODULES[schedule]
    return load


def assert_same_gradients(got, expected, rtol=1e-12):
    got, expected = (got, expected) if isinstance(got, tuple) else ((got,), (expected,))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = np.asarray(e, dtype=float)
        scale = float(np.max(np.abs(e))) if e.size else 0.0
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * scale)


OPTION_SCHEDULES = ["Periodic(every=3)", "Periodic(every=64)", "Revolve(snapshots=1)", "Revolve(snapshots=5)",
                    "Online(snapshots=2)"]


def params(how):
    out = []
    for kind in KINDS:
        for n in LENGTHS:
            for schedule in SCHEDULES if how == "marker" else OPTION_SCHEDULES:
                marks = []
                online = schedule.startswith("Online")
                broken = kind.startswith("for") or (how == "option" and kind == "while_calls")
                if online and broken and n >= 1:
                    marks = []
                out.append(pytest.param(kind, n, schedule, marks=marks, id=f"{kind}-{n}-{schedule}"))
    return out


# --- gradients equal store-all's -------------------------------------------------

@pytest.mark.parametrize("kind, n, schedule", params("marker"))
def test_marker_gradient_equals_store_all(load, kind, n, schedule):
    expected = sg.grad(getattr(load(None), kind), wrt=(0, 1))(X, A, n)
    got = sg.grad(getattr(load(schedule), kind), wrt=(0, 1))(X, A, n)
    assert_same_gradients(got, expected)


@pytest.mark.parametrize("kind, n, schedule", params("option"))
def test_option_gradient_equals_store_all(load, kind, n, schedule):
    f = getattr(load(None), kind)
    expected = sg.grad(f, wrt=(0, 1))(X, A, n)
    got = sg.grad(f, wrt=(0, 1), checkpoint=schedule_of(schedule))(X, A, n)
    assert_same_gradients(got, expected)


@pytest.mark.parametrize("kind, schedule", [
    pytest.param(kind, schedule, id=f"{kind}-{schedule}",
                 marks=[]
                 if schedule.startswith("Online") and kind.startswith("for") else [])
    for kind in ["for_simple", "while_simple", "for_trace", "while_inplace"]
    for schedule in ["Periodic(every=3)", "Revolve(snapshots=2)", "Online(snapshots=2)"]])
def test_option_on_value_and_grad_and_vjp(load, kind, schedule):
    f = getattr(load(None), kind)
    n = 7
    expected = sg.grad(f, wrt=(0, 1))(X, A, n)
    value = f(X, A, n)
    v, got = sg.value_and_grad(f, wrt=(0, 1), checkpoint=schedule_of(schedule))(X, A, n)
    assert v == value
    assert_same_gradients(got, expected)
    v, got = sg.vjp(f, wrt=(0, 1), checkpoint=schedule_of(schedule))(X, A, n, 3.0)
    assert v == value
    assert_same_gradients(got, tuple(3.0 * e for e in expected))
    v, got = sg.value_and_grad(getattr(load(schedule), kind), wrt=(0, 1))(X, A, n)
    assert v == value
    assert_same_gradients(got, expected)


def test_option_and_marker_together(load):
    """A marker wins over the option on its own loop; the option checkpoints the other
    outermost loops (here the loop of `helper_loop`, called in the body)."""
    marked = load("Revolve(snapshots=2)")
    expected = sg.grad(load(None).for_calls, wrt=(0, 1))(X, A, 9)
    got = sg.grad(marked.for_calls, wrt=(0, 1), checkpoint=sg.Periodic(every=2))(X, A, 9)
    assert_same_gradients(got, expected)
    text = sg.source(marked.for_calls, wrt=(0, 1), checkpoint=sg.Periodic(every=2))
    assert "Checkpoints(Revolve(snapshots=2), n)" in text
    assert "Checkpoints(Periodic(every=2), k)" in text


def test_option_checkpoints_only_outermost_loops(load):
    f = load(None).for_branches
    text = sg.source(f, wrt=(0, 1), checkpoint=sg.Revolve(snapshots=3))
    assert text.count("Checkpoints(") == 1
    assert "Checkpoints(Revolve(snapshots=3), n)" in text


def test_marker_on_an_inner_loop_is_refused():
    with pytest.raises(sg.UnsupportedSyntax, match="only outermost loops can be checkpointed"):
        sg.grad(inner_marked)(X, 3)


def inner_marked(x, n):
    y = x
    for i in range(n):
        for j in sg.checkpointed(range(3), sg.Revolve(snapshots=2)):
            y = np.sin(y) * 1.1
    return np.sum(y)


# --- the marker outside differentiation --------------------------------------------

def test_checkpointed_returns_its_value():
    r = range(5)
    assert sg.checkpointed(r, sg.Revolve(snapshots=2)) is r
    assert sg.checkpointed(True, sg.Online(snapshots=2)) is True
    assert sg.checkpointed(False, sg.Periodic(every=2)) is False


@pytest.mark.parametrize("schedule", ["Periodic(every=3)", "Revolve(snapshots=2)", "Online(snapshots=2)"])
@pytest.mark.parametrize("kind", KINDS)
def test_marker_is_a_no_op_undifferentiated(load, kind, schedule):
    marked, plain = load(schedule), load(None)
    for n in (0, 1, 7):
        marked.STEPS.clear()
        value = getattr(marked, kind)(X, A, n)
        assert value == getattr(plain, kind)(X, A, n)
        assert len(marked.STEPS) == n


# --- the generated code ------------------------------------------------------------

def code_lines(text):
    return [line.split("  #")[0].strip() for line in text.splitlines()]


def test_source_of_a_checkpointed_for_loop(load):
    text = sg.source(load("Revolve(snapshots=3)").for_simple, wrt=(0, 1))
    lines = code_lines(text)
    assert "from s2sgrad.schedules import Revolve" in lines
    assert "checkpoints = Checkpoints(Revolve(snapshots=3), n)" in lines
    assert "if checkpoints.step((i_count, y)):" in lines, text
    assert "for work in checkpoints.backward():" in lines
    k = lines.index("for work in checkpoints.backward():")
    assert lines[k + 1].endswith("= work.state")
    assert lines[k + 2] == "if work.reverse:"
    assert lines[k + 3] == "if not work.recorded:"
    assert lines[k + 4] == "for _ in range(work.steps):"
    assert any(line.startswith("checkpoints.state = (") for line in lines)
    # the forward sweep records only the trips the driver says to: on one side of the step's branch
    forward = text.split("# backward sweep")[0]
    recorded, plain = forward.split("if checkpoints.step(")[1].split("else:")
    assert ".push(" in recorded and ".push(" not in plain


def test_a_tracker_that_does_not_record_leaves_the_forward_sweep_plain(load):
    text = sg.source(load("Online(snapshots=3)").while_simple, wrt=(0, 1))
    forward = text.split("# backward sweep")[0]
    assert ".push(" not in forward and "work.recorded" not in text and "tapes=" not in text


def test_source_of_a_checkpointed_while_loop(load):
    text = sg.source(load("Online(snapshots=3)").while_simple, wrt=(0, 1))
    lines = code_lines(text)
    assert "checkpoints = Checkpoints(Online(snapshots=3))" in lines
    assert any(line.startswith("checkpoints.step((") for line in lines)
    assert "for work in checkpoints.backward():" in lines


@pytest.mark.parametrize("schedule", [sg.Periodic(every=4), sg.Revolve(snapshots=10), sg.Online(snapshots=2)])
def test_source_with_the_option(load, schedule):
    text = sg.source(load(None).for_simple, wrt=(0, 1), checkpoint=schedule)
    assert f"checkpoints = Checkpoints({schedule!r}, n)" in code_lines(text)
    text = sg.source(load(None).while_simple, wrt=(0, 1), checkpoint=schedule)
    assert any(line.startswith(f"checkpoints = Checkpoints({schedule!r}") for line in code_lines(text))
    assert "Checkpoints(" not in sg.source(load(None).for_simple, wrt=(0, 1))


# --- forward steps -------------------------------------------------------------------

def body_runs(f, *args, **options):
    module = sys.modules[f.__module__]
    df = sg.grad(f, wrt=(0, 1), **options)
    df(*args)
    module.STEPS.clear()
    df(*args)
    return len(module.STEPS)


REVOLVE_COUNTS = [(n, s) for s in (1, 2, 3, 5, 10) for n in (1, 2, 3, 7, 10, 20, 50, 100)]


@pytest.mark.parametrize("n, s", REVOLVE_COUNTS)
def test_revolve_body_runs(load, n, s):
    """The forward sweep runs the n steps while the driver takes the plan's snapshots; the
    plan's Advance actions up to its first Reverse(1) (n - 1 steps, counted in
    optimal_forward_steps) are those very steps, and the forward sweep records step n - 1,
    the plan's first Reverse.  Hence n recordings plus the optimum, exactly."""
    f = load(None).for_simple
    count = body_runs(f, X, A, n, checkpoint=sg.Revolve(snapshots=s))
    assert count == n + optimal_forward_steps(n, s)
    marked = load(f"Revolve(snapshots={s})").for_simple
    assert body_runs(marked, X, A, n) == count


def test_revolve_body_runs_zero_trips(load):
    assert body_runs(load("Revolve(snapshots=3)").for_simple, X, A, 0) == 0


def periodic_runs(n, every):
    """Each segment but the last is run by the forward sweep and recorded again; the last is
    recorded by the forward sweep: n + every * (segments - 1)."""
    return n + every * max(0, -(-n // every) - 1)


@pytest.mark.parametrize("n, k", [(1, 3), (3, 3), (7, 3), (9, 3), (50, 7), (50, 50), (50, 64)])
def test_periodic_body_runs(load, n, k):
    f = load(None).for_simple
    assert body_runs(f, X, A, n, checkpoint=sg.Periodic(every=k)) == periodic_runs(n, k)
    assert body_runs(load(None).while_simple, X, A, n, checkpoint=sg.Periodic(every=k)) == periodic_runs(n, k)


@pytest.mark.parametrize("loop", ["for_simple", "while_simple", "for_branches", "while_data", "for_inplace"])
def test_periodic_at_least_n_runs_the_loop_once_and_equals_store_all(load, loop):
    """Every >= n is store-all: the forward sweep records every trip, the gradient is store-all's."""
    n = 6
    f = getattr(load(None), loop)
    args = (X, A, n)
    assert body_runs(f, *args, checkpoint=sg.Periodic(every=n)) == n
    assert body_runs(f, *args, checkpoint=sg.Periodic(every=n + 5)) == n
    expected = sg.grad(f, wrt=(0, 1))(*args)
    for every in (n, n + 5, 4):
        got = sg.grad(f, wrt=(0, 1), checkpoint=sg.Periodic(every=every))(*args)
        for e, g in zip(expected, got):
            assert np.array_equal(e, g), every


def online_advances(s, n):
    tracker = sg.Online(snapshots=s).start()
    for _ in range(n):
        tracker.step()
    return sum(a.steps for a in tracker.reverse() if isinstance(a, Advance))


@pytest.mark.parametrize("n, s", [(1, 2), (7, 2), (10, 3), (50, 3), (100, 5), (21, 5), (200, 5)])
def test_online_body_runs(load, n, s):
    """A while loop: the forward sweep, the tracker's Advance actions, the n recordings; the
    forward steps (all but the recordings) stay within twice the offline optimum."""
    f = load(None).while_simple
    count = body_runs(f, X, A, n, checkpoint=sg.Online(snapshots=s))
    assert count == 2 * n + online_advances(s, n)
    assert count - n <= max(2 * optimal_forward_steps(n, s), n)
    # Revolve on a while loop, whose trip count is unknown on entry, follows Online
    assert body_runs(f, X, A, n, checkpoint=sg.Revolve(snapshots=s)) == count


# --- the driver, on a simulated loop ------------------------------------------------------

def drive(schedule, n, trips_known):
    """Run `Checkpoints` as generated code does, on a loop whose state is its position.

    Returns (body runs, the most snapshots held at once); checks that the backward sweep
    reverses every step once, last to first, each from the right state, and that the
    forward sweep records only the last steps, those it hands to the backward sweep first."""
    from s2sgrad.runtime import Checkpoints
    checkpoints = Checkpoints(schedule, n if trips_known else None, tapes=([],))
    runs, held, state, recorded = 0, 0, 0, []
    for _ in range(n):
        if checkpoints.step(state):
            recorded.append(state)
        held = max(held, len(checkpoints.slots))
        state, runs = state + 1, runs + 1
    checkpoints.state = state
    reversed_steps = []
    for work in checkpoints.backward():
        held = max(held, len(checkpoints.slots))
        if work.recorded:
            assert not reversed_steps and recorded[-work.steps:] == list(range(n - work.steps, n))
            reversed_steps += reversed(range(work.state - work.steps, work.state))
            continue
        runs += work.steps
        if work.reverse:
            reversed_steps += reversed(range(work.state, work.state + work.steps))
        else:
            checkpoints.state = work.state + work.steps
    assert reversed_steps == list(reversed(range(n)))
    return runs, held


@pytest.mark.parametrize("n", [0, 1, 2, 5, 10, 37, 200])
@pytest.mark.parametrize("s", [1, 2, 3, 10])
def test_driver_follows_revolve(n, s):
    runs, held = drive(sg.Revolve(snapshots=s), n, trips_known=True)
    assert held <= s
    assert runs == n + optimal_forward_steps(n, s)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 10, 37, 200])
@pytest.mark.parametrize("schedule", [sg.Online(snapshots=1), sg.Online(snapshots=3), sg.Revolve(snapshots=3),
                                      sg.Periodic(every=4)], ids=repr)
def test_driver_follows_a_tracker(n, schedule):
    runs, held = drive(schedule, n, trips_known=False)
    if not isinstance(schedule, sg.Periodic):
        assert held <= schedule.snapshots
    else:
        assert runs == periodic_runs(n, schedule.every)


@pytest.mark.parametrize("n", [2, 5, 37])
@pytest.mark.parametrize("every", [1, 3, 50])
def test_driver_follows_periodic(n, every):
    runs, held = drive(sg.Periodic(every=every), n, trips_known=True)
    assert runs == periodic_runs(n, every)
    assert held <= -(-n // every) - 1


@pytest.mark.parametrize("schedule, known", [(sg.Revolve(snapshots=3), True), (sg.Revolve(snapshots=1), True),
                                             (sg.Online(snapshots=3), False), (sg.Online(snapshots=1), False)],
                         ids=["revolve3", "revolve1", "online3", "online1"])
@pytest.mark.parametrize("n", [1, 3, 4, 40])
def test_the_driver_holds_no_more_than_s_snapshots(schedule, known, n):
    """Counted through the driver at every point of both sweeps, the turn included: never more than s
    snapshots; besides them only the backward sweep's current state, a restored copy, which takes the
    place of the loop's own. Where the trip count is known the forward sweep records the last trip, so at
    the turn the driver holds its snapshots and the state handed over, the loop's own, uncopied."""
    from s2sgrad.runtime import Checkpoints
    checkpoints = Checkpoints(schedule, n if known else None, tapes=([],))
    state, handed = np.zeros(1), None

    def check():
        snapshots = {id(kept) for kept, _ in checkpoints.slots.values()}
        assert len(snapshots) <= schedule.snapshots
        current = checkpoints.state
        assert current is None or current is handed or id(current) not in snapshots

    for _ in range(n):
        checkpoints.step(state)
        check()
        state = state + 1.0
    checkpoints.state = handed = state
    for k, work in enumerate(checkpoints.backward()):
        check()
        if k == 0 and known:
            assert work.recorded and work.state is handed
        if not work.reverse:
            checkpoints.state = work.state + work.steps


def test_driver_follows_online_with_a_known_trip_count():
    drive(sg.Online(snapshots=2), 3, trips_known=True)


def online_for(x, n):
    for i in sg.checkpointed(range(n), sg.Online(snapshots=2)):
        x = x * 2.0
    return x


def test_online_on_a_for_loop():
    assert sg.grad(online_for)(1.0, 3) == 8.0           # it returns 1.0


# --- memory ---------------------------------------------------------------------------

def ode_for(y, a, n):
    for i in range(n):
        y = y + 0.1 * np.tanh(a * y)
    return np.sum(y * y)


def ode_revolve(y, a, n):
    for i in sg.checkpointed(range(n), sg.Revolve(snapshots=10)):
        y = y + 0.1 * np.tanh(a * y)
    return np.sum(y * y)


def ode_bias(y, a, n):
    for i in range(n):
        y = y + 0.1 * np.tanh(y + a)            # a's gradient gets the same term every trip
    return np.sum(y * y)


def ode_while(y, a, n):
    k = 0
    while k < n:
        y = y + 0.1 * np.tanh(a * y)
        k = k + 1
    return np.sum(y * y)


def ode_online(y, a, n):
    k = 0
    while sg.checkpointed(k < n, sg.Online(snapshots=10)):
        y = y + 0.1 * np.tanh(a * y)
        k = k + 1
    return np.sum(y * y)


def peak(df, *args):
    df(*args[:-1], 3)                      # generate the code outside the measurement
    tracemalloc.start()
    try:
        result = df(*args)
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


STATE = np.random.default_rng(0).standard_normal(1000)
RATES = np.random.default_rng(1).standard_normal(1000)


def test_revolve_10_on_ten_thousand_steps_under_a_hundredth_of_store_all():
    n = 10 ** 4
    store_all, expected = peak(sg.grad(ode_for, wrt=(0, 1)), STATE, RATES, n)
    revolve, got = peak(sg.grad(ode_revolve, wrt=(0, 1)), STATE, RATES, n)
    assert_same_gradients(got, expected)
    assert revolve < store_all / 100, (revolve, store_all)
    # s snapshots of 8 kB plus O(1) states: far below 100 states
    assert revolve < 100 * STATE.nbytes


def test_checkpointed_loop_keeps_no_per_trip_terms():
    """A loop-invariant's gradient terms are added as they come, not collected over all trips."""
    n = 2000
    store_all, expected = peak(sg.grad(ode_bias, wrt=(0, 1)), STATE, RATES, n)
    revolve, got = peak(sg.grad(ode_bias, wrt=(0, 1), checkpoint=sg.Revolve(snapshots=10)), STATE, RATES, n)
    assert_same_gradients(got, expected)
    assert revolve < store_all / 20, (revolve, store_all)


def test_online_and_periodic_memory():
    """n = 2000, so the bound is five times the 1/100 the targets set at n = 10^4."""
    n = 2000
    store_all, expected = peak(sg.grad(ode_while, wrt=(0, 1)), STATE, RATES, n)
    online, got = peak(sg.grad(ode_online, wrt=(0, 1)), STATE, RATES, n)
    assert_same_gradients(got, expected)
    assert online < store_all / 20, (online, store_all)
    periodic, got = peak(sg.grad(ode_for, wrt=(0, 1), checkpoint=sg.Periodic(every=isqrt(n))), STATE, RATES, n)
    assert_same_gradients(got, expected)
    assert periodic < store_all / 5, (periodic, store_all)


# --- reported defects -------------------------------------------------------------------

def negative_range(x, n):
    for i in sg.checkpointed(range(n), sg.Revolve(snapshots=2)):
        x = x * 2.0
    return x


def test_negative_range_runs_no_trip():
    assert negative_range(1.0, -1) == 1.0
    assert sg.grad(negative_range)(1.0, -1) == 1.0


def keyword_marker(x, n):
    for i in sg.checkpointed(range(n), schedule=sg.Revolve(snapshots=2)):
        x = x * 2.0
    return x


def test_keyword_marker_checkpoints_or_is_refused():
    try:
        text = sg.source(keyword_marker)
    except sg.S2SGradError:
        return                                  # refusing it would do as well
    assert "Checkpoints(Revolve(snapshots=2), n)" in text


def test_checkpointed_loop_writes_in_place_like_store_all(load):
    f = load(None).for_trace
    assert "out[i] = " in sg.source(f, wrt=(0, 1))
    text = sg.source(f, wrt=(0, 1), checkpoint=sg.Periodic(every=4))
    assert "out = setitem(out" not in text


# --- every regime boundary of the schedules, bitwise ------------------------------------------------------

BOUNDARY_SNAPSHOTS = 3            # C(s+2, 2) = 10, C(s+3, 3) = 20, C(s+4, 4) = 35
BOUNDARY_LENGTHS = sorted({0, 1, 2, 3, 4, 9, 10, 11, 19, 20, 21, 34, 35, 36})


@pytest.mark.parametrize("schedule", [f"Online(snapshots={BOUNDARY_SNAPSHOTS})",
                                      f"Revolve(snapshots={BOUNDARY_SNAPSHOTS})",
                                      f"Periodic(every={BOUNDARY_SNAPSHOTS})", "Periodic(every=64)"])
@pytest.mark.parametrize("kind", ["for_simple", "while_simple"])
def test_gradient_is_store_alls_at_every_regime_boundary(load, kind, schedule):
    """n = 0, 1, s, s + 1 and each side of C(s + r, r) for r = 2, 3, 4: the same bits as store-all."""
    for n in BOUNDARY_LENGTHS:
        expected = sg.grad(getattr(load(None), kind), wrt=(0, 1))(X, A, n)
        got = sg.grad(getattr(load(schedule), kind), wrt=(0, 1))(X, A, n)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e, err_msg=f"n = {n}")


def steering_lengths(snapshots: int, up_to: int) -> list[int]:
    """Beyond C(s+2, 2): each trip count where the level rule `Online` is steered by reverses at the bound
    (there `Online` holds its snapshots), and the one after it."""
    rule, lengths = LevelRule(snapshots), set()
    for n in range(1, up_to + 1):
        rule.step()
        if n > comb(snapshots + 2, 2) and rule.on_bound():
            lengths |= {n, n + 1}
    return sorted(lengths)


@pytest.mark.parametrize("kind", ["for_simple", "while_simple"])
def test_gradient_is_store_alls_where_online_is_steered(load, kind):
    """Online(3) at each trip count where it holds the level rule's snapshots, and one after: the same bits
    as store-all."""
    lengths = steering_lengths(BOUNDARY_SNAPSHOTS, 60)
    assert len(lengths) >= 8
    for n in lengths:
        expected = sg.grad(getattr(load(None), kind), wrt=(0, 1))(X, A, n)
        got = sg.grad(getattr(load(f"Online(snapshots={BOUNDARY_SNAPSHOTS})"), kind), wrt=(0, 1))(X, A, n)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e, err_msg=f"n = {n}")
