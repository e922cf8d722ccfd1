"""The backward sweep: each statement's derivative rule, in reverse order.

    dsin = dy * w                # the rule of * ...
    dw = dy * sin
    dx = dsin * np.cos(x)        # ... then the rule of np.sin

A loop becomes a ``for`` over its trip count, each trip popping what the forward sweep pushed (what is
pushed is planned here, in `Recording`); a branch becomes a branch on the same test.
"""
from __future__ import annotations

import ast

from ...analysis.dtypes import is_real
from ...errors import S2SGradError
from ...frontend.functions import is_user_function
from ...ir import primitives
from ...ir.nodes import Assign, Const, Function, If, Op, Var, While, assignments, atom_expr, writes
from ...ir.syntax import assign as _assign
from ...ir.syntax import call as _call
from ...ir.syntax import is_slice as _is_slice
from ...ir.syntax import name as _name
from ...ir.syntax import noted
from ...ir.syntax import origin as _origin
from ...ir.syntax import store as _store
from ...rules import rule_for
from ...rules.registry import complex_rule_for
from ..adjoint_templates import Contribution, expand
from .adjoints import Adjoints, AdjointState
from .assignments import Reuse, derivative_rule, merge_twins, rule_label
from .batching import Batching, PieceBatches
from .calls import Calls
from .checkpointing import CheckpointedLoop, backward_checkpointed, schedule_of, trips_of
from .last_trip import over_items, skip_in_last_trip
from .loops import receivers, trip_counter, written_in_place
from .recording import BranchRecord, Recording, key
from .syntax import pop


class BackwardSweep:
    """Writes the backward sweep of one function, planning the forward sweep's recording as it goes.

    The passes it runs are given explicitly: `reuse` (None: off), `merge_twins`, `batching` (None: off),
    `in_place_accumulation`; `optimizations` are handed to the rule templates."""

    def __init__(self, fn: Function, analysis, adjoints: Adjoints, recording: Recording, calls: Calls,
                 optimizations: frozenset, checkpoint=None, reuse: Reuse | None = None, merge_twins: bool = True,
                 batching: Batching | None = None, in_place_accumulation: bool = True):
        self.fn = fn
        self.optimizations = optimizations      # what the rule templates simplify (see `inline.expand`)
        self.analysis = analysis
        self.adjoints = adjoints
        self.names = adjoints.names
        self.recording = recording
        self.calls = calls
        self.checkpoint = checkpoint            # the schedule for outermost loops without a marker
        self.reuse = reuse
        self.merge_twins = merge_twins
        self.trip_loops: list[ast.For] = []     # the loops running a loop's trips backward (see vectorize)
        self.batching = batching
        self.in_place_accumulation = in_place_accumulation
        self.loops: list = []                   # enclosing loops while reversing
        self.checkpointed: list[CheckpointedLoop] = []   # trips run again, for the forward sweep to fill in
        self.primal_names = writes(fn.body) | set(fn.params)
        self.values = {stmt.target: stmt.value for stmt in assignments(fn.body) if stmt.target}

    def block(self, block: list, repeated: bool, defined=()) -> tuple[list, list]:
        """The adjoint of `block`, and the names it pushes (a block `repeated` in a loop pops them first)."""
        out = []
        for stmt in reversed(block):
            if isinstance(stmt, Assign):
                out += self.assign(stmt)
            elif isinstance(stmt, If):
                out += self.branch(stmt, repeated)
            else:
                out += self.loop(stmt)
        if not repeated:
            return out, []
        local = set(defined)
        for stmt in block:
            local.update(stmt.results if not isinstance(stmt, Assign) else [stmt.target] if stmt.target else [])
            local.update(self.recording.kept_for(stmt))
        pushed, code = self.recording.record(block, local, out, self.loops)
        return code, pushed

    def assign(self, stmt: Assign) -> list:
        target = stmt.target
        adjoints = self.adjoints
        if target is None or target not in adjoints.active or target not in adjoints.has:
            return []
        owned = self.in_place_accumulation and adjoints.owned(target)
        dtarget = adjoints.read(target)
        adjoints.has.discard(target)
        adjoints.sparse.discard(target)
        value = stmt.value
        origin = stmt.loc
        if owned and isinstance(value, Op) and value.fn is primitives.setitem:
            return self.write_in_place(stmt, dtarget)
        if not isinstance(value, Op):
            return adjoints.contribute(value, dtarget, origin)
        fn = value.fn
        if fn in (primitives.make_tuple, primitives.make_list):
            out = []
            pieces = adjoints.pieces.get(target)
            for k, item in enumerate(value.args):
                element = ast.Subscript(dtarget, ast.Constant(k), ast.Load())
                if not (pieces and k < len(pieces) and _is_slice(pieces[k])):    # a slice is never missing
                    element = _call("grad_or_zeros", element, atom_expr(item))
                out += adjoints.contribute(item, element, origin)
            return out
        if is_user_function(fn):
            return self.calls.backward(stmt, dtarget)
        rule = derivative_rule(stmt, self.calls.module, adjoints.is_active)
        dtypes = self.analysis.dtypes
        on_complex = dtypes is not None and dtypes.touches_complex(target, value)
        if on_complex or dtypes is None or dtypes.unknown(target, value):     # (a complex rule holds for reals)
            rule = complex_rule_for(fn) or rule
        out = []
        try:
            steps = expand(rule, value, target, dtarget, adjoints.is_active, self.names, self.analysis.shapes,
                           self.optimizations)
        except S2SGradError as error:          # a call that does not match its rule: point at the user's line
            if error.location is not None:
                raise
            raise type(error)(error.message, stmt.loc, error.hint) from None
        for step in merge_twins(steps) if self.merge_twins else steps:
            if isinstance(step, Contribution):
                if on_complex and is_real(dtypes.of(step.atom)):      # a real value's adjoint is real
                    step.expr = ast.Call(ast.Attribute(_name("np"), "real", ast.Load()), [step.expr], [])
                out += self.batch(step) or adjoints.contribute(step.atom, self.reused(step.expr), origin)
            else:
                out.append(_origin(self.reused(step), origin))
        for statement in out:
            statement.rule = rule_label(fn, value.name)
        return out

    def reused(self, node: ast.AST) -> ast.AST:
        return self.reuse.visit(node) if self.reuse is not None else node

    def batch(self, step: Contribution) -> list:
        """The appends batching makes of `step` in a backward loop (none: add it as usual)."""
        if self.batching is None or not self.loops:
            return []
        return self.batching.batch(step, self.loops[-1], self.receivers)

    def flush(self, loop: While) -> tuple[list, list]:
        return self.batching.flush(loop) if self.batching is not None else ([], [])

    def write_in_place(self, stmt: Assign, dtarget: ast.Name) -> list:
        """``y_1 = setitem(y, i, v)`` where y_1's adjoint is a buffer the gradient owns: v's part is read out
        of it first, then zeroed in place (``dv = ...dy[i]...``, ``dy[i] = 0.0``), and the buffer becomes
        y's adjoint (no copy of the whole array per write)."""
        adjoints = self.adjoints
        x, index, written_value = stmt.value.args
        steps = expand(rule_for(primitives.setitem), stmt.value, stmt.target, dtarget, adjoints.is_active,
                       self.names, self.analysis.shapes, self.optimizations)
        out = []
        for step in steps:
            if isinstance(step, Contribution) and step.atom == written_value:
                out += adjoints.contribute(written_value, step.expr, stmt.loc)
        if adjoints.is_active(x):
            zero = ast.Assign([ast.Subscript(dtarget, primitives.index_expression(atom_expr(index)), ast.Store())],
                              ast.Constant(0.0))
            out.append(_origin(zero, stmt.loc))
            fresh = x.name not in adjoints.has
            out += adjoints.contribute(x, dtarget, stmt.loc)
            if fresh:
                adjoints.may_alias[x.name] = False          # the same buffer: still the gradient's own
        for statement in out:
            statement.rule = rule_label(primitives.setitem, stmt.value.name)
        return out

    def branch(self, stmt: If, repeated: bool) -> list:
        adjoints = self.adjoints
        flowing = [k for k, r in enumerate(stmt.results) if r in adjoints.active and r in adjoints.has]
        if not flowing:
            return []
        douts = {k: adjoints.read(stmt.results[k]) for k in flowing}
        before = AdjointState(adjoints.has - set(stmt.results), adjoints.sparse, adjoints.may_alias)
        branches, aliases, pushes = [], [], []
        adjoints.branches += 1
        for block, outs in ((stmt.body, stmt.body_outs), (stmt.orelse, stmt.orelse_outs)):
            adjoints.restore(before)
            code = []
            for k in flowing:
                code += adjoints.contribute(outs[k], douts[k], stmt.loc)
            reversed_block, pushed = self.block(block, repeated)
            code += reversed_block
            pushes.append(pushed)
            branches.append((code, set(adjoints.has)))
            aliases.append(adjoints.may_alias)
        adjoints.branches -= 1
        if repeated:
            self.recording.branches[key(stmt)] = BranchRecord(*pushes)
        may_alias = {n: any(a.get(n, False) for a in aliases) for n in set(aliases[0]) | set(aliases[1])}
        merged = branches[0][1] | branches[1][1]
        adjoints.has = merged
        adjoints.sparse = before.sparse & adjoints.sparse
        codes = []
        for code, has in branches:
            for name in sorted(merged - has):
                code.append(adjoints.zero(name, stmt.loc))
            codes.append(code or [ast.Pass()])
        adjoints.may_alias = may_alias
        if isinstance(stmt.test, Const):
            return codes[0 if stmt.test.value else 1]
        return [_origin(ast.If(atom_expr(stmt.test), codes[0], codes[1]), stmt.loc)]

    def receivers(self, loop: While) -> list[str]:
        """Names from outside `loop` whose adjoints its body can add to (active loop invariants)."""
        return receivers(loop, self.adjoints.active, self.primal_names)

    def loop(self, loop: While) -> list:
        adjoints = self.adjoints
        carried = [k for k, p in enumerate(loop.params) if p in adjoints.active]
        if not carried:
            return []
        schedule = schedule_of(loop, self.checkpoint, nested=bool(self.loops))
        record = self.recording.loop(loop)
        if schedule is None:
            record.trips = self.names.fresh("trips")
            record.counter, record.counted_by = trip_counter(loop, self.values) or (None, None)
        out = []
        owned_on_entry = set()                  # carried adjoints that start as buffers the gradient owns
        for k in carried:
            result, param = loop.results[k], loop.params[k]
            if result in adjoints.has:
                if adjoints.owned(result):
                    owned_on_entry.add(param)
                out.append(_assign(adjoints.name(param), adjoints.read(result), loop.loc))
                adjoints.has.discard(result)
            else:
                owned_on_entry.add(param)
                out.append(_assign(adjoints.name(param), _call("zeros_like", _name(result)), loop.loc))
        zeros = {}                              # receiver -> its zeros, made before the loop
        for name in self.receivers(loop):
            if name not in adjoints.has:
                zeros[name] = adjoints.zero(name, loop.loc)
                out.append(zeros[name])
        adjoints.sparse -= set(self.receivers(loop))
        if schedule is not None:
            return out + self.checkpointed_loop(loop, carried, schedule)
        body = self.trip(loop, carried, owned_on_entry)
        named = {n.id for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        for name, zero in zeros.items():        # only batched sums after the loop add to it: they assign it
            if adjoints.name(name) not in named:
                out.remove(zero)
                adjoints.has.discard(name)
        before, after = self.flush(loop)
        out += before
        for carry in record.carries:
            out.append(noted(_assign(carry.value, pop(carry.stack), loop.loc), "the loop's final value"))
        if record.counts_down:                  # from its final value (an inner loop's: from its trips, popped)
            start = record.trips if self.loops else record.counted_by
            out.append(noted(_assign(record.counter, _name(start), loop.loc), "counted down every trip"))
        trip = "_"
        silent = {adjoints.name(loop.params[k]) for k in carried if not adjoints.is_active(loop.inits[k])}
        if silent and over_items(loop, self.analysis.shapes):
            counter = self.names.fresh("trip")
            skipping = skip_in_last_trip(body, silent, counter, record.trips)
            if skipping is not None:
                body, trip = skipping, counter
        self.trip_loops.append(_origin(ast.For(_store(trip), _call("range", _name(record.trips)), body, [], None),
                                       loop.loc))
        out.append(self.trip_loops[-1])
        out += after
        for k in carried:
            out += adjoints.contribute(loop.inits[k], _name(adjoints.name(loop.params[k])), loop.loc)
        return out

    def trip(self, loop: While, carried: list, owned_on_entry=frozenset()) -> list:
        """The adjoint of one trip of `loop`'s body, with the pops it needs first. A carried adjoint owned on
        entry stays owned every trip where the body only writes into the loop variable and reads from it
        (`written_in_place`): its writes' adjoints then zero it in place."""
        adjoints = self.adjoints
        outer = set(adjoints.has)
        adjoints.has = set(outer)
        before = dict(adjoints.may_alias)
        self.loops.append(loop)
        body = []
        carried_in = {k: _name(adjoints.name(loop.params[k])) for k in carried}
        if any(isinstance(loop.body_outs[k], Var) and loop.body_outs[k].name in loop.params for k in carried):
            for k in carried:
                temp = self.names.fresh(f"d{loop.params[k]}_next")
                body.append(_assign(temp, carried_in[k], loop.loc))
                carried_in[k] = _name(temp)
        for k in carried:
            out_atom = loop.body_outs[k]
            if isinstance(out_atom, Var) and out_atom.name == loop.params[k]:
                adjoints.has.add(out_atom.name)
                continue
            body += adjoints.contribute(out_atom, carried_in[k], loop.loc)
            if loop.params[k] in owned_on_entry and self.in_place_accumulation and written_in_place(loop, k):
                adjoints.may_alias[out_atom.name] = False
        code, self.recording.loop(loop).pushes = self.block(loop.body, repeated=True, defined=loop.params)
        body += code
        for k in carried:
            if loop.params[k] not in adjoints.has:
                body.append(adjoints.zero(loop.params[k], loop.loc))
        for name, aliased in before.items():    # a loop may run no trip: what may alias before still may
            if aliased:
                adjoints.may_alias[name] = True
        self.loops.pop()
        adjoints.has = outer
        return body

    def checkpointed_loop(self, loop: While, carried: list, schedule) -> list:
        """Reverse a checkpointed loop: the schedule's work, each piece a run of steps forward,
        recorded and then reversed, or only advanced (`checkpointing`)."""
        record = self.recording.loop(loop)
        record.checkpoints, record.schedule = self.names.fresh("checkpoints"), schedule
        work = self.names.fresh("work")
        owned = {n for n in self.receivers(loop) if self.in_place_accumulation and self.adjoints.owned(n)}
        trips = trips_of(loop, work, self.trip(loop, carried))
        self.trip_loops.append(trips)
        rebound = {t.id for n in ast.walk(trips) if isinstance(n, (ast.Assign, ast.For))
                   for t in ast.walk(ast.Tuple(n.targets if isinstance(n, ast.Assign) else [n.target]))
                   if isinstance(t, ast.Name)}          # an adjoint made a new array: not one buffer throughout
        in_place = {n for n in owned if self.adjoints.name(n) not in rebound}
        batches = self.batching.flush_pieces(loop, record.checkpoints, in_place) if self.batching is not None \
            else PieceBatches()
        sweep, pending = backward_checkpointed(loop, record.checkpoints, work, batches.reversal(trips), schedule)
        self.checkpointed.append(pending)
        out = batches.before_sweep + [sweep] + batches.after_sweep    # (the stacks: before the forward sweep)
        for k in carried:
            out += self.adjoints.contribute(loop.inits[k], _name(self.adjoints.name(loop.params[k])), loop.loc)
        return out
