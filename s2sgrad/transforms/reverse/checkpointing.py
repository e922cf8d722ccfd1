"""Checkpointed loops: the forward sweep stores a few states, the backward sweep runs the trips again.

A `Checkpoints` object (from `s2sgrad.runtime`) drives the loop's backward sweep by its schedule
(`s2sgrad.schedules`): each piece of work is a run of trips forward, recorded and then reversed, or only
advanced to the next stored state:

    checkpoints = Checkpoints(Revolve(4), n)          # forward sweep: before the loop
    if checkpoints.step((h, i)):                      # ... and each trip, recorded where it says so
        <trip, recording>
    else:
        <trip>
    checkpoints.state = (h, i)                        # ... and after the loop
    for work in checkpoints.backward():               # backward sweep
        h, i = work.state
        if work.reverse:
            if not work.recorded:                         # (the forward sweep recorded the last trips)
                for _ in range(work.steps): <trip, recording>
            g_rows = []                                   # (a weight's batched accumulation)
            for _ in range(work.steps): <adjoint of a trip, g_rows.append(g)>
            dW_batches.add(np.array(g_rows), ...)         # summed a batch of rows at a time
        else:
            for _ in range(work.steps): <trip>
            checkpoints.state = (h, i)
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from ...analysis.randomness import generators
from ...errors import UnsupportedSyntax
from ...ir.nodes import While, atom_expr
from ...ir.syntax import assign as _assign
from ...ir.syntax import attr as _attr
from ...ir.syntax import call as _call
from ...ir.syntax import name as _name
from ...ir.syntax import origin as _origin
from ...ir.syntax import plumbing
from ...ir.syntax import store as _store


def schedule_of(loop: While, default, nested: bool):
    """The schedule `loop` is checkpointed by (None: it stores every trip): its marker's, else `default`
    for an outermost loop. A nested loop with a marker is refused."""
    schedule = loop.checkpoint if loop.checkpoint is not None else (default if not nested else None)
    if schedule is not None and nested:
        raise UnsupportedSyntax("only outermost loops can be checkpointed", loop.loc,
                                "move the checkpointed marker to the outer loop")
    return schedule


def records_forward(loop: While, schedule) -> bool:
    """Whether the forward sweep records the trips the driver says to: those of a plan's first
    ``Reverse`` (a trip count known on entry), or of a tracker that `records`."""
    return loop.trips is not None or schedule.start().records


def driver_creation(loop: While, driver: str, schedule, stacks: list) -> ast.stmt:
    """``checkpoints = Checkpoints(schedule, trips, randoms=(...), tapes=(...))`` before the loop's forward
    sweep; `tapes`, the loop's stacks, for a tracker that records, which empties them at each snapshot."""
    args = [ast.parse(repr(schedule), mode="eval").body]
    if loop.trips is not None:
        args.append(atom_expr(loop.trips))
    call = _call("Checkpoints", *args)
    randoms = generators(loop.cond + loop.body, "a checkpointed loop")
    if randoms:                   # the trips run again draw what they drew (see randomness)
        call.keywords.append(ast.keyword("randoms", ast.Tuple([atom_expr(g) for g in randoms], ast.Load())))
    if loop.trips is None and stacks and schedule.start().records:
        call.keywords.append(ast.keyword("tapes", ast.Tuple([_name(s) for s in dict.fromkeys(stacks)], ast.Load())))
    return _assign(driver, call, loop.loc)


def driver_step(loop: While, driver: str) -> ast.Expr:
    """``checkpoints.step((h, i))``: each trip's state, offered to the schedule (which says whether to
    record the trip)."""
    state = ast.Tuple([_name(p) for p in loop.params], ast.Load())
    return _origin(ast.Expr(ast.Call(_attr(driver, "step"), [state], [])), loop.loc)


def driver_handback(loop: While, driver: str) -> ast.stmt:
    """``checkpoints.state = (h, i)`` after the forward sweep: the state the recorded trips end with."""
    return plumbing(ast.Assign([ast.Attribute(_name(driver), "state", ast.Store())],
                               ast.Tuple([_name(p) for p in loop.params], ast.Load())))


@dataclass
class CheckpointedLoop:
    """The trips a checkpointed loop's backward sweep runs forward, whose bodies the forward sweep fills
    in once it is known which writes run in place: `recorded` pushes what the adjoint trips pop,
    `advanced` does not."""
    loop: While
    recorded: ast.For
    advanced: ast.For


def trips_of(loop: While, work: str, body: list) -> ast.For:
    """``for _ in range(work.steps): body``: the trips of one piece of `work`."""
    return _origin(ast.For(_store("_"), _call("range", _attr(work, "steps")), body, [], None), loop.loc)


def backward_checkpointed(loop: While, driver: str, work: str, reversal: list,
                          schedule) -> tuple[ast.stmt, CheckpointedLoop]:
    """The loop over the schedule's `work`, with the `reversal` of a piece of work's recorded trips (their
    adjoints, and the rows they collect for batched accumulation); the trips run forward are left to
    fill in."""
    state = ast.Tuple([_store(p) for p in loop.params], ast.Store())
    recorded, advanced = trips_of(loop, work, []), trips_of(loop, work, [])
    # hands the current state back: not a read of an earlier version
    handback = driver_handback(loop, driver)
    if records_forward(loop, schedule):
        recorded_once = _origin(ast.If(ast.UnaryOp(ast.Not(), _attr(work, "recorded")), [recorded], []), loop.loc)
        reverse = [recorded_once, *reversal]
    else:
        reverse = [recorded, *reversal]
    body = [_origin(ast.Assign([state], _attr(work, "state")), loop.loc),
            ast.If(_attr(work, "reverse"), reverse, [advanced, handback])]
    sweep = _origin(ast.For(_store(work), ast.Call(_attr(driver, "backward"), [], []), body, [], None), loop.loc)
    return sweep, CheckpointedLoop(loop, recorded, advanced)
