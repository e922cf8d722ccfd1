"""Part of stage 5: arithmetic on numbers written as one expression, as a person writes it.

Rules give one statement per contribution: a loop's backward trip on a float
reads ``dprod = dy; dy = dy * 0.5; dx += dprod * s; dy += dprod * c``, where a
hand-written adjoint has two lines. On numbers (`numbers.number_names`:
never arrays, so nothing is changed in place and a copy is the same value)
three rewrites give the same floating-point result, bit for bit, since each
leaves every operation and the order of its operands as they were:

- a binding of a number read once, by the next statement that reads or binds
  the name, is written where it is read: ``d = d * 0.5; ...; d += e`` ->
  ``d = d * 0.5 + e`` (Python evaluates ``(d * 0.5) + e``, what the two
  statements computed), ``t = 0.1 * y; d += g * t`` -> ``d += g * (0.1 * y)``;
- a copy of a number, ``t = d``, reads ``d`` itself wherever it is read
  before ``d`` is bound again;
- ``d += e`` on a number is ``d = d + e`` (it has no in-place form), so that a
  contribution before it can be merged into it.

An expression moves only past statements that bind none of the names it reads,
and only where the value it is read into is not needed after (backward
liveness); a name the user wrote, or one that stays, keeps its binding unless
the statement reading it binds it again. Evaluating such an expression has no
effect but its value: arithmetic, ``math`` functions and NumPy ufuncs of numbers.

    >>> fn = ast.parse('''
    ... def f(x, y, dy):
    ...     dprod = dy
    ...     dy = dy * 0.5
    ...     dx = dprod * y
    ...     dy += dprod * x
    ...     return dx, dy''').body[0]
    >>> print(ast.unparse(scalar_expressions(fn, {"x", "y", "dy"}, temporary={"dprod"})))
    def f(x, y, dy):
        dx = dy * y
        dy = dy * 0.5 + dy * x
        return (dx, dy)
"""
from __future__ import annotations

import ast

from ..ir.syntax import assigned_name, keep_origin, origin_of
from ..ir.trees import Transformer, copy_tree, walk
from .numbers import is_pure_number, number_names

SIMPLE = (ast.Assign, ast.AugAssign, ast.Expr, ast.Return, ast.Pass)
COMPOUND = (ast.If, ast.While, ast.For)


def scalar_expressions(fn: ast.FunctionDef, inputs: set[str], temporary: set[str] = frozenset(),
                       fixed: set[str] = frozenset()) -> ast.FunctionDef:
    """Apply the rewrites above to `fn` in place (`inputs`: names holding numbers on entry; `temporary`: names
    that may disappear; `fixed`: names that must stay); returns it."""
    if any(isinstance(n, ast.stmt) and not isinstance(n, SIMPLE + COMPOUND + (ast.Break,)) and n is not fn
           or isinstance(n, (ast.While, ast.For)) and n.orelse for n in walk(fn)):
        return fn
    numbers = number_names(fn, set(inputs))
    if not numbers:
        return fn
    live = _Liveness()
    live.block(fn.body, set(), set())
    rewrite = _Rewrite(numbers, live.after, set(temporary) - set(fixed))
    for block in _blocks(fn.body):
        rewrite.block(block)
    return fn


def _blocks(block: list):
    yield block
    for stmt in block:
        if isinstance(stmt, COMPOUND):
            yield from _blocks(stmt.body)
            yield from _blocks(stmt.orelse)


def _reads(node) -> list:
    """The names `node` reads, once per read (an augmented assignment reads its target)."""
    found = [n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    for n in walk(node):
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            found.append(n.target.id)
    return found


def _binds(node) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}



def _line(stmt):
    where = origin_of(stmt)
    return None if where is None else (where.filename, where.line)


def _value(stmt) -> ast.expr:
    """What a simple assignment binds its name to (``d op= e``: ``d op e``, on numbers)."""
    if isinstance(stmt, ast.AugAssign):
        return ast.BinOp(ast.Name(stmt.target.id, ast.Load()), stmt.op, stmt.value)
    return stmt.value


def _as_assignment(stmt) -> ast.stmt:
    """``d op= e`` on a number as ``d = d op e``, keeping its line and note."""
    if not isinstance(stmt, ast.AugAssign):
        return stmt
    new = ast.copy_location(ast.Assign([ast.Name(stmt.target.id, ast.Store())], _value(stmt)), stmt)
    for attribute in ("origin", "note"):
        if hasattr(stmt, attribute):
            setattr(new, attribute, getattr(stmt, attribute))
    return new


class _Rewrite:
    def __init__(self, numbers: set[str], live_after: dict, temporary: set[str]):
        self.numbers, self.live_after, self.temporary = numbers, live_after, temporary

    def block(self, block: list) -> None:
        i = 0
        while i < len(block):
            if self.inline(block, i) or self.propagate(block, i):
                i = max(i - 1, 0)               # what it was read into may now be read once itself
            else:
                i += 1

    def _later(self, block, i, name):
        """The index of the first statement after `i` reading or binding `name`, or None."""
        for j in range(i + 1, len(block)):
            if name in _reads(block[j]) or name in _binds(block[j]):
                return j
        return None

    def inline(self, block: list, i: int) -> bool:
        """A number bound at `i` and read once, by the next statement that reads or binds its name."""
        stmt = block[i]
        name = assigned_name(stmt)
        if name is None:
            return False
        value = _value(stmt)
        if not is_pure_number(value, self.numbers):
            return False
        j = self._later(block, i, name)
        if j is None:
            return False
        reader = block[j]
        if not isinstance(reader, SIMPLE) or _reads(reader).count(name) != 1:
            return False
        if assigned_name(reader) == name:             # (a line of the user's is not merged into another)
            if name not in self.temporary and None not in (_line(stmt), _line(reader)) \
                    and _line(stmt) != _line(reader):
                return False
        elif name not in self.temporary or name in self.live_after[id(reader)]:
            return False
        moved = set(_reads(value))
        if any(_binds(block[k]) & moved for k in range(i + 1, j)):
            return False
        if assigned_name(reader) == name:
            reader = _as_assignment(reader)
        replaced = _Replace(name, value)
        reader.value = replaced.visit(reader.value)
        if not replaced.done:
            return False
        self._moved(block[i + 1:j], moved)
        self.live_after[id(reader)] = self.live_after.get(id(block[j]), set())
        keep_origin(reader, stmt)
        block[j] = reader
        del block[i]
        return True

    def propagate(self, block: list, i: int) -> bool:
        """A copy ``t = d`` of a number: its reads read ``d`` until ``d`` is bound again."""
        stmt = block[i]
        name = assigned_name(stmt)
        if not (isinstance(stmt, ast.Assign) and name in self.temporary and isinstance(stmt.value, ast.Name)
                and stmt.value.id in self.numbers and stmt.value.id != name):
            return False
        source = stmt.value.id
        readers = []
        for j in range(i + 1, len(block)):
            later = block[j]
            if name in _reads(later):
                if not isinstance(later, SIMPLE):
                    return False
                readers.append(j)
            if ({name, source} & _binds(later)):
                break
        if not readers:
            return False
        last = readers[-1]
        if name in self.live_after[id(block[last])] and name not in _binds(block[last]) \
                or any({name, source} & _binds(block[k]) for k in range(i + 1, last)):
            return False
        for j in readers:
            reader = _as_assignment(block[j]) if assigned_name(block[j]) == name else block[j]
            self.live_after[id(reader)] = self.live_after.get(id(block[j]), set())
            _Rename(name, source).visit(reader)
            block[j] = reader
        self._moved(block[i + 1:last], {source})
        keep_origin(block[readers[0]], stmt)
        del block[i]
        return True

    def _moved(self, between: list, names: set) -> None:
        """`names` are now read after the statements `between` (and those inside them)."""
        for stmt in between:
            for node in walk(stmt):
                if isinstance(node, ast.stmt):
                    self.live_after.setdefault(id(node), set()).update(names)


class _Replace(Transformer):
    """The one read of `name` replaced by (a copy of) `value`."""

    def __init__(self, name: str, value: ast.expr):
        self.name, self.value, self.done = name, value, False

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, ast.Load) and not self.done:
            self.done = True
            return copy_tree(self.value)
        return node

    def visit_BoolOp(self, node):             # (a read there may not be evaluated: left alone)
        return node

    def visit_IfExp(self, node):
        return node


class _Rename(Transformer):
    def __init__(self, name: str, source: str):
        self.name, self.source = name, source

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            node.id = self.source
        return node


def live_after(fn: ast.FunctionDef) -> dict:
    """The names live after each statement of `fn` (statement id -> names), by backward liveness."""
    live = _Liveness()
    live.block(fn.body, set(), set())
    return live.after


class _Liveness:
    """Backward liveness over structured code: `after` maps each statement (by id) to the names live after it."""

    def __init__(self):
        self.after: dict[int, set] = {}

    def block(self, stmts, live: set, loop_exit: set) -> set:
        for stmt in reversed(stmts):
            live = self.stmt(stmt, live, loop_exit)
        return live

    def stmt(self, stmt, live: set, loop_exit: set) -> set:
        known = self.after.get(id(stmt))         # (`live` is a set of this statement's own: kept, not copied)
        self.after[id(stmt)] = live if known is None else known | live
        if isinstance(stmt, ast.If):
            return set(_reads(stmt.test)) | self.block(stmt.body, set(live), loop_exit) \
                | self.block(stmt.orelse, set(live), loop_exit)
        if isinstance(stmt, (ast.While, ast.For)):
            header = set(_reads(stmt.test if isinstance(stmt, ast.While) else stmt.iter))
            target = _binds(stmt.target) if isinstance(stmt, ast.For) else set()
            head = set(live) | header
            while True:
                inner = self.block(stmt.body, set(head), live)
                self.block(stmt.orelse, set(live), loop_exit)
                new_head = set(live) | header | (inner - target) | head
                if new_head == head:
                    return head
                head = new_head
        if isinstance(stmt, ast.Break):
            return set(loop_exit)
        if isinstance(stmt, ast.Return):
            return set(_reads(stmt))
        return (live - _binds(stmt)) | set(_reads(stmt))
