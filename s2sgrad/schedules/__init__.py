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

A driver may record the steps of the plan's first ``Reverse`` while its
forward sweep runs them (they are the last ``n - p`` steps, from the position
``p`` it stands at): they then run once, and it need not copy the state at
``p``.  ``s2sgrad.runtime.Checkpoints`` does, so ``Periodic(every)`` with
``every >= n`` (whose plan is ``[Reverse(n)]``) runs the loop once.

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

A tracker whose ``records`` is true (``Periodic``'s) asks the driver to
record, as the forward sweep goes, the steps since its latest snapshot,
dropping that recording at each new snapshot; ``reverse()`` then starts
after those steps, which the driver reverses first.
"""
from __future__ import annotations

from .actions import Action, Advance, Free, Restore, Reverse, Snapshot
from .binomial import optimal_forward_steps, repetition_number
from .online import Online
from .periodic import Periodic
from .protocol import Schedule, Tracker
from .revolve import Revolve

__all__ = [
    "Advance", "Snapshot", "Restore", "Free", "Reverse", "Action",
    "Schedule", "Tracker", "Periodic", "Revolve", "Online",
    "repetition_number", "optimal_forward_steps",
]
