"""Part of stage 2: lowering ``if`` and ``while`` into `ir.If` and `ir.While` with explicit outputs.

An ``if`` rebinding names gets their versions from both branches as its results; a ``while`` is a
function of the names its body assigns (its loop variables), with its checkpointing schedule:

    >>> from s2sgrad.frontend.lower import lowered_source
    >>> def f(x, n):
    ...     i = 0
    ...     while i < n:
    ...         if i > 2:
    ...             x = x * 2.0
    ...         i += 1
    ...     return x
    >>> print(lowered_source(f), end="")
    def f(x, n):
        i = 0
    <BLANKLINE>
        def cond_1(x_1, i_1, n):
            test = i_1 < n
            return test
    <BLANKLINE>
        def body_1(x_1, i_1, n):
            test_1 = i_1 > 2
    <BLANKLINE>
            def then_2():
                x_2 = x_1 * 2.0
                return (x_2,)
    <BLANKLINE>
            def orelse_2():
                return (x_1,)
            x_3, = if_else(test_1, then_2, orelse_2)
            i_2 = i_1 + 1
            return (x_3, i_2)
        x_4, i_3 = while_loop(cond_1, body_1, (x, i), (n,))
        return x_4
"""
from __future__ import annotations

import ast

import gast

from .. import runtime
from ..ir.nodes import Const, If, Var, While
from ..schedules import Schedule
from .aliasing import read_on_entry
from .closures import assigned_names


class ControlFlow:
    """Lowers the branches and loops of the function `lowerer` lowers."""

    def __init__(self, lowerer):
        self.lowerer = lowerer
        self.parsed = lowerer.parsed
        self.names = lowerer.names
        self.aliasing = lowerer.aliasing

    def if_statement(self, stmt):
        """``if``: both branches lowered from the same state; the names either rebinds are its outputs."""
        lowerer = self.lowerer
        test = lowerer.atom(stmt.test)
        before = dict(lowerer.env)
        entry = self.aliasing.state()
        body, env_body, _ = lowerer.sub_block(stmt.body, before)
        after_body = self.aliasing.state()
        self.aliasing.restore(entry)
        orelse, env_else, _ = lowerer.sub_block(stmt.orelse, before)
        after_else = self.aliasing.state()
        raising = (_raises(stmt.body), _raises(stmt.orelse))      # a branch that raises binds nothing after it
        if raising[0] and not raising[1]:
            env_body = {**env_else, **env_body}
        elif raising[1] and not raising[0]:
            env_else = {**env_body, **env_else}
        lowerer.callables.check_branches(before, env_body, env_else, where=stmt)
        outputs = [n for n in _union_keys(env_body, env_else)
                   if n in env_body and n in env_else and isinstance(env_body[n], str)
                   and (env_body[n] != before.get(n) or env_else[n] != before.get(n))]
        for n in set(env_body) ^ set(env_else):
            if n not in before:
                lowerer.loop_locals[n] = stmt
        body_outs = [_output(env_body[n], raising[0]) for n in outputs]
        orelse_outs = [_output(env_else[n], raising[1]) for n in outputs]
        results = [lowerer.define(n) for n in outputs]
        self.aliasing.merge(after_body, after_else)
        lowerer.out.append(If(test, body, body_outs, orelse, orelse_outs, results, self.parsed.location(stmt)))

    def returning_if(self, stmt):
        """An ``if`` whose branches both end in ``return``: its result is the function's."""
        lowerer = self.lowerer
        lowerer.node = stmt
        test = lowerer.atom(stmt.test)
        before = dict(lowerer.env)
        entry = self.aliasing.state()
        body, _, body_result = lowerer.sub_block(stmt.body, before)
        after_body = self.aliasing.state()
        self.aliasing.restore(entry)              # the other branch starts from the same objects, not the body's
        orelse, _, orelse_result = lowerer.sub_block(stmt.orelse, before)
        self.aliasing.merge(after_body, self.aliasing.state())
        result = self.names.fresh("result")
        lowerer.out.append(If(test, body, [body_result], orelse, [orelse_result], [result],
                              self.parsed.location(stmt)))
        return Var(result)

    def schedule(self, stmt):
        """The checkpointing schedule a loop header names, evaluated in the user's namespace."""
        lowerer = self.lowerer
        expr = getattr(stmt, "checkpoint", None)
        if expr is None:
            return None
        tree = gast.gast_to_ast(gast.Expression(body=expr))
        namespace = {**self.parsed.globals, **self.parsed.closure}
        try:
            schedule = eval(compile(ast.fix_missing_locations(tree), self.parsed.filename, "eval"), namespace)
        except Exception as error:
            raise lowerer.error(f"the checkpointing schedule could not be evaluated ({error})", expr,
                                "write it with module-level names and constants, "
                                "e.g. s2sgrad.Revolve(snapshots=10)")
        if not isinstance(schedule, Schedule):
            raise lowerer.error(f"{schedule!r} is not a checkpointing schedule", expr,
                                "use s2sgrad.Periodic, s2sgrad.Revolve or s2sgrad.Online")
        return schedule

    def while_loop(self, stmt):
        """``while`` (a desugared ``for`` too): a functional While over the names its body assigns."""
        lowerer = self.lowerer
        schedule = self.schedule(stmt)
        trips_node = getattr(stmt, "trips", None)
        trips = lowerer.atom(trips_node) if trips_node is not None else None
        unbound = [n for n in sorted(getattr(stmt, "read_after", ())) if n not in lowerer.env
                   and n not in lowerer.loop_locals and n in assigned_names(stmt.body)]
        for n in unbound:                     # bound by a trip, or never: Python reads it after the loop
            lowerer.emit(lowerer.define(n), Const(runtime.UNBOUND))
        before = dict(lowerer.env)
        carried = [n for n in assigned_names(stmt.body) if isinstance(before.get(n), str)]
        carried += [n for n in lowerer.user_calls.rebound_in(stmt)
                    if n not in carried and isinstance(before.get(n), str)]
        aliasing = self.aliasing
        for n in carried:                     # the loop starts from n's object: one changed through another name
            stale = aliasing.stale(n)
            read = read_on_entry(stmt, n) if stale is not None else None
            if read is not None:
                raise lowerer.stale_error(n, stale, read)
        inits = [Var(before[n]) for n in carried]
        scalars, vectors = aliasing.kinds.loop_variable_kinds(stmt, carried, assigned_names(stmt.body))
        aliasing.join_loop_aliases(stmt, set(carried) - scalars)
        entry = aliasing.objects_of(carried)
        params = [lowerer.define(n) for n in carried]
        aliasing.keep_objects(entry, scalars, vectors)      # a loop variable is its initial object, at first
        stale_before = aliasing.stale_names()
        inner = dict(lowerer.env)
        saved_out = lowerer.out
        lowerer.out = []
        lowerer.env = inner
        lowerer.node = stmt
        with lowerer.user_calls.rebinding_scope(None):
            test = lowerer.atom(stmt.test)
        cond = lowerer.out
        lowerer.out = saved_out
        with lowerer.user_calls.rebinding_scope((set(before), set(carried))):
            body, env_after, _ = lowerer.sub_block(stmt.body, lowerer.env)
        lowerer.env = before
        lowerer.callables.check_branches(before, env_after, where=stmt)
        stale_read = aliasing.stale_in_loop(stmt, aliasing.stale_names() - stale_before)
        if stale_read is not None:
            node, stale = stale_read
            raise lowerer.stale_error(node.id, stale, node, " in this loop")
        body_outs = [Var(env_after[n]) for n in carried]
        at_end = aliasing.objects_of(carried)
        stale_at_end = {n: aliasing.stale(n) for n in carried if aliasing.stale(n) is not None}
        results = [lowerer.define(n) for n in carried]
        aliasing.poisoned.update(stale_at_end)      # the last trip may have changed n through another name
        lowerer.maybe_unbound.update({n: lowerer.env[n] for n in unbound})
        aliasing.keep_objects((entry[0], {**entry[1], **at_end[1]}), scalars, vectors,
                              also=at_end)    # after the loop, n is its first object or a trip's last one
        for n in env_after:
            if n not in before:
                lowerer.loop_locals[n] = stmt
        lowerer.out.append(While(params, inits, cond, test, body, body_outs, results, self.parsed.location(stmt),
                                 schedule, trips))


def _raises(stmts) -> bool:
    """Does a block end in ``raise`` (so that nothing after it runs)?"""
    return bool(stmts) and isinstance(stmts[-1], gast.Raise)


def _output(name: str, raising: bool):
    """A branch's value of an output: none (a placeholder) where the branch raises before binding it."""
    return Const(None) if raising else Var(name)


def _union_keys(a: dict, b: dict) -> list:
    return list(a) + [k for k in b if k not in a]
