"""Part of stage 5: arithmetic of numbers as sums of products, like terms collected (for `coefficients`).

A `Polynomial` is a sum of terms, each a float times a product of factors
raised to integer powers; a factor is a name or an expression taken whole (a
call, a quotient by a sum). Adding and multiplying them collects like terms,
so ``h * (0.1 * y) + h * y * 0.1`` is one term, ``0.2 * h * y``:

    >>> y, h = Polynomial.factor(ast.Name("y")), Polynomial.factor(ast.Name("h"))
    >>> tenth = Polynomial.constant(0.1)
    >>> ast.unparse((h * (tenth * y) + h * y * tenth).render())
    '0.2 * h * y'
    >>> ast.unparse((Polynomial.constant(1.0) - h * y * y * Polynomial.constant(0.05)).render())
    '1.0 - 0.05 * h * y ** 2'

The results are those of the same real arithmetic, rounded differently: not
bit for bit those of the expression they came from. A product of two sums is
multiplied out while it has at most `EXPANDED` terms; a larger one keeps a sum
as one factor. `render` writes factors the `first` test picks (numbers that
stay the same) before the others, so that arithmetic on numbers comes first.
"""
from __future__ import annotations

import ast
import copy
import math
from dataclasses import dataclass, field

EXPANDED = 16                     # most terms a product of sums is multiplied out to


@dataclass
class Polynomial:
    """``sum(c * prod(f ** k))``: `terms` maps a monomial (sorted (factor key, power) pairs) to its float `c`;
    `factors` maps each factor key to its expression."""

    terms: dict = field(default_factory=dict)
    factors: dict = field(default_factory=dict)

    @staticmethod
    def constant(value: float) -> Polynomial:
        return Polynomial({(): float(value)} if value else {})

    @staticmethod
    def factor(node: ast.expr) -> Polynomial:
        """The expression `node` as one factor (a name, or an expression taken whole)."""
        key = ast.unparse(node)
        return Polynomial({((key, 1),): 1.0}, {key: node})

    def is_zero(self) -> bool:
        return not self.terms

    def reads(self) -> set[str]:
        """The names the factors read."""
        return {n.id for node in self.factors.values() for n in ast.walk(node) if isinstance(n, ast.Name)}

    def __add__(self, other: Polynomial) -> Polynomial:
        terms = dict(self.terms)
        for monomial, c in other.terms.items():
            total = terms.get(monomial, 0.0) + c
            if total:
                terms[monomial] = total
            else:
                terms.pop(monomial, None)
        return Polynomial(terms, {**self.factors, **other.factors})

    def __neg__(self) -> Polynomial:
        return Polynomial({m: -c for m, c in self.terms.items()}, dict(self.factors))

    def __sub__(self, other: Polynomial) -> Polynomial:
        return self + -other

    def __mul__(self, other: Polynomial) -> Polynomial:
        if len(self.terms) * len(other.terms) > EXPANDED:
            left, right = (self.whole(), other) if len(self.terms) >= len(other.terms) else (self, other.whole())
            return left * right
        terms: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                monomial = _product(m1, m2)
                total = terms.get(monomial, 0.0) + c1 * c2
                if total:
                    terms[monomial] = total
                else:
                    terms.pop(monomial, None)
        return Polynomial(terms, {**self.factors, **other.factors})

    def reciprocal(self) -> Polynomial | None:
        """``1 / self`` (None for zero): a term's powers negated, or a sum as one factor to the power -1."""
        if not self.terms:
            return None
        if len(self.terms) > 1:
            return self.whole().reciprocal()
        (monomial, c), = self.terms.items()
        return Polynomial({tuple((k, -p) for k, p in monomial): 1.0 / c}, dict(self.factors))

    def power(self, exponent: int) -> Polynomial:
        """``self ** exponent`` for a small non-negative integer."""
        result = Polynomial.constant(1.0)
        for _ in range(exponent):
            result = result * self
        return result

    def whole(self) -> Polynomial:
        """This sum as one factor."""
        return Polynomial.factor(self.render())

    def constant_value(self) -> float | None:
        """The number this is, if it has no factors."""
        if not self.terms:
            return 0.0
        if list(self.terms) == [()]:
            return self.terms[()]
        return None

    def render(self, first=lambda key: False) -> ast.expr:
        """The expression (new nodes): terms in the order they came, each ``c * f * g ** 2 / h``."""
        expr = None
        for monomial, c in self.terms.items():
            negative = c < 0 and expr is not None
            term = self._term(monomial, abs(c) if negative else c, first)
            if expr is None:
                expr = term
            else:
                expr = ast.BinOp(expr, ast.Sub() if negative else ast.Add(), term)
        return expr if expr is not None else ast.Constant(0.0)

    def _term(self, monomial: tuple, c: float, first) -> ast.expr:
        ordered = sorted(monomial, key=lambda kp: not first(kp[0]))
        numerator = [self._power(k, p) for k, p in ordered if p > 0]
        denominator = [self._power(k, -p) for k, p in ordered if p < 0]
        value = _short(c)
        if numerator and value in (1.0, -1.0):
            expr = _product_of(numerator)
            expr = ast.UnaryOp(ast.USub(), expr) if value < 0 else expr
        else:
            expr = _product_of([ast.Constant(value), *numerator])
        if denominator:
            expr = ast.BinOp(expr, ast.Div(), _product_of(denominator))
        return expr

    def _power(self, key: str, p: int) -> ast.expr:
        node = copy.deepcopy(self.factors[key])
        return node if p == 1 else ast.BinOp(node, ast.Pow(), ast.Constant(p))


def _product(m1: tuple, m2: tuple) -> tuple:
    powers = dict(m1)
    for k, p in m2:
        powers[k] = powers.get(k, 0) + p
    return tuple(sorted((k, p) for k, p in powers.items() if p))


def _product_of(nodes: list) -> ast.expr:
    expr = nodes[0]
    for node in nodes[1:]:
        expr = ast.BinOp(expr, ast.Mult(), node)
    return expr


def _short(c: float) -> float:
    """`c`, or a neighbour of it written with fewer digits (0.15 for 3 * 0.05): at most one rounding step off."""
    if not math.isfinite(c):
        return c
    neighbours = [c, math.nextafter(c, math.inf), math.nextafter(c, -math.inf)]
    return min(neighbours, key=lambda v: len(repr(v)))


__all__ = ["Polynomial", "EXPANDED"]
