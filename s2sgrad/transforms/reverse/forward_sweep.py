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
from ...ir import primitives
from ...ir.nodes import Assign, If, Op, While, atom_expr, value_expr
from ...ir.syntax import assign as _assign
from ...ir.syntax import attr as _attr
from ...ir.syntax import name as _name
from ...ir.syntax import noted
from ...ir.syntax import origin as _origin
from ...ir.syntax import store as _store
from .calls import Calls
from .checkpointing import driver_creation, driver_step
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
                    self.branch(stmt.body, stmt.body_outs, stmt.results, stmt.loc, record, plan.body),
                    self.branch(stmt.orelse, stmt.orelse_outs, stmt.results, stmt.loc, record, plan.orelse)),
                    stmt.loc))
            else:
                out += self.loop(stmt, record)
        return out

    def branch(self, block, outs, results, loc, record, pushes) -> list:
        code = self.block(block, record)
        code += [_assign(r, atom_expr(o), loc) for r, o in zip(results, outs)]
        if record:
            code += self.recording.push(pushes)
        return code or [ast.Pass()]

    def assign(self, stmt: Assign, record: bool = True) -> list:
        value = stmt.value
        if isinstance(value, Op) and is_user_function(value.fn):
            return self.calls.forward(stmt, record)
        if stmt.target is None:
            return [_origin(ast.Expr(value_expr(value)), stmt.loc)]
        if isinstance(value, Op) and value.fn in MUTATIONS and value.args[0].name in self.in_place:
            return self.write_in_place(stmt)
        return [_assign(stmt.target, value_expr(value), stmt.loc)]

    def write_in_place(self, stmt: Assign) -> list:
        """``y_1 = setitem(y, i, v)`` as ``y[i] = v`` (and ``list_append`` as ``.append``)."""
        op = stmt.value
        obj = atom_expr(op.args[0])
        if op.fn is primitives.setitem:
            write = ast.Assign([ast.Subscript(obj, primitives.index_expression(atom_expr(op.args[1])), ast.Store())],
                               atom_expr(op.args[2]))
        else:
            write = ast.Expr(ast.Call(ast.Attribute(obj, "append", ast.Load()), [atom_expr(op.args[1])], []))
        return [_origin(write, stmt.loc), _assign(stmt.target, atom_expr(op.args[0]), stmt.loc)]

    def trip(self, loop: While, record: bool) -> list:
        """One trip of `loop`'s body in the forward direction, recording (pushes) or not."""
        plan = self.recording.pushed_by(loop)
        pushed = plan.pushes if record and plan is not None else []
        body = self.recording.push([n for n in pushed if n in loop.params])
        body += self.block(loop.body, record)
        body += self.recording.push([n for n in pushed if n not in loop.params])
        if loop.params:
            targets = ast.Tuple([_store(p) for p in loop.params], ast.Store())
            values = ast.Tuple([atom_expr(o) for o in loop.body_outs], ast.Load())
            body.append(_origin(ast.Assign([targets], values), loop.loc))
        return body

    def loop(self, loop: While, record: bool = True) -> list:
        out = [_assign(p, atom_expr(i), loop.loc) for p, i in zip(loop.params, loop.inits)]
        plan = (self.recording.pushed_by(loop) if record else None) or LoopRecord()
        trips, driver = plan.trips, plan.checkpoints
        if trips:
            out.append(_assign(trips, ast.Constant(0), loop.loc))
        if driver:
            out.append(driver_creation(loop, driver, plan.schedule))
        body = self.block(loop.cond, record)
        body.append(_origin(ast.If(ast.UnaryOp(ast.Not(), atom_expr(loop.test)), [ast.Break()], []), loop.loc))
        if driver:
            body.append(driver_step(loop, driver))
        body += self.trip(loop, record and not driver)
        if trips:
            body.append(_origin(ast.AugAssign(_store(trips), ast.Add(), ast.Constant(1)), loop.loc))
        out.append(_origin(ast.While(ast.Constant(True), body, []), loop.loc))
        out += [_assign(r, _name(p), loop.loc) for r, p in zip(loop.results, loop.params)]
        if record:
            results = dict(zip(loop.params, loop.results))
            out += [noted(ast.Expr(ast.Call(_attr(carry.stack, "push"), [_name(results[carry.param])], [])),
                          "the loop's final value")
                    for carry in plan.carries]
        stacks = plan.stacks if record and not driver else []
        if stacks:
            out = [self.recording.declaration(s, loop.loc) for s in dict.fromkeys(stacks)] + out
        return out
