"""Inline a derivative (adjoint) rule's template at one call site.

    >>> import numpy as np
    >>> from s2sgrad.ir import Op, Var
    >>> from s2sgrad.ir.names import Names
    >>> from s2sgrad.rules import rule_for
    >>> rule = rule_for(np.sin)
    >>> steps = expand(rule, Op(np.sin, [Var("x")]), "y", ast.Name("dy", ast.Load()), lambda atom: True, Names())
    >>> [ast.unparse(s.expr) for s in steps]
    ['dy * np.cos(x)']

The mode over the engine of `templates`: each ``d[x] = expr`` of the template
becomes a `Contribution` to the adjoint of the atom bound to `x`; ``d[y]`` becomes
the adjoint of the result. Contributions to inactive arguments are dropped, and so
are the temporaries only they used. Where shapes are known, the adjoint's helpers
are specialized (``unbroadcast(g, x)`` -> ``g`` where x has the result's shape).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from ..ir.nodes import Const, Op, Var
from ..ir.sizes import shape_expression, size_expression, size_sum
from ..ir.syntax import np_call as _np_call
from ..ir.syntax import with_shape
from ..ir.trees import Transformer, copy_tree, walk
from ..optimizations import ALL
from ..rules.registry import Rule, refusal
from .templates import Simplify, Substitute, bind, drop_dead, materialize


@dataclass
class Contribution:
    """``d[atom] += expr`` (or ``=`` for the first contribution)."""
    atom: object
    expr: ast.expr


class _Substitute(Substitute):
    """``d[y]``: the adjoint of the result. Names of the call's values carry their shapes where known
    (for codegen's broadcast peephole)."""

    def __init__(self, rule, binding, result, adjoint, temps, shapes):
        super().__init__(binding, rule.output, result, temps)
        self.rule = rule
        self.adjoint = adjoint
        self.shapes = shapes

    def derivative(self, node):
        key = node.slice
        if isinstance(key, ast.Name) and key.id == self.output:
            return copy_tree(self.adjoint)
        raise self.rule.error(f"{ast.unparse(node)}: an adjoint template reads only the adjoint of its result, "
                              f"d[{self.output}]", node)

    def visit_Name(self, node):
        expr = super().visit_Name(node)
        if self.shapes is not None and isinstance(expr, ast.Name) and expr is not node \
                and (node.id == self.output or node.id in self.binding.atoms):
            with_shape(expr, self.shapes.concrete(Var(expr.id)))     # for codegen.drop_broadcasts
        return expr


def _target_atom(target, atoms):
    """The atom a ``d[x]`` (or ``d[xs[k]]``) on the left of a template assignment refers to."""
    if isinstance(target, ast.Name):
        return atoms.get(target.id)
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
            and isinstance(target.slice, ast.Constant):
        group = atoms.get(target.value.id)
        if isinstance(group, tuple) and target.slice.value < len(group):
            return group[target.slice.value]
    return None


def _is_contribution(stmt) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript) \
        and isinstance(stmt.targets[0].value, ast.Name) and stmt.targets[0].value.id == "d"


def expand(rule: Rule, op: Op, result: str, adjoint: ast.expr, is_active, names, shapes=None,
           optimizations: frozenset[str] = ALL) -> list:
    """The statements and `Contribution`s that apply `rule` at `op` (whose value is named `result`).

    With `shapes` (a `shapes.Shapes`) and the optimization "shapes", ``unbroadcast`` is left out
    where an argument certainly has the result's shape, and written as a plain sum where the
    argument's shape is known ("dot": a dot product where it can); with "float_math", NumPy
    functions of a scalar become their `math` twins; "constant_folding" folds what substitution
    leaves constant and leaves out arguments left at a default the callee shares.
    """
    binding = bind(rule, op)
    temps = {}
    for name in _stored(rule):
        if name not in temps and name not in binding.atoms:
            temps[name] = ast.Name(names.fresh(name, temporary=True), ast.Load())
    substitute = _Substitute(rule, binding, ast.Name(result, ast.Load()), adjoint, temps, shapes)
    steps = []
    for stmt in rule.body:
        if not _is_contribution(stmt):
            steps.append(substitute.visit(copy_tree(stmt)))
            continue
        atom = _target_atom(stmt.targets[0].slice, binding.atoms)
        if atom is None:
            raise rule.error(f"cannot tell which argument {ast.unparse(stmt.targets[0])} refers to", stmt)
        if isinstance(atom, tuple):          # d[items] for a *items parameter: one per item
            for k, item in enumerate(atom):
                if is_active(item):
                    expr = substitute.visit(copy_tree(stmt.value))
                    steps.append(Contribution(item, ast.Subscript(expr, ast.Constant(k), ast.Load())))
            continue
        if is_active(atom):
            if refusal(stmt.value) is not None:          # d[a] = no_derivative("..."): none flows into a
                raise refusal(stmt.value)
            expr = substitute.visit(copy_tree(stmt.value))
            if shapes is not None and "shapes" in optimizations:
                expr = _Unbroadcast(shapes, result, adjoint, "dot" in optimizations).visit(expr)
            if shapes is not None and "float_math" in optimizations:
                expr = _FloatMath(shapes).visit(expr)
            steps.append(Contribution(atom, expr))
    simplify = Simplify() if "constant_folding" in optimizations else None
    plain = materialize if binding.defaulted else lambda node: node      # (only a defaulted parameter's is a Default)
    for step in steps:
        if isinstance(step, Contribution):
            step.expr = plain(simplify.visit(step.expr) if simplify else step.expr)
        else:
            plain(simplify.visit(step) if simplify else step)
    statements = [s for s in steps if not isinstance(s, Contribution)]
    kept = {id(s) for s in drop_dead(statements, [c.expr for c in steps if isinstance(c, Contribution)])}
    return [s for s in steps if isinstance(s, Contribution) or id(s) in kept]


_STORED: dict = {}


def _stored(rule: Rule) -> list:
    """The names `rule`'s template assigns, in the order `walk` meets them (repeats included)."""
    found = _STORED.get(id(rule.body))
    if found is None or found[0] is not rule.body:
        stored = [node.id for stmt in rule.body for node in walk(stmt)
                  if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)]
        found = _STORED[id(rule.body)] = (rule.body, stored)
    return found[1]


class _Unbroadcast(Transformer):
    """Use what is known of shapes: ``unbroadcast(g, x)`` -> ``g`` where x certainly has the result's
    shape, ``np.sum(g)`` where x is a scalar, ``sum_to(g, (3, 1))`` where x's shape is known;
    ``unreduce(g, x, None, False)`` -> ``np.broadcast_to(g, (3, 4))`` where x's shape is known."""

    def __init__(self, shapes, result: str, adjoint: ast.expr | None = None, dot: bool = True):
        self.shapes = shapes
        self.result = result
        self.adjoint = adjoint
        self.dot = dot

    def matmul(self, node):
        return _matmul_specialized(node, self.shapes)

    def total(self, g):
        """``np.sum(g)``; for ``d[y] * b`` with y and b vectors of one shape, the dot product ``d[y] @ b``."""
        result = self.shapes.concrete(Var(self.result))
        if self.dot and isinstance(g, ast.BinOp) and isinstance(g.op, ast.Mult) and result is not None \
                and len(result) == 1 and self.adjoint is not None and ast.dump(g.left) == ast.dump(self.adjoint) \
                and isinstance(g.right, ast.Name) \
                and self.shapes.concrete(Var(g.right.id)) == result:
            return ast.BinOp(g.left, ast.MatMult(), g.right)
        return _np_call("sum", g)

    def pieces(self, node):
        """``unconcatenate(g, parts, axis)`` -> ``[g[:4], g[4:7]]`` where the parts' shapes are known."""
        g, parts, axis = node.args
        items = self.shapes.items.get(parts.id)
        shapes = [self.shapes.concrete(a) for a in items] if items else None
        if not shapes or any(s is None or not s for s in shapes) or not isinstance(axis, ast.Constant) \
                or type(axis.value) is not int or len({len(s) for s in shapes}) != 1:
            return None
        k = axis.value % len(shapes[0])
        out, start = [], 0
        for shape in shapes:
            stop = size_sum([start, shape[k]])
            cut = [ast.Slice(None, None, None)] * k + [ast.Slice(size_expression(start) if start != 0 else None,
                                                                 size_expression(stop), None)]
            index = cut[0] if len(cut) == 1 else ast.Tuple(cut, ast.Load())
            out.append(ast.Subscript(copy_tree(g), index, ast.Load()))
            start = stop
        return ast.List(out, ast.Load())

    def written_shape(self, g):
        """If `g` is ``written(d[y], i)``: the shape of y[i] where known, else ``False``; otherwise None."""
        if not (isinstance(g, ast.Call) and isinstance(g.func, ast.Name) and g.func.id == "written"
                and len(g.args) == 2):
            return None
        index = g.args[1]
        atom = Var(index.id) if isinstance(index, ast.Name) else \
            Const(index.value) if isinstance(index, ast.Constant) else None
        shape = self.shapes.getitem(Var(self.result), atom) if atom is not None else None
        return shape if shape is not None else False

    def visit_Call(self, node):
        self.generic_visit(node)
        if not isinstance(node.func, ast.Name) or len(node.args) < 2:
            return node
        like = node.args[1]
        atom = Var(like.id) if isinstance(like, ast.Name) else \
            Const(like.value) if isinstance(like, ast.Constant) else None
        if atom is None:
            return node
        if node.func.id == "unbroadcast" and len(node.args) == 2:
            part = self.written_shape(node.args[0])
            if part is not None:                  # written(d[y], i) has the shape of y[i], not of y
                if part == self.shapes.concrete(atom):
                    return node.args[0]
                return node
            if self.shapes.same(atom, self.result):
                return node.args[0]
            shape = self.shapes.concrete(atom)
            if shape is not None and self.shapes.concrete(Var(self.result)) is not None:
                if shape == ():
                    return self.total(node.args[0])
                return ast.Call(ast.Name("sum_to", ast.Load()), [node.args[0], shape_expression(shape)], [])
        if node.func.id in ("matmul_grad_a", "matmul_grad_b") and len(node.args) == 3:
            return self.matmul(node) or node
        if node.func.id == "unconcatenate" and len(node.args) == 3 and not node.keywords \
                and isinstance(like, ast.Name):          # (a stacking's ndmin= changes the parts' shapes)
            return self.pieces(node) or node
        if node.func.id == "unreduce" and len(node.args) == 4 and _is_none(node.args[2]) \
                and _is_false(node.args[3]):
            shape = self.shapes.concrete(atom)
            if shape == ():
                return node.args[0]
            if shape is not None:
                return _np_call("broadcast_to", node.args[0], shape_expression(shape))
        return node


# NumPy functions whose `math` twins take every float (no domain errors, no overflow errors) and give
# NumPy's results bit for bit (both call the C library; NumPy's own tanh and arctan differ by up to 2 ulp).
SCALAR_TWINS = {"sin": "sin", "cos": "cos"}


class _FloatMath(Transformer):
    """``np.cos(y)`` -> ``math.cos(y)`` in backward code where y is certainly a scalar: the same function,
    without NumPy's per-call cost for one number."""

    def __init__(self, shapes):
        self.shapes = shapes

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "np" \
                and func.attr in SCALAR_TWINS and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], ast.Name) and self.shapes.is_scalar(Var(node.args[0].id)):
            return ast.Call(ast.Attribute(ast.Name("math", ast.Load()), SCALAR_TWINS[func.attr], ast.Load()),
                            node.args, [])
        return node


def _matmul_specialized(node, shapes):
    """``matmul_grad_a(g, W, h)`` -> ``np.outer(g, h)`` and the like, where the operands' ranks are known."""
    g, a, b = node.args
    atoms = [Var(x.id) if isinstance(x, ast.Name) else None for x in (a, b)]
    if None in atoms:
        return None
    ranks = [len(s) if s is not None else None for s in (shapes.concrete(atoms[0]), shapes.concrete(atoms[1]))]
    transpose = lambda x: ast.Attribute(x, "T", ast.Load())
    if node.func.id == "matmul_grad_a":
        if ranks == [2, 1]:
            return _np_call("outer", g, b)
        if ranks == [2, 2]:
            return ast.BinOp(g, ast.MatMult(), transpose(b))
    else:
        if ranks in ([2, 1], [2, 2]):
            return ast.BinOp(transpose(a), ast.MatMult(), g)
        if ranks == [1, 2]:
            return _np_call("outer", a, g)
    return None




def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_false(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is False
