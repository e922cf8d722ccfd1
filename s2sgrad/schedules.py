"""Checkpointing schedules: in which order to rerun and reverse a loop of ``n`` steps.

Reverse mode needs, for every step of a loop, the state the step started
from, and it needs them last to first.  Storing all ``n`` states costs memory
in proportion to ``n``; a checkpointing schedule stores a few of them
(*snapshots*) and recomputes the others from the nearest snapshot before them.
This module decides which states to keep and when to recompute; it knows
nothing about code generation.  A schedule yields *actions* and the generated
code (the *driver*) carries them out.

Positions and steps
-------------------
Step ``i`` (``0 <= i < n``) maps the state at position ``i`` to the state at
position ``i + 1``.  Position 0 is the state on loop entry, position ``n`` the
state on exit.  The driver holds one *current state*; its position is the
*current position*.

Actions
-------
``Advance(steps)``
    Run ``steps`` forward steps from the current state without recording
    anything: the current position moves from ``p`` to ``p + steps``.
``Snapshot(slot)``
    Store the current state in snapshot slot ``slot`` (an integer from 0),
    replacing whatever the slot held.
``Restore(slot)``
    Make the state stored in ``slot`` the current state; the current position
    becomes the one the snapshot was taken at.  The slot keeps its snapshot.
``Free(slot)``
    The snapshot in ``slot`` is not needed any more; the driver may drop it.
``Reverse(steps)``
    From the current position ``p``, run the steps ``p, ..., p + steps - 1``
    forward while recording what their adjoints need, then run their adjoints
    from the last to the first.  ``Reverse(1)`` is the classical "youturn"; a
    longer ``Reverse`` stores every step of a segment, and ``Reverse(n)`` from
    position 0 is plain store-all reverse mode.  Afterwards the current state
    is undefined: the next action, if any, is a ``Restore``.

Every schedule reverses each step exactly once, in the order ``n - 1, ..., 0``.
A snapshot must not change while it is held: a driver whose steps update
arrays in place copies the state on ``Snapshot`` and on ``Restore``.

Counting forward steps
----------------------
The cost of a schedule is its number of *forward steps*: the steps run by
``Advance`` actions (``Advance(k)`` counts ``k``) plus, for the online
protocol, the steps of the forward loop itself.  The steps a ``Reverse``
records are not counted: every schedule records each step exactly once.
With this convention store-all costs 0 and the binomial optimum for ``s``
snapshot slots is ``optimal_forward_steps(n, s)``.  The loop-entry state
occupies one of the ``s`` slots: formulations that count only the snapshots
besides it have ``s - 1`` where this module has ``s``.

A ``while`` loop learns that an iteration was its last only after running
it, so an online schedule runs all ``n`` steps forward before it reverses
anything, and pays a few steps more than the offline optimum.

Two ways to drive a schedule
----------------------------
For a loop whose trip count ``n`` is known on entry (``for i in range(n)``),
``schedule.plan(n)`` yields every action, the forward sweep included::

    slots = {}
    for action in Revolve(snapshots=10).plan(n):
        ...  # carry the action out

For a loop whose trip count is not known (``while``), ``schedule.start()``
returns a ``Tracker``.  The driver runs the loop itself, calling
``tracker.step()`` at the top of each iteration (after the condition was
found true, before the body runs) and taking the snapshot it asks for; when
the loop has ended, ``tracker.reverse()`` yields the actions of the backward
sweep, which starts with the current state at position ``n``::

    tracker = Online(snapshots=10).start()
    while condition(state):
        snapshot = tracker.step()
        if snapshot is not None:
            slots[snapshot.slot] = state
        state = body(state)
    for action in tracker.reverse():
        ...  # carry the action out
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from math import comb, isqrt
from typing import Union

__all__ = [
    "Advance", "Snapshot", "Restore", "Free", "Reverse", "Action",
    "Schedule", "Tracker", "Periodic", "Revolve", "Online",
    "repetition_number", "optimal_forward_steps",
]


# ---------------------------------------------------------------- actions


@dataclass(frozen=True, slots=True)
class Advance:
    """Run ``steps`` forward steps without recording: position ``p`` becomes ``p + steps``."""

    steps: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Store the current state in slot ``slot``, replacing what the slot held."""

    slot: int


@dataclass(frozen=True, slots=True)
class Restore:
    """Make the state stored in slot ``slot`` current; the slot keeps it."""

    slot: int


@dataclass(frozen=True, slots=True)
class Free:
    """The snapshot in slot ``slot`` will not be read again."""

    slot: int


@dataclass(frozen=True, slots=True)
class Reverse:
    """Record steps ``p .. p + steps - 1`` from the current position ``p``, then run
    their adjoints, last step first.  The current state is undefined afterwards."""

    steps: int = 1


Action = Union[Advance, Snapshot, Restore, Free, Reverse]


# ---------------------------------------------------------------- the binomial optimum


def repetition_number(n: int, snapshots: int) -> int:
    """The smallest ``t`` with ``C(snapshots + t, t) >= n``.

    A binomial schedule reverses ``n`` steps with ``snapshots`` slots while
    running no step forward more than ``t`` times, and no schedule can do
    with fewer.

    >>> repetition_number(10, 3), repetition_number(11, 3)
    (2, 3)
    """
    if snapshots <= 2 and n > 1:  # closed forms: C(1 + t, t) = t + 1, C(2 + t, t) = (t + 1)(t + 2) / 2
        t = n - 1 if snapshots == 1 else max(0, (isqrt(8 * n) - 3) // 2)
        while comb(snapshots + t, t) < n:
            t += 1
        return t
    t, reach = 0, 1  # reach = C(snapshots + t, t)
    while reach < n:
        t += 1
        reach = reach * (snapshots + t) // t
    return t


def optimal_forward_steps(n: int, snapshots: int) -> int:
    """The fewest forward steps that reverse ``n`` steps with ``snapshots`` slots.

    This is Griewank and Walther's ``t * n - C(s + t, t - 1)`` with ``t`` the
    repetition number; the slots include the one holding the loop-entry state,
    and forward steps are counted as in the module docstring.

    >>> optimal_forward_steps(1, 1), optimal_forward_steps(3, 1), optimal_forward_steps(100, 5)
    (0, 3, 316)
    """
    if n <= 1:
        return 0
    t = repetition_number(n, snapshots)
    return t * n - comb(snapshots + t, t - 1)


_REACHES: dict[int, list[int]] = {}  # slots -> [C(slots + t, t) for t = 0, 1, ...], as far as needed


def _quick_optimum(n: int, snapshots: int) -> int:
    """``optimal_forward_steps(n, snapshots)``, the repetition number found by bisection in a table."""
    if n <= 1:
        return 0
    if snapshots <= 2:
        return n * (n - 1) // 2 if snapshots == 1 else _two_slots(n)
    reach = _REACHES.setdefault(snapshots, [1])
    while reach[-1] < n:
        reach.append(reach[-1] * (snapshots + len(reach)) // len(reach))
    t = bisect_left(reach, n)
    return t * n - reach[t] * t // (snapshots + 1)


def _two_slots(n: int) -> int:
    """``optimal_forward_steps(n, 2)``: ``t * n - C(t + 2, 3)`` with ``C(t + 2, 2) >= n``."""
    if n <= 1:
        return 0
    t = max(1, (isqrt(8 * n) - 3) // 2)
    while (t + 1) * (t + 2) // 2 < n:
        t += 1
    return t * n - t * (t + 1) * (t + 2) // 6


def _optimal_split(length: int, snapshots: int) -> int:
    """How far to advance before the next snapshot, reversing ``length >= 2``
    steps with ``snapshots >= 2`` slots.

    Returns the smallest ``m`` minimising ``m + cost(length - m, snapshots - 1)
    + cost(m, snapshots)`` (``cost`` being ``optimal_forward_steps``).  That
    function of ``m`` is convex and its increment from ``m`` to ``m + 1`` is
    ``1 + repetition(m + 1, snapshots) - repetition(length - m, snapshots - 1)``,
    so the answer is the first ``m`` where the increment is not negative.  The
    loop walks over the blocks of ``m`` sharing ``repetition(m + 1, snapshots)
    == v``; within block ``v`` the increment is not negative as soon as
    ``length - m <= C(snapshots + v, snapshots - 1)``.
    """
    s = snapshots
    v = 1
    while True:
        block_first = comb(s + v - 1, s)
        block_last = comb(s + v, s) - 1
        m = max(block_first, length - comb(s + v, s - 1))
        if m <= block_last:
            return min(m, length - 1)
        v += 1


def _reverse_binomially(start: int, length: int, slot: int, free: list[int]) -> Iterator[Action]:
    """Actions reversing steps ``start .. start + length - 1`` in the fewest forward steps.

    On entry the current position is ``start`` and its state is also held in
    ``slot``; the call may use the slots listed in ``free`` and puts them back
    before it returns.  ``slot`` is freed right after its last ``Restore``.
    """
    while length > 1:
        if not free:
            for steps in range(length - 1, 0, -1):
                yield Advance(steps)
                yield Reverse(1)
                yield Restore(slot)
            break
        m = _optimal_split(length, 1 + len(free))
        yield Advance(m)
        if length - m == 1:
            yield Reverse(1)
        else:
            right_slot = free.pop()
            yield Snapshot(right_slot)
            yield from _reverse_binomially(start + m, length - m, right_slot, free)
            free.append(right_slot)
        yield Restore(slot)
        length = m
    yield Free(slot)
    yield Reverse(1)


# ---------------------------------------------------------------- interfaces


class Tracker(ABC):
    """Follows a loop whose trip count is not known in advance.

    ``position`` is the number of steps taken so far.  Call ``step()`` once
    per iteration, before the iteration's body runs; call ``reverse()`` once,
    after the loop ended.
    """

    position: int

    @abstractmethod
    def step(self) -> Snapshot | None:
        """Announce that the step at ``position`` is about to run.

        Returns the snapshot to take of the current state (the state at
        ``position``) before it is advanced, or ``None``.  Then ``position``
        grows by one.
        """

    @abstractmethod
    def reverse(self) -> Iterator[Action]:
        """The actions of the backward sweep, starting from the state at ``position``."""


class Schedule(ABC):
    """A checkpointing schedule: ``plan(n)`` for a known trip count, ``start()`` otherwise."""

    @abstractmethod
    def start(self) -> Tracker:
        """A tracker for a loop whose trip count will be known only when it ends."""

    def plan(self, n: int) -> Iterator[Action]:
        """Every action, forward sweep included, for a loop of ``n`` steps."""
        _check_count("n", n, minimum=0)
        return self._plan(n)

    def _plan(self, n: int) -> Iterator[Action]:
        # Without a dedicated offline plan, drive the tracker over n steps.
        tracker = self.start()
        pending = 0
        for _ in range(n):
            snapshot = tracker.step()
            if snapshot is not None:
                if pending:
                    yield Advance(pending)
                    pending = 0
                yield snapshot
            pending += 1
        if pending:
            yield Advance(pending)
        yield from tracker.reverse()


def _check_count(name: str, value: object, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")


# ---------------------------------------------------------------- Periodic


@dataclass(frozen=True)
class Periodic(Schedule):
    """Snapshot every ``every`` steps; reverse each segment storing all its steps.

    The backward sweep restores the segments' snapshots last to first and
    reverses each with one ``Reverse(every)``, so it holds ``ceil(n / every)``
    snapshots plus the recording of one segment.  ``every = sqrt(n)`` gives
    memory in ``sqrt(n)`` for about one extra forward pass; ``every >= n`` is
    store-all.

    >>> list(Periodic(every=2).plan(5))  # doctest: +NORMALIZE_WHITESPACE
    [Snapshot(slot=0), Advance(steps=2), Snapshot(slot=1), Advance(steps=2),
     Reverse(steps=1),
     Restore(slot=1), Free(slot=1), Reverse(steps=2),
     Restore(slot=0), Free(slot=0), Reverse(steps=2)]
    >>> list(Periodic(every=5).plan(5))
    [Reverse(steps=5)]
    """

    every: int

    def __post_init__(self) -> None:
        _check_count("every", self.every, minimum=1)

    def _plan(self, n: int) -> Iterator[Action]:
        if n == 0:
            return
        segments = range(0, n, self.every)
        last_start = segments[-1]
        for slot in range(len(segments) - 1):
            yield Snapshot(slot)
            yield Advance(self.every)
        yield Reverse(n - last_start)
        for slot in reversed(range(len(segments) - 1)):
            yield Restore(slot)
            yield Free(slot)
            yield Reverse(self.every)

    def start(self) -> Tracker:
        """A tracker that snapshots at positions ``0, every, 2 * every, ...``.

        >>> tracker = Periodic(every=2).start()
        >>> [tracker.step() for _ in range(3)]
        [Snapshot(slot=0), None, Snapshot(slot=1)]
        >>> list(tracker.reverse())
        [Restore(slot=1), Free(slot=1), Reverse(steps=1), Restore(slot=0), Free(slot=0), Reverse(steps=2)]
        """
        return _PeriodicTracker(self.every)


class _PeriodicTracker(Tracker):
    def __init__(self, every: int):
        self.every = every
        self.position = 0

    def step(self) -> Snapshot | None:
        position = self.position
        self.position += 1
        if position % self.every == 0:
            return Snapshot(position // self.every)
        return None

    def reverse(self) -> Iterator[Action]:
        n = self.position
        for slot in reversed(range(len(range(0, n, self.every)))):
            start = slot * self.every
            yield Restore(slot)
            yield Free(slot)
            yield Reverse(min(self.every, n - start))


# ---------------------------------------------------------------- Revolve


@dataclass(frozen=True)
class Revolve(Schedule):
    """Binomial checkpointing (Griewank and Walther, "Algorithm 799: revolve",
    ACM TOMS 2000) for a trip count known on entry.

    ``plan(n)`` holds at most ``snapshots`` snapshots at a time, the
    loop-entry state included, and takes exactly
    ``optimal_forward_steps(n, snapshots)`` forward steps, the fewest
    possible.  Each snapshot splits the steps ahead of it where the cost of
    the two parts, the second reversed first and with one slot fewer, is
    least.

    >>> list(Revolve(snapshots=2).plan(3))  # doctest: +NORMALIZE_WHITESPACE
    [Snapshot(slot=0), Advance(steps=1), Snapshot(slot=1), Advance(steps=1),
     Reverse(steps=1),
     Restore(slot=1), Free(slot=1), Reverse(steps=1),
     Restore(slot=0), Free(slot=0), Reverse(steps=1)]

    A loop whose trip count is not known on entry cannot follow an offline
    plan: ``start()`` returns the tracker of ``Online`` with as many slots.
    """

    snapshots: int

    def __post_init__(self) -> None:
        _check_count("snapshots", self.snapshots, minimum=1)

    def _plan(self, n: int) -> Iterator[Action]:
        if n == 0:
            return
        if n == 1:
            yield Reverse(1)
            return
        yield Snapshot(0)
        yield from _reverse_binomially(0, n, 0, list(range(self.snapshots - 1, 0, -1)))

    def start(self) -> Tracker:
        return Online(self.snapshots).start()


# ---------------------------------------------------------------- Online


@dataclass(frozen=True)
class Online(Schedule):
    """Online checkpointing for a loop whose trip count is not known in advance.

    The tracker holds at most ``snapshots`` snapshots, one of them the
    loop-entry state for good.  Once the loop has ended, the backward sweep
    reverses the stretches between consecutive snapshots, last to first, each
    by the binomial schedule with the slots that are free by then.

    Up to ``n = (s + 1) * (s + 2) / 2`` (``s = snapshots``), and for every n
    with ``s <= 2``, which states to keep is the dynamic checkpointing of
    Wang, Moin and Iaccarino ("Minimal repetition dynamic checkpointing
    algorithm for unsteady adjoint calculation", SIAM J. Sci. Comput. 2009).
    Every state offered gets a level and joins a list of at most ``s + 1``
    entries, the newest of which is the current state (a placeholder, which
    takes no slot).  An entry whose level is below that of a later entry is
    *dispensable*.  The next state removes the latest dispensable entry and
    joins at level 0; when none is dispensable it replaces the placeholder,
    one level higher.  Whether the current state stays in the list is
    therefore known before its step runs: if it stays, it is stored (the
    dispensable entry's slot is freed a step early), otherwise it never
    takes a slot.  In that range this takes the fewest forward steps any
    schedule can for a loop that must run to its end before its trip count
    is known, ``optimal_forward_steps(n + 1, s)``.

    Beyond, with ``s >= 3``, the tracker prices each state as a-revolve, the
    last stage of the online checkpointing in Stumm and Walther's revolve
    package ("New algorithms for optimal online checkpointing", SIAM J. Sci.
    Comput. 2010), does: the state replaces the snapshot whose loss costs
    least if that makes the backward sweep from the next position cheaper
    than keeping the snapshots held.  How close both rules come to the bound
    is measured in ``benchmarks/CHECKPOINTING.md``.

    >>> tracker = Online(snapshots=2).start()
    >>> [tracker.step() for _ in range(4)]
    [Snapshot(slot=0), Snapshot(slot=1), None, Snapshot(slot=1)]
    >>> list(tracker.reverse())  # doctest: +NORMALIZE_WHITESPACE
    [Restore(slot=1), Free(slot=1), Reverse(steps=1),
     Restore(slot=0), Advance(steps=1), Snapshot(slot=1), Advance(steps=1), Reverse(steps=1),
     Restore(slot=1), Free(slot=1), Reverse(steps=1),
     Restore(slot=0), Free(slot=0), Reverse(steps=1)]
    """

    snapshots: int

    def __post_init__(self) -> None:
        _check_count("snapshots", self.snapshots, minimum=1)

    def start(self) -> Tracker:
        return _OnlineTracker(self.snapshots)


@dataclass(eq=False)
class _Checkpoint:
    position: int
    slot: int
    level: float  # the loop entry's is infinite


class _OnlineTracker(Tracker):
    def __init__(self, snapshots: int):
        self.snapshots = snapshots
        self.position = 0
        self._held: list[_Checkpoint] = []  # by position; _held[0] is the loop entry
        self._free_slots = list(range(snapshots - 1, -1, -1))
        self._placeholder_level: float | None = None  # the previous state's, had it no slot
        # From here on, with three slots or more, the rule of least cost (`_step_by_cost`).
        self._by_cost_from = comb(snapshots + 2, 2) if snapshots >= 3 else None
        self._costs: tuple | None = None  # `_reversal_costs()` of the snapshots held
        # [j]: the costs of stretches 0 .. j - 1, stretch i with s - i slots; with one slot more each
        self._keeping_sums, self._evicting_sums = [0], [0]
        self._cheapest_inner: list[tuple[int, int]] = []  # [k - 1]: (cost, k) least for 1 .. k

    def step(self) -> Snapshot | None:
        position = self.position
        self.position += 1
        if position == 0:
            return self._store(position, level=float("inf"))
        if self._by_cost_from is not None and position >= self._by_cost_from:
            return self._step_by_cost(position)
        level = 0 if self._placeholder_level is None else self._placeholder_level + 1
        if not self._free_slots:
            dispensable = self._latest_dispensable(level)
            if dispensable is None:
                self._placeholder_level = level
                return None
            self._evict(dispensable)
        self._placeholder_level = None
        return self._store(position, level)

    def _latest_dispensable(self, newest_level: float) -> _Checkpoint | None:
        """The latest held checkpoint (not the loop entry) whose level is below a later entry's."""
        highest_later_level = newest_level
        for checkpoint in reversed(self._held[1:]):
            if checkpoint.level < highest_later_level:
                return checkpoint
            highest_later_level = checkpoint.level  # not below the highest later one: the highest now
        return None

    def _step_by_cost(self, position: int) -> Snapshot | None:
        """Store the current state, in place of the snapshot whose loss costs least, if that makes
        reversing from the next position cheaper than keeping the snapshots held (ties: keep them;
        else the earliest).  The snapshots' part of each cost is cached until the next eviction."""
        if self._free_slots:
            return self._store(position, level=0)
        if self._costs is None:
            self._costs = self._reversal_costs()
        (keep, inner, inner_cost, last_cost), held = self._costs, self._held
        last = position - held[-1].position
        best, victim = keep + last * (last + 1) // 2, None  # t(last + 1, 1), the last stretch with one slot
        if inner is not None and inner_cost + _two_slots(last) < best:
            best, victim = inner_cost + _two_slots(last), inner
        if last_cost + _two_slots(position - held[-2].position) < best:
            victim = len(held) - 1
        if victim is None:
            return None
        self._evict(held[victim])
        return self._store(position, level=0)

    def _reversal_costs(self) -> tuple:
        """With every slot used: the forward steps reversing the stretches between the snapshots,
        keeping them all; the snapshot whose eviction costs least but the last (index, cost), when
        the state at the current position is stored; and that cost evicting the last.  Stretch ``j``
        is reversed with ``s - j`` slots, after an eviction the later ones with one more.  Evicting
        ``k`` costs, but for a total, what depends on snapshots ``0 .. k + 1``: kept across `_evict`."""
        s, held = self.snapshots, self._held
        keeping, evicting, cheapest = self._keeping_sums, self._evicting_sums, self._cheapest_inner
        for j in range(len(keeping) - 1, s - 1):
            length = held[j + 1].position - held[j].position
            keeping.append(keeping[-1] + _quick_optimum(length, s - j))
            evicting.append(evicting[-1] + _quick_optimum(length, s - j + 1))
        for k in range(len(cheapest) + 1, s - 1):
            merged = _quick_optimum(held[k + 1].position - held[k - 1].position, s - k + 1)  # k evicted
            cost = keeping[k - 1] + merged - evicting[k + 1]  # + evicting[s - 1]
            cheapest.append((cost, k) if not cheapest or cost < cheapest[-1][0] else cheapest[-1])
        inner_cost, inner = cheapest[-1] if cheapest else (0, None)
        return keeping[s - 1], inner, inner_cost + evicting[s - 1], keeping[s - 2]

    def _store(self, position: int, level: float) -> Snapshot:
        slot = self._free_slots.pop()
        self._held.append(_Checkpoint(position, slot, level))
        return Snapshot(slot)

    def _evict(self, checkpoint: _Checkpoint) -> None:
        del self._held[index := self._held.index(checkpoint)]
        self._free_slots.append(checkpoint.slot)
        self._costs = None  # the stretches up to index - 2 stay, and so do their slots:
        del self._keeping_sums[index:], self._evicting_sums[index:], self._cheapest_inner[max(0, index - 2):]

    def reverse(self) -> Iterator[Action]:
        free = list(self._free_slots)
        end = self.position
        for checkpoint in reversed(self._held):
            yield Restore(checkpoint.slot)
            yield from _reverse_binomially(checkpoint.position, end - checkpoint.position, checkpoint.slot, free)
            free.append(checkpoint.slot)
            end = checkpoint.position
