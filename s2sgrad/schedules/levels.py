"""Wang, Moin and Iaccarino's dynamic checkpointing ("Minimal repetition dynamic checkpointing algorithm
for unsteady adjoint calculation", SIAM J. Sci. Comput. 2009) as their paper counts slots, run on
positions alone: `LevelRule` says, for each trip count n in turn, which states it would hold and
whether reversing from them takes exactly the online bound ``optimal_forward_steps(n + 1, s)``.

`Online`'s tracker runs one ahead of the loop, to the next trip count where it is on the bound (its
*milestone*), and steers towards holding the same states there.

    >>> rule = LevelRule(snapshots=3)
    >>> rule.next_milestone(after=10)
    (12, (0, 4, 10))
"""
from __future__ import annotations

from .binomial import quick_optimum


class LevelRule:
    """The paper's list of at most ``s + 1`` entries ``[position, level]``, the newest being the state just
    computed, which needs no slot: the states held are the first ``s``.  The state at position ``n - 1``
    removes the latest *dispensable* entry (one whose level is below a later entry's) and joins at
    level 0; when none is, it replaces the newest entry one level higher."""

    def __init__(self, snapshots: int):
        self.snapshots = snapshots
        self.n = 0                              # the trip count the entries are for
        self._positions: list[int] = [0]
        self._levels: list[float] = [float("inf")]
        # The entries below their successor, by index.  The latest dispensable entry is the last of them: once
        # no later entry is below its successor, the later levels do not rise, so the highest is the next one.
        self._ascents: list[int] = []
        self._sums = [0]  # [j]: the costs of held stretches 0 .. j - 1, stretch i with s - i slots
        # the online bound for n, optimal_forward_steps(n + 1, s), which grows by repetition_number(n + 1, s)
        self._bound, self._repetitions, self._reach = 0, 0, 1  # reach: C(s + repetitions, repetitions)

    def step(self) -> None:
        """One trip more: the entries for ``n + 1``."""
        position, self.n = self.n, self.n + 1
        if self.n + 1 > self._reach:
            self._repetitions += 1
            self._reach = self._reach * (self.snapshots + self._repetitions) // self._repetitions
        self._bound += self._repetitions
        if position == 0:
            return
        positions, levels, ascents = self._positions, self._levels, self._ascents
        if len(positions) <= self.snapshots:
            positions.append(position)
            levels.append(0)
        elif ascents:
            k = ascents.pop()
            del positions[k], levels[k], self._sums[k:]
            if ascents and ascents[-1] == k - 1:  # its successor changed
                ascents.pop()
            if levels[k - 1] < levels[k]:
                ascents.append(k - 1)
            positions.append(position)
            levels.append(0)
        else:
            positions[-1] = position
            levels[-1] += 1
            del self._sums[len(positions) - 1:]
            if levels[-2] < levels[-1]:
                ascents.append(len(levels) - 2)

    def held(self) -> tuple[int, ...]:
        """The positions of the states held, the loop entry first."""
        return tuple(self._positions[:self.snapshots])

    def on_bound(self) -> bool:
        """Whether reversing ``n`` steps from the states held takes the fewest forward steps possible.

        Stretch by stretch from the loop entry, as far as it takes: whatever the later snapshots, the
        stretches from position ``p`` on with ``c`` slots cost at least the online bound of their own,
        ``optimal_forward_steps(n - p + 1, c) - (n - p)``; once that is too much, the answer is no."""
        s, n, positions, sums = self.snapshots, self.n, self._positions, self._sums
        last = min(len(positions), s) - 1
        target = self._bound - n
        while True:
            j = len(sums) - 1  # stretches 0 .. j - 1 priced
            rest = n - positions[j]
            if j == last:
                return sums[j] + quick_optimum(rest, s - j) == target
            if sums[j] + quick_optimum(rest + 1, s - j) - rest > target:
                return False
            sums.append(sums[j] + quick_optimum(positions[j + 1] - positions[j], s - j))

    def next_milestone(self, after: int) -> tuple[int, tuple[int, ...]]:
        """The first trip count beyond ``after`` (and beyond the last one asked for) at which the rule is on
        the bound, and the positions it holds there."""
        while True:
            self.step()
            if self.n > after and self.on_bound():
                return self.n, self.held()
