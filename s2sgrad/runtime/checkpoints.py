"""Checkpointed loops: `Checkpoints` carries out a schedule of `s2sgrad.schedules` for one loop and hands the
backward sweep its pieces of `Work`; `copy_state` keeps a loop's state safe from later in-place writes;
`RowBatches` sums what the reversed pieces add to a weight's gradient a batch of rows at a time.

    >>> state = [np.zeros(2)]
    >>> kept = copy_state(state)
    >>> state[0][0] = 1.0
    >>> kept
    [array([0., 0.])]
"""
from __future__ import annotations

import numpy as np

from ..schedules import Advance, Free, Restore, Reverse, Snapshot
from .gradients import rebuilt
from .random_states import RandomStates


class Work:
    """One piece of a checkpointed loop's backward sweep: run `steps` steps from `state`,
    recording them and then running their adjoints if `reverse`, else just advancing."""

    __slots__ = ("state", "steps", "reverse")

    def __init__(self, state, steps: int, reverse: bool):
        self.state = state
        self.steps = steps
        self.reverse = reverse


def copy_state(state):
    """A copy of a loop's state that later in-place writes cannot change."""
    if isinstance(state, np.ndarray):
        return state.copy()
    if isinstance(state, (list, tuple)):
        return rebuilt(state, [copy_state(v) for v in state])
    if isinstance(state, dict):
        return {k: copy_state(v) for k, v in state.items()}
    return state


class Checkpoints:
    """Carries out a checkpointing schedule (from `s2sgrad.schedules`) for one loop.

    The forward sweep calls ``step(state)`` at the top of every iteration; the
    backward sweep iterates ``backward()`` and, after advancing, hands the new
    state back through ``checkpoints.state = ...``.

    With `randoms` (the generators the loop draws from, see `s2sgrad.analysis.randomness`) each snapshot keeps their
    states too, each restore puts them back, and when the backward sweep is over they are as the forward
    sweep left them.

        >>> from s2sgrad.schedules import Revolve
        >>> checkpoints = Checkpoints(Revolve(snapshots=2), trips=3)
    """

    def __init__(self, schedule, trips=None, randoms=()):
        self.slots: dict = {}
        self.randoms = randoms
        self._random = None                # the generators' states that go with `state`
        self._state = None
        self.position = 0
        self._tracker = schedule.start() if trips is None else None
        self._plan = iter(schedule.plan(max(int(trips), 0))) if trips is not None else None
        self._pending: list = []           # the plan's first actions after its forward part
        self._forward_done = trips is not None and trips <= 0
        self._advancing = 0
        # the trips' rows a batched accumulation may keep across pieces of work: a periodic schedule's
        # segment, else one per snapshot slot (a row is about one state)
        self.batch_rows = max(getattr(schedule, "every", None) or getattr(schedule, "snapshots", 1), 1)
        self._room = getattr(schedule, "snapshots", None)  # the most snapshots the schedule may hold
        self._latest: tuple | None = None  # (slot, position) of the forward part's latest snapshot

    @property
    def state(self):
        """The loop's state where the backward sweep stands (handed back after advancing)."""
        return self._state

    @state.setter
    def state(self, value) -> None:
        self._state = value
        self._random = RandomStates(self.randoms) if self.randoms else None

    def _snapshot(self, state) -> tuple:
        return copy_state(state), RandomStates(self.randoms) if self.randoms else None

    def step(self, state) -> None:
        """The forward sweep is about to run the step at the current position from `state`."""
        if self._tracker is not None:
            snapshot = self._tracker.step()
            if snapshot is not None:
                self.slots[snapshot.slot] = self._snapshot(state)
        elif self._advancing:
            self._advancing -= 1
        elif not self._forward_done:
            for action in self._plan:
                if isinstance(action, Snapshot):
                    self.slots[action.slot] = self._snapshot(state)
                    self._latest = action.slot, self.position
                elif isinstance(action, Free):
                    self.slots.pop(action.slot, None)
                    if self._latest is not None and self._latest[0] == action.slot:
                        self._latest = None
                elif isinstance(action, Advance):
                    self._advancing = action.steps - 1     # this step is the first of them
                    break
                else:                                      # Reverse or Restore: the forward part is over
                    self._pending = self._turn(action, state)
                    self._forward_done = True
                    break
            else:
                self._forward_done = True
        self.position += 1

    def _turn(self, action, state) -> list:
        """The backward sweep's first actions, where the plan turns from the state at the current
        position. A copy of that state is kept only if a slot is left for it; with every slot in
        use, the latest snapshot is restored and advanced again instead."""
        if isinstance(action, Reverse):
            if self._room is not None and len(self.slots) >= self._room and self._latest is not None:
                slot, position = self._latest
                return [Restore(slot), *([Advance(self.position - position)] if self.position > position else []),
                        action]
            self.state = copy_state(state)
        return [action]

    def backward(self):
        """The work of the backward sweep, in order."""
        if self._tracker is not None:
            actions = self._tracker.reverse()
        else:
            actions = (a for part in (self._pending, self._plan) for a in part)
        after_forward = RandomStates(self.randoms) if self.randoms else None
        for action in actions:
            if isinstance(action, Snapshot):
                self.slots[action.slot] = (copy_state(self._state), self._random)
            elif isinstance(action, Restore):
                state, self._random = self.slots[action.slot]
                self._state = copy_state(state)
            elif isinstance(action, Free):
                self.slots.pop(action.slot, None)
            elif isinstance(action, (Advance, Reverse)):
                if self._random is not None:
                    self._random.restore()         # the trips draw what they drew in the forward sweep
                yield Work(self._state, action.steps, isinstance(action, Reverse))
                if isinstance(action, Reverse):
                    self._state = self._random = None
        if after_forward is not None:
            after_forward.restore()


class RowBatches:
    """What the reversed trips of a checkpointed loop add to one weight's gradient: each piece of work hands
    its rows (and columns), and once `limit` rows are in they are summed in one product, ``G.T @ X`` for the
    outer products ``g x^T`` (``G.sum(0)`` without columns), as a store-all loop sums all its trips at once.
    The sums go `into` a gradient's own buffer, where given (``flush()`` adds the last rows), else into a
    sum of their own (``total()``).

        >>> batches = RowBatches(2)
        >>> batches.add(np.ones((1, 2)), np.ones((1, 3)))
        >>> batches.add(np.ones((1, 2)), np.ones((1, 3)))
        >>> batches.total()
        array([[2., 2., 2.],
               [2., 2., 2.]])
        >>> dW = np.zeros((2, 3))
        >>> batches = RowBatches(2, into=dW)
        >>> batches.add(np.ones((1, 2)), np.ones((1, 3)))
        >>> batches.flush()
        >>> dW[0]
        array([1., 1., 1.])
    """

    __slots__ = ("limit", "rows", "columns", "count", "sum")

    def __init__(self, limit: int, into=None):
        self.limit = limit
        self.rows: list = []
        self.columns: list = []
        self.count = 0
        self.sum = into

    def add(self, rows, columns=None) -> None:
        """One piece of work's rows (its trips, last first), and the columns they multiply."""
        if len(rows) == 0:
            return
        self.rows.append(rows)
        if columns is not None:
            self.columns.append(columns)
        self.count += len(rows)
        if self.count >= self.limit:
            self.flush()

    def flush(self) -> None:
        """Sum the rows added since the last sum."""
        if not self.rows:
            return
        rows = self.rows[0] if len(self.rows) == 1 else np.concatenate(self.rows)
        if self.columns:
            part = rows.T @ (self.columns[0] if len(self.columns) == 1 else np.concatenate(self.columns))
        else:
            part = np.sum(rows, 0)
        if self.sum is None:
            self.sum = part
        else:
            self.sum += part
        self.rows, self.columns, self.count = [], [], 0

    def total(self):
        """The sum of everything added (0.0 if nothing was)."""
        self.flush()
        return self.sum if self.sum is not None else 0.0
