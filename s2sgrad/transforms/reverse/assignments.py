"""The derivative rule of one primitive's call, and the passes over the steps its template expands to.

`derivative_rule` finds the rule (or says why there is none); `merge_twins` (the merge_twins pass) makes
two equal contributions one, and `Reuse` (the reuse pass) reads the forward sweep's value of an
expression the backward code would compute again:

    >>> import ast
    >>> code = ast.parse("np.cos(x) * g", mode="eval").body
    >>> ast.unparse(Reuse({ast.dump(ast.parse("np.cos(x)", mode="eval").body): "cos"}).visit(code))
    'cos * g'
"""
from __future__ import annotations

import ast

from ...analysis.inplace import MUTATIONS
from ...frontend.functions import is_user_function
from ...ir import primitives
from ...ir.nodes import Assign, Op, value_expr
from ...ir.trees import Transformer, dumps, walk
from ...rules import is_nondifferentiable, rule_for
from ...rules.registry import Rule
from ..adjoint_templates import Contribution
from ..rule_lookup import ADJOINT, rule_of

OPERATOR_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "pow": "**", "matmul": "@",
                    "neg": "unary -", "getitem": "indexing", "seq_getitem": "indexing", "setitem": "an indexed write",
                    "list_append": "append"}


def derivative_rule(stmt: Assign, module, is_active) -> Rule:
    """The adjoint rule of `stmt`'s primitive (see `rule_lookup`)."""
    return rule_of(stmt, ADJOINT, module, is_active)


def rule_label(fn, name=None) -> str:
    """How a comment names a primitive: ``np.sin``, ``*``, ``indexing``."""
    dotted = primitives.WRITERS.get(fn) or primitives.python_name(fn) or name or getattr(fn, "__name__", "?")
    return OPERATOR_SYMBOLS.get(dotted.split(".")[-1] if dotted.startswith(("operator.",)) or
                                dotted in OPERATOR_SYMBOLS else dotted, dotted)


def merge_twins(steps: list) -> list:
    """Two equal contributions to one name (``x * x``) become one: ``d[x] = 2 * e``."""
    out = []
    for step in steps:
        twin = next((s for s in out if isinstance(step, Contribution) and isinstance(s, Contribution)
                     and s.atom == step.atom and ast.dump(s.expr) == ast.dump(step.expr)), None)
        if twin is not None:
            twin.expr = ast.BinOp(ast.Constant(2), ast.Mult(), twin.expr)
        else:
            out.append(step)
    return out


def computed(block: list) -> dict:
    """The pure expressions the function's top level computes, and the names that hold them."""
    out = {}
    for stmt in block:
        if isinstance(stmt, Assign) and stmt.target and isinstance(stmt.value, Op) \
                and not is_user_function(stmt.value.fn) and stmt.value.fn not in MUTATIONS \
                and (rule_for(stmt.value.fn) or is_nondifferentiable(stmt.value.fn)):
            out.setdefault(ast.dump(value_expr(stmt.value)), stmt.target)
    return out


class Reuse(Transformer):
    """In backward code, use the forward sweep's value instead of computing it again (``np.sin(x)`` -> ``sin``)."""

    def __init__(self, computed: dict):
        self.computed = computed
        self.text = None

    def visit(self, node):
        """`node` rewritten. What `ast.dump` prints of its nodes is found once, before any is replaced, unless a
        node appears twice in it (a replacement inside one would change what the other prints)."""
        if self.text is not None:            # a node inside the tree being rewritten
            return super().visit(node)
        if not self.computed:
            return node
        texts = dumps(node)
        self.text = (lambda n: texts[id(n)]) if len(texts) == sum(1 for _ in walk(node)) else ast.dump
        try:
            return super().visit(node)
        finally:
            self.text = None

    def generic_visit(self, node):
        if isinstance(node, (ast.Call, ast.BinOp, ast.UnaryOp)):
            name = self.computed.get(self.text(node))
            if name is not None:
                return ast.Name(name, ast.Load())
        return super().generic_visit(node)
