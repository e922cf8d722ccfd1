"""Inline a forward-mode (tangent) rule at one call site, with zero tangents simplified away.

    >>> import operator
    >>> from s2sgrad.rules import tangent_rule_for
    >>> rule = tangent_rule_for(operator.mul)                 # d[y] = d[a] * b + a * d[b]
    >>> tangents = {"a": ast.Name("da", ast.Load())}          # b has no tangent
    >>> expansion = expand_tangent(rule, Op(operator.mul, [Var("a"), Var("b")]), "y",
    ...                            lambda atom: tangents.get(atom.name), Names())
    >>> ast.unparse(expansion.value)
    'da * b'

``d[x]`` in the template becomes the tangent of the atom bound to `x`: an
expression, or a zero marker where the atom has no tangent (a constant, an
inactive value). Zeros are simplified symbolically: ``0 * e``, ``0 / e``,
``-0``, ``0[i]`` and a call whose tangent arguments are all zero are zero
(tangent templates are linear in the tangents); ``e + 0`` is `e`. A zero that
does not simplify away becomes ``zeros_like(x)`` (``0.0`` where NumPy
broadcasts it: the branches of ``np.where``, the value of ``setitem``).

A parameter the call left at its default is left out of the template's calls
too, where the function called has the same default (``np.sum(dx)``, not
``np.sum(dx, axis=None, keepdims=False)``).
"""
from __future__ import annotations

import ast
import builtins
import copy
import inspect
import math
import operator
import warnings
from dataclasses import dataclass

import numpy as np

from .. import runtime
from ..ir import primitives
from ..ir.names import Names
from ..ir.nodes import Op, Var, atom_expr
from ..rules.registry import Rule
from .inline import bind

# Calls that add their arguments: a zero argument is left out.
SUMS = {"add_grads"}
# Calls that broadcast a zero in these positions: it is written as this constant.
ZERO_FILLS = {"np.where": {1: 0.0, 2: 0.0}, "setitem": {2: 0.0},
              "einsum_grad_tangent": {1: None, 4: None}}


@dataclass
class TangentExpansion:
    """The statements a tangent rule needs before its value, and the value (None: the tangent is zero)."""
    statements: list
    value: ast.expr | None


class _Zero(ast.expr):
    """A tangent known to be zero; `like` is the primal value it is the tangent of."""
    _fields = ()

    def __init__(self, like: ast.expr = None):
        super().__init__()
        self.like = like


class _Default(ast.expr):
    """A parameter the call left at its default value `value`."""
    _fields = ()

    def __init__(self, value=None):
        super().__init__()
        self.value = value


def _is_zero(node) -> bool:
    return isinstance(node, _Zero)


def _zero_like(node) -> _Zero:
    """The zero that `node`, an expression whose tangent terms are all zero, stands for."""
    return _Zero(_Materialize().visit(copy.deepcopy(node)))


def _dotted(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _has_tangent(node) -> bool:
    return any(getattr(n, "carries_tangent", False) or isinstance(n, _Zero) for n in ast.walk(node))


def _tangent_name(name: str, carries: bool, narrow: bool) -> ast.Name:
    """A name holding a tangent (`carries`), which may have an argument's shape rather than the result's (`narrow`)."""
    node = ast.Name(name, ast.Load())
    node.carries_tangent, node.narrow = carries, narrow
    return node


def _number(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _narrow(node) -> bool:
    """Might `node` have the shape of one argument's tangent rather than of the result?"""
    if getattr(node, "narrow", False):
        return True
    if isinstance(node, ast.UnaryOp):
        return _narrow(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        return (_narrow(node.left) and _number(node.right)) or (_number(node.left) and _narrow(node.right))
    return False


class _Substitute(ast.NodeTransformer):
    """Put the call's atoms, tangents and names into a copy of the template."""

    def __init__(self, bindings, defaulted, output, result, tangent_of, temps):
        self.bindings = bindings
        self.defaulted = defaulted
        self.output = output
        self.result = result
        self.tangent_of = tangent_of
        self.temps = temps                    # template name -> a Name (see _tangent_name), or a _Zero

    def tangent(self, atom) -> ast.expr:
        expr = self.tangent_of(atom) if isinstance(atom, Var) else None
        if expr is None:
            return _Zero(atom_expr(atom))
        expr = copy.deepcopy(expr)
        expr.carries_tangent = expr.narrow = True
        return expr

    def visit_Subscript(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == "d":
            bound = self.bindings[node.slice.id]
            if isinstance(bound, tuple):            # d[items] of a *items parameter: None marks a zero
                items = [self.tangent(a) for a in bound]
                if all(_is_zero(i) for i in items):
                    return _Zero(ast.Tuple([atom_expr(a) for a in bound], ast.Load()))
                return ast.Tuple([ast.Constant(None) if _is_zero(i) else i for i in items], ast.Load())
            return self.tangent(bound)
        self.generic_visit(node)
        return node

    def visit_Name(self, node):
        if node.id == self.output:
            return ast.Name(self.result, ast.Load())
        if node.id in self.defaulted:
            return _Default(self.bindings[node.id].value)
        if node.id in self.bindings:
            bound = self.bindings[node.id]
            if isinstance(bound, tuple):
                return ast.Tuple([atom_expr(a) for a in bound], ast.Load())
            return atom_expr(bound)
        if node.id in self.temps:
            return copy.deepcopy(self.temps[node.id])
        return node


class _Simplify(ast.NodeTransformer):
    """Simplify zero tangents and constants, bottom up."""

    def __init__(self):
        self.dropped = False                  # a zero term of a sum was left out
        self.filled = False                   # a zero was written 0.0 where np.where broadcasts it

    def drop_zero_term(self, survivor):
        self.dropped = True
        return survivor

    def visit_BinOp(self, node):
        self.generic_visit(node)
        node.left, node.right = _constants(node.left), _constants(node.right)
        left, right, op = node.left, node.right, node.op
        if isinstance(op, (ast.Add, ast.Sub)):
            if _is_zero(left) and _is_zero(right):
                return _zero_like(node)
            if _is_zero(right):
                return self.drop_zero_term(left)
            if _is_zero(left):
                survivor = right if isinstance(op, ast.Add) else ast.UnaryOp(ast.USub(), right)
                return self.drop_zero_term(survivor)
            if isinstance(op, ast.Add) and _commuted_products(left, right):
                return ast.BinOp(ast.BinOp(ast.Constant(2.0), ast.Mult(), left.left), ast.Mult(), left.right)
        elif isinstance(op, (ast.Mult, ast.MatMult)) and (_is_zero(left) or _is_zero(right)):
            return _zero_like(node)
        elif isinstance(op, (ast.Div, ast.FloorDiv)) and _is_zero(left):
            return _zero_like(node)
        if _number(left) and _number(right):
            try:
                return ast.Constant(_BINARY[type(op)](left.value, right.value))
            except (KeyError, ArithmeticError):
                return node
        one = lambda n: _number(n) and n.value == 1  # noqa: E731
        zero = lambda n: _number(n) and n.value == 0  # noqa: E731
        if isinstance(op, (ast.Add, ast.Sub)) and zero(right) or isinstance(op, ast.Add) and zero(left):
            return left if zero(right) else right          # x - 0, x + 0 (a parameter's default of 0)
        if isinstance(op, (ast.Pow, ast.Mult, ast.Div)) and one(right):
            return left                                     # x ** 1, x * 1, x / 1
        if isinstance(op, ast.Mult) and one(left):
            return right
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if _is_zero(node.operand) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return node.operand
        return _fold(node)

    def visit_Compare(self, node):
        self.generic_visit(node)
        return _fold(node)

    visit_BoolOp = visit_Compare

    def visit_IfExp(self, node):
        self.generic_visit(node)
        test = _constant_value(node.test)
        if test is not _UNKNOWN:
            return node.body if test else node.orelse
        if _is_zero(node.body) and _is_zero(node.orelse):
            return _zero_like(node)
        if not _is_zero(node.body) and ast.dump(node.body) == ast.dump(node.orelse):
            return node.body
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if _is_zero(node.value):
            return _Zero(ast.Subscript(node.value.like, _constants(node.slice), ast.Load()))
        node.slice = primitives.index_expression(_constants(node.slice))
        return node

    def visit_Tuple(self, node):
        self.generic_visit(node)
        if node.elts and all(_is_zero(e) for e in node.elts):
            return _Zero(ast.Tuple([e.like for e in node.elts], ast.Load()))
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        name = _dotted(node.func)
        if name == "np.where" and len(node.args) == 3 and not node.keywords \
                and type(_constant_value(node.args[0])) is bool:
            return node.args[1] if _constant_value(node.args[0]) else node.args[2]   # the branch a constant picks
        if name in SUMS:
            kept = [a for a in node.args if not _is_zero(a)]
            if not kept:
                return _zero_like(node)
            if len(kept) == 1:
                return kept[0]
            node.args = kept
            return node
        arguments = list(node.args) + [k.value for k in node.keywords]
        tangents = [a for a in arguments if _has_tangent(a)]
        if tangents and all(_is_zero(a) for a in tangents):
            return _zero_like(node)                         # linear in its tangents, all zero
        for position, fill in ZERO_FILLS.get(name, {}).items():
            if position < len(node.args) and _is_zero(node.args[position]):
                node.args[position] = ast.Constant(fill)
                self.filled |= name == "np.where"
        _leave_out_defaults(node, trusted=bool(node.args) and _has_tangent(node.args[0]))
        if name and name.startswith("math.") and not node.keywords \
                and all(isinstance(_constants(a), ast.Constant) for a in node.args):
            try:
                return ast.Constant(_callee(name)(*(_constants(a).value for a in node.args)))
            except (TypeError, ValueError, ArithmeticError):
                return node
        return node


def _commuted_products(left, right) -> bool:
    """``a * b`` and ``b * a`` (the tangent of ``x * x``)."""
    return all(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) for n in (left, right)) \
        and ast.dump(left.left) == ast.dump(right.right) and ast.dump(left.right) == ast.dump(right.left)


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.Pow: operator.pow}
_UNKNOWN = object()


def _constant_value(node):
    node = _constants(node)
    return node.value if isinstance(node, ast.Constant) else _UNKNOWN


def _fold(node):
    """Evaluate a comparison, boolean or unary operation of constants (``None in (None, 'fro')``)."""
    node = _constants(node)
    if all(isinstance(n, (ast.Constant, ast.Tuple, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.cmpop, ast.boolop,
                          ast.unaryop, ast.expr_context)) for n in ast.walk(node)):
        try:
            with warnings.catch_warnings():           # ("2.0 is not None" is a test on constants too)
                warnings.simplefilter("ignore", SyntaxWarning)
                return ast.Constant(eval(compile(ast.Expression(ast.fix_missing_locations(node)), "<tangent rule>",
                                                 "eval"), {"__builtins__": {}}))
        except Exception:
            return node
    return node


class _Materialize(ast.NodeTransformer):
    """Give the markers that remain their values: defaults as constants, zeros as ``zeros_like(x)``."""

    def visit__Default(self, node):
        return primitives.constant(node.value)

    def visit__Zero(self, node):
        if isinstance(node.like, ast.Constant) and type(node.like.value) in (int, float):
            return ast.Constant(0.0)
        return ast.Call(ast.Name("zeros_like", ast.Load()), [node.like], [])


def _constants(node):
    """`node` with default markers replaced by their constants (for folding and printing)."""
    return _Materialize().visit(node) if any(isinstance(n, _Default) for n in ast.walk(node)) else node


def _callee(name: str | None):
    """The function a dotted name in a template means (``np.sum``, ``math.log``, a runtime helper), or None."""
    if not name:
        return None
    head, *rest = name.split(".")
    value = {"np": np, "math": math}.get(head, getattr(runtime, head, getattr(builtins, head, None)))
    for part in rest:
        value = getattr(value, part, None)
    return value


def _same_default(declared, value) -> bool:
    if declared is getattr(np, "_NoValue", object()):        # NumPy's "not given"
        return value is None or value is False
    return type(declared) is type(value) and declared == value


def _leave_out_defaults(call: ast.Call, trusted: bool) -> None:
    """Drop the arguments of `call` that the rule's call left at their defaults, where the callee's
    default is the same (or, if the callee's signature is unknown, where the call is `trusted`)."""
    try:
        parameters = list(inspect.signature(_callee(_dotted(call.func))).parameters.values())
    except (TypeError, ValueError):
        parameters = None

    def omissible(parameter, marker) -> bool:
        if parameters is None:
            return trusted
        return parameter is not None and parameter.default is not inspect.Parameter.empty \
            and _same_default(parameter.default, marker.value)

    by_name = {p.name: p for p in parameters or []}
    call.keywords = [k for k in call.keywords
                     if not (isinstance(k.value, _Default) and omissible(by_name.get(k.arg), k.value))]
    positional = [p for p in parameters or [] if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    while call.args and isinstance(call.args[-1], _Default):
        index = len(call.args) - 1
        if not omissible(positional[index] if index < len(positional) else None, call.args[-1]):
            break
        call.args.pop()


def expand_tangent(rule: Rule, op: Op, result: str, tangent_of, names: Names, same_shape=None) -> TangentExpansion:
    """The statements and value of `rule` (a tangent rule) applied at `op`, whose value is named `result`.

    `tangent_of(atom)` gives the tangent expression of an atom, or None where it is zero.
    `same_shape(atom)` says whether an argument certainly has the result's shape. Where
    leaving out a zero term leaves an argument's tangent alone (``da`` for ``a + b``),
    it is spread to the result's shape with ``broadcast_like``, unless every argument
    with a tangent certainly has that shape.
    """
    bindings = bind(rule, op)
    passed = rule.signature.bind(*op.args, **op.kwargs).arguments
    defaulted = {name for name in bindings if name not in passed
                 and rule.signature.parameters[name].kind != inspect.Parameter.VAR_POSITIONAL}
    temps: dict = {}
    statements = []
    value = None
    simplify = _Simplify()
    for stmt in rule.body:
        target = stmt.targets[0]
        substitute = _Substitute(bindings, defaulted, rule.output, result, tangent_of, temps)
        expr = simplify.visit(substitute.visit(copy.deepcopy(stmt.value)))
        if isinstance(target, ast.Subscript):                # d[y] = ...
            value = expr
        elif _is_zero(expr):
            temps[target.id] = expr
        else:
            name = names.fresh(target.id, temporary=True)
            temps[target.id] = _tangent_name(name, _has_tangent(expr), _narrow(expr))
            statements.append(ast.Assign([ast.Name(name, ast.Store())], _Materialize().visit(expr)))
    if value is None or _is_zero(value):
        return TangentExpansion([], None)
    widened = (simplify.dropped and _narrow(value)) or simplify.filled
    value = _Materialize().visit(value)
    if widened and not _all_same_shape(bindings, tangent_of, same_shape):
        value = ast.Call(ast.Name("broadcast_like", ast.Load()), [value, ast.Name(result, ast.Load())], [])
    return TangentExpansion(_used(statements, value), value)


def _all_same_shape(bindings, tangent_of, same_shape) -> bool:
    if same_shape is None:
        return False
    atoms = [a for bound in bindings.values() for a in (bound if isinstance(bound, tuple) else (bound,))]
    return all(same_shape(a) for a in atoms if isinstance(a, Var) and tangent_of(a) is not None)


def _used(statements: list, value: ast.expr) -> list:
    """The template temporaries the value needs (directly or through other temporaries)."""
    needed = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    kept = []
    for stmt in reversed(statements):
        if stmt.targets[0].id in needed:
            kept.append(stmt)
            needed |= {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
    return kept[::-1]


__all__ = ["TangentExpansion", "expand_tangent"]
