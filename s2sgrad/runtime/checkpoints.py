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

from itertools import chain

import numpy as np

from ..schedules import Advance, Free, Restore, Reverse, Snapshot
from .gradients import rebuilt
from .random_states import RandomStates


class Work:
    """One piece of a checkpointed loop's backward sweep: run `steps` steps from `state`,
    recording them and then running their adjoints if `reverse`, else just advancing. The steps of a
    piece `recorded` by the forward sweep are not run again: only their adjoints run."""

    __slots__ = ("state", "steps", "reverse", "recorded")

    def __init__(self, state, steps: int, reverse: bool, recorded: bool = False):
        self.state = state
        self.steps = steps
        self.reverse = reverse
        self.recorded = recorded


_SCALARS = (float, int, bool)


def copy_state(state):
    """A copy of a loop's state that later in-place writes cannot change."""
    if type(state) is tuple:       # the loop variables
        return tuple(v.copy() if type(v) is np.ndarray else v if type(v) in _SCALARS else copy_state(v)
                     for v in state)
    if isinstance(state, np.ndarray):
        return state.copy()
    if isinstance(state, (list, tuple)):
        return rebuilt(state, [copy_state(v) for v in state])
    if isinstance(state, dict):
        return {k: copy_state(v) for k, v in state.items()}
    return state


class Checkpoints:
    """Carries out a checkpointing schedule (from `s2sgrad.schedules`) for one loop.

    The forward sweep calls ``step(state)`` at the top of every iteration, which says whether to record
    the trip, and hands the state on exit over through ``checkpoints.state = ...``; the backward sweep
    iterates ``backward()`` and, after advancing, hands the new state back the same way.

    The forward sweep records the trips of the plan's first ``Reverse`` (the last ones: no trip runs
    twice where the plan stores them all), and, for a tracker that asks for it (`Tracker.records`),
    the trips since its latest snapshot, emptying the `tapes` (the loop's stacks) at each snapshot. The
    snapshots held are the schedule's alone: the state at the turn is not copied.

    With `randoms` (the generators the loop draws from, see `s2sgrad.analysis.randomness`) each snapshot keeps their
    states too, each restore puts them back, and when the backward sweep is over they are as the forward
    sweep left them.

        >>> from s2sgrad.schedules import Revolve
        >>> checkpoints = Checkpoints(Revolve(snapshots=2), trips=3)
        >>> [checkpoints.step(i) for i in range(3)]
        [False, False, True]
        >>> [(w.steps, w.reverse, w.recorded) for w in checkpoints.backward()][:3]
        [(1, True, True), (1, True, False), (1, True, False)]
    """

    def __init__(self, schedule, trips=None, randoms=(), tapes=()):
        self.slots: dict = {}
        self.randoms = randoms
        self.tapes = tapes
        self._random = None                # the generators' states that go with `state`
        self._state = None
        self._tracker = schedule.start() if trips is None else None
        self._plan = iter(schedule.plan(max(int(trips), 0))) if trips is not None else None
        self._records = self._tracker is not None and self._tracker.records
        self._forward_done = trips is not None and trips <= 0
        self._advancing = 0
        self._recording = 0                # the plan's trips still to record in the forward sweep
        self.recorded = 0                  # the trips the forward sweep recorded, the last ones
        self._pending: list = []           # the plan's first action after its forward part
        # the trips' rows a batched accumulation may keep across pieces of work: a periodic schedule's
        # segment, else one per snapshot slot (a row is about one state)
        self.batch_rows = max(getattr(schedule, "every", None) or getattr(schedule, "snapshots", 1), 1)

    @property
    def state(self):
        """The loop's state where the backward sweep stands (handed over after the forward sweep and after
        advancing)."""
        return self._state

    @state.setter
    def state(self, value) -> None:
        self._state = value
        self._random = RandomStates(self.randoms) if self.randoms else None

    def _snapshot(self, state) -> tuple:
        return copy_state(state), RandomStates(self.randoms) if self.randoms else None

    def step(self, state) -> bool:
        """The forward sweep is about to run the next trip from `state`: whether to record it."""
        if self._tracker is not None:
            snapshot = self._tracker.step()
            if snapshot is not None:
                self.slots[snapshot.slot] = self._snapshot(state)
                if self._records:
                    for tape in self.tapes:
                        tape.clear()
                    self.recorded = 0
        elif self._recording:
            self._recording -= 1
        elif self._advancing:
            self._advancing -= 1
            return False
        elif not self._forward_done:
            for action in self._plan:
                if isinstance(action, Snapshot):
                    self.slots[action.slot] = self._snapshot(state)
                elif isinstance(action, Free):
                    self.slots.pop(action.slot, None)
                elif isinstance(action, Advance):
                    self._advancing = action.steps - 1     # this step is the first of them
                    return False
                else:                                      # the forward part is over
                    self._forward_done = True
                    if isinstance(action, Reverse):        # from here to the last trip
                        self._recording = action.steps - 1
                        break
                    self._pending = [action]
                    return False
            else:
                self._forward_done = True
                return False
        else:
            return False
        if self._tracker is not None and not self._records:
            return False
        self.recorded += 1
        return True

    def backward(self):
        """The work of the backward sweep, in order."""
        after_forward = RandomStates(self.randoms) if self.randoms else None
        if self.recorded:
            yield Work(self._state, self.recorded, reverse=True, recorded=True)
            self._state = self._random = None
        if self._tracker is not None:
            actions = self._tracker.reverse()
        else:
            actions = (a for part in (self._pending, self._plan) for a in part)
        restoring = None    # a Restore whose copy waits: if the next action frees its slot, none is made
        for action in chain(actions, (None,)):
            if restoring is not None:
                state, self._random = self.slots[restoring]
                if isinstance(action, Free) and action.slot == restoring:
                    del self.slots[restoring]
                    self._state, restoring = state, None      # never read again: the state itself
                    continue
                self._state, restoring = copy_state(state), None
            kind = type(action)
            if kind is Snapshot:
                self.slots[action.slot] = (copy_state(self._state), self._random)
            elif kind is Restore:
                restoring = action.slot
            elif kind is Free:
                self.slots.pop(action.slot, None)
            elif kind is Advance or kind is Reverse:
                if self._random is not None:
                    self._random.restore()         # the trips draw what they drew in the forward sweep
                yield Work(self._state, action.steps, kind is Reverse)
                if kind is Reverse:
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
