"""Part of stage 5: give a value and its copies one name where their lifetimes do not overlap.

Single-assignment lowering and loop plumbing leave copies such as ``y_1 = y``
and ``y_1, i_1 = (y_2, i_2)``. Where the two names are never live at the same
time, they are merged (the function's own parameters and the shortest,
unversioned name win) and the copy disappears:

    y_1 = x                     y = x
    while y_1 < 5.0:     ->     while y < 5.0:
        y_2 = y_1 * 2               y = y * 2
        y_1 = y_2
"""
from __future__ import annotations

import ast

from ..ir.names import RESERVED, base_name
from ..ir.syntax import names_read, origin, origin_of
from ..ir.trees import walk


def _writes(node) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _copies(stmt) -> list[tuple[str, str]]:
    """The (target, source) name pairs a statement copies: ``a = b`` or ``a, c = (b, d)``."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return []
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, ast.Name) and isinstance(value, ast.Name):
        return [(target.id, value.id)]
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        return [(t.id, v.id) for t, v in zip(target.elts, value.elts)
                if isinstance(t, ast.Name) and isinstance(v, ast.Name)]
    return []


class _Liveness:
    """Backward liveness over structured code, recording interference between names (between the
    `candidates` only, if given: those whose interference is asked)."""

    def __init__(self, candidates: set | None = None):
        self.edges: dict[str, set] = {}          # name -> names it interferes with (one direction or both)
        self.candidates = candidates
        self.unread: dict[int, bool] = {}         # id of a copy ``x = y`` -> nothing reads that x (last visit)

    def block(self, stmts, live: set, loop_exit: set) -> set:
        for stmt in reversed(stmts):
            live = self.stmt(stmt, live, loop_exit)
        return live

    def interfere(self, stmt, defined: set, live_out: set):
        if self.candidates is not None:
            defined = defined & self.candidates
            if not defined:
                return
            live_out = live_out & self.candidates
        copies = dict(_copies(stmt))
        for w in defined:
            others = live_out - {w, copies.get(w)}
            if others:
                self.edges.setdefault(w, set()).update(others)

    def interfering(self, a: str, b: str) -> bool:
        return b in self.edges.get(a, ()) or a in self.edges.get(b, ())

    def stmt(self, stmt, live: set, loop_exit: set) -> set:
        if isinstance(stmt, ast.If):
            return names_read(stmt.test) | self.block(stmt.body, set(live), loop_exit) | \
                self.block(stmt.orelse, set(live), loop_exit)
        if isinstance(stmt, (ast.While, ast.For)):
            header_reads = names_read(stmt.test) if isinstance(stmt, ast.While) else names_read(stmt.iter)
            target = _writes(stmt.target) if isinstance(stmt, ast.For) else set()
            head = set(live) | header_reads
            while True:
                inner = self.block(stmt.body, set(head), live)
                self.interfere(stmt, target, inner | head)
                new_head = set(live) | header_reads | (inner - target)
                if new_head == head:
                    return head
                head = new_head
        if isinstance(stmt, ast.Break):
            return set(loop_exit)
        if isinstance(stmt, ast.Return):
            return names_read(stmt)
        defined = _writes(stmt)
        if _is_plain_copy(stmt):
            self.unread[id(stmt)] = stmt.targets[0].id not in live
        if isinstance(stmt, ast.AugAssign):
            self.interfere(stmt, defined, live)
            return live | names_read(stmt) | defined
        self.interfere(stmt, defined, live)
        return (live - defined) | names_read(stmt)


def _is_plain_copy(stmt) -> bool:
    """``x = y`` or ``x = 1.0``: an assignment of a name or a constant to a name, which does nothing else."""
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
        and isinstance(stmt.value, (ast.Name, ast.Constant))


_STRUCTURED = (ast.Assign, ast.AugAssign, ast.Expr, ast.If, ast.While, ast.For, ast.Break, ast.Return, ast.Pass)


def drop_unread_copies(fn: ast.FunctionDef) -> None:
    """Leave out copies whose value nothing reads (``W = UNBOUND`` before a loop that binds W first thing),
    where the function is made of the statements whose liveness `_Liveness` follows."""
    if not all(isinstance(stmt, _STRUCTURED) for node in fn.body for stmt in walk(node) if isinstance(stmt, ast.stmt)):
        return
    liveness = _Liveness()
    liveness.block(fn.body, set(), set())
    unread = {key for key, dead in liveness.unread.items() if dead}
    if not unread:
        return

    def drop(block: list) -> list:
        kept = []
        for stmt in block:
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner:
                    setattr(stmt, field, drop(inner) or ([ast.Pass()] if field == "body" else []))
            if id(stmt) not in unread:
                kept.append(stmt)
        return kept
    fn.body = drop(fn.body)


def live_in(stmts: list) -> set[str]:
    """The names `stmts` may read before assigning them."""
    return _Liveness().block(stmts, set(), set())


def _all_copies(stmts):
    for stmt in stmts:
        yield from _copies(stmt)
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from _all_copies(inner)


def _preference(name: str, params: set, returned: set = frozenset(), temporary: set = frozenset()) -> tuple:
    """Which name a merged group keeps: a parameter's, a returned one's, a user variable's (``dc`` rather
    than ``dprod``), an unversioned one, the shortest."""
    return (name not in params, name not in returned, name in temporary, base_name(name) != name,
            len(name), name)


def coalesce(fn: ast.FunctionDef, fixed: set = frozenset(), temporary: set = frozenset()) -> ast.FunctionDef:
    """Merge copies whose names never interfere; `fixed` names are never renamed.

    Two of the user's own variables (names not in `temporary`) are merged only if they
    are versions of one variable: ``y = x`` keeps both names, ``y_1 = y`` does not.
    """
    params = {a.arg for a in fn.args.args}
    nodes = list(walk(fn))                        # (walked once: below, only names are renamed)
    returned = {n.id for stmt in nodes if isinstance(stmt, ast.Return) and stmt.value is not None
                for n in walk(stmt.value) if isinstance(n, ast.Name)}
    copies = sorted(_all_copies(fn.body), key=lambda pair: base_name(pair[0]) != base_name(pair[1]))
    liveness = _Liveness({name for pair in copies for name in pair})      # (only names of copies are merged)
    liveness.block(fn.body, set(), set())
    classes = {}                                  # name -> representative

    def find(name):
        while classes.get(name, name) != name:
            name = classes[name]
        return name

    members: dict[str, set] = {}
    stored = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for target, source in copies:
        if source not in stored and source not in params:       # a global: another name would make it local
            continue
        a, b = find(target), find(source)
        if a == b:
            continue
        group_a, group_b = members.get(a, {a}), members.get(b, {b})
        if any(liveness.interfering(x, y) for x in group_a for y in group_b):
            continue
        named_a = {base_name(n) for n in group_a if n not in temporary}
        named_b = {base_name(n) for n in group_b if n not in temporary}
        if named_a and named_b and named_a != named_b:
            continue
        pinned = [n for n in group_a | group_b if n in params or n in fixed]
        if len(pinned) > 1:
            continue
        rep = pinned[0] if pinned else min(group_a | group_b,
                                           key=lambda n: _preference(n, params, returned, temporary))
        for n in group_a | group_b:
            classes[n] = rep
        classes[rep] = rep
        members[rep] = group_a | group_b
    renames = {n: find(n) for n in list(classes) if find(n) != n}
    representatives = {find(n) for n in stored | set(classes)}
    renames.update(_unversioned(fn, nodes, representatives - params - set(fixed), renames))
    if renames:
        for node in nodes:
            if isinstance(node, ast.Name) and node.id in renames:
                node.id = renames[node.id]
        _drop_self_copies(fn)
    drop_unread_copies(fn)
    return fn


def _drop_self_copies(node) -> None:
    for field in ("body", "orelse"):
        block = getattr(node, field, None)
        if not isinstance(block, list):
            continue
        kept = []
        for stmt in block:
            _drop_self_copies(stmt)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
                if isinstance(target, ast.Name) and isinstance(value, ast.Name) and target.id == value.id:
                    continue
                if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                    pairs = [(t, v) for t, v in zip(target.elts, value.elts)
                             if not (isinstance(t, ast.Name) and isinstance(v, ast.Name) and t.id == v.id)]
                    if not pairs:
                        continue
                    if len(pairs) == 1:
                        stmt = origin(ast.Assign([pairs[0][0]], pairs[0][1]), origin_of(stmt))
                    else:
                        stmt.targets[0].elts = [t for t, _ in pairs]
                        stmt.value.elts = [v for _, v in pairs]
            kept.append(stmt)
        if block and not kept and field == "body":
            kept = [ast.Pass()]
        setattr(node, field, kept)


def _unversioned(fn, nodes: list, representatives: set, renames: dict) -> dict:
    """``dh_1`` -> ``dh`` where no other name in the function (whose `nodes` these are) is ``dh``."""
    used = {n.id for n in nodes if isinstance(n, ast.Name)} | {a.arg for a in fn.args.args}
    used = {renames.get(n, n) for n in used}
    out = {}
    for rep in sorted(representatives):
        base = base_name(rep)
        if base != rep and base not in used and base.isidentifier() and base not in RESERVED:
            used.add(base)
            out[rep] = base
            for n, r in renames.items():
                if r == rep:
                    renames[n] = base
    return out
