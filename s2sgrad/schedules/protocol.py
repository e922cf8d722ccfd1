"""What every schedule offers: `Schedule` (``plan(n)`` for a known trip count, ``start()`` for a loop
that finds its trip count only when it ends) and the `Tracker` that ``start()`` returns.

    >>> from s2sgrad.schedules import Periodic
    >>> list(Periodic(every=2).plan(2))
    [Reverse(steps=2)]
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator

from .actions import Action, Advance, Snapshot


class Tracker(ABC):
    """Follows a loop whose trip count is not known in advance.

    ``position`` is the number of steps taken so far.  Call ``step()`` once
    per iteration, before the iteration's body runs; call ``reverse()`` once,
    after the loop ended.
    """

    position: int
    records = False
    """Whether the driver records, in the forward sweep, every step since the latest snapshot the
    tracker asked for (dropping what it recorded before at each snapshot), and reverses them, last
    first, before carrying out ``reverse()``: the last steps then never run twice."""

    @abstractmethod
    def step(self) -> Snapshot | None:
        """Announce that the step at ``position`` is about to run.

        Returns the snapshot to take of the current state (the state at
        ``position``) before it is advanced, or ``None``.  Then ``position``
        grows by one.
        """

    @abstractmethod
    def reverse(self) -> Iterator[Action]:
        """The actions of the backward sweep, starting from the state at ``position`` (with `records`, once
        the steps recorded by the forward sweep are reversed)."""


class Schedule(ABC):
    """A checkpointing schedule: ``plan(n)`` for a known trip count, ``start()`` otherwise."""

    @abstractmethod
    def start(self) -> Tracker:
        """A tracker for a loop whose trip count will be known only when it ends."""

    def plan(self, n: int) -> Iterator[Action]:
        """Every action, forward sweep included, for a loop of ``n`` steps."""
        check_count("n", n, minimum=0)
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


def check_count(name: str, value: object, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")
