"""Batched accumulation (the batched_accumulation pass): in a backward loop, what every trip adds to a
weight the loop reads every trip is collected, and summed once after the loop.

    h_rows = []                        # before the loop
    for _ in range(trips):
        ...
        g_rows.append(g)               # instead of dW += np.outer(g, h)
        h_rows.append(h)
    g_rows = np.array(g_rows)          # after it
    h_rows = np.array(h_rows)
    dW += g_rows.T @ h_rows

In a checkpointed loop the lists collect one piece of work's trips, and a `RowBatches` (from
`s2sgrad.runtime`) sums them a batch of rows at a time (`flush_pieces`):

    dW_batches = RowBatches(checkpoints.batch_rows, into=dW)   # before the backward sweep
    for work in checkpoints.backward():
        ...
            dW_batches.add(g_rows, h_rows)                # after each piece's reversed trips
    dW_batches.flush()                                    # after the sweep

(``RowBatches(..., into=dW)`` where dW is the gradient's own buffer all through the sweep; else the
sums are a total of their own, and ``dW = dW + dW_batches.total()`` after the sweep.)
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ...analysis.shapes import Shapes
from ...ir.names import Names, base_name
from ...ir.nodes import Var, While
from ...ir.syntax import assign as _assign
from ...ir.syntax import attr as _attr
from ...ir.syntax import call as _call
from ...ir.syntax import name as _name
from ...ir.syntax import noted
from ...ir.syntax import np_call as _np_call
from ..adjoint_templates import Contribution
from .adjoints import Adjoints
from .recording import key


@dataclass
class LoopBatches:
    """One backward loop's collections: value -> the list collecting it, weight -> (rows, columns) lists
    (columns None: the weight's gradient is the sum of the rows)."""
    lists: dict = field(default_factory=dict)
    weights: dict = field(default_factory=dict)


@dataclass
class PieceBatches:
    """A checkpointed loop's batched accumulations: the statements around each piece of work's reversed
    trips, and around the whole backward sweep."""
    before_trips: list = field(default_factory=list)
    after_trips: list = field(default_factory=list)
    before_sweep: list = field(default_factory=list)
    after_sweep: list = field(default_factory=list)

    def reversal(self, trips: ast.For) -> list:
        return [*self.before_trips, trips, *self.after_trips]


class Batching:
    """The collections of each backward loop, and the sums after it."""

    def __init__(self, names: Names, shapes: Shapes, adjoints: Adjoints):
        self.names = names
        self.shapes = shapes
        self.adjoints = adjoints
        self.loops: dict[str, LoopBatches] = {}

    def batch(self, step: Contribution, loop: While, receivers) -> list:
        """In a backward `loop`, ``dW += outer(g, h)`` for a weight W the loop reads every trip (one of
        `receivers`, a function of the loop) becomes two appends; ``db += g`` becomes one. Nothing (an
        empty list): the contribution is added as usual."""
        expr = step.expr
        if isinstance(expr, ast.Name) and not self.adjoints.branches:
            return self.batch_sum(step, loop, receivers)
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
                and isinstance(expr.func.value, ast.Name) and expr.func.value.id == "np"
                and expr.func.attr == "outer" and len(expr.args) == 2
                and all(isinstance(a, ast.Name) for a in expr.args)):
            return []
        rows, columns = (a.id for a in expr.args)
        weight = step.atom.name
        if weight not in receivers(loop) or len(self.shapes.concrete(Var(weight)) or ()) != 2 \
                or len(self.shapes.concrete(Var(columns)) or ()) != 1:
            return []
        batches = self.loops.setdefault(key(loop), LoopBatches())
        if weight in batches.weights:
            return []
        appends = self.collect(batches, rows) + self.collect(batches, columns)
        batches.weights[weight] = (batches.lists[rows], batches.lists[columns])
        return appends or [ast.Pass()]

    def batch_sum(self, step: Contribution, loop: While, receivers) -> list:
        """``db += g`` every trip, for a b the loop reads every trip: collected, summed once after the loop."""
        weight, value = step.atom.name, step.expr.id
        if weight not in receivers(loop) or self.shapes.concrete(Var(weight)) is None \
                or weight in (self.loops[key(loop)].weights if key(loop) in self.loops else {}):
            return []
        batches = self.loops.setdefault(key(loop), LoopBatches())
        appends = self.collect(batches, value)
        batches.weights[weight] = (batches.lists[value], None)
        return appends or [ast.Pass()]

    def collect(self, batches: LoopBatches, value: str) -> list:
        """The append of `value` to its list (one list per value, shared by the weights that use it)."""
        if value in batches.lists:
            return []
        batches.lists[value] = self.names.fresh(f"{base_name(value)}_rows")
        return [ast.Expr(ast.Call(_attr(batches.lists[value], "append"), [_name(value)], []))]

    def lists(self, loop: While) -> tuple[LoopBatches, list, list]:
        """A loop's collections, the lists they collect into made empty (before it) and made arrays (after)."""
        batches = self.loops.get(key(loop), LoopBatches())
        before = [_assign(name, ast.List([], ast.Load()), loop.loc) for name in batches.lists.values()]
        after = [_assign(name, _np_call("array", _name(name)), loop.loc) for name in batches.lists.values()]
        return batches, before, after

    def flush_pieces(self, loop: While, driver: str, in_place: set) -> PieceBatches:
        """A checkpointed loop's collections: each piece of work's reversed trips collect their rows, handed
        to one `RowBatches` per weight that sums them a batch of rows at a time (as many trips' rows as
        the schedule `driver` carries out allows), into the weight's adjoint where it is `in_place` (a
        buffer of the gradient's own for the whole sweep), else into a total added after the sweep."""
        batches, before, after = self.lists(loop)
        pieces = PieceBatches(before_trips=before, after_trips=after)
        for weight, (rows, columns) in batches.weights.items():
            dweight = self.adjoints.name(weight)
            holder = self.names.fresh(f"{dweight}_batches")
            made = _call("RowBatches", _attr(driver, "batch_rows"))
            if weight in in_place:
                made.keywords.append(ast.keyword("into", _name(dweight)))
            pieces.before_sweep.append(_assign(holder, made, loop.loc))
            handed = [_name(rows)] if columns is None else [_name(rows), _name(columns)]
            pieces.after_trips.append(ast.Expr(ast.Call(_attr(holder, "add"), handed, [])))
            if weight in in_place:
                pieces.after_sweep.append(noted(ast.Expr(ast.Call(_attr(holder, "flush"), [], [])),
                                                f"the last rows, into {dweight}"))
            else:
                pieces.after_sweep += self.adjoints.contribute(
                    Var(weight), ast.Call(_attr(holder, "total"), [], []), loop.loc)
        return pieces

    def flush(self, loop: While) -> tuple[list, list]:
        """The lists a loop's batched accumulations collect into (before it), and their sums (after it)."""
        batches, before, after = self.lists(loop)
        for weight, (rows, columns) in batches.weights.items():
            if columns is None:               # a sum of the rows
                total = _np_call("sum", _name(rows), ast.Constant(0))
            else:                             # a sum of outer products
                total = ast.BinOp(ast.Attribute(_name(rows), "T", ast.Load()), ast.MatMult(), _name(columns))
            after += self.adjoints.contribute(Var(weight), total, loop.loc)   # in place only into its own buffer
        return before, after
