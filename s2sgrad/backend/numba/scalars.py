"""Which names of a generated function always hold a number (never an array), so that its elementwise NumPy
calls on them can be written as `math` calls, which numba compiles to one instruction.

The answer is the largest set of names every assignment of which is a number given the set itself: parameters
passed numbers, literals, arithmetic on numbers, elementwise functions of numbers, and pops of stacks only
numbers are pushed onto.

    >>> import ast
    >>> fn = ast.parse("def f(x, n):\\n    y = x\\n    while y < n:\\n        y = np.sin(y) * x\\n    z = y + W")
    >>> sorted(number_names(fn.body[0], {"x", "n"}))
    ['n', 'x', 'y']
"""
from __future__ import annotations

import ast

# NumPy's elementwise functions of one number and the `math` function numba compiles for each
MATH = {"sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
        "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "exp": "exp", "expm1": "expm1", "log": "log",
        "log1p": "log1p", "sqrt": "sqrt", "floor": "floor", "ceil": "ceil"}
MADE = {"zeros", "ones", "empty", "full"}   # NumPy's functions making a new array (a vector, of a number size)
_NUMBER_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.FloorDiv, ast.Mod)


def _numpy_function(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("np", "math"):
        return func.attr
    return None


def is_number(expr: ast.expr, numbers: set, number_stacks: set, vectors: set = frozenset()) -> bool:
    """Whether `expr` is a number when the names in `numbers` are (and pops of `number_stacks`, and elements
    of `vectors` read by a number index)."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.Name):
        return expr.id in numbers
    if isinstance(expr, ast.BinOp):
        return isinstance(expr.op, _NUMBER_OPS) and is_number(expr.left, numbers, number_stacks, vectors) \
            and is_number(expr.right, numbers, number_stacks, vectors)
    if isinstance(expr, ast.UnaryOp):
        return isinstance(expr.op, (ast.USub, ast.UAdd)) and is_number(expr.operand, numbers, number_stacks, vectors)
    if isinstance(expr, ast.Subscript):
        return isinstance(expr.value, ast.Name) and expr.value.id in vectors \
            and is_number(expr.slice, numbers, number_stacks, vectors)
    if isinstance(expr, ast.Call):
        name = _numpy_function(expr)
        if name in MATH or name in MATH.values():
            return len(expr.args) == 1 and not expr.keywords \
                and is_number(expr.args[0], numbers, number_stacks, vectors)
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr == "pop" and isinstance(func.value, ast.Name):
            return func.value.id in number_stacks
        if isinstance(func, ast.Name) and func.id in ("like", "float") and len(expr.args) == 1:
            return is_number(expr.args[0], numbers, number_stacks, vectors)
    return False


def _bindings(fn: ast.FunctionDef):
    """(name, value or None for a binding that is not of a name to one expression) for every binding."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id, node.value
                else:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                            yield name.id, None
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, node.value
        elif isinstance(node, (ast.For, ast.comprehension)):
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    yield name.id, ast.Constant(0) if _is_range(node.iter) else None   # an int


def _is_range(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "range"


def _pushes(fn: ast.FunctionDef):
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "push" \
                and isinstance(node.func.value, ast.Name) and len(node.args) == 1:
            yield node.func.value.id, node.args[0]


def number_names(fn: ast.FunctionDef, number_params: set, vectors: set = frozenset()) -> set:
    """The names of `fn` that always hold a number, given the parameters that are passed numbers (and the
    names that hold vectors)."""
    bindings = list(_bindings(fn))
    pushes = list(_pushes(fn))
    params = {a.arg for a in fn.args.args}
    numbers = ({name for name, _ in bindings} - params) | set(number_params)
    stacks = {name for name, _ in pushes}
    while True:
        kept = {n for n in numbers if n in number_params or n not in params}
        for name, value in bindings:
            if name in kept and (value is None or not is_number(value, numbers, stacks, vectors)):
                kept.discard(name)
        kept_stacks = {s for s in stacks
                       if all(is_number(v, numbers, stacks, vectors) for n, v in pushes if n == s)}
        if kept == numbers and kept_stacks == stacks:
            return numbers
        numbers, stacks = kept, kept_stacks


def vector_names(fn: ast.FunctionDef, numbers: set) -> set:
    """Names bound only to new vectors (``np.zeros(n)`` and the like, n a number) and to writes into them."""
    bindings: dict = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                        bindings.setdefault(name.id, []).append(node.value if target is name else None)
        elif isinstance(node, (ast.AugAssign, ast.For)):
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    bindings.setdefault(name.id, []).append(None)
    vectors = set(bindings) - {a.arg for a in fn.args.args}
    while True:
        kept = {name for name in vectors if all(_is_vector(v, vectors, numbers) for v in bindings[name])}
        if kept == vectors:
            return vectors
        vectors = kept


def _is_vector(value, vectors: set, numbers: set) -> bool:
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if ast.unparse(func).startswith("np.") and isinstance(func, ast.Attribute) and func.attr in MADE:
        return len(value.args) >= 1 and is_number(value.args[0], numbers, set(), vectors)
    return isinstance(func, ast.Name) and func.id == "setitem" and len(value.args) == 3 \
        and isinstance(value.args[0], ast.Name) and value.args[0].id in vectors \
        and is_number(value.args[1], numbers, set(), vectors) and is_number(value.args[2], numbers, set(), vectors)


def typed_names(fn: ast.FunctionDef, number_params: set) -> tuple[set, set]:
    """(the names that always hold a number, the names that always hold a vector) of `fn`: the largest sets
    consistent with each other."""
    vectors = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} - {a.arg for a in fn.args.args}
    while True:
        numbers = number_names(fn, number_params, vectors)
        kept = vector_names(fn, numbers) & vectors
        if kept == vectors:
            return numbers, vectors
        vectors = kept
