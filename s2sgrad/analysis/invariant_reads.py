"""Reads of a container a loop does not change are done once, before the loop.

A loop body's ``item = p["W"]`` (a dict, list, tuple or record read, `HOISTED`) whose container and key
the loop does not bind is the same value on every trip: in the lowered form, where every name is
assigned once and a write to a container makes a new one, that holds exactly when no name the read
uses is a loop variable or is bound in the loop. Such a read moves to just before the loop, which
then captures its value as it captures a plain argument; its adjoint (the container's gradient made
from the read value's) is then formed once after the backward loop, and what every trip adds to the
value's gradient is accumulated as for an argument of its own (``batched_accumulation``).

Only statements at the top level of the body move (a read under a branch may be guarded by its test),
and a read the moved ones make invariant moves too (``layer = p["layers"][0]``). Runs after
`specialize_sequences`, which marks container reads.

    >>> import numpy as np
    >>> from s2sgrad.analysis.activity import specialize_sequences
    >>> from s2sgrad.frontend.lower import lower_function
    >>> from s2sgrad.ir.nodes import to_source
    >>> def f(p, n):
    ...     h = 0.0
    ...     for t in range(n):
    ...         h = np.tanh(p["w"] * h + t)
    ...     return h
    >>> lowered, _ = lower_function(f, dicts=["p"])
    >>> specialize_sequences(lowered, {"p": "dict"})
    >>> hoist_invariant_reads(lowered)
    >>> source = to_source(lowered)
    >>> source.index("= p['w']") < source.index("def body_1")
    True
"""
from __future__ import annotations

import operator

from ..ir import primitives
from ..ir.names import Names, base_name
from ..ir.nodes import Assign, Const, Function, If, Op, Var, While, writes

HOISTED = frozenset({primitives.seq_getitem, primitives.attribute, primitives.static_attribute})


def hoist_invariant_reads(fn: Function, names: Names | None = None) -> None:
    """Move every loop's invariant container reads (of its body's top level) before the loop, in place. With
    the function's `names`, a moved read's temporary is named after what it reads: ``p_W`` for ``p["W"]``."""
    fn.body = _block(fn.body, names)


def _block(stmts: list, names: Names | None) -> list:
    out = []
    for stmt in stmts:
        if isinstance(stmt, If):
            stmt.body, stmt.orelse = _block(stmt.body, names), _block(stmt.orelse, names)
        elif isinstance(stmt, While):
            stmt.cond, stmt.body = _block(stmt.cond, names), _block(stmt.body, names)
            taken = _take_invariant_reads(stmt)
            if names is not None:
                _name_after_reads(taken, stmt, names)
            out.extend(taken)
        out.append(stmt)
    return out


def _name_after_reads(reads: list, loop: While, names: Names) -> None:
    for stmt in reads:
        container, key = stmt.value.args
        part = key.value if isinstance(key, Const) else None
        if stmt.target not in names.temporary or not isinstance(container, Var) \
                or not (isinstance(part, str) and part.isidentifier() or type(part) is int and part >= 0):
            continue
        if base_name(stmt.target) == f"{container.name}_{part}":      # (named when an inner loop gave it up)
            continue
        new = names.fresh(f"{container.name}_{part}", temporary=True)
        renamed = {stmt.target: Var(new)}
        stmt.target = new
        for later in reads[reads.index(stmt) + 1:]:
            later.value.args = [renamed.get(a.name, a) if isinstance(a, Var) else a for a in later.value.args]
        _rename([loop], renamed)


def _rename(block: list, renamed: dict) -> None:
    """Replace the names `renamed` maps in what `block` reads (nested blocks too)."""
    def new(atom):
        return renamed.get(atom.name, atom) if isinstance(atom, Var) else atom

    for stmt in block:
        if isinstance(stmt, Assign):
            if isinstance(stmt.value, Op):
                stmt.value.args = [new(a) for a in stmt.value.args]
                stmt.value.kwargs = {k: new(v) for k, v in stmt.value.kwargs.items()}
            else:
                stmt.value = new(stmt.value)
        elif isinstance(stmt, If):
            stmt.test = new(stmt.test)
            stmt.body_outs, stmt.orelse_outs = [new(a) for a in stmt.body_outs], [new(a) for a in stmt.orelse_outs]
            _rename(stmt.body, renamed)
            _rename(stmt.orelse, renamed)
        else:
            stmt.inits, stmt.body_outs = [new(a) for a in stmt.inits], [new(a) for a in stmt.body_outs]
            stmt.test, stmt.trips = new(stmt.test), new(stmt.trips) if stmt.trips is not None else None
            _rename(stmt.cond, renamed)
            _rename(stmt.body, renamed)


def _take_invariant_reads(loop: While) -> list:
    """The invariant reads of `loop`'s body, taken out of it, in their order."""
    varying = set(loop.params) | writes(loop.cond) | writes(loop.body)
    taken, kept, items = [], [], set()
    for stmt in loop.body:
        if _is_invariant_read(stmt, varying, items):
            taken.append(stmt)
            varying.discard(stmt.target)
            items.add(stmt.target)
        else:
            kept.append(stmt)
    loop.body = kept
    return taken


def _is_invariant_read(stmt, varying: set, items: set) -> bool:
    """Is `stmt` a container read (or a read by a constant of an item a hoisted read took out: ``p["cell"]["W"]``)
    of nothing `varying`?"""
    if not (isinstance(stmt, Assign) and stmt.target is not None and isinstance(stmt.value, Op)
            and not stmt.value.kwargs):
        return False
    args = stmt.value.args
    of_item = stmt.value.fn is operator.getitem and len(args) == 2 and isinstance(args[0], Var) \
        and args[0].name in items and isinstance(args[1], Const)
    return (stmt.value.fn in HOISTED or of_item) and not any(isinstance(a, Var) and a.name in varying for a in args)
