"""The forward sweep: the primal code, recording what the plan (`recording.Recording`) says.

Inside a loop that is reversed, each trip pushes the values the backward sweep reads; the loop counts
its trips, and after it pushes its final values where the plan carries values to the next trip:

    h_stack = Stack()
    trips = 0
    while True:
        ...
        h_stack.push(h)
        trips += 1
"""
from __future__ import annotations

import ast

from ...analysis.inplace import MUTATIONS
from ...frontend.functions import is_user_function
from ...ir.nodes import Assign, If, Op, While, atom_expr
from ...ir.syntax import assign as _assign
from ...ir.syntax import attr as _attr
from ...ir.syntax import name as _name
from ...ir.syntax import noted
from ...ir.syntax import origin as _origin
from ...ir.syntax import store as _store
from .. import primal
from .calls import Calls
from .checkpointing import driver_creation, driver_handback, driver_step, records_forward
from .recording import BranchRecord, LoopRecord, Recording


class ForwardSweep:
    """Writes the forward sweep of a function by its recording plan.

    `in_place`: the names whose writes (``y[i] = v``, ``.append``) run in place (the in_place_writes
    pass); `dead`: the primal statements left out (the dead_primal_code pass)."""

    def __init__(self, recording: Recording, calls: Calls, in_place: set, dead: set):
        self.recording = recording
        self.calls = calls
        self.in_place = in_place
        self.dead = dead

    def block(self, block: list, record: bool = True) -> list:
        """The primal code of `block`; with `record`, also what the backward sweep needs kept."""
        out = []
        for stmt in block:
            if id(stmt) in self.dead:
                continue
            if isinstance(stmt, Assign):
                out += self.assign(stmt, record)
            elif isinstance(stmt, If):
                plan = self.recording.pushed_by(stmt) if record else None
                plan = plan if plan is not None else BranchRecord()
                out.append(_origin(ast.If(
                    atom_expr(stmt.test),
                    self.branch(stmt, stmt.body, stmt.body_outs, record, plan.body),
                    self.branch(stmt, stmt.orelse, stmt.orelse_outs, record, plan.orelse)),
                    stmt.loc))
            else:
                out += self.loop(stmt, record)
        return out

    def branch(self, branch: If, block, outs, record, pushes) -> list:
        code = self.block(block, record) + primal.branch_outputs(branch, outs)
        if record:
            code += self.recording.push(pushes)
        return code or [ast.Pass()]

    def assign(self, stmt: Assign, record: bool = True) -> list:
        value = stmt.value
        if isinstance(value, Op) and is_user_function(value.fn):
            return self.calls.forward(stmt, record)
        if stmt.target is not None and isinstance(value, Op) and value.fn in MUTATIONS \
                and value.args[0].name in self.in_place:
            return primal.written_in_place(stmt)
        return [primal.plain(stmt)]

    def trip(self, loop: While, record: bool) -> list:
        """One trip of `loop`'s body in the forward direction, recording (pushes) or not."""
        plan = self.recording.pushed_by(loop)
        pushed = plan.pushes if record and plan is not None else []
        body = self.recording.push([n for n in pushed if n in loop.params])
        body += self.block(loop.body, record)
        body += self.recording.push([n for n in pushed if n not in loop.params])
        return body + primal.next_trip(loop, loop.params, [atom_expr(o) for o in loop.body_outs])

    def loop(self, loop: While, record: bool = True) -> list:
        out = primal.loop_entry(loop)
        plan = (self.recording.pushed_by(loop) if record else None) or LoopRecord()
        driver = plan.checkpoints
        trips = plan.trips if plan.counted_by is None else None     # (else a loop variable counts them)
        if trips:
            out.append(_assign(trips, ast.Constant(0), loop.loc))
        if driver:
            out += [self.recording.declaration(s, loop.loc) for s in dict.fromkeys(plan.stacks)]
            out.append(driver_creation(loop, driver, plan.schedule, plan.stacks))
        body = self.block(loop.cond, record)
        body.append(primal.loop_exit(loop))
        if driver and records_forward(loop, plan.schedule):    # the trips the driver says to record
            body.append(_origin(ast.If(driver_step(loop, driver).value, plan.recorded_trip,
                                       self.trip(loop, False)), loop.loc))
        elif driver:
            body.append(driver_step(loop, driver))
            body += self.trip(loop, False)
        else:
            body += self.trip(loop, record)
        if trips:
            body.append(_origin(ast.AugAssign(_store(trips), ast.Add(), ast.Constant(1)), loop.loc))
        out.append(primal.endless(loop, body))
        out += primal.loop_results(loop)
        if driver and records_forward(loop, plan.schedule):
            out.append(driver_handback(loop, driver))
        if plan.counted_by is not None:
            out.append(_assign(plan.trips, _name(plan.counted_by), loop.loc))
        if record:
            results = dict(zip(loop.params, loop.results))
            out += [noted(ast.Expr(ast.Call(_attr(carry.stack, "push"), [_name(results[carry.param])], [])),
                          "the loop's final value")
                    for carry in plan.carries]
        stacks = plan.stacks if record and not driver else []
        if stacks:
            out = [self.recording.declaration(s, loop.loc) for s in dict.fromkeys(stacks)] + out
        return out
