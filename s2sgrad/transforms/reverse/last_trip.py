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
import operator

from ...ir import primitives
from ...ir.nodes import Assign, Op, Var, While
from ...ir.syntax import name as _name
from ...ir.syntax import noted

NOTE = "the first trip's input has no gradient"


def over_items(loop: While, shapes) -> bool:
    """Does `loop` go over the items of a list or tuple (``for W, b in layers``: it reads ``layers[k]`` by its
    counter, and `shapes` knows no array shape of ``layers``)? Such a loop has a few trips, each a layer's work,
    so its last one is worth skipping from; a long loop (over a range or an array's rows) would pay the test
    on every trip to save one."""
    counters = set(loop.params)

    def reads_an_item(stmt) -> bool:
        if not (isinstance(stmt, Assign) and isinstance(stmt.value, Op) and len(stmt.value.args) == 2):
            return False
        container, index = stmt.value.args
        if not (isinstance(index, Var) and index.name in counters):
            return False
        return stmt.value.fn is primitives.seq_getitem \
            or stmt.value.fn is operator.getitem and not isinstance(shapes.of(container), tuple)
    return any(reads_an_item(stmt) for stmt in loop.body)


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
    group: list = []           # skipped statements not yet written, under one test
    positions = sorted(skipped)
    for k, position in enumerate(positions):
        group.append(body[position])
        # the statements up to the next skipped one move above the test where that joins two under one
        gap = body[position + 1:positions[k + 1]] if k + 1 < len(positions) else None
        if gap is None or not all(commute(stmt, other) for stmt in gap for other in group):
            out += _guarded(group, trip, trips) + (gap or [])
            group = []
        else:
            out += gap
    before = body[:positions[0]]
    after = body[positions[-1] + 1:]
    return before + out + after


def _guarded(group: list, trip: str, trips: str) -> list:
    """``if trip + 1 < trips:`` over the statements `group`; nothing for none."""
    if not group:
        return []
    test = ast.Compare(ast.BinOp(_name(trip), ast.Add(), ast.Constant(1)), [ast.Lt()], [_name(trips)])
    return [noted(ast.If(test, group, []), NOTE)]


def commute(first: ast.stmt, second: ast.stmt) -> bool:
    """Do two assignments give the same result in either order: neither writes a name the other reads or
    writes? (Statements are assignments to names or to their items, as `target_of` reads them.)

        >>> import ast
        >>> a, b, c = ast.parse("diff = 1 - LEAK\\ndh = W.T @ g\\ndh += d * diff").body
        >>> commute(a, b), commute(a, c)
        (True, False)
    """
    written = [target_of(first), target_of(second)]
    return None not in written and written[0] not in names_in(second) and written[1] not in names_in(first)


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


__all__ = ["over_items", "skip_in_last_trip"]
