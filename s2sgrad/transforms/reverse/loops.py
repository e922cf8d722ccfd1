"""Facts about a loop that its backward sweep needs: which outside values its adjoint adds to, and
whether a carried adjoint stays a buffer the gradient owns every trip.

    >>> from s2sgrad.ir.nodes import Const, Var
    >>> loop = While(["y"], [Var("y0")], [], Const(True), [], [Var("y")], ["y1"])
    >>> written_in_place(loop, 0), receivers(loop, {"w"}, {"w"})
    (False, [])
    >>> counted = While(["i"], [Const(0)], [], Var("go"), [Assign("i1", Op(operator.add, [Var("i"), Const(1)]))],
    ...                 [Var("i1")], ["n"])
    >>> trip_counter(counted, {})
    ('i', 'n')
"""
from __future__ import annotations

import operator

from ...ir import primitives
from ...ir.nodes import Assign, Const, If, Op, Var, While, captures, reads


def receivers(loop: While, active: set, primal_names: set) -> list[str]:
    """Names from outside `loop` whose adjoints its body can add to (active loop invariants)."""
    return [c for c in captures(loop) if c in active and c in primal_names]


def trip_counter(loop: While, values: dict) -> tuple[str, str] | None:
    """The loop variable that counts the trips (0 on entry, 1 added at the top level of every trip: the hidden
    counter of a ``for``) and its result, which then is the trip count after the loop; None if there is none.
    `values`: the value assigned to each name of the function."""
    top = {stmt.target: stmt.value for stmt in loop.body if isinstance(stmt, Assign)}
    for param, init, out, result in zip(loop.params, loop.inits, loop.body_outs, loop.results):
        step = top.get(out.name) if isinstance(out, Var) else None
        init = values.get(init.name) if isinstance(init, Var) else init
        if isinstance(init, Const) and type(init.value) is int and init.value == 0 and isinstance(step, Op) \
                and step.fn is operator.add and not step.kwargs and len(step.args) == 2 \
                and isinstance(step.args[0], Var) and step.args[0].name == param \
                and isinstance(step.args[1], Const) and type(step.args[1].value) is int and step.args[1].value == 1:
            return param, result
    return None


def written_in_place(loop: While, k: int) -> bool:
    """Does the trip take loop variable k through writes alone (``y_1 = setitem(y, i, v)``, ...), the trip's
    last version being what it carries to the next, with every version otherwise only indexed
    (``y[j]``) at the trip's top level? Then the adjoint of each version is the one buffer: owned on
    entry, owned every trip."""
    uses: dict[str, list] = {}
    for stmt in loop.cond + loop.body:
        if isinstance(stmt, Assign) and isinstance(stmt.value, Op):
            for position, atom in [*enumerate(stmt.value.args), *((None, a) for a in stmt.value.kwargs.values())]:
                if isinstance(atom, Var):
                    uses.setdefault(atom.name, []).append((stmt, position))
        elif isinstance(stmt, Assign) and isinstance(stmt.value, Var):
            uses.setdefault(stmt.value.name, []).append((stmt, None))
    chain = [loop.params[k]]
    while True:
        writes = [stmt for stmt, position in uses.get(chain[-1], [])
                  if position == 0 and stmt.value.fn is primitives.setitem]
        if len(writes) > 1 or any(not (position == 0 and stmt.value.fn in (primitives.setitem, operator.getitem))
                                  for stmt, position in uses.get(chain[-1], [])):
            return False
        if not writes:
            break
        chain.append(writes[0].target)
    nested = reads([stmt for stmt in loop.body if isinstance(stmt, (If, While))])
    out = loop.body_outs[k]
    return len(chain) > 1 and isinstance(out, Var) and out.name == chain[-1] and not set(chain) & nested
