"""Facts about a loop that its backward sweep needs: which outside values its adjoint adds to, and
whether a carried adjoint stays a buffer the gradient owns every trip.

    >>> from s2sgrad.ir.nodes import Const, Var
    >>> loop = While(["y"], [Var("y0")], [], Const(True), [], [Var("y")], ["y1"])
    >>> written_in_place(loop, 0), receivers(loop, {"w"}, {"w"})
    (False, [])
"""
from __future__ import annotations

import operator

from ...ir import primitives
from ...ir.nodes import Assign, If, Op, Var, While, captures, reads


def receivers(loop: While, active: set, primal_names: set) -> list[str]:
    """Names from outside `loop` whose adjoints its body can add to (active loop invariants)."""
    return [c for c in captures(loop) if c in active and c in primal_names]


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
