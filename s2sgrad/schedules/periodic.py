"""`Periodic`: a snapshot every ``every`` steps, each segment reversed storing all its steps."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .actions import Action, Advance, Free, Restore, Reverse, Snapshot
from .protocol import Schedule, Tracker, check_count


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
        check_count("every", self.every, minimum=1)

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
        """A tracker that snapshots at positions ``0, every, 2 * every, ...``; the forward sweep records
        the segment it is in (`Tracker.records`), so that the last segment is reversed without running
        it again, and a loop of at most ``every`` steps runs once.

        >>> tracker = Periodic(every=2).start()
        >>> [tracker.step() for _ in range(3)]
        [Snapshot(slot=0), None, Snapshot(slot=1)]
        >>> list(tracker.reverse())  # after the recorded step 2
        [Free(slot=1), Restore(slot=0), Free(slot=0), Reverse(steps=2)]
        """
        return _PeriodicTracker(self.every)


class _PeriodicTracker(Tracker):
    records = True

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
        segments = len(range(0, self.position, self.every))
        if segments:
            yield Free(segments - 1)  # the segment the forward sweep recorded
        for slot in reversed(range(segments - 1)):
            yield Restore(slot)
            yield Free(slot)
            yield Reverse(self.every)
