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
Arithmetic of such values alone that the trip computes again instead of popping
(recompute_cheap: ``diff = tanh - 0.1 * x``) is done on the rows too, before the
loop (``diff_rows = tanh_rows - 0.1 * x_rows``), and the loop reads its rows.
The stacks that qualify are those holding arrays of one known shape every
trip (`row_stacks`, from the reverse stage). A stack of ``xs[j]`` pushed in
trip j of a loop over an argument ``xs`` is not popped at all: its rows are
``xs[:trips][::-1]``, and the stack goes.

Where the dtypes show it exact (`adjoint_shapes` given: every value real, of at
most 64 bits; rows float64), the terms are computed with one array and the
trip's product with its row is written into that row, as a hand-written
adjoint does; a list collecting those products is then the terms array:

    dz_rows = h_rows * h_rows
    np.subtract(1.0, dz_rows, out=dz_rows)
    for dz in dz_rows:
        dz *= dh
        ...
"""
from __future__ import annotations

import ast
import copy

import numpy as np

from ..ir.primitives import is_elementwise_ufunc
from ..ir.sizes import example
from ..ir.syntax import assign, call, name, names_read, np_call, origin, origin_of
from ..ir.trees import Transformer

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def vectorize(fn: ast.FunctionDef, start: int, trip_loops: list[ast.For], row_stacks: dict, names,
              adjoint_shapes: dict | None = None) -> ast.FunctionDef:
    """Move the primal-only arithmetic of `fn`'s backward loops out of them, done on all trips' rows.

    The backward sweep is ``fn.body[start:]``; `trip_loops` are its loops that run a forward loop's trips
    backward (``for _ in range(trips):``, as the reverse stage writes them). `row_stacks` maps each stack
    that may be popped as rows to its `RowStack` (the shape of a row, its dtype or None, the argument its
    rows come from).
    `adjoint_shapes` (adjoint name -> shape) is given when every value and adjoint is real, of at most
    64 bits: then a trip's product of an adjoint and its row of terms is written into that row."""
    if not row_stacks:
        return fn
    unused = set()
    for block in _blocks(fn.body, start):
        k = start if block is fn.body else 0
        while k < len(block):
            loop = block[k]
            if any(loop is trip_loop for trip_loop in trip_loops):
                trips = _Trips(loop, block, fn.body[start:], row_stacks, names, adjoint_shapes)
                k += trips.rewrite()
                unused |= trips.unused_stacks
            k += 1
    _drop_stacks(fn, unused)
    return fn


def _drop_stacks(fn: ast.FunctionDef, stacks: set[str]) -> None:
    """Remove the stacks nothing pops any more: ``s = Stack()`` and ``s.push(x)``."""
    def used(stmt) -> bool:
        return isinstance(stmt, ast.Assign) and _is_stack(stmt.targets[0], stacks) or isinstance(stmt, ast.Expr) \
            and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
            and stmt.value.func.attr == "push" and _is_stack(stmt.value.func.value, stacks)

    for block in _blocks(fn.body):
        block[:] = [s for s in block if not used(s)]


def _is_stack(node, stacks) -> bool:
    return isinstance(node, ast.Name) and node.id in stacks


def _blocks(block: list, start: int = 0):
    """`block` and every statement list nested in its statements from `start` on, outermost first."""
    yield block
    for stmt in block[start:]:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                yield from _blocks(inner)


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
        return is_elementwise_ufunc(ufunc) and ufunc.nin == len(node.args) \
            and all(_elementwise(a, rows) for a in node.args)
    return False


class _Trips:
    """One backward loop: which popped values go by rows, and the loop rewritten to read them so."""

    def __init__(self, loop: ast.For, block: list, backward: list, row_stacks: dict, names, adjoint_shapes=None):
        self.loop, self.block, self.names, self.backward = loop, block, names, backward
        self.row_stacks, self.adjoint_shapes = row_stacks, adjoint_shapes
        self.unused_stacks: set[str] = set()             # stacks whose values are read from where they came from
        self.trips = loop.iter.args[0]                   # the trip count: ``trips``, ``work.steps``
        self.pops = {}                                    # popped name -> its stack
        for stmt in loop.body:
            popped = _popped(stmt, row_stacks)
            if popped:
                self.pops[popped[0]] = popped[1]
        read_elsewhere = set()
        for stmt in backward:
            if stmt is not loop:
                read_elsewhere |= names_read(stmt) if not _contains(stmt, loop) else _read_after(stmt, loop)
        self.read_elsewhere = read_elsewhere
        self.carried = self.carried_values()           # value -> the loop variable it becomes next trip
        for value, param in self.carried.items():
            self.pops[value] = self.pops[param]
        assigned = [n.id for n in ast.walk(loop) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        self.candidates = {x for x in self.pops if x not in read_elsewhere and assigned.count(x) == 1}
        self.lists = self.collecting_lists()
        self.computed = {}          # name -> its statement in the trip: elementwise arithmetic of popped values
        for stmt in loop.body:      # (and of such names), computed for all trips as rows too
            value = stmt.value if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name) and not isinstance(stmt.value, ast.Name) else None
            rows = self.candidates | set(self.computed)
            if value is not None and stmt.targets[0].id not in read_elsewhere | set(self.pops) \
                    and assigned.count(stmt.targets[0].id) == 1 and names_read(value) & rows \
                    and _elementwise(value, rows):
                self.computed[stmt.targets[0].id] = stmt

    def carried_values(self) -> dict[str, str]:
        """``v = s.pop()`` before the loop and ``v = p`` ending its trips, p popped from s: {v: p}.
        (The reverse stage writes a value one trip ends with and the next starts with so, see
        ``Recording.carried_to_next_trip``.)"""
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
            if isinstance(node, ast.expr) and not isinstance(node, ast.Name) and top and names_read(node) & rows \
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
        rows = set(self.candidates) | set(self.computed)
        while True:
            found, other = self.terms(rows)
            useful = set().union(*(names_read(term) for term in found), *(
                names_read(self.computed[v].value) | {v} for v in rows & set(self.computed))) & rows
            kept = rows & (useful | set(self.lists))
            for v, stmt in self.computed.items():        # computed as rows from rows only
                if not names_read(stmt.value) <= kept:
                    kept.discard(v)
            for value, param in self.carried.items():    # a carried value and its variable go together
                both = {value, param}
                kept = kept | both if both <= rows and both & useful else kept - both
            if kept == rows:
                break
            rows = kept
        if not rows:
            return 0
        iterated_rows = [x for x in [*self.pops, *self.computed] if x in rows and x in other]   # read as they are
        before, row_names = [], {}
        at = origin_of(self.loop)
        for x in [x for x in [*self.pops, *self.computed] if x in rows]:
            row_names[x] = self.lists.get(x) or self.names.fresh(f"{x}_rows")
        for x in [x for x in self.pops if x in rows and x not in self.carried]:
            if x in self.carried.values():                # rows of x, and one more: the loop's final value
                stack = self.pops[x]
                both = self.names.fresh(f"{stack}_rows")
                value = next(v for v, p in self.carried.items() if p == x)
                before += [origin(assign(both, _pop_rows(stack, ast.BinOp(copy.deepcopy(self.trips), ast.Add(),
                                                                          ast.Constant(1)))), at),
                           assign(row_names[value], _rows(both, None, -1)),
                           assign(row_names[x], _rows(both, 1, None))]
            elif self.row_stacks[self.pops[x]].rows_of:     # A[j] in trip j: the rows of A, last first
                before.append(origin(assign(row_names[x], _first_rows_reversed(
                    self.row_stacks[self.pops[x]].rows_of, copy.deepcopy(self.trips))), at))
                self.unused_stacks.add(self.pops[x])
            else:
                before.append(origin(assign(row_names[x], _pop_rows(self.pops[x], copy.deepcopy(self.trips))), at))
        samples = self.samples(row_names)                # rows name -> an array like its rows, or None
        for v, stmt in self.computed.items():
            if v in rows:
                stacked = _Rename(row_names).visit(copy.deepcopy(stmt.value))
                steps = _in_place(row_names[v], stacked, samples, self.names) \
                    if self.adjoint_shapes is not None else [assign(row_names[v], stacked)]
                before += [origin(s, origin_of(stmt)) for s in steps]
                samples[row_names[v]] = _evaluate(stacked, samples)
        iterated = {}                                     # term (dumped) -> (per-trip name, rows name)
        term_samples = {}                                 # per-trip name -> an array like the terms
        for term in found:
            key = ast.dump(term)
            if key not in iterated:
                first = sorted(names_read(term) & rows)[0]
                trip_name = self.names.fresh(f"{first}_term", temporary=True)
                iterated[key] = trip_name, self.names.fresh(f"{first}_terms")
                stacked = _Rename(row_names).visit(copy.deepcopy(term))
                term_samples[trip_name] = _evaluate(stacked, samples)
                steps = _in_place(iterated[key][1], stacked, samples, self.names) \
                    if self.adjoint_shapes is not None else [assign(iterated[key][1], stacked)]
                before += [origin(s, self.origin_of_term(term)) for s in steps]
        self.loop.body = [self.replace(s, rows, iterated) for s in self.loop.body if not self.drop(s, rows)]
        self.loop.body = self.loop.body or [ast.Pass()]
        if iterated or iterated_rows:
            trip_names = iterated_rows + [name for name, _ in iterated.values()]
            stacked_names = [row_names[x] for x in iterated_rows] + [stacked for _, stacked in iterated.values()]
            counter = self.loop.target if isinstance(self.loop.target, ast.Name) and self.loop.target.id != "_" \
                else None                       # the trip number the body reads (see last_trip)
            self.loop.target = ast.Name(trip_names[0], ast.Store()) if len(trip_names) == 1 else \
                ast.Tuple([ast.Name(n, ast.Store()) for n in trip_names], ast.Store())
            self.loop.iter = name(stacked_names[0]) if len(stacked_names) == 1 else \
                call("zip", *[name(n) for n in stacked_names])
            if counter is not None:
                self.loop.target = ast.Tuple([counter, self.loop.target], ast.Store())
                self.loop.iter = call("enumerate", self.loop.iter)
        collected = {self.lists[x] for x in rows if x in self.lists}
        final_pops = {(v, self.pops[v]) for v in self.carried if v in rows}
        self.block[:] = [s for s in self.block if not self.list_bookkeeping(s, collected)
                         and _popped(s, self.pops.values()) not in final_pops]
        if self.adjoint_shapes is not None:
            for trip_name, terms_name in iterated.values():
                self.write_in_place(trip_name, terms_name, term_samples[trip_name], before)
        at = self.block.index(self.loop)
        self.block[at:at] = before
        return len(before)

    def samples(self, row_names: dict) -> dict:
        """Rows name -> ones shaped and typed like the popped rows (two trips), where the dtype is known."""
        out = {}
        for x, rows_name in row_names.items():
            if x not in self.pops:
                continue
            stack = self.row_stacks[self.pops[x]]
            out[rows_name] = np.ones((2, *example(stack.shape)), stack.dtype) if stack.dtype is not None else None
        return out

    def write_in_place(self, term: str, terms: str, sample, before: list) -> None:
        """The trip's product with its row of `terms` written into that row, and lists collecting it replaced
        by `terms` itself (renamed after the first of them, in `before`, the loop and after it)."""
        if self.write_product_into_row(term, sample):
            renames = self.collect_rows_as_they_are(term, terms)
            for stmt in [*before, self.loop, *self.backward]:
                _Rename(renames).visit(stmt)

    def write_product_into_row(self, term: str, sample) -> bool:
        """``v = a * term`` -> ``term *= a`` and ``v = term``: the trip's row of terms, read nowhere else,
        becomes the product. Exact when the product has the row's shape and float64 dtype (every adjoint is
        real, of at most 64 bits), and nothing after the loop reads v, so only the trip's own row changes."""
        if sample is None or sample.dtype != np.float64 or sample.ndim < 2:
            return False
        reads = [n for s in self.loop.body for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == term]
        products = [k for k, s in enumerate(self.loop.body) if _product_with(s, term)]
        if len(reads) != 1 or len(products) != 1:
            return False
        k = products[0]
        product = self.loop.body[k]
        v = product.targets[0].id
        factor = product.value.left if _is_name(product.value.right, term) else product.value.right
        assigned = [n.id for n in ast.walk(self.loop) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        shape = self.adjoint_shapes.get(v)
        if shape is None or example(shape) != sample.shape[1:] or assigned.count(v) != 1 \
                or _copies_of(v, self.loop.body) & self.read_elsewhere:
            return False
        self.loop.body[k:k + 1] = [origin(ast.AugAssign(ast.Name(term, ast.Store()), ast.Mult(), factor),
                                          origin_of(product)),
                                   assign(v, name(term))]
        return True

    def collect_rows_as_they_are(self, term: str, terms: str) -> dict[str, str]:
        """Lists collecting the trip's row of `terms` (through copies) for a batched weight gradient hold,
        after the loop, exactly the rows of `terms`: ``rows = []``, ``rows.append(v)`` and
        ``rows = np.array(rows)`` go, and `terms` is named `rows` instead."""
        assigned = [n.id for s in self.loop.body for n in ast.walk(s) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Store) and not isinstance(s, ast.AugAssign)]
        copies = _copies_of(term, self.loop.body)
        if term in assigned or any(assigned.count(c) != 1 for c in copies - {term}):
            return {}
        appends = [node.func.value.id for node in ast.walk(self.loop) if isinstance(node, ast.Call)
                   and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
                   and isinstance(node.func.value, ast.Name)]
        lists = []
        for stmt in list(self.loop.body):
            appended = _appended(stmt)
            if appended and appended[1] in copies and self.made_and_stacked(appended[0]) \
                    and appends.count(appended[0]) == 1:
                lists.append(appended[0])
                self.loop.body.remove(stmt)
        if not lists:
            return {}
        self.block[:] = [s for s in self.block if not self.list_bookkeeping(s, set(lists))]
        return {old: lists[0] for old in [terms, *lists[1:]]}

    def origin_of_term(self, term):
        for stmt in self.loop.body:
            if any(node is term for node in ast.walk(stmt)):
                return origin_of(stmt)
        return None

    def drop(self, stmt, rows) -> bool:
        """Is `stmt` a pop, a collecting append, a carry or arithmetic of rows that popping `rows` before the
        loop replaces?"""
        popped, appended = _popped(stmt, self.pops.values()), _appended(stmt)
        carry = _copied(stmt) and stmt.targets[0].id in rows and self.carried.get(stmt.targets[0].id) == stmt.value.id
        computed = isinstance(stmt, ast.Assign) and any(stmt is self.computed.get(v) for v in rows)
        return bool(popped and popped[0] in rows or appended and appended[1] in rows
                    and self.lists.get(appended[1]) == appended[0] or carry or computed)

    @staticmethod
    def replace(stmt, rows, iterated):
        class Terms(Transformer):
            def visit(self, node):
                if isinstance(node, ast.expr) and ast.dump(node) in iterated and names_read(node) & rows:
                    return ast.copy_location(name(iterated[ast.dump(node)][0]), node)
                return super().visit(node)
        return Terms().visit(stmt)

    def list_bookkeeping(self, stmt, collected: set[str]) -> bool:
        """``rows = []`` or ``rows = np.array(rows)`` of a list the popped rows now replace."""
        return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and stmt.targets[0].id in collected and (
                isinstance(stmt.value, ast.List) or ast.dump(stmt.value) == ast.dump(
                    np_call("array", name(stmt.targets[0].id))))


def _is_name(node, id_: str) -> bool:
    return isinstance(node, ast.Name) and node.id == id_


def _product_with(stmt, term: str) -> bool:
    """Is `stmt` ``v = a * term`` or ``v = term * a``?"""
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
        and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Mult) \
        and (_is_name(stmt.value.left, term) or _is_name(stmt.value.right, term))


def _copies_of(v: str, body: list) -> set[str]:
    """`v` and the names the statements of `body` copy it to (``u = v``), transitively."""
    names = {v}
    for stmt in body * 2:                         # twice: a copy may come before what it copies, across trips
        if _copied(stmt) and stmt.value.id in names:
            names.add(stmt.targets[0].id)
    return names


def _evaluate(expr: ast.expr, samples: dict):
    """`expr` on the sample rows (NumPy decides dtypes and shapes as it will on the real rows), or None."""
    if any(samples.get(n) is None for n in names_read(expr) - {"np"}):
        return None
    code = compile(ast.fix_missing_locations(ast.Expression(copy.deepcopy(expr))), "<rows>", "eval")
    try:
        with np.errstate(all="ignore"):
            return np.asarray(eval(code, {"np": np, "__builtins__": {}}, dict(samples)))
    except Exception:                             # noqa: BLE001 - anything NumPy refuses: leave it as it is
        return None


_UFUNCS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "true_divide", ast.Pow: "power"}


def _in_place(target: str, expr: ast.expr, samples: dict, names) -> list:
    """``target = expr`` as statements that make one array and update it in place wherever the update keeps
    its dtype and shape (``t = h * h``, ``np.subtract(1.0, t, out=t)``): the same values, one array instead
    of one per operation. ``target = expr`` itself where `samples` (rows name -> an array like the rows)
    cannot tell."""
    steps: list = []
    made: dict = {}                               # name of an array made here -> an array like it

    def emit(node, into: str | None) -> ast.expr:
        """`node` as an atom: anything but arithmetic as it is, arithmetic as the name of an array holding it."""
        if not (isinstance(node, ast.BinOp) and type(node.op) in _UFUNCS):
            return node
        result = _evaluate(node, samples)
        left = emit(node.left, into)
        right = emit(node.right, None if _made(left, made) else into)
        for holder in (left, right):
            if _made(holder, made) and _like(made[holder.id], result):
                steps.append(_update(holder.id, node.op, left, right))
                return holder
        out = into if into is not None and into not in made else names.fresh(f"{target}_part")
        steps.append(assign(out, ast.BinOp(left, node.op, right)))
        made[out] = result
        return name(out)

    if _evaluate(expr, samples) is None or not _is_name(emit(expr, target), target):
        return [assign(target, expr)]
    return steps


def _made(atom, made: dict) -> bool:
    return isinstance(atom, ast.Name) and atom.id in made


def _update(holder: str, op: ast.operator, left: ast.expr, right: ast.expr) -> ast.stmt:
    """`holder` = `left` op `right`, written into `holder` (one of the two)."""
    other = right if _is_name(left, holder) else left
    if _is_name(left, holder) or isinstance(op, (ast.Add, ast.Mult)):     # a + b == b + a, exactly
        return ast.AugAssign(ast.Name(holder, ast.Store()), op, other)
    return ast.Expr(ast.Call(ast.Attribute(name("np"), _UFUNCS[type(op)], ast.Load()), [left, right],
                             [ast.keyword("out", name(holder))]))


def _like(a, b) -> bool:
    return a is not None and b is not None and a.dtype == b.dtype and a.shape == b.shape


def _first_rows_reversed(array: str, count: ast.expr) -> ast.Subscript:
    """``array[:count][::-1]``."""
    first = ast.Subscript(name(array), ast.Slice(None, count, None), ast.Load())
    return ast.Subscript(first, ast.Slice(None, None, ast.UnaryOp(ast.USub(), ast.Constant(1))), ast.Load())


def _pop_rows(stack: str, count: ast.expr) -> ast.Call:
    return ast.Call(ast.Attribute(name(stack), "pop_rows", ast.Load()), [count], [])


def _rows(array: str, start, stop) -> ast.Subscript:
    """``array[start:stop]``."""
    bound = [None if b is None else ast.Constant(b) if b >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-b))
             for b in (start, stop)]
    return ast.Subscript(name(array), ast.Slice(*bound), ast.Load())


class _Rename(Transformer):
    def __init__(self, renames: dict):
        self.renames = renames

    def visit_Name(self, node):
        if node.id in self.renames:
            return ast.copy_location(ast.Name(self.renames[node.id], node.ctx), node)
        return node


def _contains(stmt, inner) -> bool:
    return any(node is inner for node in ast.walk(stmt))


def _read_after(stmt, inner) -> set[str]:
    """Names `stmt` may read after the statement `inner` nested in it, before assigning them again (on a
    later trip of a loop around `inner` too): what `inner` leaves in them is read nowhere else."""
    return _live_after([stmt], inner)[0]


def _live_after(block: list, inner) -> tuple[set, set] | None:
    """Within `block`: the names read after `inner` before being assigned, and those assigned on every path
    from `inner` to the end of the block; None where `inner` is not in it."""
    for k, stmt in enumerate(block):
        found = (set(), set()) if stmt is inner else next(
            (f for body in _bodies(stmt) if (f := _live_after(body, inner)) is not None), None)
        if found is None:
            continue
        live, assigned = found
        if stmt is not inner and isinstance(stmt, (ast.For, ast.While)):      # its next trip
            live |= _reads(stmt) - names_read(getattr(stmt, "iter", [])) - assigned
        rest = block[k + 1:]
        return live | (_exposed(rest) - assigned), assigned | _assigned(rest)
    return None


def _bodies(stmt) -> list:
    return [b for b in (getattr(stmt, "body", None), getattr(stmt, "orelse", None))
            if isinstance(b, list) and b and isinstance(b[0], ast.stmt)]


def _exposed(block: list) -> set[str]:
    """The names `block` reads before assigning them."""
    read, assigned = set(), set()
    for stmt in block:
        read |= _reads(stmt) - assigned
        assigned |= _assigned([stmt])
    return read


def _reads(stmt) -> set[str]:
    """The names `stmt` reads before assigning them (a loop's on its first trip, which its other trips repeat)."""
    if isinstance(stmt, ast.If):
        return names_read(stmt.test) | _exposed(stmt.body) | _exposed(stmt.orelse)
    if isinstance(stmt, ast.For) and not stmt.orelse:
        return names_read(stmt.iter) | (_exposed(stmt.body) - _assigned([ast.Assign([stmt.target], stmt.iter)]))
    if isinstance(stmt, ast.While) and not stmt.orelse:
        return names_read(stmt.test) | _exposed(stmt.body)
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        return names_read(stmt) | {stmt.target.id}
    return names_read(stmt)


def _assigned(block: list) -> set[str]:
    """The names `block` assigns on every path through it."""
    out = set()
    for stmt in block:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                out |= {n.id for n in ([target] if isinstance(target, ast.Name) else target.elts
                                       if isinstance(target, ast.Tuple) else []) if isinstance(n, ast.Name)}
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            out.add(stmt.target.id)
        elif isinstance(stmt, ast.If):
            out |= _assigned(stmt.body) & _assigned(stmt.orelse)
    return out
