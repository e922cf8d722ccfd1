"""Part of stage 5: which names of a generated function certainly hold numbers, never arrays.

A number (a Python ``int``, ``float`` or ``complex``, or a NumPy scalar) cannot
be changed in place: ``d += e`` on it binds ``d`` to ``d + e``, and a copy
``t = d`` is the same value as ``d`` for as long as ``d`` is not bound again.
`scalar_expressions` relies on that to write a number's arithmetic as one
expression. An array (even one of shape ``()``) is another matter, so a name
counts as a number only where every value it is ever bound to certainly is one,
given the names known to hold numbers on entry (parameters specialized as
numbers, the seed of ``grad``, the user's number constants):

- a number literal, a name that holds numbers, arithmetic (``+ - * / // % **``
  and unary ``-``) of numbers;
- ``math.f(...)`` of a function returning a float, ``float(...)``, and a NumPy
  ufunc of numbers (``np.sin(y)`` of a float is a NumPy scalar); ``zeros_like(x)``
  of a number (0.0, or 0j); ``len(...)``, and the target of a loop over a
  ``range(...)`` (ints);
- ``s.pop()`` of a stack made here (``s = Stack()``) onto which only numbers are
  pushed, and read only to push and pop.

Every other binding (a call, an index, another loop target, a tuple taken apart) of a
name makes it unknown. The answer is the largest set closed under these rules.

    >>> fn = ast.parse('''
    ... def f(x, dy=1.0):
    ...     s = Stack()
    ...     s.push(x * 2)
    ...     t = s.pop()
    ...     u = np.zeros(3)
    ...     dy += t * math.cos(x)
    ...     return dy, u''').body[0]
    >>> sorted(number_names(fn, {"x", "dy"}))
    ['dy', 't', 'x']
"""
from __future__ import annotations

import ast

import numpy as np

from ..ir.trees import walk

ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
MATH_FLOATS = frozenset({
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
    "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "pow", "fabs", "hypot", "erf", "erfc", "gamma",
    "lgamma", "copysign", "fmod"})


def number_names(fn: ast.FunctionDef, inputs: set[str]) -> set[str]:
    """The names of `fn` that hold a number wherever they hold a value; `inputs` are the names (parameters,
    globals) that hold numbers on entry."""
    nodes = list(walk(fn))                      # (walked once: nothing below changes `fn`)
    if any(isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Global,
                          ast.Nonlocal, ast.NamedExpr, ast.comprehension)) and n is not fn for n in nodes):
        return set()                            # other scopes or bindings: not followed
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    bindings: dict[str, list] = {}              # name -> the values bound to it (None: unknown)
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                _bind(target, node.value, bindings)
        elif isinstance(node, ast.AugAssign):
            value = ast.BinOp(node.target, node.op, node.value) if isinstance(node.target, ast.Name) else None
            _bind(node.target, value, bindings)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bindings.setdefault(node.id, [])    # (a store these cases do not know, or one they bind below)
    builtin_len, builtin_range = ("len" not in set(bindings) | params), ("range" not in set(bindings) | params)
    for node in nodes:
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Call) \
                and isinstance(node.iter.func, ast.Name) and node.iter.func.id == "range" and builtin_range:
            bindings.setdefault(node.target.id, []).append(ast.Constant(0))     # (an int)
        elif isinstance(node, (ast.For, ast.AnnAssign, ast.With, ast.ExceptHandler, ast.Delete)):
            for name in walk(node.target if isinstance(node, (ast.For, ast.AnnAssign)) else node):
                if isinstance(name, ast.Name) and not isinstance(name.ctx, ast.Load):
                    bindings.setdefault(name.id, []).append(None)
    for p in params - inputs:
        bindings.setdefault(p, []).append(None)
    stacks = made_stacks(nodes, bindings)
    numbers = (set(bindings) | inputs) - {n for n, values in bindings.items() if None in values}
    known_stacks = set(stacks)
    check, pushes = _Check(numbers, known_stacks, builtin_len), _Check(numbers, (), builtin_len)
    users: dict = {}                            # a name or ("stack", s) -> the names and stacks to check again
    for name, values in bindings.items():
        for value in values:
            for node in walk(value) if value is not None else ():
                if isinstance(node, ast.Name):
                    users.setdefault(node.id, set()).add(name)
                elif _popped(node) in stacks:
                    users.setdefault(("stack", _popped(node)), set()).add(name)
    for stack, pushed in stacks.items():
        for node in (n for value in pushed for n in walk(value) if isinstance(n, ast.Name)):
            users.setdefault(node.id, set()).add(("stack", stack))
    work = list(numbers) + [("stack", s) for s in stacks]
    while work:
        item = work.pop()
        if isinstance(item, tuple):
            if item[1] in known_stacks and not all(pushes.of(v) for v in stacks[item[1]]):
                known_stacks.discard(item[1])
                work.extend(users.get(item, ()))
        elif item in numbers and not all(check.of(v) for v in bindings.get(item, ())):
            numbers.discard(item)
            work.extend(users.get(item, ()))
    return numbers


def is_pure_number(node, numbers: set[str]) -> bool:
    """Is `node` arithmetic of the `numbers` alone: a number, evaluated without any effect (no stack popped)?

        >>> is_pure_number(ast.parse("2 * math.cos(y) - x", mode="eval").body, {"x", "y"})
        True
    """
    return _Check(numbers, ()).of(node)


def _popped(node) -> str | None:
    """The stack ``s.pop()`` pops, if `node` is that."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop" \
            and isinstance(node.func.value, ast.Name):
        return node.func.value.id
    return None


def _bind(target, value, bindings: dict) -> None:
    if isinstance(target, ast.Name):
        bindings.setdefault(target.id, []).append(value)
    elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
            and len(value.elts) == len(target.elts) and not any(isinstance(e, ast.Starred) for e in target.elts):
        for t, v in zip(target.elts, value.elts):
            _bind(t, v, bindings)
    else:
        for name in walk(target):
            if isinstance(name, ast.Name) and not isinstance(name.ctx, ast.Load):
                bindings.setdefault(name.id, []).append(None)


def made_stacks(nodes: list, bindings: dict) -> dict[str, list]:
    """The stacks made in a function (its `nodes`: bound once, to ``Stack()``) read only by ``.push(v)``, ``.pop()`` and
    ``.pop_rows(n)``: stack -> the values pushed onto it."""
    made = {n for n, values in bindings.items() if len(values) == 1 and isinstance(values[0], ast.Call)
            and isinstance(values[0].func, ast.Name) and values[0].func.id == "Stack" and not values[0].args}
    pushed: dict[str, list] = {s: [] for s in made}
    receivers = set()
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in made:
            receivers.add(id(node.func.value))
            method, stack = node.func.attr, node.func.value.id
            if method == "push" and len(node.args) == 1 and not node.keywords:
                pushed[stack].append(node.args[0])
            elif method not in ("pop", "pop_rows") or node.keywords or len(node.args) != (method == "pop_rows"):
                pushed.pop(stack, None)
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in pushed \
                and id(node) not in receivers:
            pushed.pop(node.id)                 # passed on: others may push onto it
    return pushed


class _Check:
    """Which expressions certainly evaluate to numbers, given the names and stacks known to hold them."""

    def __init__(self, names, stacks, builtin_len=False):
        self.names, self.stacks, self.builtin_len = names, stacks, builtin_len

    def of(self, node) -> bool:
        if isinstance(node, ast.Constant):
            return type(node.value) in (int, float, complex)
        if isinstance(node, ast.Name):
            return node.id in self.names
        if isinstance(node, ast.BinOp):
            return isinstance(node.op, ARITHMETIC) and self.of(node.left) and self.of(node.right)
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, (ast.USub, ast.UAdd)) and self.of(node.operand)
        if isinstance(node, ast.Call) and not node.keywords:
            return self.call(node)
        return False

    def call(self, node) -> bool:
        func, args = node.func, node.args
        if isinstance(func, ast.Name) and func.id in ("float", "zeros_like") and func.id not in self.names:
            return len(args) == 1 and self.of(args[0])
        if isinstance(func, ast.Name) and func.id == "len" and self.builtin_len:
            return len(args) == 1
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return False
        module, attr = func.value.id, func.attr
        if module == "math" and module not in self.names:
            return attr in MATH_FLOATS and all(self.of(a) for a in args)
        if module == "np" and module not in self.names:
            ufunc = getattr(np, attr, None)
            return isinstance(ufunc, np.ufunc) and ufunc.nout == 1 and len(args) == ufunc.nin \
                and all(self.of(a) for a in args)
        return attr == "pop" and not args and module in self.stacks
