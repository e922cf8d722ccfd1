"""Calls of user functions: each is differentiated as a forward/backward pair of its own.

The forward function returns the call's value and a record of what its backward function reads; the
backward function takes the record and the adjoint of the value, and returns the adjoints of the active
arguments. A recomputed function (``@s2sgrad.recompute``) keeps no record: the backward sweep calls its
forward function again. The pair comes from the module being generated (``module.callee``):

    y, f_record = f_forward(x)           # forward sweep
    dx = f_backward(f_record, dy)        # backward sweep
"""
from __future__ import annotations

import ast

from ...frontend.functions import is_recomputed
from ...ir.names import identifier
from ...ir.nodes import Assign, Op, atom_expr
from ...ir.syntax import assign as _assign
from ...ir.syntax import call as _call
from ...ir.syntax import name as _name
from ...ir.syntax import origin as _origin
from ...ir.syntax import store as _store
from .adjoints import Adjoints
from .recording import Recording


class Calls:
    """The two halves of each call of a user function in one function's gradient."""

    def __init__(self, module, adjoints: Adjoints, recording: Recording):
        self.module = module            # the module being generated: makes each callee's pair once
        self.adjoints = adjoints
        self.recording = recording

    def forward(self, stmt: Assign, recording: bool = True) -> list:
        """The call in the forward sweep: keeping its record, where the backward sweep reads one."""
        op = stmt.value
        args = self.module.call_arguments(op, stmt.loc)
        mask = tuple(self.adjoints.is_active(a) for a in args)
        record = self.recording.calls.get(stmt.target) if recording and not is_recomputed(op.fn) else None
        forward, _ = self.module.callee(op.fn, mask if record else (False,) * len(args), stmt.loc, args)
        call = ast.Call(_name(forward), [atom_expr(a) for a in args], [])
        if record is None:
            if stmt.target is None:
                return [_origin(ast.Expr(call), stmt.loc)]
            return [_assign(stmt.target, call, stmt.loc)]
        targets = ast.Tuple([_store(stmt.target), _store(record)], ast.Store())
        return [_origin(ast.Assign([targets], call), stmt.loc)]

    def backward(self, stmt: Assign, dtarget: ast.expr) -> list:
        """The call's backward function on its record (recomputed first, for a recomputed function)."""
        op = stmt.value
        names = self.adjoints.names
        args = self.module.call_arguments(op, stmt.loc)
        mask = tuple(self.adjoints.is_active(a) for a in args)
        _, backward = self.module.callee(op.fn, mask, stmt.loc, args)
        record = self.recording.calls.setdefault(stmt.target, names.fresh(f"{callee_name(op)}_record"))
        active_args = [a for a, m in zip(args, mask) if m]
        recomputation = []
        if is_recomputed(op.fn):
            forward, _ = self.module.callee(op.fn, mask, stmt.loc, args)
            saved = getattr(op, "random_states", None)         # the generators' states to draw again from
            call = ast.Call(_name(forward), [atom_expr(a) for a in args], []) if saved is None else \
                _call("replay", _name(saved), _name(forward), *[atom_expr(a) for a in args])
            recomputation = [_origin(ast.Assign([ast.Tuple([_store("_"), _store(record)], ast.Store())], call),
                                     stmt.loc)]
        temps = [names.fresh(f"d{a.name}_part", temporary=True) for a in active_args]
        targets = ast.Tuple([_store(t) for t in temps], ast.Store()) if len(temps) != 1 else _store(temps[0])
        out = recomputation + [_origin(ast.Assign([targets], ast.Call(_name(backward), [_name(record), dtarget], [])),
                                       stmt.loc)]
        for atom, temp in zip(active_args, temps):
            out += self.adjoints.contribute(atom, _name(temp), stmt.loc)
        return out


def callee_name(op: Op) -> str:
    """A name for what a call of a user function keeps: the function's own name, as an identifier."""
    return identifier(getattr(op.fn, "__name__", None) or op.name or "call")
