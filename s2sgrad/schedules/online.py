"""`Online`: checkpointing a loop whose trip count is known only when it ends (a ``while`` loop).

    >>> tracker = Online(snapshots=3).start()
    >>> [tracker.step() for _ in range(4)]
    [Snapshot(slot=0), Snapshot(slot=1), Snapshot(slot=2), None]
"""
from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from math import comb

from .actions import Action, Restore, Snapshot
from .binomial import quick_optimum, reverse_binomially, two_slots
from .levels import LevelRule
from .protocol import Schedule, Tracker, check_count


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
    than keeping the snapshots held.  It is steered by the level rule as the
    paper counts slots (`LevelRule`), which the tracker runs ahead to the next
    trip count where that rule reverses at the bound: until then no snapshot
    the level rule holds there is evicted, and every state it holds there is
    stored, so at that trip count the tracker holds the same snapshots and is
    on the bound too.  Between, the rule of least cost decides.  No online
    schedule is at or below both rules at every n (``tests/test_schedules.py``
    shows it with three slots at n = 22, and with two at n = 12); how close this
    one comes to the bound, and to each rule, is measured in
    ``benchmarks/CHECKPOINTING.md``.

    The decisions depend on ``s`` alone, so the rule (`OnlineRule`) makes them
    once per ``s``, as far as the longest loop so far, and every tracker
    replays them: after the first loop of a length, a step is a lookup.

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
        check_count("snapshots", self.snapshots, minimum=1)

    def start(self) -> Tracker:
        return _OnlineTracker(self.snapshots)


class _OnlineTracker(Tracker):
    """Replays the decisions of `OnlineRule`, which depend on the number of slots alone: worked out once
    per number of slots, as far as the longest loop so far, and shared (a step is a lookup). So are the
    actions of the backward sweep, which depend on the slots and the trip count alone, for the latest few
    trip counts up to 20,000."""

    _decisions: dict[int, tuple] = {}  # slots -> (the rule, [position]: the slot its state goes to, or -1)

    def __init__(self, snapshots: int):
        self.snapshots = snapshots
        self.position = 0
        self._rule, self._slots = self._decisions.get(snapshots) or self._decisions.setdefault(
            snapshots, (OnlineRule(snapshots), array("h")))
        self._snapshots = tuple(Snapshot(slot) for slot in range(snapshots))
        self._at = [-1] * snapshots  # [slot]: the position of the snapshot it holds, or -1

    def step(self) -> Snapshot | None:
        position = self.position
        self.position = position + 1
        slots = self._slots
        while len(slots) <= position:
            snapshot = self._rule.step()
            slots.append(-1 if snapshot is None else snapshot.slot)
        slot = slots[position]
        if slot < 0:
            return None
        self._at[slot] = position
        return self._snapshots[slot]

    def held(self) -> list[int]:
        """The positions of the snapshots held, the loop entry first."""
        return sorted(p for p in self._at if p >= 0)

    _sweeps: dict[tuple[int, int], tuple] = {}  # (slots, n) -> the actions of the backward sweep, the latest few
    _KEPT_UP_TO = 20_000  # the trip counts whose sweeps are kept (a few actions per trip)

    def reverse(self) -> Iterator[Action]:
        if self.position > self._KEPT_UP_TO:
            return self._sweep()
        key = self.snapshots, self.position
        sweep = self._sweeps.get(key)
        if sweep is None:
            if len(self._sweeps) >= 4:
                del self._sweeps[next(iter(self._sweeps))]
            sweep = self._sweeps[key] = tuple(self._sweep())
        return iter(sweep)

    def _sweep(self) -> Iterator[Action]:
        # the rule fills slots 0, 1, ... and then reuses the slot it evicts at once: all it used are held
        free = [slot for slot in range(self.snapshots - 1, -1, -1) if self._at[slot] < 0]
        end = self.position
        for position, slot in sorted(((p, k) for k, p in enumerate(self._at) if p >= 0), reverse=True):
            yield Restore(slot)
            yield from reverse_binomially(end - position, slot, free)
            free.append(slot)
            end = position


@dataclass(eq=False)
class _Checkpoint:
    position: int
    slot: int
    level: float  # the loop entry's is infinite


class OnlineRule(Tracker):
    """The rule `Online`'s tracker follows, a tracker of its own: the level rule up to
    ``(s + 1) * (s + 2) / 2`` (and throughout for ``s <= 2``), then the rule of least cost, steered by the
    level rule as the paper counts slots (see `Online`)."""

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
        self._cheapest_inner: list[tuple[int, int] | None] = []  # [k - 1]: (cost, k) least for 1 .. k not kept
        # The level rule run ahead: the next trip count where it is on the bound, and the positions held there,
        # which are kept (and stored when reached) until then.
        self._levels = LevelRule(snapshots) if snapshots >= 3 else None
        self._milestone, self._kept = 0, frozenset()

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
        else the earliest).  A snapshot the level rule holds at its next milestone stays, and a state it
        holds there is stored.  The snapshots' part of each cost is cached until the next eviction."""
        if self._milestone <= position:
            self._milestone, kept = self._levels.next_milestone(after=position)
            self._steer(frozenset(kept))
        if self._free_slots:
            return self._store(position, level=0)
        if self._costs is None:
            self._costs = self._reversal_costs()
        (keep, inner, inner_cost, last_cost), held = self._costs, self._held
        last = position - held[-1].position
        # keeping them: t(last + 1, 1), the last stretch with one slot; not if this state is to be kept
        best, victim = (None, None) if position in self._kept else (keep + last * (last + 1) // 2, None)
        if inner is not None and (best is None or inner_cost + two_slots(last) < best):
            best, victim = inner_cost + two_slots(last), inner
        if held[-1].position not in self._kept and (
                best is None or last_cost + two_slots(position - held[-2].position) < best):
            victim = len(held) - 1
        if victim is None:
            return None
        self._evict(held[victim])
        return self._store(position, level=0)

    def _steer(self, kept: frozenset) -> None:
        """Keep the snapshots at `kept` from now on; the least costs of evicting stay up to the first held
        snapshot kept before and not now, or now and not before."""
        changed = next((k for k, c in enumerate(self._held) if (c.position in kept) != (c.position in self._kept)),
                       None)
        self._kept = kept
        if changed is not None:
            self._costs = None
            del self._cheapest_inner[max(0, changed - 1):]

    def _reversal_costs(self) -> tuple:
        """With every slot used: the forward steps reversing the stretches between the snapshots,
        keeping them all; the snapshot not kept whose eviction costs least but the last (index, cost), when
        the state at the current position is stored; and that cost evicting the last.  Stretch ``j``
        is reversed with ``s - j`` slots, after an eviction the later ones with one more.  Evicting
        ``k`` costs, but for a total, what depends on snapshots ``0 .. k + 1``: kept across `_evict`."""
        s, held = self.snapshots, self._held
        keeping, evicting, cheapest = self._keeping_sums, self._evicting_sums, self._cheapest_inner
        for j in range(len(keeping) - 1, s - 1):
            length = held[j + 1].position - held[j].position
            keeping.append(keeping[-1] + quick_optimum(length, s - j))
            evicting.append(evicting[-1] + quick_optimum(length, s - j + 1))
        for k in range(len(cheapest) + 1, s - 1):
            merged = quick_optimum(held[k + 1].position - held[k - 1].position, s - k + 1)  # k evicted
            cost = keeping[k - 1] + merged - evicting[k + 1]  # + evicting[s - 1]
            least = cheapest[-1] if cheapest else None
            kept = held[k].position in self._kept
            cheapest.append((cost, k) if not kept and (least is None or cost < least[0]) else least)
        least = cheapest[-1] if cheapest else None
        inner, inner_cost = (None, None) if least is None else (least[1], least[0] + evicting[s - 1])
        return keeping[s - 1], inner, inner_cost, keeping[s - 2]

    def _store(self, position: int, level: float) -> Snapshot:
        slot = self._free_slots.pop()
        self._held.append(_Checkpoint(position, slot, level))
        return Snapshot(slot)

    def _evict(self, checkpoint: _Checkpoint) -> None:
        del self._held[index := self._held.index(checkpoint)]
        self._free_slots.append(checkpoint.slot)
        self._costs = None  # the stretches up to index - 2 stay, and so do their slots:
        del self._keeping_sums[index:], self._evicting_sums[index:], self._cheapest_inner[max(0, index - 2):]

    def held(self) -> list[int]:
        """The positions of the snapshots held, the loop entry first."""
        return [c.position for c in self._held]

    def reverse(self) -> Iterator[Action]:
        free = list(self._free_slots)
        end = self.position
        for checkpoint in reversed(self._held):
            yield Restore(checkpoint.slot)
            yield from reverse_binomially(end - checkpoint.position, checkpoint.slot, free)
            free.append(checkpoint.slot)
            end = checkpoint.position
