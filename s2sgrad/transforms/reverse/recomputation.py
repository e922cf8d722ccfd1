"""Values a repeated block's backward code computes again instead of popping (the recompute_cheap pass).

The backward trip of a loop body pops what it reads. Some of those values are cheap arithmetic of values it
has anyway: ``prod = 0.1 * y`` where ``y`` is popped. Such a value is not pushed; its statement runs again
in the backward trip, just before the first statement that reads it:

    for _ in range(trips):                  for _ in range(trips):
        prod = prod_stack.pop()                 y = y_stack.pop()
        y = y_stack.pop()           ->          ddiff = dy * 0.002
        ddiff = dy * 0.002                      prod = 0.1 * y
        dy += ddiff * prod                      dy += ddiff * prod

The cost model, per value the backward trip reads:

- a push and a pop cost two calls (``PUSH_AND_POP``), and keep the value until the backward trip reads it
  (the memory of one value per trip);
- an elementwise operation (``+ - * /``, unary minus, ``**`` with a constant exponent, ``np.square``,
  ``np.negative`` and the ufuncs of the operators) costs one call and keeps nothing. Anything else is
  never computed again: calls of user functions, matmuls, reductions, transcendental functions (their
  values are pushed, and their derivatives' terms are often computed from them), writes, randomness;
- the operands must be there anyway: values the trip pops anyway (not only their shapes), values computed
  again themselves, constants and module values, and names from outside the block that the backward code
  reads anyway or that no enclosing loop defines (loop invariants, captures). An operand the block defines
  that nothing else reads is computed again too, and counts in the cost.

- an item of a list, tuple or dict read by a constant or an integer (``item = params[k]`` in trip k, then
  ``W = item[0]``), and a copy of such a value, cost nothing: they are references, no operation on data;
  the sequence is read as it was, since a sequence the loop writes is a loop variable, pushed itself.

A value is computed again when that costs at most the push and the pop it saves (at most
``PUSH_AND_POP`` operations, counting operands computed again only for it), its operands and value have
numeric dtypes known from the specialization, and its chain of values computed again is at most
``MAX_DEPTH`` statements long. That holds for a scalar. An operation on an array costs more than a push
and a pop (which only keep a reference), unless it is done once for all trips: an array is computed again
only where the vectorize pass can do so, on rows (small arrays of one shape, computed from arrays of that
shape the block pops or computes again, and numbers: ``diff_rows = tanh_rows - 0.1 * x_rows``).
The same values give the same results, so the gradient is unchanged.

    >>> MAX_DEPTH, PUSH_AND_POP
    (3, 2)
"""
from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from ...analysis.activity import DICT, SEQ, TENSOR, UNKNOWN
from ...analysis.dtypes import REAL, is_python_number
from ...ir.nodes import Assign, Const, Global, Op, Var, writes
from ...ir.primitives import seq_getitem
from ...ir.syntax import names_read
from .. import primal
from .rows import RowFinder

PUSH_AND_POP = 2            # the calls a pushed value costs: its push and its pop
MAX_DEPTH = 3               # the longest chain of values computed again from one another

# Elementwise arithmetic cheaper than a call: one operation per element, no allocation beyond its result.
CHEAP = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.pos,
         np.add, np.subtract, np.multiply, np.divide, np.negative, np.square}
POWERS = {operator.pow, np.power}           # cheap with a constant exponent
SEQUENCE_KINDS = {SEQ, DICT, UNKNOWN}       # kinds of values whose items are read by reference


@dataclass
class Recomputed:
    """The values of a block computed again in its backward code, and their statements in block order."""
    names: list
    statements: list


class Recomputation:
    """Decides which values a repeated block's backward code computes again (see the module docstring)."""

    def __init__(self, analysis, rows: RowFinder | None):
        self.analysis = analysis
        self.rows = rows                    # None: vectorize is off, arrays are never computed again

    def plan(self, block: list, local: set, candidates: list, available: set, value_reads: set,
             loops: list, by_rows: bool) -> Recomputed:
        """Which of `candidates` (values `block` defines that its backward code reads) to compute again.
        `local`: the names the block defines; `available`: those its backward code has anyway (popped or
        carried); `value_reads`: the names that code reads for their values; `loops`: the enclosing loops,
        outermost first; `by_rows`: is the block a loop body whose backward loop vectorize may rewrite?"""
        definitions = {s.target: s for s in block if isinstance(s, Assign) and s.target}
        outer = writes(loops[0].body) | writes(loops[0].cond) | set(loops[0].params) if loops else set()
        computed: dict[str, int] = {}       # name computed again -> the length of its chain

        def again(name: str, budget: int) -> tuple[int, int, dict] | None:
            """(operations, chain length, operands computed again only for it) of computing `name` again
            within `budget` operations, or None."""
            stmt = definitions.get(name)
            if budget <= 0 or stmt is None or not (self.item_read(stmt) or self.cheap(stmt)
                                                   and self.scalar_or_by_rows(stmt, local if by_rows else None)):
                return None
            operations, deepest, helpers = 0 if self.item_read(stmt) else 1, 0, {}
            for atom in stmt.value.args if isinstance(stmt.value, Op) else [stmt.value]:
                if not isinstance(atom, Var):
                    continue
                if atom.name in computed:
                    deepest = max(deepest, computed[atom.name])
                elif atom.name in available:
                    continue
                elif atom.name not in local:         # from outside the block: there if read anyway
                    if atom.name in outer and atom.name not in value_reads:
                        return None
                else:
                    inner = again(atom.name, budget - operations)
                    if inner is None:
                        return None
                    operations += inner[0]
                    deepest = max(deepest, inner[1])
                    helpers.update(inner[2])
                    helpers[atom.name] = inner[1]
            return (operations, deepest + 1, helpers) if operations <= budget else None

        order = {s.target: k for k, s in enumerate(block) if isinstance(s, Assign) and s.target}
        chosen = []
        for name in sorted((n for n in candidates if n in order), key=order.get):
            found = again(name, PUSH_AND_POP)
            if found is not None and found[1] <= MAX_DEPTH:
                computed.update(found[2])
                computed[name] = found[1]
                chosen.append(name)
        statements = [s for s in block if isinstance(s, Assign) and s.target in computed]
        return Recomputed(chosen, statements)

    def cheap(self, stmt: Assign) -> bool:
        """Is `stmt` elementwise arithmetic of numbers or numeric arrays (the cost model's operations)?"""
        value = stmt.value
        if not isinstance(value, Op) or value.kwargs or value.augmented:
            return False
        if value.fn in POWERS:
            if len(value.args) != 2 or not isinstance(value.args[1], Const):
                return False
        elif value.fn not in CHEAP:
            return False
        return self.numeric(Var(stmt.target)) and all(self.numeric(a) for a in value.args)

    def item_read(self, stmt: Assign) -> bool:
        """Is `stmt` a reference, no operation on data: a copy ``x = y`` of a value that is not known as an
        array (a list, tuple or dict, or a Python int: ``i = i_count`` of a ``for``), or ``x = seq[k]`` of a
        list, tuple or dict (``seq_getitem``, or ``[]`` on a value not known as an array) by a constant or an
        integer (``item = params[k]`` in trip k, ``W = item[0]``)?"""
        value, kind = stmt.value, self.analysis.kind
        if isinstance(value, Var):
            dtypes = self.analysis.dtypes
            return kind.get(value.name) in SEQUENCE_KINDS or dtypes is not None and dtypes.of(value) is int
        if not (isinstance(value, Op) and value.fn in (operator.getitem, seq_getitem) and len(value.args) == 2
                and not value.kwargs and not value.augmented):
            return False
        seq, index = value.args
        dtypes = self.analysis.dtypes
        by_key = isinstance(index, Const) and type(index.value) in (int, str) \
            or isinstance(index, Var) and dtypes is not None and dtypes.of(index) is int
        return isinstance(seq, Var) and by_key \
            and (value.fn is seq_getitem or kind.get(seq.name) in SEQUENCE_KINDS)

    def scalar_or_by_rows(self, stmt: Assign, local: set | None) -> bool:
        """A scalar, or an array the backward loop can compute for all trips at once: small rows (vectorize)
        from arrays of its shape the loop body defines (`local`; None: not a body vectorize rewrites), and
        numbers."""
        shapes = self.analysis.shapes
        target = Var(stmt.target)
        if shapes.is_scalar(target):
            return True
        if local is None or self.rows is None or not self.rows.holds_small_rows(stmt.target):
            return False
        shape = shapes.concrete(target)
        return all(a.name in local and shapes.concrete(a) == shape if isinstance(a, Var) else shapes.is_scalar(a)
                   for a in stmt.value.args)

    def numeric(self, atom) -> bool:
        """Is `atom` a number or an array of numbers, by the kinds and dtypes known?"""
        dtypes = self.analysis.dtypes
        if dtypes is None:
            return False
        if isinstance(atom, Var) and self.analysis.kind.get(atom.name) != TENSOR:
            return False
        if isinstance(atom, Global) and not isinstance(atom.value, (int, float, complex, np.ndarray, np.generic)):
            return False
        descriptor = dtypes.of(atom)
        if descriptor is REAL:                  # real numbers, or a shape or a slice: a number where scalar
            return self.analysis.shapes.is_scalar(atom)
        return is_python_number(descriptor) or isinstance(descriptor, np.dtype) and descriptor.kind in "biufc"


def insert(code: list, statements: list) -> list:
    """`code` with each of `statements` (block order) just before the first statement that reads its value."""
    code = list(code)
    for stmt in reversed(statements):
        line = primal.plain(stmt)
        at = next((k for k, s in enumerate(code) if stmt.target in names_read([s])), len(code))
        code.insert(at, line)
    return code


__all__ = ["Recomputation", "Recomputed", "insert", "CHEAP", "POWERS", "PUSH_AND_POP", "MAX_DEPTH"]
