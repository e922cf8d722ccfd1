"""`Revolve`: binomial checkpointing for a trip count known on entry, at the fewest forward steps."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .actions import Action, Reverse, Snapshot
from .binomial import reverse_binomially
from .online import Online
from .protocol import Schedule, Tracker, check_count


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
        check_count("snapshots", self.snapshots, minimum=1)

    def _plan(self, n: int) -> Iterator[Action]:
        if n == 0:
            return
        if n == 1:
            yield Reverse(1)
            return
        yield Snapshot(0)
        yield from reverse_binomially(n, 0, list(range(self.snapshots - 1, 0, -1)))

    def start(self) -> Tracker:
        return Online(self.snapshots).start()
