"""The driver of reverse mode: one lowered function -> its forward sweep and its backward sweep.

The backward sweep is written first (`BackwardSweep`), planning what the forward sweep records
(`Recording`); then the passes that need the whole backward sweep run (in_place_writes, dead_primal_code),
and the forward sweep is written by the plan (`ForwardSweep`). Each optimization switch of ``optimize=``
turns one pass on or off here:

    >>> sorted(passes(frozenset({"reuse", "vectorize"})).items())[:3]
    [('batched_accumulation', False), ('carried_pushes', False), ('dead_primal_code', False)]
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ...analysis.activity import TENSOR, Analysis
from ...analysis.inplace import in_place_writes
from ...analysis.liveness import unneeded
from ...ir.names import Names, base_name
from ...ir.nodes import Function, Var, atom_expr
from ...ir.syntax import call as _call
from ...ir.syntax import name as _name
from ...ir.syntax import names_read
from ...optimizations import ALL
from .adjoints import Adjoints
from .assignments import Reuse, computed
from .backward_sweep import BackwardSweep
from .batching import Batching
from .calls import Calls
from .forward_sweep import ForwardSweep
from .recomputation import Recomputation
from .recording import Recording, RecordingOptions
from .rows import RowFinder, definitions

# The optimizations this stage runs (the others run in the rule templates and in the backend).
PASSES = ("symbolic_zeros", "in_place_accumulation", "to_be_recorded", "shape_only_pushes", "carried_pushes",
          "vectorize", "recompute_cheap", "reuse", "merge_twins", "batched_accumulation", "in_place_writes",
          "dead_primal_code")


def passes(optimizations: frozenset[str]) -> dict[str, bool]:
    """Which of this stage's passes `optimizations` switches on."""
    return {name: name in optimizations for name in PASSES}


@dataclass
class Sweeps:
    """The two halves of a function's gradient, ready to be assembled."""
    forward: list
    backward: list
    result: ast.expr
    seed: str
    grads: list                      # an expression per wrt parameter (None: zero)
    row_stacks: dict = field(default_factory=dict)  # stacks the backward sweep may pop as rows -> RowStack
    adjoint_shapes: dict = field(default_factory=dict)  # adjoint name -> shape, where known
    trip_loops: list = field(default_factory=list)  # the backward sweep's `for _ in range(trips)` (see vectorize)


class Reverse:
    """Reverses one lowered function with respect to some of its parameters."""

    def __init__(self, fn: Function, wrt: list[str], analysis: Analysis, module, names: Names, checkpoint=None,
                 optimizations: frozenset[str] = ALL, sparse: bool = False, value_needed: bool = True):
        self.fn = fn
        self.wrt = wrt
        self.analysis = analysis
        self.names = names
        self.value_needed = value_needed        # does the forward sweep compute the output for the caller?
        self.keep_sparse = sparse               # hand a gathered array's gradient back as a SparseGrad
        on = self.on = passes(optimizations)    # names from `optimizations.OPTIMIZATIONS`; none: the naive scheme
        self.adjoints = Adjoints(names, analysis, on["symbolic_zeros"], on["in_place_accumulation"])
        rows = RowFinder(fn, analysis, definitions(fn.body), checkpoint) if on["vectorize"] else None
        self.recording = Recording(names, RecordingOptions(on["to_be_recorded"], on["shape_only_pushes"],
                                                           on["carried_pushes"]), rows,
                                   Recomputation(analysis, rows) if on["recompute_cheap"] else None)
        self.calls = Calls(module, self.adjoints, self.recording)
        self.backward = BackwardSweep(
            fn, analysis, self.adjoints, self.recording, self.calls, optimizations, checkpoint,
            reuse=Reuse(computed(fn.body)) if on["reuse"] else None, merge_twins=on["merge_twins"],
            batching=Batching(names, analysis.shapes, self.adjoints) if on["batched_accumulation"] else None,
            in_place_accumulation=on["in_place_accumulation"])

    def run(self) -> Sweeps:
        result = self.fn.result
        seed = self.names.fresh("d" + base_name(result.name if isinstance(result, Var) else "out"))
        if self.adjoints.is_active(result):
            self.adjoints.named[result.name] = seed
            self.adjoints.has.add(result.name)
        backward, _ = self.backward.block(self.fn.body, repeated=False)
        grads = self.gradients()
        in_place = in_place_writes(self.fn, backward) if self.on["in_place_writes"] else set()
        rerun = ForwardSweep(self.recording, self.calls, in_place, dead=set())
        for pending in self.backward.checkpointed:       # the trips a checkpointed loop runs again
            pending.recorded.body = rerun.trip(pending.loop, record=True)
            self.recording.loop(pending.loop).recorded_trip = rerun.trip(pending.loop, record=True)
            pending.advanced.body = rerun.trip(pending.loop, record=False)
        dead = self.dead_primal_code(backward, grads) if self.on["dead_primal_code"] else set()
        forward = ForwardSweep(self.recording, self.calls, in_place, dead).block(self.fn.body)
        shapes = self.analysis.shapes
        adjoint_shapes = {d: shapes.concrete(Var(x)) for x, d in self.adjoints.named.items()
                          if shapes.concrete(Var(x)) is not None}
        return Sweeps(forward, backward, atom_expr(result), seed, grads, row_stacks=self.recording.row_stacks,
                      adjoint_shapes=adjoint_shapes, trip_loops=self.backward.trip_loops)

    def gradients(self) -> list:
        """The gradient of each wrt parameter (None: zero), completed where it may be shared or sparse."""
        adjoints, grads = self.adjoints, []
        for param in self.wrt:
            if param not in adjoints.has:
                grads.append(None)
            elif self.keep_sparse and param in adjoints.sparse:
                grads.append(_name(adjoints.name(param)))
            elif adjoints.may_alias.get(param, True) or param in adjoints.sparse \
                    or self.analysis.kind.get(param) != TENSOR or self.analysis.arg_kinds.get(param) == TENSOR:
                # ("tensor" is how a 0-d array is specialized on: arithmetic on it gives NumPy scalars)
                grads.append(_call("complete", _name(adjoints.name(param)), _name(param)))
            else:
                grads.append(_name(adjoints.name(param)))
        return grads

    def dead_primal_code(self, backward: list, grads: list) -> set[int]:
        """The primal statements nothing needed reads: not the backward sweep, nor the gradients, nor the
        output where the caller gets it (see `analysis.liveness`)."""
        needed = names_read(backward) | names_read([ast.Expr(g) for g in grads])
        if self.value_needed and isinstance(self.fn.result, Var):
            needed.add(self.fn.result.name)
        return unneeded(self.fn.body, needed, self.analysis)
