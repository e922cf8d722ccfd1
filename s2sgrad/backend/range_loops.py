"""A ``while`` over a counter written as the ``for`` over a ``range`` it came from.

The front end writes ``for t in range(n)`` as a ``while`` over a hidden counter, incremented first
(`frontend.desugar`); once the loop plumbing is gone (`coalesce`), such a loop of a generated function
is printed as the ``for`` again, with the counter's final value (the trip count) assigned after it where
something reads it, or, where it is the only value of its name, read as the stop itself:

    >>> import ast
    >>> code = '''
    ... def f(xs, h):
    ...     n = len(xs)
    ...     trips = 0
    ...     while trips < n:
    ...         t = trips
    ...         trips = trips + 1
    ...         h = h * xs[t]
    ...     return h, trips'''
    >>> print(ast.unparse(ast.fix_missing_locations(range_loops(ast.parse(code).body[0]))))
    def f(xs, h):
        n = len(xs)
        for t in range(n):
            h = h * xs[t]
        return (h, n)

Only a loop that is certainly that: the counter starts at 0 right before the loop, the test is
``counter < stop`` with a stop that is a length, a size along an axis or an integer constant (so never negative, and an
integer: the trip count is the stop itself) the loop does not change; the body adds 1 to the counter at
its top level, reads it only before that, and has no ``break`` or ``continue``.
"""
from __future__ import annotations

import ast
import copy

from ..ir.names import base_name
from ..ir.syntax import names_read, origin, origin_of
from ..ir.trees import copy_tree, walk


def range_loops(fn: ast.FunctionDef) -> ast.FunctionDef:
    """Every such loop of `fn` written as ``for t in range(stop)``."""
    lengths = _lengths(fn)
    counts = []                     # the trip counts assigned after the loops rewritten (``trips = n``)
    def rewrite(node):                 # inner loops first: rewriting a loop makes a new node of it
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                for stmt in block:
                    rewrite(stmt)
                if any(isinstance(s, ast.While) for s in block):
                    setattr(node, field, _block(fn, block, lengths, counts))
    rewrite(fn)
    _read_stops(fn, counts)
    return fn


def _block(fn: ast.FunctionDef, block: list, lengths: set, counts: list) -> list:
    out, count = [], None           # count: the trip count assigned after the loop just rewritten, and its reads
    for stmt in block:
        if count is not None and _is_copy_of(stmt, count[0].targets[0].id):      # trips = t: trips = n
            stmt = copy.copy(stmt)
            stmt.value = copy.deepcopy(count[0].value)
            counts.append(stmt)
            if count[1] == 1:
                out.remove(count[0])
                counts.remove(count[0])
        count = None
        rewritten = _loop(fn, out, stmt, lengths) if isinstance(stmt, ast.While) else None
        if rewritten is not None:
            out += rewritten[0]
            if rewritten[1]:
                count = (rewritten[0][-1], rewritten[1])
                counts.append(count[0])
        else:
            out.append(stmt)
    return out


def _read_stops(fn: ast.FunctionDef, counts: list) -> None:
    """A trip count of a loop at the function's top level that is the only value of its name: its reads read
    the stop (a length or a constant, assigned once) instead, and the assignment goes."""
    stored: dict[str, int] = {}
    for n in walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stored[n.id] = stored.get(n.id, 0) + 1
    top = {id(stmt) for stmt in fn.body}         # (inside a loop, a later trip's stop may not be this count)
    dropped = {id(stmt) for stmt in counts if id(stmt) in top and stored.get(stmt.targets[0].id) == 1
               and (isinstance(stmt.value, ast.Constant) or stored.get(stmt.value.id) == 1)}
    if not dropped:
        return
    values = {stmt.targets[0].id: stmt.value for stmt in counts if id(stmt) in dropped}
    for node in walk(fn):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(id(s) in dropped for s in block):
                setattr(node, field, [s for s in block if id(s) not in dropped])
    for node in walk(fn):
        for field, value in ast.iter_fields(node):
            if isinstance(value, ast.Name) and isinstance(value.ctx, ast.Load) and value.id in values:
                setattr(node, field, copy.deepcopy(values[value.id]))
            elif isinstance(value, list):
                for k, item in enumerate(value):
                    if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Load) and item.id in values:
                        value[k] = copy.deepcopy(values[item.id])


def _loop(fn: ast.FunctionDef, before: list, loop: ast.While, lengths: set) -> tuple[list, int] | None:
    """The statements replacing `loop` (its counter's ``= 0`` dropped from `before`) and how many times the
    code after it reads the counter, or None."""
    test = loop.test
    if loop.orelse or not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Lt)
                           and isinstance(test.left, ast.Name)):
        return None
    counter, stop = test.left.id, test.comparators[0]
    known_stop = isinstance(stop, ast.Constant) and type(stop.value) is int and stop.value >= 0 \
        or isinstance(stop, ast.Name) and stop.id in lengths
    if not known_stop or not before or not _is_assign(before[-1], counter, 0):
        return None
    body = loop.body
    increments = [k for k, s in enumerate(body) if _is_increment(s, counter)]
    if len(increments) != 1 or any(isinstance(n, (ast.Break, ast.Continue)) for n in walk(ast.Module(body, []))):
        return None
    k = increments[0]
    written = _written(body[:k] + body[k + 1:])
    if counter in written or isinstance(stop, ast.Name) and stop.id in written \
            or counter in names_read(body[k + 1:]):
        return None
    target, kept = counter, body[:k] + body[k + 1:]
    copies = [s for s in body[:k] if _is_copy_of(s, counter)]
    reads = [n for s in body[:k] for n in walk(s) if isinstance(n, ast.Name) and n.id == counter
             and isinstance(n.ctx, ast.Load)]
    if len(copies) == 1 and len(reads) == 1 and copies[0].targets[0].id not in _written(
            [s for s in kept if s is not copies[0]]):
        target = copies[0].targets[0].id
        kept = [s for s in kept if s is not copies[0]]
    located = origin_of(copies[0]) if target != counter else origin_of(loop)
    if target == counter and base_name(counter) == "trips":      # the trip counter itself: named as an index
        target = _fresh(fn, "t")
        kept = _renamed(kept, counter, target)
    del before[-1]
    for_loop = origin(ast.For(ast.Name(target, ast.Store()), ast.Call(ast.Name("range", ast.Load()), [stop], []),
                              kept or [ast.Pass()], [], None), located)
    inside = {id(n) for n in walk(loop)}
    reads = sum(isinstance(n, ast.Name) and n.id == counter and isinstance(n.ctx, ast.Load) and id(n) not in inside
                for n in walk(fn))
    if not reads:
        return [for_loop], 0
    return [for_loop, ast.Assign([ast.Name(counter, ast.Store())], stop)], reads     # the trip count, read later


def _fresh(fn: ast.FunctionDef, hint: str) -> str:
    """`hint`, or `hint_1`, `hint_2`, ...: the first that names nothing in `fn`."""
    taken = {n.id for n in walk(fn) if isinstance(n, ast.Name)} | {a.arg for a in walk(fn) if isinstance(a, ast.arg)}
    name, k = hint, 0
    while name in taken:
        k += 1
        name = f"{hint}_{k}"
    return name


def _renamed(block: list, old: str, new: str) -> list:
    """Copies of the statements of `block` with the name `old` read as `new`."""
    block = copy_tree(block)
    for stmt in block:
        for n in walk(stmt):
            if isinstance(n, ast.Name) and n.id == old:
                n.id = new
    return block


def _lengths(fn: ast.FunctionDef) -> set[str]:
    """Names assigned once, to a length or a size along an axis (``len(x)``, ``np.shape(x)[k]``)."""
    values: dict[str, list] = {}
    for node in walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.For)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for n in walk(target):
                    if isinstance(n, ast.Name):
                        values.setdefault(n.id, []).append(node.value if isinstance(node, ast.Assign)
                                                           and target is n else None)
    return {name for name, assigned in values.items() if len(assigned) == 1 and _is_length(assigned[0])}


def _is_length(value) -> bool:
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "len":
        return True
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) and type(value.slice.value) is int:
        shape = value.value
        return isinstance(shape, ast.Call) and isinstance(shape.func, ast.Attribute) and shape.func.attr == "shape" \
            and isinstance(shape.func.value, ast.Name) and shape.func.value.id == "np"
    return False


def _is_assign(stmt, name: str, value) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
        and stmt.targets[0].id == name and isinstance(stmt.value, ast.Constant) and type(stmt.value.value) is int \
        and stmt.value.value == value


def _is_increment(stmt, name: str) -> bool:
    """``name = name + 1``?"""
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
        and stmt.targets[0].id == name and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Add) \
        and isinstance(stmt.value.left, ast.Name) and stmt.value.left.id == name \
        and isinstance(stmt.value.right, ast.Constant) and type(stmt.value.right.value) is int \
        and stmt.value.right.value == 1


def _is_copy_of(stmt, name: str) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
        and isinstance(stmt.value, ast.Name) and stmt.value.id == name


def _written(block: list) -> set[str]:
    """The names `block` binds or changes in place."""
    out = set()
    for stmt in block:
        for n in walk(stmt):
            if isinstance(n, (ast.Name, ast.Subscript, ast.Attribute)) and isinstance(n.ctx, ast.Store):
                root = n
                while isinstance(root, (ast.Subscript, ast.Attribute)):
                    root = root.value
                if isinstance(root, ast.Name):
                    out.add(root.id)
    return out
