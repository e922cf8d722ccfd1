"""Inline a forward-mode (tangent) rule at one call site, with zero tangents simplified away.

    >>> import operator
    >>> from s2sgrad.rules import tangent_rule_for
    >>> rule = tangent_rule_for(operator.mul)                 # d[y] = d[a] * b + a * d[b]
    >>> tangents = {"a": ast.Name("da", ast.Load())}          # b has no tangent
    >>> expansion = expand_tangent(rule, Op(operator.mul, [Var("a"), Var("b")]), "y",
    ...                            lambda atom: tangents.get(atom.name), Names())
    >>> ast.unparse(expansion.value)
    'da * b'

The mode over the engine of `templates`: ``d[x]`` in the template becomes the
tangent of the atom bound to `x`: an expression, or a zero marker where the atom
has no tangent (a constant, an inactive value). Zeros are simplified symbolically:
``0 * e``, ``0 / e``, ``-0``, ``0[i]`` and a call whose tangent arguments are all
zero are zero (tangent templates are linear in the tangents); ``e + 0`` is `e`. A
zero that does not simplify away becomes ``zeros_like(x)`` (``0.0`` where NumPy
broadcasts it: the branches of ``np.where``, the value of ``setitem``).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from ..ir import primitives
from ..ir.names import Names
from ..ir.nodes import Op, Var, atom_expr
from ..ir.trees import Transformer, copy_tree
from ..rules.registry import Rule, refusal
from .templates import Simplify, Substitute, bind, dotted, drop_dead, fold, is_number, materialize, picked_branch

# Calls that add their arguments: a zero argument is left out.
SUMS = {"add_grads"}
# Calls that broadcast a zero in these positions: it is written as this constant.
ZERO_FILLS = {"np.where": {1: 0.0, 2: 0.0}, "setitem": {2: 0.0}, "np.select": {2: 0.0},
              "einsum_grad_tangent": {1: None, 4: None}, "tensorsolve_tangent": {0: None, 1: None}}


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


def _is_zero(node) -> bool:
    return isinstance(node, _Zero)


def _zero_like(node) -> _Zero:
    """The zero that `node`, an expression whose tangent terms are all zero, stands for."""
    return _Zero(_materialize(copy_tree(node)))


def _has_tangent(node) -> bool:
    return any(getattr(n, "carries_tangent", False) or isinstance(n, _Zero) for n in ast.walk(node))


def _tangent_name(name: str, carries: bool, narrow: bool) -> ast.Name:
    """A name holding a tangent (`carries`), which may have an argument's shape rather than the result's (`narrow`)."""
    node = ast.Name(name, ast.Load())
    node.carries_tangent, node.narrow = carries, narrow
    return node


def _narrow(node) -> bool:
    """Might `node` have the shape of one argument's tangent rather than of the result?"""
    if getattr(node, "narrow", False):
        return True
    if isinstance(node, ast.UnaryOp):
        return _narrow(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        return (_narrow(node.left) and is_number(node.right)) or (is_number(node.left) and _narrow(node.right))
    return False


class _Substitute(Substitute):
    """``d[x]``: the tangent of the atom bound to x (a tuple for a ``*items`` parameter, None marking a zero)."""

    def __init__(self, rule, binding, result, tangent_of, temps):
        super().__init__(binding, rule.output, result, temps)   # temps: name -> a Name (see _tangent_name), or a _Zero
        self.rule = rule
        self.tangent_of = tangent_of

    def tangent(self, atom) -> ast.expr:
        expr = self.tangent_of(atom) if isinstance(atom, Var) else None
        if expr is None:
            return _Zero(atom_expr(atom))
        expr = copy_tree(expr)
        expr.carries_tangent = expr.narrow = True
        return expr

    def derivative(self, node):
        bound = self.binding.atoms.get(node.slice.id) if isinstance(node.slice, ast.Name) else None
        if bound is None:
            raise self.rule.error(f"{ast.unparse(node)} reads the tangent of {ast.unparse(node.slice)!r}, which is "
                                  f"not a parameter of the template", node)
        if isinstance(bound, tuple):
            items = [self.tangent(a) for a in bound]
            if all(_is_zero(i) for i in items):
                return _Zero(ast.Tuple([atom_expr(a) for a in bound], ast.Load()))
            return ast.Tuple([ast.Constant(None) if _is_zero(i) else i for i in items], ast.Load())
        return self.tangent(bound)


class _Simplify(Simplify):
    """The engine's simplification, with zero tangents simplified away first."""

    def __init__(self):
        self.dropped = False                  # a zero term of a sum was left out
        self.filled = False                   # a zero was written 0.0 where np.where broadcasts it

    def trusted(self, call):
        return bool(call.args) and _has_tangent(call.args[0])

    def drop_zero_term(self, survivor):
        self.dropped = True
        return survivor

    def binop(self, node):
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
        return super().binop(node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if _is_zero(node.operand) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return node.operand
        return fold(node)

    def ifexp(self, node):
        node = super().ifexp(node)
        if not isinstance(node, ast.IfExp):
            return node
        if _is_zero(node.body) and _is_zero(node.orelse):
            return _zero_like(node)
        if not _is_zero(node.body) and ast.dump(node.body) == ast.dump(node.orelse):
            return node.body
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if _is_zero(node.value):
            return _Zero(ast.Subscript(node.value.like, _materialize(node.slice), ast.Load()))
        node.slice = primitives.index_expression(_materialize(node.slice))
        return node

    def visit_Tuple(self, node):
        self.generic_visit(node)
        if node.elts and all(_is_zero(e) for e in node.elts):
            return _Zero(ast.Tuple([e.like for e in node.elts], ast.Load()))
        return node

    def call(self, node):
        picked = picked_branch(node)
        if picked is not None:
            return picked
        name = dotted(node.func)
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
        if name == "no_derivative":                         # no_derivative("...", d[a]) with a tangent in a
            raise refusal(node)
        for position, fill in ZERO_FILLS.get(name, {}).items():
            if position < len(node.args) and _is_zero(node.args[position]):
                node.args[position] = ast.Constant(fill)
                self.filled |= name == "np.where"
        return super().call(node)


def _commuted_products(left, right) -> bool:
    """``a * b`` and ``b * a`` (the tangent of ``x * x``)."""
    return all(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) for n in (left, right)) \
        and ast.dump(left.left) == ast.dump(right.right) and ast.dump(left.right) == ast.dump(right.left)


def _materialize(node):
    """`node` with its defaults and zeros written out: zeros as ``zeros_like(x)`` (``0.0`` for a number)."""
    class Plain(Transformer):
        def visit__Zero(self, zero):
            if isinstance(zero.like, ast.Constant) and type(zero.like.value) in (int, float):
                return ast.Constant(0.0)
            return ast.Call(ast.Name("zeros_like", ast.Load()), [zero.like], [])
    return Plain().visit(materialize(node))


def expand_tangent(rule: Rule, op: Op, result: str, tangent_of, names: Names, same_shape=None) -> TangentExpansion:
    """The statements and value of `rule` (a tangent rule) applied at `op`, whose value is named `result`.

    `tangent_of(atom)` gives the tangent expression of an atom, or None where it is zero.
    `same_shape(atom)` says whether an argument certainly has the result's shape. Where
    leaving out a zero term leaves an argument's tangent alone (``da`` for ``a + b``),
    it is spread to the result's shape with ``broadcast_like``, unless every argument
    with a tangent certainly has that shape.
    """
    binding = bind(rule, op)
    temps: dict = {}
    statements = []
    value = None
    simplify = _Simplify()
    for stmt in rule.body:
        target = stmt.targets[0]
        substitute = _Substitute(rule, binding, ast.Name(result, ast.Load()), tangent_of, temps)
        expr = simplify.visit(substitute.visit(copy_tree(stmt.value)))
        if isinstance(target, ast.Subscript):                # d[y] = ...
            value = expr
        elif _is_zero(expr):
            temps[target.id] = expr
        else:
            name = names.fresh(target.id, temporary=True)
            temps[target.id] = _tangent_name(name, _has_tangent(expr), _narrow(expr))
            statements.append(ast.Assign([ast.Name(name, ast.Store())], _materialize(expr)))
    if value is None or _is_zero(value):
        return TangentExpansion([], None)
    widened = (simplify.dropped and _narrow(value)) or simplify.filled
    value = _materialize(value)
    if widened and not _all_same_shape(binding.atoms, tangent_of, same_shape):
        value = ast.Call(ast.Name("broadcast_like", ast.Load()), [value, ast.Name(result, ast.Load())], [])
    return TangentExpansion(drop_dead(statements, [value]), value)


def _all_same_shape(atoms, tangent_of, same_shape) -> bool:
    if same_shape is None:
        return False
    flat = [a for bound in atoms.values() for a in (bound if isinstance(bound, tuple) else (bound,))]
    return all(same_shape(a) for a in flat if isinstance(a, Var) and tangent_of(a) is not None)


__all__ = ["TangentExpansion", "expand_tangent"]
