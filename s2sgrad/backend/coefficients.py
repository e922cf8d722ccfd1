"""Part of stage 5: a backward loop over floats, its per-trip coefficients formed for all trips at once.

One backward trip of a loop on numbers is linear in the adjoints it carries:
each adjoint it ends with is a sum of the adjoints it started with, times
coefficients that depend only on the values it pops and on numbers the loop
does not change. Collected term by term (`polynomials`), those coefficients are
arithmetic on the popped values, which can be done for all trips in one NumPy
operation each before the loop, on the stack's floats as one array; the loop
is left with the float operations on the adjoints, as a hand-written adjoint
does it:

    for _ in range(trips):                      sin_values = sin_stack.pop_floats(trips).tolist()
        sin = sin_stack.pop()                   y_rows = y_stack.pop_floats(trips)
        y = y_stack.pop()               ->      dy_factors = (0.5 + x * np.cos(y_rows)).tolist()
        dx = dx + dy * sin                      for sin, dy_factor in zip(sin_values, dy_factors):
        dy = dy * 0.5 + dy * x * math.cos(y)        dx = dx + dy * sin
                                                    dy = dy * dy_factor

A coefficient that is a popped value is read as it is (from the stack's last
values as a list of floats, ``sin_stack.pop_floats(trips).tolist()``, where no
arithmetic reads it: float operations on floats cost less than on NumPy's);
one that reads no popped value stays in the loop as it was. An int counter the trip
counts down first (``i = i - 1``, an int loop counter: nothing else binds it)
is i - 1, i - 2, ..., i - trips over the trips: ``i_rows = np.arange(i - 1,
i - 1 - trips, -1)``, and ``i = i - trips`` after the loop where it is read
there; where no arithmetic reads it (a coefficient that is i), the loop is
over ``range(i - 1, i - 1 - trips, -1)``, i its target. The loop qualifies when its
body is straight-line arithmetic on numbers (`numbers.number_names`), pops each
stack once and nothing after it reads what it pops; the stacks then hold the
trips' values last, one per trip.

The coefficient arrays are the same real arithmetic, element by element, as the
trip computed, with like terms collected and NumPy's ufuncs in place of
``math``'s functions: results agree to rounding, not bit for bit; a division by
zero or an overflow gives inf or nan with NumPy's warning, where Python's floats
raise.
"""
from __future__ import annotations

import ast

import numpy as np

from ..ir.syntax import assign, assigned_name, call, name, names_read, np_call, origin, origin_of
from ..ir.trees import walk
from .numbers import made_stacks, number_names
from .polynomials import Polynomial
from .scalar_expressions import live_after

MATH_UFUNCS = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
               "atan2": "arctan2", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "arcsinh",
               "acosh": "arccosh", "atanh": "arctanh", "exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p",
               "log2": "log2", "log10": "log10", "sqrt": "sqrt", "fabs": "fabs", "hypot": "hypot",
               "copysign": "copysign"}


def coefficient_arrays(fn: ast.FunctionDef, start: int, trip_loops: list, inputs: set[str], names) -> ast.FunctionDef:
    """Rewrite `fn`'s backward loops over trips (`trip_loops`, in ``fn.body[start:]``) as above, where they
    qualify; `inputs` are the names holding numbers on entry. Returns `fn`."""
    if not trip_loops:
        return fn
    numbers = number_names(fn, set(inputs))
    if not numbers:
        return fn
    after, counters = live_after(fn), _int_counters(fn)
    for block in _blocks(fn.body, start):
        k = start if block is fn.body else 0
        while k < len(block):
            loop = block[k]
            if any(loop is trip_loop for trip_loop in trip_loops):
                before, past = _Trip(loop, numbers, after, names, counters).rewrite()
                block[k:k + 1] = [*before, loop, *past]
                k += len(before) + len(past)
            k += 1
    return fn


def coefficient_pass(code):
    """The pass of `coefficient_arrays` on a `pipeline.driver.GeneratedFunction`: on its backward sweep, where the
    numbers it pops may be taken as floats (`BackwardSweep.float_rows`). Returns `code`."""
    sweep = code.backward
    if sweep is not None and sweep.float_rows:
        coefficient_arrays(code.node, sweep.start(code.node.body), sweep.trip_loops, code.numbers, code.names)
    return code


def _blocks(body: list, start: int):
    yield body
    for stmt in body[start:]:
        for node in walk(stmt):
            if isinstance(node, (ast.For, ast.While, ast.If)):
                yield node.body
                yield node.orelse


class _NotLinear(Exception):
    """The trip is not straight-line arithmetic linear in its carried numbers."""


class _Trip:
    """One backward loop over trips: its carried numbers' values after a trip, as linear forms (input name or
    None for a term without one -> `Polynomial` coefficient)."""

    def __init__(self, loop: ast.For, numbers: set[str], after: dict, names, counters: set[str]):
        self.loop, self.numbers, self.names, self.counters = loop, numbers, names, counters
        self.live = after.get(id(loop.body[-1]), set()) if loop.body else set()
        self.pops: dict[str, str] = {}          # popped name -> its stack
        self.env: dict[str, dict] = {}          # name bound so far this trip -> its linear form
        self.last: dict[str, ast.stmt] = {}     # name -> the statement binding it last
        self.sinks: list[tuple] = []            # (statement, list, name, linear form) of each ``rows.append(e)``
        self.shifted: dict[str, str] = {}       # v -> p where a trip ends with v = p, p popped: v is p one trip on
        self.counter: str | None = None         # i where a trip starts with i = i - 1, i an int counter
        self.counted: ast.expr | None = None    # the range of i's values, where the loop is over them
        self.after_loop = after.get(id(loop), set())

    def rewrite(self) -> tuple[list, list]:
        """Rewrite the loop if it qualifies; the statements to put before it and after it."""
        try:
            outputs = self.outputs()
            order = _ordered(outputs)
        except _NotLinear:
            return [], []
        rows = self.rows()
        forms = [*outputs.values(), *(form for *_, form in self.sinks)]
        read = set().union(*(c.reads() for form in forms for c in form.values()))
        shifted = {v: p for v, p in self.shifted.items() if v in read}
        if not read & rows or set(self.pops) - read - set(shifted.values()):
            return [], []                       # nothing to do for all trips; or a value popped for nothing
        at = origin_of(self.loop)
        trips = name(self.loop.iter.args[0].id)
        direct = {id(c): p for form in forms for c in form.values() for p in rows
                  if c.terms == Polynomial.factor(name(p)).terms}
        arrays = set().union(*(c.reads() for form in forms for c in form.values() if id(c) not in direct)) \
            & (set(self.pops) | {self.counter}) | set(shifted) | set(shifted.values())
        row_names, before, past = {}, [], []
        for p, stack in self.pops.items():
            row_names[p] = self.names.fresh(f"{p}_rows" if p in arrays else f"{p}_values")
            popped = _call_method(stack, "pop_floats", trips)
            before.append(origin(assign(row_names[p], popped if p in arrays else _tolist(popped)), at))
        i = self.counter
        if i is not None:                       # (i - 1, i - 2, ..., i - trips: the trips' values of i)
            bounds = (_minus(name(i), ast.Constant(1)), _minus(_minus(name(i), ast.Constant(1)), trips),
                      ast.UnaryOp(ast.USub(), ast.Constant(1)))
            if i in arrays or i not in set(direct.values()):
                row_names[i] = self.names.fresh(f"{i}_rows")
                before.append(origin(assign(row_names[i], np_call("arange", *bounds)), at))
            else:                               # (only read as it is: the loop is over its values)
                self.counted = call("range", *bounds)
            if i in self.after_loop and i not in set(direct.values()):  # (else the loop's items are named i)
                past.append(origin(assign(i, _minus(name(i), trips)), at))
        for v, p in shifted.items():            # v in trip k is p of trip k - 1; in the first, v as it is
            row_names[v] = self.names.fresh(f"{v}_rows")
            before.append(assign(row_names[v], np_call("append", name(v), ast.Subscript(
                name(row_names[p]), ast.Slice(None, ast.Constant(-1)), ast.Load()))))
        self.iterated: dict[str, tuple] = {}    # the list a trip reads an item of (dumped) -> (item name, list)
        self.row_names, self.arrays, self.direct, self.before, self.at = row_names, arrays, direct, before, at
        body = [origin(ast.Expr(_call_method(listed, "append", self.expression(stem, form))), origin_of(stmt))
                for stmt, listed, stem, form in self.sinks]
        changed = [v for v in order or outputs if not (list(outputs[v]) == [v]
                                                         and outputs[v][v].constant_value() == 1.0)]
        values = [self.expression(v, outputs[v]) for v in changed]
        if order is not None:
            body += [origin(assign(v, value), origin_of(self.last[v])) for v, value in zip(changed, values)]
        elif changed:                           # (each reads another's old value: all bound at once)
            body.append(origin(assign(ast.Tuple([ast.Name(v, ast.Store()) for v in changed], ast.Store()),
                                      ast.Tuple(values, ast.Load())), origin_of(self.last[changed[0]])))
        self.loop.body = body or [ast.Pass()]
        targets = [ast.Name(t, ast.Store()) for t, _ in self.iterated.values()]
        self.loop.target = targets[0] if len(targets) == 1 else ast.Tuple(targets, ast.Store())
        lists = [source for _, source in self.iterated.values()]
        self.loop.iter = lists[0] if len(lists) == 1 else call("zip", *lists)
        return before, past

    def rows(self) -> set[str]:
        """The names whose trips' values are formed before the loop."""
        return set(self.pops) | set(self.shifted) | ({self.counter} - {None})

    def expression(self, v: str, form: dict) -> ast.expr:
        """A trip's value of the linear `form` (of `v`): each adjoint times its coefficient, each coefficient
        reading popped values an item of a list formed before the loop."""
        terms = []
        rows = self.rows()
        for u, c in sorted(form.items(), key=lambda uc: (uc[0] != v, uc[0] is None)):
            if not c.reads() & rows:
                coefficient = c.render(first=lambda key: True)
            elif id(c) in self.direct:
                p = self.direct[id(c)]          # (named as it was popped: read nowhere after the loop; i ends right)
                values = self.counted if p == self.counter and self.counted else name(self.row_names[p])
                coefficient = self.item(p, _tolist(values) if p in self.arrays else values)
            else:
                stem = f"{v}_factor" if u == v else f"{v}_term" if u is None else f"{v}_{u}_factor"
                rendered = c.render(first=lambda key: not names_read(c.factors[key]) & rows)
                rendered = _Arrays(self.row_names).visit(rendered)
                coefficient = self.item(stem, _tolist(rendered), self.before, self.at)
            terms.append(coefficient if u is None else name(u) if isinstance(coefficient, ast.Constant)
                         and coefficient.value == 1.0 else ast.BinOp(name(u), ast.Mult(), coefficient))
        value = terms[0] if terms else ast.Constant(0.0)
        for term in terms[1:]:
            value = ast.BinOp(value, ast.Add(), term)
        return value

    def item(self, stem: str, values: ast.expr, before: list | None = None, at=None) -> ast.Name:
        """The name of a trip's item of `values` (a list named before the loop, when `before` is given)."""
        key = ast.dump(values)
        if key not in self.iterated:
            if before is None:
                self.iterated[key] = stem, values
            else:
                listed = self.names.fresh(f"{stem}s")
                before.append(origin(assign(listed, values), at))
                self.iterated[key] = self.names.fresh(stem, temporary=True), name(listed)
        return name(self.iterated[key][0])

    def outputs(self) -> dict[str, dict]:
        """What each carried number (live after a trip) is after one: a linear form in those it started with."""
        loop = self.loop
        if loop.orelse or not (isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name)
                               and loop.iter.func.id == "range" and len(loop.iter.args) == 1
                               and isinstance(loop.iter.args[0], ast.Name) and not loop.iter.keywords):
            raise _NotLinear
        bound = {n.id for stmt in loop.body for n in walk(stmt) if isinstance(n, ast.Name)
                 and not isinstance(n.ctx, ast.Load)}
        if names_read(loop.target) or loop.iter.args[0].id in bound:
            raise _NotLinear
        if {t.id for t in walk(loop.target) if isinstance(t, ast.Name)} & (names_read(loop.body) | self.live):
            raise _NotLinear
        popped = {assigned_name(stmt) for stmt in loop.body if _popped(stmt)}
        counted = self._counted_down()
        for k, stmt in enumerate(loop.body):
            v = assigned_name(stmt)
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id in popped \
                    and v in self.numbers and v != stmt.value.id and v not in self.after_loop | popped \
                    and sum(assigned_name(other) == v for other in loop.body) == 1 \
                    and v not in names_read(loop.body[k:]):
                self.shifted[v] = stmt.value.id
        for stmt in loop.body:
            if assigned_name(stmt) in self.shifted or stmt is counted:
                continue
            appended = _appended(stmt)
            if appended is not None:            # (a batched sum's list: one value per trip)
                listed, value = appended
                if listed in self.numbers | bound:
                    raise _NotLinear
                stem = value.id if isinstance(value, ast.Name) else listed
                self.sinks.append((stmt, listed, stem, self.linear(value)))
                continue
            target = assigned_name(stmt)
            if target is None or target not in self.numbers:
                raise _NotLinear
            stack = _popped(stmt)
            if stack is not None:
                if stack in self.pops.values() or target in self.pops or target in self.env:
                    raise _NotLinear
                self.pops[target] = stack
                self.env[target] = {None: Polynomial.factor(name(target))}
            else:
                value = stmt.value if isinstance(stmt, ast.Assign) else ast.BinOp(name(target), stmt.op, stmt.value)
                if target in self.pops:
                    raise _NotLinear
                self.env[target] = self.linear(value)
            self.last[target] = stmt
        if set(self.pops) & self.live:
            raise _NotLinear
        return {v: form for v, form in self.env.items() if v in self.live and v not in self.pops}

    def _counted_down(self) -> ast.stmt | None:
        """The statement ``i = i - 1`` counting an int counter i down, where the trip starts with it (nothing
        before it reads or binds i) and nothing else in it binds i; sets `counter`."""
        touched: set[str] = set()               # the names the statements so far read or bind
        for stmt in self.loop.body:
            i = assigned_name(stmt)
            if i in self.counters - touched and i in self.numbers and _decremented(stmt) == i \
                    and sum(assigned_name(other) == i for other in self.loop.body) == 1:
                self.counter = i
                return stmt
            touched |= names_read(stmt) | {n.id for n in walk(stmt) if isinstance(n, ast.Name)}
        return None

    def linear(self, node) -> dict:
        if isinstance(node, ast.Constant) and (type(node.value) is float or type(node.value) is int
                                               and abs(node.value) < 2 ** 53):
            return {None: Polynomial.constant(node.value)}
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            if node.id not in self.numbers:
                raise _NotLinear
            if node.id in self.shifted or node.id == self.counter:
                return {None: Polynomial.factor(name(node.id))}
            bound = any(assigned_name(s) == node.id for s in self.loop.body)
            return {node.id: Polynomial.constant(1.0)} if bound else {None: Polynomial.factor(name(node.id))}
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            form = self.linear(node.operand)
            return {k: -c for k, c in form.items()} if isinstance(node.op, ast.USub) else form
        if isinstance(node, ast.BinOp):
            left, right = self.linear(node.left), self.linear(node.right)
            if isinstance(node.op, (ast.Add, ast.Sub)):
                result = dict(left)
                for k, c in right.items():
                    result[k] = result[k] + c if k in result and isinstance(node.op, ast.Add) else \
                        result[k] - c if k in result else c if isinstance(node.op, ast.Add) else -c
                return {k: c for k, c in result.items() if not c.is_zero()}
            if isinstance(node.op, ast.Mult):
                if set(left) <= {None}:
                    left, right = right, left
                scale = right.get(None, Polynomial())
                if not set(right) <= {None}:
                    raise _NotLinear
                return {k: c * scale for k, c in left.items() if not (c * scale).is_zero()}
            if isinstance(node.op, ast.Div) and set(right) <= {None}:
                inverse = right.get(None, Polynomial()).reciprocal()
                if inverse is None:
                    raise _NotLinear
                return {k: c * inverse for k, c in left.items()}
            if isinstance(node.op, ast.Pow) and set(left) | set(right) <= {None}:
                base, exponent = left.get(None, Polynomial()), right.get(None, Polynomial()).constant_value()
                if exponent is not None and float(exponent).is_integer() and 0 <= exponent <= 3:
                    return {None: base.power(int(exponent))}
                return {None: Polynomial.factor(ast.BinOp(_whole(base), ast.Pow(), _whole(right[None])))} \
                    if not base.is_zero() and None in right else _not_linear()
            raise _NotLinear
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "zeros_like" \
                and "zeros_like" not in self.numbers and len(node.args) == 1 and not node.keywords:
            return {}                           # (0.0: every value is real)
        if isinstance(node, ast.Call) and not node.keywords and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in ("math", "np") \
                and node.func.value.id not in self.numbers:
            module, attr = node.func.value.id, node.func.attr
            if not (attr in MATH_UFUNCS if module == "math" else _float_ufunc(attr, len(node.args))):
                raise _NotLinear
            args = [self.linear(a) for a in node.args]
            if any(not set(a) <= {None} for a in args):
                raise _NotLinear
            return {None: Polynomial.factor(ast.Call(ast.Attribute(name(module), attr, ast.Load()),
                                                     [_whole(a.get(None, Polynomial())) for a in args], []))}
        raise _NotLinear


def _float_ufunc(attr: str, nin: int) -> bool:
    """Is ``np.attr`` a NumPy ufunc of `nin` float64 arguments giving one value?"""
    ufunc = getattr(np, attr, None)
    return isinstance(ufunc, np.ufunc) and ufunc.nin == nin and ufunc.nout == 1 \
        and any(t.startswith("d" * nin + "->") for t in ufunc.types)


def _not_linear():
    raise _NotLinear


def _whole(p: Polynomial) -> ast.expr:
    return p.render()


def _tolist(node: ast.expr) -> ast.expr:
    return ast.Call(ast.Attribute(node, "tolist", ast.Load()), [], [])


class _Arrays(ast.NodeTransformer):
    """Each popped name as the name of its rows, ``math.f`` as NumPy's ufunc."""

    def __init__(self, row_names: dict):
        self.row_names = row_names

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == "math":
            return ast.Attribute(name("np"), MATH_UFUNCS[node.attr], ast.Load())
        return self.generic_visit(node)

    def visit_Name(self, node):
        return name(self.row_names[node.id]) if node.id in self.row_names else node


def _ordered(outputs: dict) -> list | None:
    """The carried numbers in an order in which each is bound after every statement reading its old value
    (None if there is none)."""
    reads = {v: {u for u in form if u is not None and u != v} for v, form in outputs.items()}
    order, left = [], list(outputs)
    while left:
        ready = [v for v in left if not any(v in reads[w] for w in left if w != v)]
        if not ready:
            return None
        order.append(ready[0])
        left.remove(ready[0])
    return order




def _int_counters(fn: ast.FunctionDef) -> set[str]:
    """The names `fn` binds only to ints: int literals, ``len(...)``, targets of loops over a ``range(...)``, sums
    and differences of these, and pops of a stack onto which only these are pushed (the largest such set)."""
    bindings: dict[str, list] = {}              # name -> the values bound to it (None: not known to be an int)
    seen: set[int] = set()                      # (the stores read below as the targets of their statements)
    for node in walk(fn):
        if isinstance(node, (ast.Assign, ast.For)):
            value = node.iter if isinstance(node, ast.For) and _is_call(node.iter, "range") else \
                getattr(node, "value", None)
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for n in walk(target):
                    if isinstance(n, ast.Name):
                        bindings.setdefault(n.id, []).append(value if n is target else None)
                        seen.add(id(n))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            bindings.setdefault(node.target.id, []).append(ast.BinOp(node.target, node.op, node.value))
            seen.add(id(node.target))
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in seen:
            bindings.setdefault(node.id, []).append(None)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bindings.setdefault(node.name, []).append(None)
    for arg in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
        bindings.setdefault(arg.arg, []).append(None)
    builtins, stacks = {"len", "range"} - set(bindings), made_stacks(list(walk(fn)), bindings)
    ints = set(bindings)
    while True:
        left = {v for v in ints if all(_an_int(value, ints, builtins, stacks) for value in bindings[v])}
        if left == ints:
            return ints
        ints = left


def _an_int(node, ints: set[str], builtins: set[str], stacks: dict) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.Name):
        return node.id in ints
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _an_int(node.left, ints, builtins, stacks) and _an_int(node.right, ints, builtins, stacks)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop" \
            and isinstance(node.func.value, ast.Name) and node.func.value.id in stacks and not node.args:
        return all(_an_int(pushed, ints, builtins, stacks) for pushed in stacks[node.func.value.id])
    return any(_is_call(node, f) for f in builtins)


def _minus(left: ast.expr, right: ast.expr) -> ast.expr:
    return ast.BinOp(left, ast.Sub(), right)


def _is_call(node, fn: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == fn


def _decremented(stmt) -> str | None:
    """i where `stmt` is ``i = i - 1`` or ``i -= 1``."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        i, op, step = stmt.target.id, stmt.op, stmt.value
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.left, ast.Name) \
            and stmt.value.left.id == stmt.targets[0].id:
        i, op, step = stmt.targets[0].id, stmt.value.op, stmt.value.right
    else:
        return None
    return i if isinstance(op, ast.Sub) and isinstance(step, ast.Constant) and type(step.value) is int \
        and step.value == 1 else None


def _appended(stmt) -> tuple | None:
    """(list, value) where `stmt` is ``list.append(value)``."""
    value = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "append" \
            and isinstance(value.func.value, ast.Name) and len(value.args) == 1 and not value.keywords:
        return value.func.value.id, value.args[0]
    return None


def _call_method(receiver: str, method: str, *args) -> ast.Call:
    return ast.Call(ast.Attribute(name(receiver), method, ast.Load()), list(args), [])


def _popped(stmt) -> str | None:
    value = getattr(stmt, "value", None)
    if isinstance(stmt, ast.Assign) and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr == "pop" and isinstance(value.func.value, ast.Name) and not value.args \
            and not value.keywords:
        return value.func.value.id
    return None


__all__ = ["coefficient_arrays", "coefficient_pass"]
