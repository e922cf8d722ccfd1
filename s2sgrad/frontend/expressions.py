"""Part of stage 2: lowering one expression of the user's code to an `ir.Op` or an atom.

Each operator, subscript, literal and attribute becomes an `Op` of a plain function, its operands
atoms (bound to temporaries first); ``and``/``or`` and ``a if c else b`` become branches, as Python
evaluates them; a name is its current single-assignment version, or the module-level object it names.
Calls are `calls`' job.

    >>> from s2sgrad.frontend.lower import lowered_source
    >>> def f(x, y):
    ...     return (x.T * y[1:]) ** 2 - x.ndim
    >>> print(lowered_source(f), end="")
    def f(x, y):
        t = np.transpose(x)
        item = y[1:]
        prod = t * item
        power = prod ** 2
        t_1 = np.ndim(x)
        diff = power - t_1
        return diff
"""
from __future__ import annotations

import operator

import gast
import numpy as np

from .. import runtime
from ..ir import primitives
from ..ir.names import generated_names, meaning
from ..ir.nodes import Const, Global, If, Op, Var
from ..rules.registry import hashable
from .callable_values import Table, is_callable_value
from .hints import local_attribute, syntax_hint, syntax_name
from .parse import MISSING

ATTRIBUTES = {"T": np.transpose, "shape": np.shape, "ndim": np.ndim, "size": np.size, "dtype": np.result_type,
              "real": np.real, "imag": np.imag}


class Expressions:
    """Lowers the expressions of the function `lowerer` lowers, emitting what they compute into its block.

    `fields`: the parameters known to hold named tuples, with their fields' names.
    """

    def __init__(self, lowerer, fields: dict):
        self.lowerer = lowerer
        self.parsed = lowerer.parsed
        self.names = lowerer.names
        self.aliasing = lowerer.aliasing
        self.fields = fields

    def value(self, node):
        """Lower an expression to an Op or an atom."""
        self.lowerer.node = node if hasattr(node, "lineno") else self.lowerer.node
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            kind = type(node).__name__
            raise self.lowerer.error(f"{syntax_name(kind)} is not supported in a differentiated function", node,
                                     syntax_hint(kind))
        return method(node)

    def expr_Constant(self, node):
        return Const(node.value)

    def expr_Name(self, node):
        return self.name_atom(node.id, node)

    def expr_BinOp(self, node):
        left, right = self.lowerer.atom(node.left), self.lowerer.atom(node.right)
        return Op(primitives.BINARY_OF_AST[type(node.op).__name__], [left, right])

    def expr_UnaryOp(self, node):
        operand = self.lowerer.atom(node.operand)
        if isinstance(operand, Const) and isinstance(node.op, gast.USub):
            return Const(-operand.value)
        return Op(primitives.UNARY_OF_AST[type(node.op).__name__], [operand])

    def expr_Compare(self, node):
        if len(node.ops) == 1:
            left, right = self.lowerer.atom(node.left), self.lowerer.atom(node.comparators[0])
            fn = primitives.COMPARE_OF_AST.get(type(node.ops[0]).__name__)
            if fn is operator.contains or isinstance(node.ops[0], gast.In):
                return Op(operator.contains, [right, left])
            if isinstance(node.ops[0], gast.NotIn):
                return Op(primitives.not_in, [right, left])
            return Op(fn, [left, right])
        pairs = []
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            pairs.append(gast.Compare(left=left, ops=[op], comparators=[right]))
            left = right
        return self.value(gast.BoolOp(op=gast.And(), values=pairs))

    def expr_BoolOp(self, node):
        """``a and b`` evaluates b only if a is true: a branch, as Python runs it.

        Conditions that cannot fail or change anything (comparisons of names and
        constants) are combined directly instead.
        """
        if all(_is_plain_condition(v) for v in node.values):
            combine = primitives.both if isinstance(node.op, gast.And) else primitives.either
            atoms = [self.lowerer.atom(v) for v in node.values]
            result = atoms[0]
            for atom in atoms[1:]:
                result = self.lowerer.bind(Op(combine, [result, atom]), "test")
            return result
        first = self.lowerer.atom(node.values[0])
        if len(node.values) == 1:
            return first
        rest = gast.BoolOp(op=node.op, values=node.values[1:]) if len(node.values) > 2 else node.values[1]
        saved_out = self.lowerer.out
        self.lowerer.out = []
        with self.lowerer.user_calls.rebinding_scope(None):
            second = self.lowerer.atom(rest)
        branch = self.lowerer.out
        self.lowerer.out = saved_out
        result = self.names.fresh("either" if isinstance(node.op, gast.Or) else "both", temporary=True)
        if isinstance(node.op, gast.And):
            stmt = If(first, branch, [second], [], [first], [result], self.parsed.location(node))
        else:
            stmt = If(first, [], [first], branch, [second], [result], self.parsed.location(node))
        self.lowerer.out.append(stmt)
        return Var(result)

    def expr_IfExp(self, node):
        test = self.lowerer.atom(node.test)
        saved_out = self.lowerer.out
        self.lowerer.out = []
        with self.lowerer.user_calls.rebinding_scope(None):
            then = self.lowerer.atom(node.body)
            then_block = self.lowerer.out
            self.lowerer.out = []
            orelse = self.lowerer.atom(node.orelse)
        else_block = self.lowerer.out
        self.lowerer.out = saved_out
        result = self.names.fresh("chosen", temporary=True)
        self.lowerer.out.append(If(test, then_block, [then], else_block, [orelse], [result],
                                   self.parsed.location(node)))
        return Var(result)

    def expr_Tuple(self, node):
        items = [self.lowerer.atom(e) for e in node.elts]
        if all(isinstance(i, Const) for i in items):
            return Const(tuple(i.value for i in items))
        return Op(primitives.make_tuple, items)

    def expr_List(self, node):
        return Op(primitives.make_list, [self.lowerer.atom(e) for e in node.elts])

    def expr_Subscript(self, node):
        known = self.value_kind(node.value)
        if isinstance(known, Global) and any(known.value is maker for maker in (np.r_, np.c_)):
            return self.index_concatenation(known, node)
        value = self.lowerer.atom(node.value)
        return Op(operator.getitem, [value, self.index(node.slice)])

    def index_concatenation(self, maker: Global, node):
        """``np.r_[a, b]`` is ``np.concatenate([np.atleast_1d(a), np.atleast_1d(b)])``, ``np.c_[a, b]`` joins
        `as_column` pieces along the last axis; with slices or directives, only constants."""
        items = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        if any(isinstance(i, gast.Slice) or isinstance(i, gast.Constant) and isinstance(i.value, str) for i in items):
            if all(isinstance(n, (gast.Constant, gast.Slice, gast.Tuple, gast.UnaryOp, gast.expr_context, gast.unaryop))
                   for i in items for n in gast.walk(i)):
                return Op(operator.getitem, [self.lowerer.atom(node.value), self.index(node.slice)])
            raise self.lowerer.error(f"{maker.name}[...] with slices or directives is only supported on constants",
                                     node, "use np.concatenate, np.arange or np.column_stack")
        piece = np.atleast_1d if maker.value is np.r_ else runtime.as_column
        pieces = [self.lowerer.bind(Op(piece, [self.lowerer.atom(i)]), "piece") for i in items]
        joined = self.lowerer.bind(Op(primitives.make_list, pieces), "pieces")
        return Op(np.concatenate, [joined], {} if maker.value is np.r_ else {"axis": Const(-1)})

    def index(self, node):
        """An index expression (ints, slices, None, ..., arrays, tuples of them) as one atom."""
        if isinstance(node, gast.Slice):
            parts = [self.lowerer.atom(p) if p is not None else Const(None)
                     for p in (node.lower, node.upper, node.step)]
            if all(isinstance(p, Const) for p in parts):
                return Const(slice(*(p.value for p in parts)))
            return self.lowerer.bind(Op(slice, parts), "index")
        if isinstance(node, gast.Tuple):
            items = [self.index(e) for e in node.elts]
            if all(isinstance(i, Const) for i in items):
                return Const(tuple(i.value for i in items))
            return self.lowerer.bind(Op(primitives.make_tuple, items), "index")
        return self.lowerer.atom(node)

    def expr_Attribute(self, node):
        base = self.value(node.value)
        if isinstance(base, Global):
            value = self.parsed.attribute(base.name, base.value, node.attr)
            if value is MISSING:
                raise self.lowerer.error(f"'{base.name}' has no attribute '{node.attr}'", node)
            return Global(f"{base.name}.{node.attr}", value)
        base = self.lowerer.bind(base, "t")
        read = self.lowerer.objects.attribute(base, node)
        if read is not None:
            return read
        if isinstance(node.value, gast.Name) and node.attr in self.fields.get(node.value.id, ()) \
                and isinstance(base, Var) and base.name == node.value.id:      # a named tuple argument's field
            return Op(operator.getitem, [base, Const(self.fields[node.value.id].index(node.attr))])
        if node.attr in ATTRIBUTES:
            return Op(ATTRIBUTES[node.attr], [base])
        message, hint = local_attribute(node.attr, base, self.lowerer.objects.made_by)
        raise self.lowerer.error(message, node, hint)

    def expr_Call(self, node):
        return self.lowerer.calls.call(node)

    def expr_Lambda(self, node):
        raise self.lowerer.error("a lambda can be called, bound to a name, or passed to a function of yours, not "
                                 "used as a value otherwise", node, "write the computation out, or with a def")

    def expr_Lowered(self, node):
        """An argument `callables` lowered already."""
        if is_callable_value(node.atom):
            raise self.lowerer.error("a function bound by functools.partial can only be called here", node)
        return node.atom

    def expr_JoinedStr(self, node):
        values = []

        def template(joined) -> str:
            text = ""
            for part in joined.values:
                if isinstance(part, gast.Constant):
                    text += str(part.value).replace("{", "{{").replace("}", "}}")
                    continue
                values.append(self.lowerer.atom(part.value))
                index = str(len(values) - 1)
                conversion = "" if part.conversion in (-1, None) else "!" + chr(part.conversion)
                spec = ":" + template(part.format_spec) if part.format_spec is not None else ""
                text += "{" + index + conversion + spec + "}"
            return text
        text = template(node)
        if not values:
            return Const(text)
        return Op(runtime.format_string, [Const(text), *values])

    def expr_Dict(self, node):
        return self.lowerer.mappings.display(node)

    def expr_Starred(self, node):
        raise self.lowerer.error("*xs (unpacking) in a list, tuple or set display is not supported", node,
                                 "build the sequence another way: list(xs), xs + [y], or np.concatenate([...]) for "
                                 "arrays")

    def name_atom(self, name: str, node):
        if hasattr(node, "resolved"):             # a builtin or runtime function desugaring calls
            return Global(name, node.resolved)
        stale = self.aliasing.stale(name)
        if stale is not None:
            raise self.lowerer.stale_error(name, stale, node)
        if name in self.lowerer.env:
            local = self.lowerer.env[name]
            if isinstance(local, Global):             # a function or module passed as an argument
                return local
            if isinstance(local, Table):
                raise self.lowerer.error(
                    "a list or dict of functions can only be indexed by a constant here: a loop over it, or another "
                    "use of it as a value, would call functions known only when the code runs", node,
                    "call each function in its own line, or write a helper taking the function and call it once "
                    "for each")
            if is_callable_value(local):
                raise self.lowerer.error(f"the local function '{name}' can only be called or passed to a user "
                                         "function", node, "call it, or pass it to a function of yours")
            if self.lowerer.maybe_unbound.get(name) == local:     # an error, as in Python, if no trip bound it
                return self.lowerer.bind(Op(runtime.read_after_loop, [Var(local), Const(name)]), name)
            return Var(local)
        if name in self.lowerer.deleted:
            raise self.lowerer.error(f"'{name}' is read after 'del {name}' (line "
                                     f"{self.parsed.location(self.lowerer.deleted[name]).line})", node)
        if name in self.lowerer.loop_locals:
            raise self.lowerer.error(f"'{name}' is assigned inside a loop or branch but not before it", node,
                                     f"assign an initial value to '{name}' before the loop or branch")
        value = self.parsed.resolve(name)
        if value is MISSING:
            raise self.lowerer.error(f"name '{name}' is not defined", node)
        if value is None or isinstance(value, (bool, str)):
            return Const(value)
        return self.global_atom(name, value)

    def global_atom(self, name: str, value) -> Global:
        """The user's free name `name`, renamed where generated code means something else by it
        (a global ``like = 0.5`` is ``like_1`` in generated code, which calls runtime's ``like``)."""
        if name in generated_names() and value is not meaning(name):
            if name not in self.lowerer.global_names:
                self.lowerer.global_names[name] = self.names.fresh(name)
            name = self.lowerer.global_names[name]
        return Global(name, value)

    def value_kind(self, node):
        """Without emitting code: a Global if `node` names a module-level object, else None."""
        if isinstance(node, gast.Name):
            if hasattr(node, "resolved"):
                return Global(node.id, node.resolved)
            if isinstance(self.lowerer.env.get(node.id), Global):
                return self.lowerer.env[node.id]          # a function or module passed as an argument
            if node.id in self.lowerer.env or node.id in self.lowerer.loop_locals:
                return None
            value = self.parsed.resolve(node.id)
            return self.global_atom(node.id, value) if value is not MISSING else None
        if isinstance(node, gast.Attribute):
            base = self.value_kind(node.value)
            value = self.parsed.attribute(base.name, base.value, node.attr) if isinstance(base, Global) else MISSING
            if value is not MISSING:
                return Global(f"{base.name}.{node.attr}", value)
        return None

    def resolve_callee(self, node):
        """The object a call's function expression names in the user's namespace, or None."""
        callee = self.value_kind(node)
        return hashable(callee.value) if isinstance(callee, Global) else None


def temporary_hint(node) -> str:
    """What to call the temporary holding the value of `node` (``sum``, ``item``, ``test``, ...)."""
    return _hint(_kind_of(node))


def _kind_of(node) -> str:
    if isinstance(node, gast.Call):
        func = node.func
        return func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", "t")
    if isinstance(node, gast.BinOp):
        return type(node.op).__name__.lower()
    if isinstance(node, gast.Subscript):
        return "item"
    if isinstance(node, (gast.Compare, gast.BoolOp)) or \
            isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
        return "test"
    return "t"


def _is_plain_condition(node) -> bool:
    """A comparison or negation of names, constants and attributes: evaluating it cannot fail."""
    def simple(n):
        return isinstance(n, (gast.Name, gast.Constant)) or \
            (isinstance(n, gast.Attribute) and simple(n.value))
    if isinstance(node, gast.Compare):
        return simple(node.left) and all(simple(c) for c in node.comparators) \
            and not any(isinstance(op, (gast.In, gast.NotIn)) for op in node.ops)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
        return simple(node.operand) or _is_plain_condition(node.operand)
    if isinstance(node, gast.BoolOp):
        return all(_is_plain_condition(v) for v in node.values)
    return isinstance(node, gast.Constant)


def _hint(name: str) -> str:
    return {"add": "sum", "sub": "diff", "mult": "prod", "div": "quot", "matmult": "matmul",
            "pow": "power"}.get(name, name)
