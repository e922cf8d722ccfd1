"""A generated gradient function rewritten in the subset numba compiles: each `Stack` becomes a typed array
and an int counting its rows (made at the first push with room for the loop's trip count where the loop counts
up to a bound it does not change, doubled when full), elementwise NumPy calls on numbers become `math` calls,
ufuncs' ``out=`` is passed by position, and writes into a vector nothing else sees run in place (`inplace`).

    >>> import ast
    >>> fn = ast.parse('''
    ... def f(x, n):
    ...     s = Stack()
    ...     i = 0
    ...     while i < n:
    ...         s.push(x)
    ...         x = np.sin(x)
    ...         i = i + 1
    ...     for _ in range(n):
    ...         x = s.pop()
    ...     return x''').body[0]
    >>> print(ast.unparse(numba_form(fn, {"x", "n"})))
    def f(x, n):
        s_top = 0
        i = 0
        while i < n:
            if s_top == 0:
                s = stack_new(x, n + 1)
            elif s_top == s.shape[0]:
                s = stack_grown(s)
            s[s_top] = x
            s_top += 1
            x = math.sin(x)
            i = i + 1
        for _ in range(n):
            s_top -= 1
            x = s[s_top]
        return x
"""
from __future__ import annotations

import ast

from ...ir.syntax import keep_origin
from ...ir.trees import copy_tree
from .inplace import written_in_place
from .scalars import MATH, is_number, typed_names

UNKNOWN_TRIPS = 64          # the first capacity of a stack pushed in a loop whose trip count is not known on entry


def _name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id_, ast.Store() if store else ast.Load())


def _method_call(node, method: str) -> str | None:
    """The stack `s` of ``s.method(...)``, if `node` is such a call."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method \
            and isinstance(node.func.value, ast.Name):
        return node.func.value.id
    return None


def stack_names(fn: ast.FunctionDef) -> set:
    """The names `fn` binds to a new ``Stack()``."""
    return {node.targets[0].id for node in ast.walk(fn)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "Stack" and not node.value.args}


def row_lists(fn: ast.FunctionDef) -> set:
    """The names `fn` binds to ``[]``, appends rows to, and then turns into an array by ``r = np.array(r)`` in
    the same block, reading the list in no other way (the rows of a batched product): each is a stack whose
    rows are read in push order."""
    found = set()
    blocks = [getattr(node, field) for node in ast.walk(fn) for field in ("body", "orelse")
              if isinstance(getattr(node, field, None), list)]
    for block in blocks:
        for k, stmt in enumerate(block):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and _is_array_of(stmt.value, {stmt.targets[0].id})):
                continue
            name = stmt.targets[0].id
            made = [s for s in block[:k] if isinstance(s, ast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
            if not made or not (isinstance(made[-1].value, ast.List) and not made[-1].value.elts):
                continue
            between = ast.Module(block[block.index(made[-1]) + 1:k], [])
            appended = {id(n.func.value) for n in ast.walk(between) if _method_call(n, "append") == name}
            if all(id(n) in appended for n in ast.walk(between) if isinstance(n, ast.Name) and n.id == name):
                found.add(name)
    return found


def _is_array_of(node, names: set) -> bool:
    """Whether `node` is ``np.array(r)`` for a name `r` in `names`."""
    return isinstance(node, ast.Call) and ast.unparse(node.func) == "np.array" and len(node.args) == 1 \
        and not node.keywords and isinstance(node.args[0], ast.Name) and node.args[0].id in names


def counted_bound(loop: ast.While, before: list) -> ast.expr | None:
    """`n` for a loop ``i = 0 ... while i < n:`` whose body steps ``i = i + 1`` once and changes neither `i`
    otherwise nor `n`: the trip count, known on entry."""
    test = loop.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Lt)
            and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], (ast.Name, ast.Constant))):
        return None
    counter, bound = test.left.id, test.comparators[0]
    stored = [n.id for n in ast.walk(ast.Module(loop.body, [])) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Store)]
    steps = [s for s in loop.body if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name)
             and s.targets[0].id == counter and ast.unparse(s.value) == f"{counter} + 1"]
    starts = [s for s in before if isinstance(s, ast.Assign) and len(s.targets) == 1
              and isinstance(s.targets[0], ast.Name) and s.targets[0].id == counter]
    if len(steps) != 1 or stored.count(counter) != 1 or (isinstance(bound, ast.Name) and bound.id in stored):
        return None
    if not starts or ast.unparse(starts[-1].value) != "0":
        return None
    return bound


class _Rewriter:
    """Rewrites one function's statements; `top` names each stack's row count."""

    def __init__(self, fn: ast.FunctionDef, numbers: set, vectors: set):
        self.rows = row_lists(fn)
        self.stacks = stack_names(fn) | self.rows
        taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | {a.arg for a in fn.args.args}
        self.top = {}
        for s in sorted(self.stacks):
            name = f"{s}_top"
            while name in taken:
                name += "_"
            self.top[s] = name
        self.numbers, self.vectors = numbers, vectors
        self.shapes_of_numbers = _shapes_of_numbers(fn, self.stacks, numbers, vectors)

    def block(self, stmts: list, capacity: ast.expr | None) -> list:
        out = []
        for k, stmt in enumerate(stmts):
            new = self.stmt(stmt, capacity, stmts[:k])
            if new:
                keep_origin(new[0], stmt)
            out += new
        return out

    def stmt(self, stmt: ast.stmt, capacity, before: list) -> list:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target = stmt.targets[0].id
            if target in self.shapes_of_numbers:
                return []
            if _method_call(stmt.value, "pop") in self.shapes_of_numbers:
                return [ast.Assign([_name(target, True)], ast.Constant(0.0))]     # (a number's shape: any number)
            if target in self.stacks and not _is_array_of(stmt.value, self.rows):
                return [ast.Assign([_name(self.top[target], True)], ast.Constant(0))]
            if _is_array_of(stmt.value, self.rows):          # the rows appended, in order
                rows = stmt.value.args[0].id
                return [ast.Assign([_name(target, True)], ast.Subscript(
                    _name(rows), ast.Slice(None, _name(self.top[rows]), None), ast.Load()))]
            popped = _method_call(stmt.value, "pop")
            if popped in self.stacks:
                top = self.top[popped]
                return [ast.AugAssign(_name(top, True), ast.Sub(), ast.Constant(1)),
                        ast.Assign([_name(target, True)], ast.Subscript(_name(popped), _name(top), ast.Load()))]
            rows = _method_call(stmt.value, "pop_rows")
            if rows in self.stacks:
                top, n = self.top[rows], self.expr(stmt.value.args[0])
                return [ast.If(ast.Compare(_name(top), [ast.Eq()], [ast.Constant(0)]),
                               [ast.Raise(_name("NoRows"), None)], []),
                        ast.Assign([_name(target, True)],
                                   ast.Call(_name("stack_rows"), [_name(rows), _name(top), n], [])),
                        ast.AugAssign(_name(top, True), ast.Sub(), copy_tree(n))]
        if isinstance(stmt, ast.Expr) and _method_call(stmt.value, "push") in self.shapes_of_numbers:
            return []
        for method in ("push", "append"):
            if isinstance(stmt, ast.Expr) and _method_call(stmt.value, method) in self.stacks:
                return self.push(_method_call(stmt.value, method), stmt.value.args[0], capacity)
        if isinstance(stmt, ast.While):
            bound = counted_bound(stmt, before)
            inner = UNKNOWN_TRIPS if bound is None or capacity is not None else ast.BinOp(
                copy_tree(bound), ast.Add(), ast.Constant(1))
            inner = inner if isinstance(inner, ast.expr) else ast.Constant(inner)
            stmt.test = self.expr(stmt.test)
            stmt.body = self.block(stmt.body, inner)
            return [stmt]
        if isinstance(stmt, (ast.For, ast.If)):
            if isinstance(stmt, ast.For):
                stmt.iter = self.expr(stmt.iter)
                inner = ast.Call(_name("len"), [copy_tree(stmt.iter)], []) if isinstance(stmt.iter, ast.Name) \
                    and capacity is None else ast.Constant(UNKNOWN_TRIPS)
            else:
                stmt.test = self.expr(stmt.test)
                inner = capacity
            stmt.body = self.block(stmt.body, inner)
            stmt.orelse = self.block(stmt.orelse, inner)
            return [stmt]
        for field in ("value", "test"):
            if isinstance(getattr(stmt, field, None), ast.expr):
                setattr(stmt, field, self.expr(getattr(stmt, field)))
        return [stmt]

    def push(self, stack: str, value: ast.expr, capacity) -> list:
        """``stack.push(value)``: the row written at the stack's top, the stack made or grown first."""
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "like":
            value = value.args[0]                 # (the shape of a value is kept as the value itself)
        value = self.expr(value)
        top = self.top[stack]
        made = ast.Call(_name("stack_new"), [value, capacity or ast.Constant(1)], [])
        grown = ast.Call(_name("stack_grown"), [_name(stack)], [])
        full = ast.Compare(_name(top), [ast.Eq()], [ast.Subscript(ast.Attribute(_name(stack), "shape", ast.Load()),
                                                                  ast.Constant(0), ast.Load())])
        return [ast.If(ast.Compare(_name(top), [ast.Eq()], [ast.Constant(0)]),
                       [ast.Assign([_name(stack, True)], made)],
                       [ast.If(full, [ast.Assign([_name(stack, True)], grown)], [])]),
                ast.Assign([ast.Subscript(_name(stack), _name(top), ast.Store())], copy_tree(value)),
                ast.AugAssign(_name(top, True), ast.Add(), ast.Constant(1))]

    def expr(self, expr: ast.expr) -> ast.expr:
        return _Calls(self.numbers, self.vectors).visit(expr)


def _shapes_of_numbers(fn: ast.FunctionDef, stacks: set, numbers: set, vectors: set) -> set:
    """The stacks that keep only the shapes of numbers (every push ``s.push(like(x))`` with x a number, every
    pop a plain ``v = s.pop()``): they need no rows, a pop can read any number."""
    pushed: dict = {}
    popped_whole = set()
    for node in ast.walk(fn):
        stack = _method_call(node, "push")
        if stack in stacks:
            value = node.args[0]
            pushed.setdefault(stack, []).append(isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                                                and value.func.id == "like"
                                                and is_number(value.args[0], numbers, set(), vectors))
        if _method_call(node, "pop_rows") in stacks:
            popped_whole.add(node.func.value.id)
    return {stack for stack, shapes in pushed.items() if all(shapes) and stack not in popped_whole}


class _Calls(ast.NodeTransformer):
    """`np.sin(x)` on a number as `math.sin(x)`; a ufunc's ``out=`` by position; ``a @ b`` as the helper
    ``matmul(a, b)`` (loops for a product with a vector)."""

    def __init__(self, numbers: set, vectors: set):
        self.numbers, self.vectors = numbers, vectors

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.MatMult):
            return ast.Call(_name("matmul"), [node.left, node.right], [])
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "np"):
            return node
        if func.attr in MATH and len(node.args) == 1 and not node.keywords \
                and is_number(node.args[0], self.numbers, set(), self.vectors):
            return ast.Call(ast.Attribute(_name("math"), MATH[func.attr], ast.Load()), node.args, [])
        out = [k for k in node.keywords if k.arg == "out"]
        if out and len(node.keywords) == 1:
            node.args = [*node.args, out[0].value]
            node.keywords = []
        return node


def numba_form(fn: ast.FunctionDef, number_params: set) -> ast.FunctionDef:
    """`fn` (left as it is) in the form numba compiles, given the parameters that are passed numbers."""
    fn = copy_tree(fn)
    numbers, vectors = typed_names(fn, number_params)
    fn = written_in_place(fn, numbers, vectors)
    rewriter = _Rewriter(fn, numbers, vectors)
    fn.body = rewriter.block(fn.body, None)
    return ast.fix_missing_locations(fn)
