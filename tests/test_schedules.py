"""Checkpointing schedules, run on a simulated loop.

The simulated loop's state is just its position.  The simulator carries out
each action and checks it against the meaning the module documents: every
step is reversed exactly once, last to first; a ``Restore`` reads only a slot
holding a snapshot; no more slots are held than the schedule may hold.  It
counts forward steps the way the module does.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s2sgrad import schedules
from s2sgrad.schedules import (
    Advance,
    Free,
    Online,
    Periodic,
    Restore,
    Reverse,
    Revolve,
    Snapshot,
    optimal_forward_steps,
    repetition_number,
)
from s2sgrad.schedules.levels import LevelRule
from s2sgrad.schedules.online import OnlineRule

# ---------------------------------------------------------------- the simulator


@dataclass
class SimulatedLoop:
    """A loop of ``n`` steps whose state is its position."""

    n: int
    max_slots: int | None = None
    position: int | None = 0  # None: undefined, after a Reverse
    next_to_reverse: int = field(init=False)
    slots: dict[int, int] = field(default_factory=dict)
    forward_steps: int = 0
    peak_slots: int = 0
    longest_reverse: int = 0

    def __post_init__(self) -> None:
        self.next_to_reverse = self.n - 1

    def run_forward_step(self) -> None:
        """One iteration of the loop itself, as a ``while`` loop runs it."""
        assert self.position is not None and self.position < self.n
        self.position += 1
        self.forward_steps += 1

    def apply(self, action: schedules.Action) -> None:
        if isinstance(action, Advance):
            assert action.steps >= 1
            assert self.position is not None, "Advance from an undefined state"
            assert self.position + action.steps <= self.n, "Advance past the loop's end"
            self.position += action.steps
            self.forward_steps += action.steps
        elif isinstance(action, Snapshot):
            assert self.position is not None, "Snapshot of an undefined state"
            assert action.slot >= 0
            if self.max_slots is not None:
                assert action.slot < self.max_slots, f"slot {action.slot} of {self.max_slots}"
            self.slots[action.slot] = self.position
            self.peak_slots = max(self.peak_slots, len(self.slots))
        elif isinstance(action, Restore):
            assert action.slot in self.slots, f"Restore of empty slot {action.slot}"
            self.position = self.slots[action.slot]
        elif isinstance(action, Free):
            assert action.slot in self.slots, f"Free of empty slot {action.slot}"
            del self.slots[action.slot]
        elif isinstance(action, Reverse):
            assert action.steps >= 1
            assert self.position is not None, "Reverse from an undefined state"
            last = self.position + action.steps - 1
            assert last == self.next_to_reverse, f"reversed step {last}, expected {self.next_to_reverse}"
            self.next_to_reverse = self.position - 1
            self.position = None
            self.longest_reverse = max(self.longest_reverse, action.steps)
        else:
            raise AssertionError(f"unknown action {action!r}")

    def check_finished(self) -> None:
        assert self.next_to_reverse == -1, f"step {self.next_to_reverse} was never reversed"
        assert not self.slots, f"slots {sorted(self.slots)} never freed"


def run_plan(schedule: schedules.Schedule, n: int, max_slots: int | None = None) -> SimulatedLoop:
    loop = SimulatedLoop(n, max_slots)
    for action in schedule.plan(n):
        loop.apply(action)
    loop.check_finished()
    return loop


def run_tracker(schedule: schedules.Schedule, n: int, max_slots: int | None = None) -> SimulatedLoop:
    """Drive ``schedule`` as a ``while`` loop of ``n`` iterations would."""
    loop = SimulatedLoop(n, max_slots)
    tracker = schedule.start()
    for position in range(n):
        assert tracker.position == position
        snapshot = tracker.step()
        assert snapshot is None or isinstance(snapshot, Snapshot)
        if snapshot is not None:
            loop.apply(snapshot)
        loop.run_forward_step()
    assert tracker.position == n
    if tracker.records and n:   # the forward sweep recorded the steps since the latest snapshot
        latest = max(loop.slots.values())
        loop.next_to_reverse = latest - 1
        loop.longest_reverse = n - latest
    for action in tracker.reverse():
        loop.apply(action)
    loop.check_finished()
    return loop


# ---------------------------------------------------------------- reference optima


@lru_cache(maxsize=None)
def dp_optimum(n: int, extra: int) -> int:
    """Fewest forward steps reversing ``n`` steps with ``extra`` snapshots besides
    the loop-entry state (Griewank's recurrence: advance ``m`` steps, snapshot,
    reverse the rest with one snapshot fewer, then the first ``m`` again)."""
    if n == 1:
        return 0
    if extra == 0:
        return n * (n - 1) // 2
    return min(m + dp_optimum(n - m, extra - 1) + dp_optimum(m, extra) for m in range(1, n))


@lru_cache(maxsize=None)
def _chain_reversal(n: int, slots: int) -> int:
    """Fewest forward steps reversing ``n`` steps from snapshots placed anywhere in
    them (the first at their start), the j-th stretch reversed with ``slots - j``."""
    best = optimal_forward_steps(n, slots)
    if slots > 1:
        for first in range(1, n):
            best = min(best, optimal_forward_steps(first, slots) + _chain_reversal(n - first, slots - 1))
    return best


def while_loop_optimum(n: int, snapshots: int) -> int:
    """Fewest forward steps for a loop that runs to its end before ``n`` is known:
    the ``n`` steps of the loop plus the best reversal from its snapshots."""
    return n if n <= 1 else n + _chain_reversal(n, snapshots)


def beta2(snapshots: int) -> int:
    return (snapshots + 1) * (snapshots + 2) // 2


# ---------------------------------------------------------------- actions and module


def test_actions_are_immutable_values() -> None:
    assert Advance(3) == Advance(3) != Advance(4)
    assert len({Snapshot(1), Snapshot(1), Restore(1), Free(1)}) == 3
    assert Reverse() == Reverse(1)
    with pytest.raises(AttributeError):
        Advance(3).steps = 4  # type: ignore[misc]


def test_schedules_are_hashable_configuration() -> None:
    assert Revolve(snapshots=4) == Revolve(4)
    assert len({Periodic(every=3), Periodic(every=3), Online(snapshots=3), Revolve(snapshots=3)}) == 3
    assert repr(Revolve(snapshots=4)) == "Revolve(snapshots=4)"


@pytest.mark.parametrize("make", [Revolve, Online, Periodic])
def test_bad_arguments(make) -> None:
    with pytest.raises(ValueError):
        make(0)
    with pytest.raises(TypeError):
        make(2.5)
    with pytest.raises(ValueError):
        list(make(2).plan(-1))


def test_zero_steps() -> None:
    for schedule in [Revolve(3), Online(3), Periodic(3)]:
        assert list(schedule.plan(0)) == []
        assert list(schedule.start().reverse()) == []


# ---------------------------------------------------------------- the binomial optimum


@pytest.mark.parametrize("snapshots", range(1, 9))
def test_closed_form_equals_dynamic_programming(snapshots: int) -> None:
    for n in range(1, 121):
        assert optimal_forward_steps(n, snapshots) == dp_optimum(n, snapshots - 1), n


def test_repetition_number() -> None:
    for snapshots in range(1, 9):
        for t in range(1, 6):
            reach = comb(snapshots + t, t)
            assert repetition_number(reach, snapshots) == t
            assert repetition_number(reach + 1, snapshots) == t + 1


# ---------------------------------------------------------------- Revolve


@pytest.mark.parametrize("snapshots", range(1, 9))
def test_revolve_is_optimal(snapshots: int) -> None:
    for n in range(0, 201):
        loop = run_plan(Revolve(snapshots), n, max_slots=snapshots)
        assert loop.forward_steps == optimal_forward_steps(n, snapshots), n
        assert loop.longest_reverse <= 1


@pytest.mark.parametrize("n, snapshots", [(10_000, 10), (20_000, 3), (5_000, 1), (3_003, 10)])
def test_revolve_is_optimal_on_long_loops(n: int, snapshots: int) -> None:
    loop = run_plan(Revolve(snapshots), n, max_slots=snapshots)
    assert loop.forward_steps == optimal_forward_steps(n, snapshots)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 3000), snapshots=st.integers(1, 16))
def test_revolve_is_optimal_anywhere(n: int, snapshots: int) -> None:
    loop = run_plan(Revolve(snapshots), n, max_slots=snapshots)
    assert loop.forward_steps == optimal_forward_steps(n, snapshots)


def test_revolve_with_ample_snapshots_advances_each_step_once() -> None:
    assert run_plan(Revolve(snapshots=10), 11).forward_steps == 10
    assert run_plan(Revolve(snapshots=10), 11).peak_slots == 10


def test_revolve_tracker_is_online() -> None:
    loop = run_tracker(Revolve(snapshots=4), 30, max_slots=4)
    assert loop.forward_steps == run_tracker(Online(snapshots=4), 30).forward_steps


# ---------------------------------------------------------------- Periodic


@pytest.mark.parametrize("every", [1, 2, 3, 5, 7, 16])
def test_periodic_plan(every: int) -> None:
    for n in range(0, 201):
        loop = run_plan(Periodic(every), n)
        segments = -(-n // every)
        assert loop.forward_steps == max(segments - 1, 0) * every
        assert loop.peak_slots == max(segments - 1, 0)
        assert loop.longest_reverse == min(every, n)


@pytest.mark.parametrize("every", [1, 2, 3, 5, 7, 16])
def test_periodic_tracker(every: int) -> None:
    for n in range(0, 201):
        loop = run_tracker(Periodic(every), n)
        assert loop.forward_steps == n
        assert loop.peak_slots == -(-n // every)
        assert loop.longest_reverse == min(every, n)


def test_periodic_one_segment_is_store_all() -> None:
    assert list(Periodic(every=50).plan(50)) == [Reverse(50)]
    assert list(Periodic(every=100).plan(50)) == [Reverse(50)]


def test_periodic_square_root() -> None:
    loop = run_plan(Periodic(every=100), 10_000)
    assert loop.peak_slots == 99 and loop.longest_reverse == 100
    assert loop.forward_steps == 9_900


# ---------------------------------------------------------------- Online


@pytest.mark.parametrize("snapshots", range(1, 9))
def test_online_is_optimal_up_to_two_repetitions(snapshots: int) -> None:
    """Up to n = (s+1)(s+2)/2 no schedule of a loop that must end before n is known
    does better; that is at most 3 steps above the offline optimum, so within
    1.1 times it once the optimum is 30 steps or more."""
    for n in range(0, beta2(snapshots) + 1):
        loop = run_tracker(Online(snapshots), n, max_slots=snapshots)
        assert loop.forward_steps == while_loop_optimum(n, snapshots), n
        offline = optimal_forward_steps(n, snapshots)
        assert loop.forward_steps <= offline + 3
        if offline >= 30:
            assert loop.forward_steps <= 1.1 * offline


@pytest.mark.parametrize("snapshots", range(1, 9))
def test_online_beyond_two_repetitions(snapshots: int) -> None:
    """Within 2 times the offline optimum; with one slot (the loop entry only),
    1 + 2 / (n - 1) times, otherwise within 1.4 times in this range."""
    bound = 2 if snapshots == 1 else 1.4
    for n in range(beta2(snapshots) + 1, 201):
        loop = run_tracker(Online(snapshots), n, max_slots=snapshots)
        assert loop.forward_steps <= bound * optimal_forward_steps(n, snapshots), n


@pytest.mark.parametrize("n, snapshots", [(100, 5), (1_000, 10), (10_000, 10), (20_000, 4), (2_000, 20)])
def test_online_on_long_loops(n: int, snapshots: int) -> None:
    loop = run_tracker(Online(snapshots), n, max_slots=snapshots)
    assert loop.forward_steps <= 1.5 * optimal_forward_steps(n, snapshots)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 3000), snapshots=st.integers(1, 16))
def test_online_anywhere(n: int, snapshots: int) -> None:
    loop = run_tracker(Online(snapshots), n, max_slots=snapshots)
    assert loop.forward_steps <= max(2 * optimal_forward_steps(n, snapshots), n)


# The sweep of Online against the online bound: every n up to SWEEP_N (1,000), for s = 1 .. 12 and 20.  The larger
# setting of benchmarks/CHECKPOINTING.md: S2SGRAD_ONLINE_SWEEP_N=1000000 (slow: tens of minutes per s).
SWEEP_N = int(os.environ.get("S2SGRAD_ONLINE_SWEEP_N", "1000"))


def online_costs(snapshots: int, max_n: int) -> list[int]:
    """Forward steps of ``Online(snapshots)`` on loops of 0 .. max_n steps, from one run of its
    tracker: the n steps plus the binomial reversal of each stretch between its snapshots
    with the slots free by then, as ``reverse()`` does (``test_online_pricing`` checks this
    against the simulator)."""
    tracker, costs = Online(snapshots).start(), [0]
    for n in range(1, max_n + 1):
        tracker.step()
        held = tracker.held()
        free, end, cost = snapshots - len(held), n, n
        for position in reversed(held):
            free += 1
            cost += optimal_forward_steps(end - position, free)
            end = position
        costs.append(cost)
    return costs


def online_bound(n: int, snapshots: int) -> int:
    """The fewest forward steps of a loop that must end before its trip count is known."""
    return optimal_forward_steps(n + 1, snapshots) if n else 0


@pytest.mark.parametrize("snapshots, n", [(1, 7), (2, 40), (4, 100), (10, 300)])
def test_online_pricing(snapshots: int, n: int) -> None:
    costs = online_costs(snapshots, n)
    for k in range(n + 1):
        assert run_tracker(Online(snapshots), k, max_slots=snapshots).forward_steps == costs[k], k


@pytest.mark.parametrize("snapshots", [*range(1, 13), 20])
def test_online_against_the_bound(snapshots: int) -> None:
    """The online bound up to n = (s+1)(s+2)/2; beyond, within the measured 1.15 times it (the
    worst: s = 2, where Wang, Moin and Iaccarino's levels decide throughout)."""
    costs = online_costs(snapshots, SWEEP_N)
    for n, cost in enumerate(costs):
        bound = online_bound(n, snapshots)
        assert cost >= bound, n
        if n <= beta2(snapshots):
            assert cost == bound, n
        else:
            assert cost <= 1.15 * bound, n


@pytest.mark.parametrize("snapshots, n, steps", [(20, 250, 500), (5, 500, 2_596), (5, 3_000, 25_006),
                                                 (10, 1_000, 3_640), (20, 10_000, 37_985)])
def test_online_near_the_bound_on_long_loops(snapshots: int, n: int, steps: int) -> None:
    """Just after (s+1)(s+2)/2 (s = 20, n = 250) and just before C(s + 4, 4) (s = 10, n = 1,000) on the
    bound; elsewhere within 0.6 % of it."""
    loop = run_tracker(Online(snapshots), n, max_slots=snapshots)
    assert loop.forward_steps == steps
    assert steps <= 1.006 * online_bound(n, snapshots)


# The forward steps of every n = 1 .. 1,000 summed, for s = 1 .. 12 and 20: the schedule does not change unnoticed.
SWEEP_TOTALS = {1: 167_167_000, 2: 11_615_692, 3: 5_182_565, 4: 3_505_744, 5: 2_770_522, 6: 2_359_395,
                7: 2_101_519, 8: 1_933_496, 9: 1_790_403, 10: 1_686_431, 11: 1_621_418, 12: 1_554_447,
                20: 1_278_449}


@pytest.mark.parametrize("snapshots", sorted(SWEEP_TOTALS))
def test_online_forward_steps_of_every_n_are_pinned(snapshots: int) -> None:
    assert sum(online_costs(snapshots, 1000)) == SWEEP_TOTALS[snapshots]


@pytest.mark.parametrize("snapshots", [3, 4, 5, 8, 12, 20])
def test_online_holds_the_level_rules_snapshots_at_its_milestones(snapshots: int) -> None:
    """Beyond (s+1)(s+2)/2, wherever Wang, Moin and Iaccarino's level rule (as their paper counts slots)
    reverses at the online bound, the tracker holds the same snapshots, so it is on the bound there too."""
    tracker, rule, milestones = Online(snapshots).start(), LevelRule(snapshots), 0
    for n in range(1, 2_001):
        tracker.step()
        rule.step()
        if n > beta2(snapshots) and rule.on_bound():
            assert tuple(tracker.held()) == rule.held(), n
            milestones += 1
    assert milestones >= 20


def test_level_rule_on_the_bound_means_on_the_bound() -> None:
    rule = LevelRule(snapshots=4)
    for n in range(1, 300):
        rule.step()
        free, end, cost = 4 - len(rule.held()), n, n
        for position in reversed(rule.held()):
            free += 1
            cost += optimal_forward_steps(end - position, free)
            end = position
        assert rule.on_bound() == (cost == online_bound(n, 4)), n


# The better of two online rules at each n with three slots (to 22) and two (to 12): Wang, Moin and Iaccarino's as
# their paper counts slots, and the first `Online` (levels throughout, the placeholder left out; commit 58461ae),
# which with two slots is `Online` today. With two, the paper's count alone is just as far out of reach.
BETTER_OF_TWO_RULES = {
    3: [0, 1, 2, 3, 5, 7, 9, 11, 13, 15, 18, 22, 24, 29, 31, 33, 36, 40, 42, 45, 49, 54, 58],
    2: [0, 1, 2, 4, 6, 8, 11, 15, 17, 20, 24, 29, 33],
}
WANG_MOIN_IACCARINO_2 = [0, 1, 2, 4, 7, 8, 11, 15, 17, 20, 24, 29, 33]


@pytest.mark.parametrize("snapshots, costs", [(3, BETTER_OF_TWO_RULES[3]), (2, BETTER_OF_TWO_RULES[2]),
                                              (2, WANG_MOIN_IACCARINO_2)])
def test_no_online_schedule_is_at_or_below_both_rules_at_every_n(snapshots: int, costs: list) -> None:
    """Every set of snapshots an online schedule with `snapshots` slots may hold after each step, kept only
    while reversing from it costs no more than `costs` (the better rule): none is left at the last n (22 with
    three slots, 12 with two).  So `Online` cannot be at or below both at every n; with two slots not even at
    or below the paper's count alone, which holds a third state (the placeholder, stored before it is known
    whether it stays).  The benchmark measures how close to the bound it is instead."""
    reachable = {(0,)}
    for position in range(len(costs) - 1):
        n = position + 1
        successors = set()
        for held in reachable:
            options = [held, *(held[:k] + held[k + 1:] + (position,) for k in range(1, len(held)))]
            if len(held) < snapshots:
                options.append(held + (position,))
            for option in options:
                free, end, cost = snapshots - len(option), n, n
                for start in reversed(option):
                    free += 1
                    cost += optimal_forward_steps(end - start, free)
                    end = start
                if cost <= costs[n]:
                    successors.add(option)
        reachable = successors
        if n < len(costs) - 1:
            assert reachable, n
    assert not reachable


def test_online_plan_follows_the_tracker() -> None:
    for snapshots in [1, 3, 6]:
        for n in [0, 1, 2, 9, 40, 150]:
            planned = run_plan(Online(snapshots), n, max_slots=snapshots)
            tracked = run_tracker(Online(snapshots), n, max_slots=snapshots)
            assert planned.forward_steps == tracked.forward_steps


def test_online_keeps_the_loop_entry() -> None:
    tracker = Online(snapshots=3).start()
    slots = {}
    for position in range(500):
        snapshot = tracker.step()
        if snapshot is not None:
            slots[snapshot.slot] = position
        assert slots[0] == 0


def reversal_costs_from_scratch(tracker) -> tuple:
    """What ``tracker._reversal_costs()`` must return, priced from the snapshots' positions alone."""
    s, positions = tracker.snapshots, [c.position for c in tracker._held]
    lengths = [b - a for a, b in zip(positions, positions[1:])]
    before = [0]
    for j, length in enumerate(lengths):
        before.append(before[-1] + optimal_forward_steps(length, s - j))
    after = [0] * (s + 1)
    for j in range(s - 2, 0, -1):
        after[j] = after[j + 1] + optimal_forward_steps(lengths[j], s - j + 1)
    inner, inner_cost = None, None
    for k in range(1, s - 1):
        if positions[k] in tracker._kept:
            continue
        merged = optimal_forward_steps(positions[k + 1] - positions[k - 1], s - k + 1)
        cost = before[k - 1] + merged + after[k + 1]
        if inner is None or cost < inner_cost:
            inner, inner_cost = k, cost
    return before[s - 1], inner, inner_cost, before[s - 2]


@pytest.mark.parametrize("snapshots, n", [(3, 3_000), (4, 3_000), (7, 3_000), (12, 3_000), (30, 4_000)])
def test_online_prices_from_what_evictions_left(snapshots: int, n: int) -> None:
    """The tracker keeps the stretch costs across stores and prices again only the stretches an
    eviction changed; at every step with every slot in use that equals pricing them all."""
    tracker = OnlineRule(snapshots)
    for _ in range(n):
        tracker.step()
        if not tracker._free_slots:
            assert tracker._reversal_costs() == reversal_costs_from_scratch(tracker), tracker.position


@pytest.mark.parametrize("snapshots, steps", [
    (3, [2_316, 12_277, 55_825, 282_171]),
    (5, [1_355, 6_369, 25_006, 114_260]),
    (10, [843, 3_640, 13_641, 57_717]),
    (30, [570, 2_475, 8_475, 34_023]),
    (100, [500, 1_900, 5_900, 24_751]),
])
def test_online_forward_steps_are_pinned(snapshots: int, steps: list[int]) -> None:
    """The forward steps of n = 300, 1,000, 3,000 and 10,000: the schedule does not change with
    how its costs are computed."""
    wanted = [300, 1_000, 3_000, 10_000]
    costs = online_costs(snapshots, wanted[-1])
    assert [costs[n] for n in wanted] == steps


@pytest.mark.parametrize("snapshots", [1, 2, 3, 5, 10, 31])
def test_online_tracker_replays_its_rule(snapshots: int) -> None:
    """The tracker looks up the decisions its rule made once for this number of slots: the same snapshots
    step by step and the same backward sweep, for a second tracker, a longer loop and a shorter one."""
    for n in (700, 1_500, 40, 700):
        tracker, rule = Online(snapshots).start(), OnlineRule(snapshots)
        for _ in range(n):
            assert tracker.step() == rule.step()
        assert tracker.held() == rule.held()
        assert list(tracker.reverse()) == list(rule.reverse())


def test_online_tracker_beyond_the_kept_sweeps() -> None:
    """A loop longer than the trip counts whose backward sweeps are kept gets its sweep afresh, the rule's."""
    tracker, rule = Online(3).start(), OnlineRule(3)
    for _ in range(tracker._KEPT_UP_TO + 1):
        tracker.step()
        rule.step()
    assert list(tracker.reverse()) == list(rule.reverse())
    assert (3, tracker.position) not in tracker._sweeps
