"""Part of stage 5: exact rewrites of generated arithmetic that save a pass over an array.

Rules compose into expressions a person would write more simply. Each rewrite
here gives the same floating-point result, bit for bit, and saves a whole
elementwise operation where the operands are arrays:

- a negation inside a term that is added or subtracted turns the addition
  into a subtraction (and back): ``g += -(a * b)`` -> ``g -= a * b``,
  ``a + -b * c`` -> ``a - b * c``, ``-a + b`` -> ``b - a``; two negations
  in a product, or a negated negation, cancel;
- scale factors that are powers of two, met in one product, combine (scaling
  by a power of two is exact; only an overflow or a subnormal result could
  tell the difference, and the combined form is the more accurate one):
  ``2 * (g * 0.5 / e * x)`` -> ``g / e * x``; a power of two multiplying a
  product scales its first factor instead, ``2 * (s * t * y)`` ->
  ``2 * s * t * y``, an array operation fewer where s and t are numbers;
- a piece of a list written out is that piece, ``[g[:4], g[4:]][0]`` -> ``g[:4]``, and a slice
  needs no ``grad_or_zeros`` (it is never a missing gradient).

    >>> import ast
    >>> ast.unparse(simplify_arithmetic(ast.parse("dx += -(d * y) * y")))
    'dx -= d * y * y'
"""
from __future__ import annotations

import ast
import math

from ..ir.syntax import is_slice
from ..ir.trees import Transformer


def simplify_arithmetic(tree: ast.AST) -> ast.AST:
    """Apply every rewrite above to `tree`, in place; returns it."""
    _Signs().visit(tree)
    _ScaleFactors().visit(tree)
    _Pieces().visit(tree)
    return tree


class _Pieces(Transformer):
    """``[a, b][0]`` -> ``a``; ``grad_or_zeros(g[:4], x)`` -> ``g[:4]`` (a slice is never a missing gradient)."""

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.value, (ast.List, ast.Tuple)) and isinstance(node.slice, ast.Constant) \
                and type(node.slice.value) is int and -len(node.value.elts) <= node.slice.value < len(node.value.elts):
            return node.value.elts[node.slice.value]
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "grad_or_zeros" and len(node.args) == 2 \
                and is_slice(node.args[0]):
            return node.args[0]
        return node


def _negated(node) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)


def _without_negation(node) -> ast.expr | None:
    """`node` with one negation taken out (``-a * b`` -> ``a * b``), or None if it has none to give."""
    if _negated(node):
        return node.operand
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        for side in ("left", "right"):
            inner = _without_negation(getattr(node, side))
            if inner is not None:
                other = "right" if side == "left" else "left"
                return ast.BinOp(**{side: inner, other: getattr(node, other)}, op=node.op)
    return None


class _Signs(Transformer):
    """A negation inside a term that is added, subtracted or negated becomes the opposite operation."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, (ast.Add, ast.Sub)):
            right = _without_negation(node.right)
            if right is not None:
                return ast.BinOp(node.left, ast.Sub() if isinstance(node.op, ast.Add) else ast.Add(), right)
            left = _without_negation(node.left) if isinstance(node.op, ast.Add) else None
            if left is not None:
                return ast.BinOp(node.right, ast.Sub(), left)
        if isinstance(node.op, (ast.Mult, ast.Div)) and _negated(node.left) and _negated(node.right):
            return ast.BinOp(node.left.operand, node.op, node.right.operand)
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if _negated(node):
            inner = _without_negation(node.operand)
            if inner is not None:
                return inner
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        value = _without_negation(node.value) if isinstance(node.op, (ast.Add, ast.Sub)) else None
        if value is not None:
            node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            node.value = value
        return node


def _power_of_two(node) -> bool:
    if not (isinstance(node, ast.Constant) and type(node.value) in (int, float)) or node.value == 0:
        return False
    mantissa, _ = math.frexp(abs(node.value))
    return math.isfinite(node.value) and mantissa == 0.5


class _ScaleFactors(Transformer):
    """In a product of factors (``*`` anywhere, ``/`` on its left), powers of two combine into the first."""

    def visit_BinOp(self, node):
        if not isinstance(node.op, (ast.Mult, ast.Div)):
            return self.generic_visit(node)
        factors, divides = [], [False]
        _factors(node, factors, divides)
        constants = [f for f in factors if _power_of_two(f[0])]
        if len(constants) >= 2 and (divides[0] or math.prod(c[0].value for c in constants) != 1):
            product = math.prod(c[0].value for c in constants)
            keep, *drop = constants
            keep[0].value = product
            removed = {id(c[0]) for c in drop} | ({id(keep[0])} if product == 1 else set())
            node = _without(node, removed)
        node = _scale_first_factor(node)
        return self.generic_visit(node)


def _scale_first_factor(node) -> ast.expr:
    """``c * (a * b / e)`` -> ``c * a * b / e`` for a power of two c: scaling the first factor scales every
    partial product by c exactly, and costs nothing where that factor is a number and the rest an array."""
    if not isinstance(node, ast.BinOp):
        return node
    for scale, chain in ((node.left, node.right), (node.right, node.left)):
        if isinstance(node.op, ast.Mult) and _power_of_two(scale) and isinstance(chain, ast.BinOp) \
                and isinstance(chain.op, (ast.Mult, ast.Div)):
            factors = []
            _factors(chain, factors, [False])
            if any(isinstance(f, ast.Constant) for f, _ in factors):
                return node                       # (constants in it are combined above, or left alone)
            parent = chain
            while isinstance(parent.left, ast.BinOp) and isinstance(parent.left.op, (ast.Mult, ast.Div)):
                parent = parent.left
            first = parent.left
            parent.left = ast.BinOp(scale, ast.Mult(), first)
            return chain
    return node


def _factors(node, found: list, divides: list) -> None:
    """The leaves of a product (with their parents), entering only multiplicative operands."""
    for child, multiplies in ((node.left, True), (node.right, isinstance(node.op, ast.Mult))):
        if isinstance(node.op, ast.Div):
            divides[0] = True
        if multiplies and isinstance(child, ast.BinOp) and isinstance(child.op, (ast.Mult, ast.Div)):
            _factors(child, found, divides)
        elif multiplies:
            found.append((child, node))


def _without(node, removed: set) -> ast.expr:
    """`node` with the factors in `removed` (by id) taken out of its products."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div))):
        return node
    node.left = _without(node.left, removed)
    if isinstance(node.op, ast.Div) and id(node.left) in removed:
        node.left = ast.Constant(1.0)
    if isinstance(node.op, ast.Mult):
        node.right = _without(node.right, removed)
        if id(node.right) in removed:
            return node.left
        if id(node.left) in removed:
            return node.right
    return node
