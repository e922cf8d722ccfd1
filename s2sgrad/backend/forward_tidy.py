"""Tidy generated forward-mode code: drop tangents that nothing reads, and unpack tuples read element
by element.

Activity analysis keeps the tangent of every value an active value is computed from, but
some rules read an argument only for its shape (``unreduce(g, x)``), so its tangent is
computed for nothing; `drop_dead_tangents` removes such statements. Lowering reads a tuple
through its elements; `unpack_tuples` writes that back as one unpacking::

    popped = stack_pop(h_stack)              h_stack, h = stack_pop(h_stack)
    h_stack = popped[0]              ->
    h = popped[1]
"""
from __future__ import annotations

import ast

from ..ir.syntax import names_read


def drop_dead_tangents(body: list, roots: set[str], removable: set[str]) -> None:
    """Remove the statements that compute only `removable` names nothing needs (a tangent of a value
    read only for its shape, say). Needed: what `roots` and the statements that stay read."""
    needed = set(roots)
    pending = []                                        # (names a statement computes, names it reads)
    for stmt, targets in _statements(body, removable):
        if targets is None:
            needed |= names_read([stmt])
        else:
            pending.append((targets, names_read([stmt])))
    grew = True
    while grew:
        grew = False
        for targets, reads in pending:
            if targets & needed and not reads <= needed:
                needed |= reads
                grew = True
    _sweep(body, removable - needed)


def _statements(block: list, removable: set[str]):
    """Each simple statement with the removable names it computes (None: it must stay); compound
    statements contribute their headers (which must stay) and their blocks."""
    for stmt in block:
        if isinstance(stmt, (ast.If, ast.While)):
            yield ast.Expr(stmt.test), None
            for inner in (stmt.body, stmt.orelse):
                yield from _statements(inner, removable)
        elif isinstance(stmt, ast.Assign) and _is_parallel(stmt):
            for target, value in zip(stmt.targets[0].elts, stmt.value.elts):
                name = target.id if isinstance(target, ast.Name) else None
                yield ast.Expr(value), ({name} if name in removable else None)
        else:
            written = _written(stmt)
            yield stmt, (written if written and written <= removable else None)


def _is_parallel(stmt: ast.Assign) -> bool:
    return len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple) and isinstance(stmt.value, ast.Tuple) \
        and len(stmt.targets[0].elts) == len(stmt.value.elts)


def _written(stmt) -> set[str]:
    """The names a simple statement assigns or writes into (``d[i] = v``, ``d.append(v)``)."""
    if isinstance(stmt, ast.Assign):
        return {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)
                and (isinstance(n.ctx, ast.Store) or isinstance(t, ast.Subscript) and n is t.value)}
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
            and stmt.value.func.attr == "append" and isinstance(stmt.value.func.value, ast.Name):
        return {stmt.value.func.value.id}
    return set()


def _sweep(block: list, dead: set[str]) -> None:
    kept = []
    for stmt in block:
        if isinstance(stmt, (ast.If, ast.While)):
            _sweep(stmt.body, dead)
            _sweep(stmt.orelse, dead)
            stmt.body = stmt.body or [ast.Pass()]
        elif isinstance(stmt, ast.Assign) and _is_parallel(stmt):
            pairs = [(t, v) for t, v in zip(stmt.targets[0].elts, stmt.value.elts)
                     if not (isinstance(t, ast.Name) and t.id in dead)]
            if not pairs:
                continue
            stmt.targets[0].elts, stmt.value.elts = [t for t, _ in pairs], [v for _, v in pairs]
        elif _written(stmt) and _written(stmt) <= dead:
            continue
        kept.append(stmt)
    block[:] = kept


def unpack_tuples(node) -> None:
    """``t = stack_pop(s); s = t[0]; v = t[1]`` -> ``s, v = stack_pop(s)``, where `t` is read nowhere else
    (for values whose length is known: a tuple display, or what ``stack_pop`` and ``stack_pop_rows`` return)."""
    uses: dict[str, int] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            uses[n.id] = uses.get(n.id, 0) + 1
    for block in [getattr(n, f, None) for n in ast.walk(node) for f in ("body", "orelse")]:
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            _unpack_in_block(block, uses)


def _tuple_length(value: ast.expr) -> int | None:
    if isinstance(value, ast.Tuple):
        return len(value.elts)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("stack_pop",
                                                                                              "stack_pop_rows"):
        return 2
    return None


def _unpack_in_block(block: list, uses: dict) -> None:
    i = 0
    while i < len(block):
        stmt = block[i]
        length = _tuple_length(stmt.value) if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Name) else None
        if length is None or uses.get(stmt.targets[0].id) != length:
            i += 1
            continue
        tuple_name = stmt.targets[0].id
        parts: dict[int, int] = {}                     # element -> position of ``x = t[element]`` in the block
        for j in range(i + 1, len(block)):
            later = block[j]
            if isinstance(later, ast.Assign) and len(later.targets) == 1 and isinstance(later.targets[0], ast.Name) \
                    and isinstance(later.value, ast.Subscript) and isinstance(later.value.value, ast.Name) \
                    and later.value.value.id == tuple_name and isinstance(later.value.slice, ast.Constant):
                parts[later.value.slice.value] = j
        if sorted(parts) != list(range(length)) or not all(_untouched(block, i, j, parts) for j in parts.values()):
            i += 1
            continue
        targets = [block[parts[k]].targets[0] for k in range(length)]
        stmt.targets = [ast.Tuple(targets, ast.Store())]
        for j in sorted(parts.values(), reverse=True):
            del block[j]
        i += 1


def _untouched(block: list, start: int, end: int, parts: dict) -> bool:
    """Is the name assigned at block[end] neither read nor written between block[start] and block[end]?"""
    name = block[end].targets[0].id
    between = [s for k, s in enumerate(block[start + 1:end], start + 1) if k not in parts.values()]
    return all(name not in names_read([s]) and name not in {n.id for n in ast.walk(s) if isinstance(n, ast.Name)
                                                          and isinstance(n.ctx, ast.Store)} for s in between)


__all__ = ["drop_dead_tangents", "unpack_tuples"]
