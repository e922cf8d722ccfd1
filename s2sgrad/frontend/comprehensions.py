"""Part of stage 2, before lowering: comprehensions and assignment expressions taken out of a statement.

A list comprehension or generator expression becomes a loop appending to a list, a dict comprehension a
loop writing ``result[key] = value`` into a dict, a set comprehension ``set()`` of such a list; an
assignment expression ``(y := e)`` becomes ``y = e`` where Python evaluates it, and ``y`` in its place:

    >>> import ast
    >>> from s2sgrad.frontend.lower import lowered_source
    >>> def f(x):
    ...     if (n := len(x)) > 1:
    ...         return {k: v * n for k, v in enumerate(x)}
    ...     return {}
    >>> "n = len(x)" in lowered_source(f)
    True
"""
from __future__ import annotations

import gast

from ..ir.trees import Transformer
from .gast_build import assign as _assign
from .gast_build import call as _call
from .gast_build import located as _located
from .gast_build import name as _name
from .hints import syntax_name


def hoisted(desugar, stmt, before: list):
    """`stmt` with each comprehension and assignment expression in it replaced by a name that statements
    added to `before` compute (by a loop, for a comprehension)."""
    if isinstance(stmt, (gast.For, gast.While, gast.If)):
        # only the header is evaluated here; bodies are hoisted statement by statement
        field = "iter" if isinstance(stmt, gast.For) else "test"
        if isinstance(stmt, gast.For):
            desugar.builtin_calls.mark_header(stmt.iter)
        setattr(stmt, field, _Hoist(desugar, before).visit(getattr(stmt, field)))
        return stmt
    if isinstance(stmt, gast.FunctionDef):
        return stmt
    return _Hoist(desugar, before).visit(stmt)


class _Hoist(Transformer):
    """Replaces the comprehensions and assignment expressions of one statement, adding what computes them to
    `before`."""

    def __init__(self, desugar, before: list):
        self.desugar = desugar
        self.before = before

    def visit_FunctionDef(self, node):
        return node

    def visit_Lambda(self, node):
        return node

    def visit_ListComp(self, node):
        return comprehension(self.desugar, node, self.before)

    visit_GeneratorExp = visit_ListComp

    def visit_Call(self, node):               # a builtin calling a function it is given, as a loop
        self.generic_visit(node)
        return self.desugar.builtin_calls.rewrite(node, self.before)

    def visit_SetComp(self, node):            # a set of the list's items
        return _located(_call(set, comprehension(self.desugar, node, self.before)), node)

    def visit_DictComp(self, node):
        return comprehension(self.desugar, node, self.before)

    def visit_NamedExpr(self, node):          # evaluated where it stands, then read by its name
        value = self.visit(node.value)
        self.before.append(_located(gast.Assign(targets=[node.target], value=value, type_comment=None), node))
        return _located(_name(node.target.id), node)

    def visit_BoolOp(self, node):
        node.values[0] = self.visit(node.values[0])
        _refuse_conditional_walrus(self.desugar, node.values[1:], node)
        node.values[1:] = [self.visit(v) for v in node.values[1:]]
        return node

    def visit_IfExp(self, node):
        node.test = self.visit(node.test)
        _refuse_conditional_walrus(self.desugar, [node.body, node.orelse], node)
        node.body, node.orelse = self.visit(node.body), self.visit(node.orelse)
        return node


NESTED_LOOPS = {
    "DictComp": "write the nested loops out: d = {} and, inside the loops, d[k] = v",
    "ListComp": "write the nested loops out: ys = [] and, inside the loops, ys.append(v)",
    "SetComp": "write the nested loops out into a list (ys = [], ys.append(v)) and take set(ys)",
}


def _refuse_conditional_walrus(desugar, operands, node) -> None:
    """An assignment expression Python may not evaluate (in ``and``/``or`` or a branch of ``a if c else b``)."""
    for operand in operands:
        for inner in gast.walk(operand):
            if isinstance(inner, gast.NamedExpr):
                raise desugar.error("an assignment expression (:=) that Python evaluates only on some paths of "
                                 "'and', 'or' or 'if ... else' is not supported", inner,
                                 f"assign '{inner.target.id}' in a statement of its own before")

def comprehension(desugar, node, before: list):
    kind = type(node).__name__
    if any(g.is_async for g in node.generators):
        raise desugar.error(f"'async for' in {syntax_name(kind)} is not supported", node, "use a plain 'for'")
    if len(node.generators) != 1:
        raise desugar.error(f"{syntax_name(kind)} with several 'for' clauses is not supported", node,
                            NESTED_LOOPS.get(kind, NESTED_LOOPS["ListComp"]))
    gen = node.generators[0]
    if isinstance(node, gast.DictComp):          # result[key] = value
        result = desugar.names.reserve("mapping")
        target = gast.Subscript(value=_name(result), slice=node.key, ctx=gast.Store())
        body = [gast.Assign(targets=[target], value=node.value, type_comment=None)]
        empty = gast.Dict(keys=[], values=[])
    else:
        result = desugar.names.reserve("items")
        body = [gast.Expr(value=gast.Call(func=gast.Attribute(value=_name(result), attr="append", ctx=gast.Load()),
                                          args=[node.elt], keywords=[]))]
        empty = gast.List(elts=[], ctx=gast.Load())
    for test in reversed(gen.ifs):
        body = [gast.If(test=test, body=body, orelse=[])]
    loop = gast.For(target=gen.target, iter=gen.iter, body=body, orelse=[], type_comment=None)
    before.append(_located(_assign(result, empty), node))
    before.extend(desugar.statement(_located(loop, node)))
    return _located(_name(result), node)

