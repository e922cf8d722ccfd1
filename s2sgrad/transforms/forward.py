"""Forward mode: the tangent transformation of a lowered function.

Each primal statement comes with the statement computing its tangent from the
tangents of its arguments, by the primitive's tangent rule (placed before the
primal statement unless it reads the primal's result, so that a loop variable
and its update can share one name):

    sin = np.sin(x)                        # primal
    dsin = dx * np.cos(x)                  # tangent rule of np.sin
    dy = dsin * w + sin * dw               # tangent rule of *
    y = sin * w

A value that does not depend on the inputs differentiated (a constant, an
integer counter) has a zero tangent that exists only symbolically and
generates no code. A loop carries the tangents of its active loop variables
as extra loop variables (no stacks: forward mode needs no record of the
past); a branch gives the tangents of its outputs; a call of a user function
calls that function's own tangent function (generated once per function and
pattern of arguments with tangents); an in-place write writes the tangent in
place too where its buffer belongs to the generated code.

The driver (`s2sgrad.pipeline.forward.ForwardModule`) runs it and assembles the module:

    >>> code = Forward(lowered, ["x"], analysis, module, names).run()     # doctest: +SKIP
    >>> code.body, code.tangent                                           # doctest: +SKIP
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from ..analysis.activity import SCALAR, Analysis
from ..analysis.inplace import MUTATIONS, in_place_writes
from ..errors import S2SGradError
from ..frontend.functions import is_user_function
from ..ir import primitives
from ..ir.names import base_name
from ..ir.nodes import Assign, Const, Function, If, Op, Var, While, atom_expr
from ..ir.syntax import assign as _assign
from ..ir.syntax import call as _call
from ..ir.syntax import name as _name
from ..ir.syntax import names_read
from ..ir.syntax import origin as _origin
from ..ir.syntax import store as _store
from ..rules import tangent_rule_for
from . import primal
from .rule_lookup import TANGENT, rule_of
from .tangent_templates import expand_tangent

# Calls whose result is a new buffer, never one of their arguments (so the generated code may write it in place).
FRESH_CALLS = {"zeros_like", "setitem", "list_append", "np.copy", "np.array", "np.where", "np.stack",
               "np.concatenate", "np.dot", "np.matmul", "np.outer", "np.tensordot", "einsum_tangent"}


def _zeros_like(atom) -> ast.expr:
    """A materialized zero tangent for `atom`."""
    if isinstance(atom, Const) and type(atom.value) in (int, float):
        return ast.Constant(0.0)
    return _call("zeros_like", atom_expr(atom))


def _is_fresh(expr: ast.expr) -> bool:
    """Is the value of `expr` a buffer made by this expression (not a view or an alias of another value)?"""
    if isinstance(expr, (ast.BinOp, ast.UnaryOp, ast.List, ast.Tuple, ast.Constant)):
        return True
    if isinstance(expr, ast.Call):
        name = ast.unparse(expr.func)
        return name in FRESH_CALLS or name.startswith("np.") and isinstance(getattr(np, name[3:], None), np.ufunc)
    return False


def tangent_hint(name: str) -> str:
    """How the tangent of `name` is called: ``dx`` for ``x`` (and for its versions ``x_1``, ``x_2``)."""
    return "d" + base_name(name)


@dataclass
class TangentCode:
    """A function's primal-and-tangent statements, its result, and the result's tangent; `tangents` are the
    names of the tangents and of the rules' temporaries (`forward_tidy` drops those nothing reads)."""
    body: list
    result: ast.expr
    tangent: ast.expr
    tangent_params: list
    tangents: set


class Forward:
    """The tangent transformation of one lowered function with respect to some of its parameters."""

    def __init__(self, fn: Function, wrt: list[str], analysis: Analysis, module, names,
                 hint=tangent_hint):
        self.fn = fn
        self.wrt = wrt
        self.analysis = analysis
        self.active = analysis.active
        self.module = module
        self.names = names
        self.hint = hint
        self.tangents: dict[str, str] = {}      # primal name -> its tangent's name
        self.zero: set[str] = set()             # active names whose tangent turned out to be zero
        self.owned: set[str] = set()            # names whose tangent is a buffer this code made
        self.in_place = in_place_writes(fn, [])
        self.rule_temporaries: set[str] = set()  # names of the temporaries of tangent rules

    def run(self) -> TangentCode:
        params = [self.tangent_name(p) for p in self.wrt]
        body = self.block(self.fn.body)
        result = atom_expr(self.fn.result)
        tangent = self.tangent_of(self.fn.result)
        tangent = tangent if tangent is not None else _zeros_like(self.fn.result)
        return TangentCode(body, result, tangent, params, set(self.tangents.values()) | self.rule_temporaries)

    # ---------------------------------------------------------------- tangents

    def tangent_name(self, name: str) -> str:
        if name not in self.tangents:
            self.tangents[name] = self.names.fresh(self.hint(name), temporary=name in self.names.temporary)
        return self.tangents[name]

    def tangent_of(self, atom) -> ast.expr | None:
        """The tangent of `atom` as an expression, or None where it is zero."""
        if isinstance(atom, Var) and atom.name in self.active and atom.name not in self.zero:
            return _name(self.tangent_name(atom.name))
        return None

    def materialized(self, atom) -> ast.expr:
        """The tangent of `atom`, zeros where it is zero (``0.0`` for a scalar)."""
        tangent = self.tangent_of(atom)
        if tangent is not None:
            return tangent
        if isinstance(atom, Var) and self.analysis.shapes.of(atom) == SCALAR:
            return ast.Constant(0.0)
        return _zeros_like(atom)

    def set_tangent(self, name: str, expr: ast.expr | None, loc, owned: bool | None = None) -> list:
        """``dname = expr``; a None `expr` leaves the tangent zero."""
        if expr is None:
            self.zero.add(name)
            return []
        if _is_fresh(expr) if owned is None else owned:
            self.owned.add(name)
        return [_assign(self.tangent_name(name), expr, loc)]

    # ---------------------------------------------------------------- statements

    def block(self, block: list) -> list:
        out = []
        for stmt in block:
            if isinstance(stmt, Assign):
                out += self.assign(stmt)
            elif isinstance(stmt, If):
                out += self.branch(stmt)
            else:
                out += self.loop(stmt)
        return out

    def assign(self, stmt: Assign) -> list:
        value, target, loc = stmt.value, stmt.target, stmt.loc
        if isinstance(value, Op) and self.is_call(value):
            return self.call(stmt)
        if target is None:
            return [primal.plain(stmt)]
        if not isinstance(value, Op):
            code = [primal.plain(stmt)]
            if target not in self.active:
                return code
            return code + self.set_tangent(target, self.tangent_of(value), loc, owned=value.name in self.owned)
        if value.fn in MUTATIONS and value.args[0].name in self.in_place:
            return self.write_in_place(stmt)
        code = [primal.plain(stmt)]
        if target not in self.active:
            return code
        if value.fn in (primitives.make_tuple, primitives.make_list):
            items = [self.materialized(a) for a in value.args]
            make = ast.Tuple if value.fn is primitives.make_tuple else ast.List
            container = make(items, ast.Load())
            tangent = None if all(self.tangent_of(a) is None for a in value.args) else container
            return code + self.set_tangent(target, tangent, loc)
        tangent = self.by_rule(stmt)
        if target in names_read(tangent):
            return code + tangent
        return tangent + code           # before the primal: its arguments' old values need not outlive it

    def by_rule(self, stmt: Assign) -> list:
        op = stmt.value
        rule = rule_of(stmt, TANGENT, self.module, lambda atom: self.tangent_of(atom) is not None)
        try:
            expansion = expand_tangent(rule, op, stmt.target, self.tangent_of, self.names,
                                       lambda atom: self.analysis.shapes.same(atom, stmt.target))
        except S2SGradError as error:          # a call that does not match its rule: point at the user's line
            if error.location is not None:
                raise
            raise type(error)(error.message, stmt.loc, error.hint) from None
        code = [_origin(s, stmt.loc) for s in expansion.statements]
        self.rule_temporaries.update(s.targets[0].id for s in expansion.statements)
        return code + self.set_tangent(stmt.target, expansion.value, stmt.loc)

    def write_in_place(self, stmt: Assign) -> list:
        """``y_1 = setitem(y, i, v)`` as ``y[i] = v`` (``list_append`` as ``.append``), and the tangent
        likewise where its buffer is this code's own (otherwise the tangent rule copies it, once)."""
        op, target, loc = stmt.value, stmt.target, stmt.loc
        array = op.args[0]
        code = primal.written_in_place(stmt)
        if target not in self.active:
            return code
        tangent = self.tangent_of(array)
        if tangent is None or array.name not in self.owned:
            by_rule = self.by_rule(stmt)       # before the write: it may read the array as it was
            return code + by_rule if target in names_read(by_rule) else by_rule + code
        item = op.args[-1]
        if op.fn is primitives.setitem and self.tangent_of(item) is None:
            written = ast.Constant(0.0)                    # a value without a tangent zeroes what it replaces
        else:
            written = self.materialized(item)
        code.append(_origin(primal.in_place_write(tangent, op, written), loc))
        return code + self.set_tangent(target, tangent, loc, owned=True)

    # ---------------------------------------------------------------- calls of user functions

    def is_call(self, op: Op) -> bool:
        """Is `op` a call of a user function (transformed itself, not applied by a rule)?"""
        return is_user_function(op.fn) and tangent_rule_for(op.fn) is None

    def call(self, stmt: Assign) -> list:
        op, target, loc = stmt.value, stmt.target, stmt.loc
        args = self.module.call_arguments(op, loc)
        mask = tuple(self.tangent_of(a) is not None for a in args)
        callee = self.module.tangent_callee(op.fn, mask, loc, args) if target in self.active and any(mask) else None
        if callee is None:
            primal, _ = self.module.callee(op.fn, (False,) * len(args), loc, args)
            call = _call(primal, *[atom_expr(a) for a in args])
            if target is None:
                return [_origin(ast.Expr(call), loc)]
            return [_assign(target, call, loc)] + (self.set_tangent(target, None, loc) if target in self.active else [])
        tangents = [self.tangent_of(a) for a in args if self.tangent_of(a) is not None]
        call = _call(callee, *[atom_expr(a) for a in args], *tangents)
        self.owned.discard(target)
        return [_assign(ast.Tuple([_store(target), _store(self.tangent_name(target))], ast.Store()), call, loc)]

    # ---------------------------------------------------------------- branches and loops

    def branch(self, stmt: If) -> list:
        flowing = [k for k, r in enumerate(stmt.results) if r in self.active]
        arms = []
        for block, outs in ((stmt.body, stmt.body_outs), (stmt.orelse, stmt.orelse_outs)):
            code = self.block(block) + primal.branch_outputs(stmt, outs)
            arms.append((code, outs))
        for k in flowing:
            result = stmt.results[k]
            outs = [outs[k] for _, outs in arms]
            if all(self.tangent_of(o) is None for o in outs):
                self.zero.add(result)
                continue
            for (code, _), out in zip(arms, outs):
                code.append(_assign(self.tangent_name(result), self.materialized(out), stmt.loc))
            if all(self.tangent_of(o) is None or o.name in self.owned for o in outs):
                self.owned.add(result)
        if isinstance(stmt.test, Const):
            return arms[0 if stmt.test.value else 1][0]
        return [_origin(ast.If(atom_expr(stmt.test), arms[0][0] or [ast.Pass()], arms[1][0] or [ast.Pass()]),
                        stmt.loc)]

    def loop(self, loop: While) -> list:
        """The loop with the tangents of its active variables carried beside them."""
        carried = [k for k, p in enumerate(loop.params) if p in self.active]
        params = list(loop.params) + [self.tangent_name(loop.params[k]) for k in carried]
        out = []
        for k in carried:                       # before the loop variables, so that each can share its init's name
            param, init = loop.params[k], loop.inits[k]
            out.append(_assign(self.tangent_name(param), self.materialized(init), loop.loc))
            owned = self.tangent_of(init) is None or init.name in self.owned
            if owned and _keeps_buffer(loop.body_outs[k], param, loop.body):
                self.owned.add(param)
        out += primal.loop_entry(loop)
        body = self.block(loop.cond) + [primal.loop_exit(loop)] + self.block(loop.body)
        outs = [atom_expr(o) for o in loop.body_outs] + [self.materialized(loop.body_outs[k]) for k in carried]
        body += primal.next_trip(loop, params, outs)
        out.append(primal.endless(loop, body))
        out += primal.loop_results(loop)
        for k in carried:
            result, param = loop.results[k], loop.params[k]
            if result in self.active:
                out += self.set_tangent(result, _name(self.tangent_name(param)), loop.loc,
                                        owned=param in self.owned)
        return out



def _keeps_buffer(out, param: str, body: list) -> bool:
    """Does the loop variable's new value `out` stay the buffer it came in as (or one a write made)?"""
    definitions = {s.target: s.value for s in body if isinstance(s, Assign) and s.target}
    while isinstance(out, Var) and out.name != param:
        value = definitions.get(out.name)
        if isinstance(value, Op) and value.fn in MUTATIONS:
            return True
        if not isinstance(value, Var):
            return False
        out = value
    return isinstance(out, Var)


__all__ = ["Forward", "TangentCode", "tangent_hint"]
