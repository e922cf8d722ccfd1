"""The adjoints of one function's values, tracked symbolically while the backward sweep is written.

A name with no contribution yet is a zero that costs nothing; its first contribution assigns, later ones
add (in place, where the adjoint is a buffer the gradient made itself):

    >>> import ast
    >>> from s2sgrad.analysis.activity import Analysis
    >>> from s2sgrad.ir.names import Names
    >>> from s2sgrad.ir.nodes import Var
    >>> from s2sgrad.ir.syntax import name
    >>> adjoints = Adjoints(Names(), Analysis(active={"x"}), symbolic_zeros=True, in_place_accumulation=True)
    >>> def code(statements): return [ast.unparse(ast.fix_missing_locations(s)) for s in statements]
    >>> code(adjoints.contribute(Var("x"), ast.parse("g * 2", mode="eval").body))
    ['dx = g * 2']
    >>> code(adjoints.contribute(Var("x"), name("h")))
    ['dx += h']
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from ...analysis.activity import TENSOR, Analysis
from ...ir import primitives
from ...ir.names import Names
from ...ir.nodes import Var
from ...ir.syntax import assign as _assign
from ...ir.syntax import call as _call
from ...ir.syntax import is_call as _is_call
from ...ir.syntax import name as _name
from ...ir.syntax import origin as _origin
from ...ir.syntax import store as _store

FRESH_RESULTS = {"matmul_grad_a", "matmul_grad_b", "zeros_like", "tensordot_grad_a", "tensordot_grad_b"}


@dataclass
class AdjointState:
    """Which adjoints hold a value at one point of the backward sweep (a branch starts from a copy)."""
    has: set                         # names whose adjoint holds a value now
    sparse: set                      # ... and may hold a SparseGrad
    may_alias: dict                  # adjoint may be the seed or a primal value itself


class Adjoints:
    """The adjoint name of each value, and the code that adds a contribution to it.

    `symbolic_zeros` off: each adjoint starts from ``zeros_like(x)``; `in_place_accumulation` off: a later
    contribution never adds with ``+=``."""

    def __init__(self, names: Names, analysis: Analysis, symbolic_zeros: bool, in_place_accumulation: bool):
        self.names = names
        self.analysis = analysis
        self.active = analysis.active
        self.symbolic_zeros = symbolic_zeros
        self.in_place_accumulation = in_place_accumulation
        self.named: dict[str, str] = {}        # primal name -> its adjoint's name
        self.has: set[str] = set()             # names whose adjoint holds a value now
        self.sparse: set[str] = set()          # ... and may hold a SparseGrad
        self.may_alias: dict[str, bool] = {}    # adjoint may be the seed or a primal value itself
        self.pieces: dict[str, list] = {}       # a sequence's adjoint made as a list of pieces: the pieces
        self.branches = 0                       # depth of branches being reversed

    def is_active(self, atom) -> bool:
        return isinstance(atom, Var) and atom.name in self.active

    def name(self, name: str) -> str:
        if name not in self.named:
            self.named[name] = self.names.fresh("d" + name, temporary=name in self.names.temporary)
        return self.named[name]

    def read(self, name: str) -> ast.expr:
        dname = _name(self.name(name))
        return _call("densify", dname) if name in self.sparse else dname

    def owned(self, name: str) -> bool:
        """Is the adjoint of `name` a dense buffer the gradient made itself (so it may be written in place)?"""
        return name not in self.sparse and not self.may_alias.get(name, True)

    def state(self) -> AdjointState:
        return AdjointState(set(self.has), set(self.sparse), dict(self.may_alias))

    def restore(self, state: AdjointState) -> None:
        self.has, self.sparse, self.may_alias = set(state.has), set(state.sparse), dict(state.may_alias)

    def contribute(self, atom, expr: ast.expr, origin=None) -> list:
        """Add `expr` to the adjoint of `atom`: assign if it is the first contribution."""
        if not self.is_active(atom):
            return []
        name = atom.name
        dname = self.name(name)
        is_sparse = self.may_be_sparse(expr)
        if name in self.has:
            self.pieces[name] = None                  # a sum now, not the pieces of its first contribution
            if self.analysis.kind.get(name, TENSOR) == TENSOR and name not in self.sparse and not is_sparse:
                if self.in_place_accumulation and not self.may_alias.get(name, True):
                    # the buffer is the gradient's own (zeros it made, or a sum it computed): add in place,
                    # only where the gradient of x[i] lands if i selects each element at most once
                    target = _store(dname)
                    if self.scatters_at_basic_index(expr):
                        target = ast.Subscript(_name(dname), primitives.index_expression(expr.args[2]), ast.Store())
                        expr = expr.args[0]
                    return [_origin(ast.AugAssign(target, ast.Add(), expr), origin)]
                value = ast.BinOp(_name(dname), ast.Add(), expr)
                if not self.branches:        # a new array for the rest of this trip (see adjoint_trip)
                    self.may_alias[name] = False
            elif self.analysis.kind.get(name, TENSOR) != TENSOR and _is_item_gradient(expr):
                value = _call("seq_add_at", _name(dname), *expr.args)     # into the item's slot alone
            else:
                value = _call("add_grads", _name(dname), expr)
                if not is_sparse:
                    self.sparse.discard(name)
            return [_assign(dname, value, origin)]
        self.has.add(name)
        self.may_alias[name] = _may_alias(expr) and not self.scatters_at_basic_index(expr)   # (zeros it made)
        self.pieces[name] = expr.elts if isinstance(expr, (ast.List, ast.Tuple)) else None
        if not self.symbolic_zeros and self.analysis.kind.get(name, TENSOR) == TENSOR:
            expr = ast.BinOp(_call("zeros_like", _name(name)), ast.Add(), _call("densify", expr))
            self.may_alias[name] = False
        if is_sparse:
            self.sparse.add(name)
        if isinstance(expr, ast.Name) and expr.id == dname:
            return []
        return [_assign(dname, expr, origin)]

    def zero(self, name: str, origin=None) -> ast.stmt:
        self.has.add(name)
        self.may_alias[name] = False
        self.sparse.discard(name)
        container = self.symbolic_zeros and self.analysis.kind.get(name, TENSOR) != TENSOR
        return _assign(self.name(name), _call("no_grads" if container else "zeros_like", _name(name)), origin)

    def may_be_sparse(self, expr: ast.expr) -> bool:
        """Could `expr` be a SparseGrad? Only ``scatter`` with an index that may be an array of rows."""
        if not _is_call(expr, "scatter"):
            return False
        index = expr.args[2]
        if isinstance(index, ast.Constant) or isinstance(index, ast.Tuple):
            return False
        return not self.scatters_at_basic_index(expr)

    def scatters_at_basic_index(self, expr: ast.expr) -> bool:
        """Is `expr` ``scatter(g, x, i)`` with an index that selects each element at most once?"""
        if not (_is_call(expr, "scatter") and len(expr.args) == 3):
            return False
        index = expr.args[2]
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        return all(self.is_basic_part(part, nested=isinstance(index, ast.Tuple)) for part in parts)

    def is_basic_part(self, node: ast.expr, nested: bool) -> bool:
        if isinstance(node, ast.Name):
            known = self.analysis.shapes
            return (known.is_int(Var(node.id)) or node.id in known.slices
                    or not nested and known.is_basic_index(Var(node.id)))
        if isinstance(node, ast.Constant):
            return node.value is None or node.value is Ellipsis or type(node.value) is int
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return isinstance(node.operand, ast.Constant) and type(node.operand.value) is int
        if _is_call(node, "slice"):
            return not node.keywords and all(self.is_basic_part(a, nested=True) and not _is_call(a, "slice")
                                             for a in node.args)
        return False


def _is_item_gradient(expr: ast.expr) -> bool:
    """Is `expr` the gradient of one read ``x[i]`` of a container, ``scatter(g, x, i)`` or ``seq_scatter(g, x, i)``?"""
    return (_is_call(expr, "scatter") or _is_call(expr, "seq_scatter")) and len(expr.args) == 3 \
        and not expr.keywords


def _may_alias(expr: ast.expr) -> bool:
    """Could `expr` be an existing array (the seed, another adjoint, a user's array, a read-only view)?
    Only arithmetic and calls known to allocate their result are certainly new."""
    if isinstance(expr, (ast.BinOp, ast.UnaryOp)):
        return False
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Name):
            return func.id not in FRESH_RESULTS
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "np":
            return not (isinstance(getattr(np, func.attr, None), np.ufunc)
                        or func.attr in ("sum", "dot", "outer", "matmul", "einsum"))
    return True
