"""The binomial optimum: how many forward steps reversing ``n`` steps with ``s`` snapshot slots takes at
least (Griewank and Walther), where to split a stretch, and the actions that reverse it at that cost.

    >>> optimal_forward_steps(100, 5), repetition_number(100, 5)
    (316, 4)
    >>> list(reverse_binomially(2, 0, []))
    [Advance(steps=1), Reverse(steps=1), Restore(slot=0), Free(slot=0), Reverse(steps=1)]
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from math import comb, isqrt

from .actions import Action, Advance, Free, Restore, Reverse, Snapshot


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


def quick_optimum(n: int, snapshots: int) -> int:
    """``optimal_forward_steps(n, snapshots)``, the repetition number found by bisection in a table."""
    if n <= 1:
        return 0
    if snapshots <= 2:
        return n * (n - 1) // 2 if snapshots == 1 else two_slots(n)
    reach = _REACHES.get(snapshots)
    if reach is None or reach[-1] < n:
        reach = _REACHES.setdefault(snapshots, [1])
        while reach[-1] < n:
            reach.append(reach[-1] * (snapshots + len(reach)) // len(reach))
    t = bisect_left(reach, n)
    return t * n - reach[t] * t // (snapshots + 1)


def two_slots(n: int) -> int:
    """``optimal_forward_steps(n, 2)``: ``t * n - C(t + 2, 3)`` with ``C(t + 2, 2) >= n``."""
    if n <= 1:
        return 0
    t = max(1, (isqrt(8 * n) - 3) // 2)
    while (t + 1) * (t + 2) // 2 < n:
        t += 1
    return t * n - t * (t + 1) * (t + 2) // 6


def optimal_split(length: int, snapshots: int) -> int:
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


def reverse_binomially(length: int, slot: int, free: list[int]) -> Iterator[Action]:
    """Actions reversing the ``length`` steps from the current position in the fewest forward steps.

    On entry the current state is also held in ``slot``; the actions may use
    the slots listed in ``free`` and put them back by the end.  ``slot`` is
    freed right after its last ``Restore``.  Each snapshot splits the steps
    ahead of it: the right part is reversed first, with one slot fewer, then
    the left one from ``slot`` again.  The parts waiting for their turn are kept
    on a stack, so that each action costs the same whatever the depth.
    """
    waiting: list[tuple[int, int, int]] = []  # (left part's length, its slot, the right part's slot)
    while True:
        while length > 1 and free:
            m = optimal_split(length, 1 + len(free))
            yield Advance(m)
            if length - m == 1:
                yield Reverse(1)
                yield Restore(slot)
                length = m
                continue
            right_slot = free.pop()
            yield Snapshot(right_slot)
            waiting.append((m, slot, right_slot))
            length, slot = length - m, right_slot
        for steps in range(length - 1, 0, -1):  # no slot left
            yield Advance(steps)
            yield Reverse(1)
            yield Restore(slot)
        yield Free(slot)
        yield Reverse(1)
        if not waiting:
            return
        length, slot, right_slot = waiting.pop()
        free.append(right_slot)
        yield Restore(slot)
