"""What the backward loop's last trip skips: the adjoint a loop carries back to its initial value, where that
value has no gradient (``h = X`` with X a constant input). The last backward trip is the first forward one;
the adjoint it would compute is read by no later trip and by nothing after the loop:

    for _ in range(trips):                       for trip in range(trips):
        ...                                          ...
        dh = matmul_grad_a(dmatmul, h, W)   ->       if trip + 1 < trips:  # the loop's initial value ...
        dW = matmul_grad_b(dmatmul, h, W)                dh = matmul_grad_a(dmatmul, h, W)
                                                     dW = matmul_grad_b(dmatmul, h, W)

    >>> import ast
    >>> body = ast.parse("dz = dy * 2.0\\ndy = dz * w\\ndw = dz * x").body
    >>> print(ast.unparse(ast.Module(skip_in_last_trip(body, {"dy"}, "trip", "trips"), [])))
    dz = dy * 2.0
    if trip + 1 < trips:
        dy = dz * w
    dw = dz * x
"""
from __future__ import annotations

import ast

from ...ir.syntax import name as _name
from ...ir.syntax import noted

NOTE = "the first trip's input has no gradient"


def skip_in_last_trip(body: list, silent: set, trip: str, trips: str) -> list | None:
    """`body` (a backward trip, counted by `trip` up to `trips`) with the statements that assign or add to
    one of the adjoints `silent` run in every trip but the last; None if there are none. A silent adjoint
    is skipped only where, after its first assignment, the trip reads it only to add to it, and where one of
    those statements computes something."""
    skipped = set()
    for adjoint in silent:
        positions = [k for k, stmt in enumerate(body) if target_of(stmt) == adjoint]
        if not positions:
            continue
        later = body[positions[0]:]
        if all(target_of(stmt) == adjoint or adjoint not in names_in(stmt) for stmt in later) \
                and any(computes(body[k]) for k in positions):
            skipped.update(positions)
    if not skipped:
        return None
    out: list = []
    for position, stmt in enumerate(body):
        if position not in skipped:
            out.append(stmt)
            continue
        if not (out and isinstance(out[-1], ast.If) and getattr(out[-1], "note", None) == NOTE):
            test = ast.Compare(ast.BinOp(_name(trip), ast.Add(), ast.Constant(1)), [ast.Lt()], [_name(trips)])
            out.append(noted(ast.If(test, [], []), NOTE))
        out[-1].body.append(stmt)
    return out


def target_of(stmt: ast.stmt) -> str | None:
    """The name `stmt` assigns, adds to or writes an item of (``dy = ...``, ``dy += ...``, ``dy[i] += ...``)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
    elif isinstance(stmt, ast.AugAssign):
        target = stmt.target
    else:
        return None
    if isinstance(target, ast.Subscript):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def computes(stmt: ast.stmt) -> bool:
    """Does `stmt` compute (a call or arithmetic), not only pick a part of a value (``dhs = dhs_2[:-1]``)?"""
    return isinstance(stmt, ast.AugAssign) or any(isinstance(node, (ast.Call, ast.BinOp, ast.UnaryOp))
                                                  for node in ast.walk(stmt.value))


def names_in(stmt: ast.stmt) -> set:
    """Every name `stmt` reads or writes."""
    return {node.id for node in ast.walk(stmt) if isinstance(node, ast.Name)}


__all__ = ["skip_in_last_trip"]
