"""Which stacks the backward sweep may pop as the rows of one array (for `backend.vectorize`).

A stack of small arrays of one known shape is a `RowStack`; when the values pushed are ``A[j]`` in trip
j of a loop over a parameter ``A`` counting from 0 by 1, the rows can be read from ``A`` itself:

    >>> RowStack((3,), rows_of="xs")
    RowStack(shape=(3,), dtype=None, rows_of='xs')
"""
from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from ...analysis.activity import TENSOR, Analysis
from ...ir.nodes import Assign, Const, Function, Op, Var, While, assignments
from ...ir.sizes import ROW_SIZE_LIMIT, row_size_bound


@dataclass(frozen=True)
class RowStack:
    """A stack of small arrays of one shape, which the backward sweep may pop as the rows of one array."""
    shape: tuple
    dtype: object = None             # np.dtype where known
    rows_of: str | None = None       # a parameter A: the values pushed are A[0], A[1], ... (one per trip)


class RowFinder:
    """Decides, for a name a loop body pushes, whether its stack is a `RowStack` (the vectorize pass)."""

    def __init__(self, fn: Function, analysis: Analysis, definitions: dict, checkpoint=None):
        self.fn = fn
        self.analysis = analysis
        self.definitions = definitions           # name -> the value assigned to it, anywhere in `fn`
        self.checkpoint = checkpoint             # the schedule for outermost loops without a marker

    def row_stack(self, name: str, body: list, loops: list) -> RowStack | None:
        """The `RowStack` of `name`, pushed at the end of `body` inside `loops` (innermost last), if any."""
        if not self.holds_small_rows(name):
            return None
        return RowStack(self.analysis.shapes.concrete(Var(name)), self.row_dtype(name),
                        self.gathered_by_trip(body, name, loops))

    def holds_small_rows(self, name: str) -> bool:
        """Is `name` an array of one known, small shape every trip (its stack can be popped as rows)?"""
        shape = self.analysis.shapes.concrete(Var(name))
        return self.analysis.kind.get(name) == TENSOR and bool(shape) and row_size_bound(shape) <= ROW_SIZE_LIMIT

    def gathered_by_trip(self, body: list, name: str, loops: list) -> str | None:
        """The parameter A if `name` is ``A[j]`` in trip j of the loop with this `body` (counting from 0):
        then the values pushed are the rows of A in order, and can be read from A itself (see vectorize)."""
        loop: While | None = loops[-1] if loops else None
        if loop is None or body is not loop.body or self.checkpoint is not None \
                or any(outer.checkpoint is not None for outer in loops):
            return None
        here = {s.target: s.value for s in body if isinstance(s, Assign) and s.target}
        value = here.get(name)
        if not (isinstance(value, Op) and value.fn is operator.getitem and len(value.args) == 2 and not value.kwargs):
            return None
        array, index = value.args
        if not (isinstance(array, Var) and array.name in self.fn.params and isinstance(index, Var)):
            return None
        dtypes = self.analysis.dtypes
        if dtypes is None or not isinstance(dtypes.of(array), np.dtype) or not self.analysis.shapes.concrete(array):
            return None
        counter = here.get(index.name, index)           # j, or a copy of it
        if not (isinstance(counter, Var) and counter.name in loop.params):
            return None
        k = loop.params.index(counter.name)
        start, step = loop.inits[k], loop.body_outs[k]
        start = self.definitions.get(start.name, start) if isinstance(start, Var) else start
        step = here.get(step.name) if isinstance(step, Var) else None
        counts_from_zero = isinstance(start, Const) and type(start.value) is int and start.value == 0
        counts_by_one = isinstance(step, Op) and step.fn is operator.add and not step.kwargs \
            and step.args == [counter, Const(1)]
        return array.name if counts_from_zero and counts_by_one else None

    def row_dtype(self, name: str):
        """The dtype of the arrays `name` holds, where known (None otherwise)."""
        dtypes = self.analysis.dtypes
        known = dtypes.of(Var(name)) if dtypes is not None else None
        return known if isinstance(known, np.dtype) else None


def definitions(block: list) -> dict:
    """Every name assigned in `block`, nested blocks included, and the value assigned to it."""
    return {stmt.target: stmt.value for stmt in assignments(block) if stmt.target}
