"""The operations of the lowered form, and how each is written back as Python.

Lowering turns every operator, subscript and literal into a call of a plain
function (``a + b`` is ``operator.add(a, b)``, ``(a, b)`` is ``make_tuple(a, b)``),
so that analyses and rules see one kind of thing. `expression` writes such a
call back the way a person would:

    >>> ast.unparse(expression(operator.add, [ast.Name('a'), ast.Name('b')], {}))
    'a + b'
"""
from __future__ import annotations

import ast
import builtins
import inspect
import math
import operator

import numpy as np

from .. import runtime


def is_elementwise_ufunc(fn) -> bool:
    """Is `fn` a ufunc applied element by element (``np.sin``, ``np.add``), not a generalized one with core
    dimensions (``np.matmul``, ``np.vecdot``: their results do not have their arguments' broadcast shape)?

        >>> is_elementwise_ufunc(np.add), is_elementwise_ufunc(np.matmul), is_elementwise_ufunc(len)
        (True, False, False)
    """
    return isinstance(fn, np.ufunc) and fn.signature is None


def make_tuple(*items):
    return items


def make_list(*items):
    return list(items)


def seq_getitem(xs, index):
    """``xs[index]`` on a list, tuple or dict (not an array)."""
    return xs[index]


def attribute(obj, name):
    """``obj.name`` of a record (an object whose fields are differentiated, see `runtime.records`)."""
    return getattr(obj, name)


def static_attribute(obj, name):
    """``obj.name`` of a record where the field holds no floats (an int, a string, a flag): no gradient."""
    return getattr(obj, name)


def astype(x, dtype):
    """``x.astype(dtype)`` (a copy)."""
    return np.asarray(x).astype(dtype)


setitem = runtime.setitem
list_append = runtime.list_append
seq_setitem, seq_concat, seq_repeat = runtime.seq_setitem, runtime.seq_concat, runtime.seq_repeat

BINARY = {
    operator.add: ast.Add, operator.sub: ast.Sub, operator.mul: ast.Mult,
    operator.truediv: ast.Div, operator.floordiv: ast.FloorDiv, operator.mod: ast.Mod,
    operator.pow: ast.Pow, operator.matmul: ast.MatMult, operator.and_: ast.BitAnd,
    operator.or_: ast.BitOr, operator.xor: ast.BitXor, operator.lshift: ast.LShift,
    operator.rshift: ast.RShift,
}
UNARY = {operator.neg: ast.USub, operator.pos: ast.UAdd, operator.not_: ast.Not,
         operator.invert: ast.Invert}
COMPARE = {operator.lt: ast.Lt, operator.le: ast.LtE, operator.gt: ast.Gt, operator.ge: ast.GtE,
           operator.eq: ast.Eq, operator.ne: ast.NotEq, operator.is_: ast.Is,
           operator.is_not: ast.IsNot, operator.contains: ast.In}



def not_in(container, item):
    return item not in container


def both(a, b):
    """``a and b`` of two conditions that are safe to evaluate together."""
    return a and b


def either(a, b):
    """``a or b`` of two conditions that are safe to evaluate together."""
    return a or b


# Syntax node class name (the same in ast and gast) -> the function it applies.
BINARY_OF_AST = {v.__name__: k for k, v in BINARY.items()}
UNARY_OF_AST = {v.__name__: k for k, v in UNARY.items()}
COMPARE_OF_AST = {v.__name__: k for k, v in COMPARE.items()}
COMPARE_OF_AST["NotIn"] = not_in

INTERNAL = {make_tuple: "make_tuple", make_list: "make_list", seq_getitem: "seq_getitem", attribute: "attribute",
             static_attribute: "static_attribute",
             astype: "astype", setitem: "setitem", list_append: "list_append", not_in: "not_in",
             both: "both", either: "either", seq_setitem: "seq_setitem", seq_concat: "seq_concat",
             seq_repeat: "seq_repeat", runtime.format_string: "format_string", runtime.dict_keys: "dict_keys"}
# The functional forms of NumPy's in-place functions (see lower.in_place_call).
WRITERS = {runtime.add_at: "np.add.at", runtime.subtract_at: "np.subtract.at", runtime.maximum_at: "np.maximum.at",
           runtime.minimum_at: "np.minimum.at", runtime.at_copy: None, runtime.written_copy: None}
INTERNAL.update({fn: fn.__name__ for fn in WRITERS})
INTERNAL[runtime.as_column] = "as_column"
INTERNAL.update({fn: fn.__name__ for fn in (runtime.make_dict, runtime.dict_get, runtime.dict_without,
                                            runtime.dict_values, runtime.dict_items, runtime.unpack_starred,
                                            runtime.unpack_filled, runtime.bind_call, runtime.read_after_loop,
                                            runtime.raise_error,
                                            runtime.exception_of)})


def label(fn, args=(), name=None) -> str:
    """How the user wrote the function a call applies, for messages (``np.put`` for its functional form)."""
    if fn in WRITERS:
        if WRITERS[fn]:
            return WRITERS[fn]
        written = getattr(args[0], "name", None) if args else None
        return f"{written}.at" if fn is runtime.at_copy and written else written or fn.__name__
    return python_name(fn) or name or getattr(fn, "__name__", repr(fn))


def python_name(fn) -> str | None:
    """The dotted name generated code uses for a library function, or None for a user's object.

        >>> python_name(np.linalg.norm), python_name(math.exp), python_name(len)
        ('np.linalg.norm', 'math.exp', 'len')
    """
    if fn in INTERNAL:
        return INTERNAL[fn]
    name = getattr(fn, "__name__", None)
    if name is None:
        return None
    if getattr(builtins, name, None) is fn:
        return name
    if getattr(np, name, None) is fn:
        return f"np.{name}"
    module = getattr(fn, "__module__", None) or ""
    if module.startswith("numpy"):
        for sub in ("linalg", "fft", "random"):
            if getattr(getattr(np, sub), name, None) is fn:
                return f"np.{sub}.{name}"
    if getattr(math, name, None) is fn:
        return f"math.{name}"
    if getattr(operator, name, None) is fn:
        return f"operator.{name}"
    return None


def _name_expr(dotted: str) -> ast.expr:
    parts = dotted.split(".")
    node: ast.expr = ast.Name(parts[0], ast.Load())
    for part in parts[1:]:
        node = ast.Attribute(node, part, ast.Load())
    return node


def index_expression(index: ast.expr) -> ast.expr:
    """Write ``slice(a, b, None)`` in a subscript as ``a:b``, also inside a tuple of indices."""
    def one(node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "slice" \
                and not node.keywords and len(node.args) == 3:
            lo, hi, step = (None if isinstance(a, ast.Constant) and a.value is None else a
                            for a in node.args)
            return ast.Slice(lo, hi, step)
        if isinstance(node, ast.Constant) and isinstance(node.value, slice):
            s = node.value
            return ast.Slice(*(None if v is None else ast.Constant(v) for v in (s.start, s.stop, s.step)))
        if isinstance(node, ast.Constant) and node.value is Ellipsis:
            return ast.Constant(...)
        return node
    if isinstance(index, ast.Tuple):
        return ast.Tuple([one(e) for e in index.elts], ast.Load())
    if isinstance(index, ast.Constant) and isinstance(index.value, tuple):
        return ast.Tuple([one(constant(e)) for e in index.value], ast.Load())
    return one(index)


def constant(value) -> ast.expr:
    """A literal Python value as an expression (tuples and slices included)."""
    if isinstance(value, tuple):
        return ast.Tuple([constant(v) for v in value], ast.Load())
    if isinstance(value, slice):
        return ast.Call(ast.Name("slice", ast.Load()),
                        [constant(value.start), constant(value.stop), constant(value.step)], [])
    if isinstance(value, float) and not math.isfinite(value):
        return ast.Call(ast.Name("float", ast.Load()), [ast.Constant(repr(value))], [])
    return ast.Constant(value)


def expression(fn, args: list[ast.expr], kwargs: dict[str, ast.expr], name: str | None = None) -> ast.expr:
    """The Python expression that applies `fn` (written `name` if given) to `args` and `kwargs`."""
    if not kwargs:
        if fn in BINARY and len(args) == 2:
            return ast.BinOp(args[0], BINARY[fn](), args[1])
        if fn in UNARY and len(args) == 1:
            return ast.UnaryOp(UNARY[fn](), args[0])
        if fn in COMPARE and len(args) == 2:
            if fn is operator.contains:
                return ast.Compare(args[1], [ast.In()], [args[0]])
            return ast.Compare(args[0], [COMPARE[fn]()], [args[1]])
        if fn is not_in:
            return ast.Compare(args[1], [ast.NotIn()], [args[0]])
        if fn in (both, either):
            return ast.BoolOp(ast.And() if fn is both else ast.Or(), list(args))
        if fn in (operator.getitem, seq_getitem) and len(args) == 2:
            return ast.Subscript(args[0], index_expression(args[1]), ast.Load())
        if fn in (attribute, static_attribute) and len(args) == 2 and isinstance(args[1], ast.Constant):
            return ast.Attribute(args[0], args[1].value, ast.Load())
        if fn is make_tuple:
            return ast.Tuple(list(args), ast.Load())
        if fn is make_list:
            return ast.List(list(args), ast.Load())
        if fn is astype and len(args) == 2:
            return ast.Call(ast.Attribute(args[0], "astype", ast.Load()), [args[1]], [])
    dotted = name or python_name(fn)
    if dotted is None:
        raise ValueError(f"no name to write {fn!r} with")
    if not kwargs and inspect.isfunction(fn) and fn not in INTERNAL and not runtime.is_runtime_function(fn):
        args, keywords = _as_bound(fn, args)
        return ast.Call(_name_expr(dotted), args, keywords)
    return ast.Call(_name_expr(dotted), list(args),
                    [ast.keyword(k, v) for k, v in kwargs.items()])


def _as_bound(fn, args: list) -> tuple[list, list]:
    """A user function's call, whose atoms lowering bound to each of its parameters in order (``*xs`` a tuple,
    ``**kw`` a dict, see `frontend.signatures`), written as a call of the function itself."""
    params = list(inspect.signature(fn, follow_wrapped=False).parameters.values())
    if len(params) != len(args) or all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params):
        return list(args), []
    positional, keywords = [], []
    for p, arg in zip(params, args):
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional.append(arg)
        elif p.kind is p.VAR_POSITIONAL:
            positional.append(ast.Starred(arg, ast.Load()))
        elif p.kind is p.KEYWORD_ONLY:
            keywords.append(ast.keyword(p.name, arg))
        else:
            keywords.append(ast.keyword(None, arg))
    return positional, keywords
