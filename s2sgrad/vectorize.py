"""Part of stage 5: the primal-only work of a backward loop, done for all of its trips at once.

A backward loop pops, each trip, values the forward sweep pushed, and often
does arithmetic on them alone before it meets an adjoint: ``1.0 - h * h`` for
the derivative of ``tanh``. That arithmetic depends on no adjoint, so it can be
done for every trip before the loop, on the stacked values as rows of one
array, and the loop then only reads one row per trip:

    for _ in range(trips):                      h_rows = h_stack.pop_rows(trips)
        h = h_stack.pop()               ->      h_terms = 1.0 - h_rows * h_rows
        dz = dh * (1.0 - h * h)                 for h_term in h_terms:
        ...                                         dz = dh * h_term
                                                    ...

A popped value is taken this way when some read of it in the trip is such
elementwise arithmetic (operators and NumPy ufuncs on it and on numbers) or
collects it for a batched weight gradient (``h_rows.append(h)``, which then
becomes the popped rows themselves), and nothing after the loop reads it; its
other reads, if any, read the row the loop is at (``for h, h_term in
zip(h_rows, h_terms):``).
The stacks that qualify are those holding arrays of one known shape every
trip (`row_stacks`, from the reverse stage).
"""
from __future__ import annotations

import ast
import copy

import numpy as np

from .codegen import comment_line
from .syntax import assign, call, name, np_call, origin

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def vectorize(fn: ast.FunctionDef, row_stacks: set[str], names) -> ast.FunctionDef:
    """Move the primal-only arithmetic of `fn`'s backward loops out of them, done on all trips' rows."""
    start = _backward_start(fn.body)
    if not row_stacks or start is None:
        return fn
    for block in _blocks(fn.body, start):
        k = start if block is fn.body else 0
        while k < len(block):
            loop = block[k]
            if _is_backward_loop(loop):
                k += _Trips(loop, block, fn.body[start:], row_stacks, names).rewrite()
            k += 1
    return fn


def _backward_start(body: list) -> int | None:
    """Where the backward sweep starts in `body` (0 in a function that has no sweep comments; None: nowhere)."""
    dumps = [ast.dump(s) if isinstance(s, ast.Expr) else "" for s in body]
    for k, dump in enumerate(dumps):
        if dump == ast.dump(comment_line("backward sweep")):
            return k
    return None if ast.dump(comment_line("forward sweep")) in dumps else 0


def _blocks(block: list, start: int = 0):
    """`block` and every statement list nested in its statements from `start` on, outermost first."""
    yield block
    for stmt in block[start:]:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                yield from _blocks(inner)


def _is_backward_loop(stmt) -> bool:
    """``for _ in range(trips):``, how the reverse stage writes the adjoint of a loop."""
    return isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name) and stmt.target.id == "_" \
        and isinstance(stmt.iter, ast.Call) and isinstance(stmt.iter.func, ast.Name) \
        and stmt.iter.func.id == "range" and len(stmt.iter.args) == 1 and isinstance(stmt.iter.args[0], ast.Name)


def _popped(stmt, row_stacks) -> tuple[str, str] | None:
    """``x = s.pop()`` with s one of `row_stacks`: (x, s)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and isinstance(stmt.value, ast.Call) and not stmt.value.args \
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "pop" \
            and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id in row_stacks:
        return stmt.targets[0].id, stmt.value.func.value.id
    return None


def _appended(stmt) -> tuple[str, str] | None:
    """``rows.append(x)``: (rows, x)."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and len(stmt.value.args) == 1 \
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "append" \
            and isinstance(stmt.value.func.value, ast.Name) and isinstance(stmt.value.args[0], ast.Name):
        return stmt.value.func.value.id, stmt.value.args[0].id
    return None


def _copied(stmt) -> bool:
    """Is `stmt` ``v = p``?"""
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
        and isinstance(stmt.value, ast.Name)


def _elementwise(node, rows: set[str]) -> bool:
    """Is `node` arithmetic of `rows` names and numbers that works row by row on stacked values?"""
    if isinstance(node, ast.Name):
        return node.id in rows
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _ARITHMETIC) and _elementwise(node.left, rows) and _elementwise(node.right, rows)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, (ast.USub, ast.UAdd)) and _elementwise(node.operand, rows)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "np":
        ufunc = getattr(np, node.func.attr, None)
        return isinstance(ufunc, np.ufunc) and ufunc.nin == len(node.args) \
            and all(_elementwise(a, rows) for a in node.args)
    return False


def _loads(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


class _Trips:
    """One backward loop: which popped values go by rows, and the loop rewritten to read them so."""

    def __init__(self, loop: ast.For, block: list, backward: list, row_stacks: set[str], names):
        self.loop, self.block, self.names = loop, block, names
        self.trips = loop.iter.args[0].id
        self.pops = {}                                    # popped name -> its stack
        for stmt in loop.body:
            popped = _popped(stmt, row_stacks)
            if popped:
                self.pops[popped[0]] = popped[1]
        read_elsewhere = set()
        for stmt in backward:
            if stmt is not loop:
                read_elsewhere |= _loads(stmt) if not _contains(stmt, loop) else _loads_outside(stmt, loop)
        self.carried = self.carried_values()           # value -> the loop variable it becomes next trip
        for value, param in self.carried.items():
            self.pops[value] = self.pops[param]
        assigned = [n.id for n in ast.walk(loop) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        self.candidates = {x for x in self.pops if x not in read_elsewhere and assigned.count(x) == 1}
        self.lists = self.collecting_lists()

    def carried_values(self) -> dict[str, str]:
        """``v = s.pop()`` before the loop and ``v = p`` ending its trips, p popped from s: {v: p}.
        (The reverse stage writes a value one trip ends with and the next starts with so, see
        ``Reverse.carried_to_next_trip``.)"""
        popped_before = {_popped(s, set(self.pops.values())) for s in self.block[:self.block.index(self.loop)]}
        carried = {}
        for last in reversed(self.loop.body):
            if not (_copied(last) and last.value.id in self.pops):
                break
            value, param = last.targets[0].id, last.value.id
            if (value, self.pops[param]) in popped_before:
                carried[value] = param
        return carried

    def collecting_lists(self) -> dict[str, str]:
        """Popped name -> the list collecting it for a batched weight gradient (made before, stacked after)."""
        lists = {}
        for stmt in self.loop.body:
            appended = _appended(stmt)
            if appended and appended[1] in self.pops and self.made_and_stacked(appended[0]):
                lists.setdefault(appended[1], appended[0])
        return lists

    def made_and_stacked(self, rows: str) -> bool:
        return any(ast.dump(s) == ast.dump(assign(rows, ast.List([], ast.Load()))) for s in self.block) \
            and any(ast.dump(s) == ast.dump(assign(rows, np_call("array", name(rows)))) for s in self.block)

    def terms(self, rows: set[str]) -> tuple[list, set[str]]:
        """The largest elementwise expressions of `rows` in the trip, and the names read otherwise."""
        found, other = [], set()

        def visit(node, top: bool):
            if isinstance(node, ast.expr) and not isinstance(node, ast.Name) and top and _loads(node) & rows \
                    and _elementwise(node, rows):
                found.append(node)
                return
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                other.add(node.id)
            for child in ast.iter_child_nodes(node):
                visit(child, top)

        for stmt in self.loop.body:
            if self.drop(stmt, rows):
                continue
            visit(stmt, top=not isinstance(stmt, (ast.If, ast.For, ast.While)))
        return found, other

    def rewrite(self) -> int:
        """Rewrite the loop if any popped value goes by rows; the number of statements put before it."""
        rows = set(self.candidates)
        while True:
            found, other = self.terms(rows)
            useful = set().union(*(_loads(term) for term in found)) & rows | rows & set(self.lists)
            kept = rows & useful
            for value, param in self.carried.items():    # a carried value and its variable go together
                both = {value, param}
                kept = kept | both if both <= rows and both & useful else kept - both
            if kept == rows:
                break
            rows = kept
        if not rows:
            return 0
        iterated_rows = [x for x in self.pops if x in rows and x in other]       # read as they are, too
        before, row_names = [], {}
        at = getattr(self.loop, "origin", None)
        for x in [x for x in self.pops if x in rows]:
            row_names[x] = self.lists.get(x) or self.names.fresh(f"{x}_rows")
        for x in [x for x in self.pops if x in rows and x not in self.carried]:
            if x in self.carried.values():                # rows of x, and one more: the loop's final value
                stack = self.pops[x]
                both = self.names.fresh(f"{stack}_rows")
                value = next(v for v, p in self.carried.items() if p == x)
                before += [origin(assign(both, _pop_rows(stack, ast.BinOp(name(self.trips), ast.Add(),
                                                                          ast.Constant(1)))), at),
                           assign(row_names[value], _rows(both, None, -1)),
                           assign(row_names[x], _rows(both, 1, None))]
            else:
                before.append(origin(assign(row_names[x], _pop_rows(self.pops[x], name(self.trips))), at))
        iterated = {}                                     # term (dumped) -> (per-trip name, rows name)
        for term in found:
            key = ast.dump(term)
            if key not in iterated:
                first = sorted(_loads(term) & rows)[0]
                trip_name = self.names.fresh(f"{first}_term")
                iterated[key] = trip_name, self.names.fresh(f"{first}_terms")
                stacked = _Rename(row_names).visit(copy.deepcopy(term))
                before.append(origin(assign(iterated[key][1], stacked), self.origin_of(term)))
        self.loop.body = [self.replace(s, rows, iterated) for s in self.loop.body if not self.drop(s, rows)]
        self.loop.body = self.loop.body or [ast.Pass()]
        if iterated or iterated_rows:
            trip_names = iterated_rows + [name for name, _ in iterated.values()]
            stacked_names = [row_names[x] for x in iterated_rows] + [stacked for _, stacked in iterated.values()]
            self.loop.target = ast.Name(trip_names[0], ast.Store()) if len(trip_names) == 1 else \
                ast.Tuple([ast.Name(n, ast.Store()) for n in trip_names], ast.Store())
            self.loop.iter = name(stacked_names[0]) if len(stacked_names) == 1 else \
                call("zip", *[name(n) for n in stacked_names])
        collected = {self.lists[x] for x in rows if x in self.lists}
        final_pops = {(v, self.pops[v]) for v in self.carried if v in rows}
        self.block[:] = [s for s in self.block if not self.list_bookkeeping(s, collected)
                         and _popped(s, self.pops.values()) not in final_pops]
        at = self.block.index(self.loop)
        self.block[at:at] = before
        return len(before)

    def origin_of(self, term) -> object:
        for stmt in self.loop.body:
            if any(node is term for node in ast.walk(stmt)):
                return getattr(stmt, "origin", None)
        return None

    def drop(self, stmt, rows) -> bool:
        """Is `stmt` a pop, a collecting append or a carry that popping `rows` before the loop replaces?"""
        popped, appended = _popped(stmt, self.pops.values()), _appended(stmt)
        carry = _copied(stmt) and stmt.targets[0].id in rows and self.carried.get(stmt.targets[0].id) == stmt.value.id
        return bool(popped and popped[0] in rows or appended and appended[1] in rows
                    and self.lists.get(appended[1]) == appended[0] or carry)

    @staticmethod
    def replace(stmt, rows, iterated):
        class Terms(ast.NodeTransformer):
            def visit(self, node):
                if isinstance(node, ast.expr) and ast.dump(node) in iterated and _loads(node) & rows:
                    return ast.copy_location(name(iterated[ast.dump(node)][0]), node)
                return super().visit(node)
        return Terms().visit(stmt)

    def list_bookkeeping(self, stmt, collected: set[str]) -> bool:
        """``rows = []`` or ``rows = np.array(rows)`` of a list the popped rows now replace."""
        return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and stmt.targets[0].id in collected and (
                isinstance(stmt.value, ast.List) or ast.dump(stmt.value) == ast.dump(
                    np_call("array", name(stmt.targets[0].id))))


def _pop_rows(stack: str, count: ast.expr) -> ast.Call:
    return ast.Call(ast.Attribute(name(stack), "pop_rows", ast.Load()), [count], [])


def _rows(array: str, start, stop) -> ast.Subscript:
    """``array[start:stop]``."""
    bound = [None if b is None else ast.Constant(b) if b >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-b))
             for b in (start, stop)]
    return ast.Subscript(name(array), ast.Slice(*bound), ast.Load())


class _Rename(ast.NodeTransformer):
    def __init__(self, renames: dict):
        self.renames = renames

    def visit_Name(self, node):
        return ast.copy_location(name(self.renames[node.id]), node) if node.id in self.renames else node


def _contains(stmt, inner) -> bool:
    return any(node is inner for node in ast.walk(stmt))


def _loads_outside(stmt, inner) -> set[str]:
    """Names `stmt` reads other than inside the statement `inner` nested in it."""
    reads = set()

    def visit(node):
        if node is inner:
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            reads.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(stmt)
    return reads
