"""Stage 4: reverse mode. Turn a lowered function into a forward sweep and a backward sweep.

The forward sweep is the primal code plus, inside loops, pushes of the values
the backward sweep reads (and each loop's trip count). The backward sweep
visits statements in reverse and applies each one's derivative rule:

    y = np.sin(x) * w            # forward
    ...
    dsin = dy * w                # backward: the rule of * ...
    dw = dy * sin
    dx = dsin * np.cos(x)        # ... then the rule of np.sin

Adjoints are tracked symbolically: a name with no contribution yet is a zero
that costs nothing; its first contribution assigns, later ones add.
"""
from __future__ import annotations

import ast
import operator
import os
from dataclasses import dataclass, field

import numpy as np

from ..analysis.activity import TENSOR, Analysis
from ..analysis.inplace import MUTATIONS, in_place_writes, value_reads
from ..analysis.liveness import unneeded
from ..analysis.randomness import generators
from ..errors import NoDerivativeRule, S2SGradError, UnsupportedSyntax
from ..frontend.functions import is_recomputed, is_user_function
from ..ir import primitives
from ..ir.names import identifier
from ..ir.nodes import Assign, Const, Function, If, Op, Var, While, atom_expr, captures, reads, value_expr, writes
from ..ir.syntax import assign as _assign
from ..ir.syntax import attr as _attr
from ..ir.syntax import call as _call
from ..ir.syntax import is_call as _is_call
from ..ir.syntax import is_slice as _is_slice
from ..ir.syntax import name as _name
from ..ir.syntax import np_call as _np_call
from ..ir.syntax import origin as _origin
from ..ir.syntax import store as _store
from ..optimizations import ALL
from ..rules import is_nondifferentiable, rule_for
from ..rules.nondifferentiable import opaque_call_error
from .inline import Contribution, expand

# Stacks of arrays of at most this many elements may be popped as one array (see vectorize): below it a
# NumPy call costs more than its arithmetic, above it the rows would add much to the stacks' memory.
ROW_SIZE_LIMIT = 256


def _noted(statement: ast.stmt, note: str) -> ast.stmt:
    """`statement`, printed with ``# note`` after it."""
    statement.note = note
    return statement


def _pop(stack: str) -> ast.Call:
    return ast.Call(ast.Attribute(_name(stack), "pop", ast.Load()), [], [])


def _assign_tuple(target, value, origin=None):
    return _origin(ast.Assign([target], value), origin)


@dataclass(frozen=True)
class RowStack:
    """A stack of small arrays of one shape, which the backward sweep may pop as the rows of one array."""
    shape: tuple
    dtype: object = None             # np.dtype where known
    rows_of: str | None = None       # a parameter A: the values pushed are A[0], A[1], ... (one per trip)


@dataclass
class Sweeps:
    """The two halves of a function's gradient, ready to be assembled."""
    forward: list
    backward: list
    result: ast.expr
    seed: str
    grads: list                      # an expression per wrt parameter (None: zero)
    stacks: list = field(default_factory=list)
    row_stacks: dict = field(default_factory=dict)  # stacks the backward sweep may pop as rows -> RowStack
    adjoint_shapes: dict = field(default_factory=dict)  # adjoint name -> shape, where known
    trip_loops: list = field(default_factory=list)  # the backward sweep's `for _ in range(trips)` (see vectorize)


class Reverse:
    """Reverses one lowered function with respect to some of its parameters."""

    def __init__(self, fn: Function, wrt: list[str], analysis: Analysis, module, names, checkpoint=None,
                 optimizations: frozenset[str] = ALL, sparse: bool = False, value_needed: bool = True):
        self.fn = fn
        self.value_needed = value_needed        # does the forward sweep compute the output for the caller?
        self.dead: set[int] = set()             # primal statements the forward sweep leaves out (see liveness)
        self.keep_sparse = sparse               # hand a gathered array's gradient back as a SparseGrad
        self.optimizations = optimizations      # names from `optimizations.OPTIMIZATIONS`; none: the naive scheme
        self.checkpoint = checkpoint            # the schedule for outermost loops without a marker
        self.drivers: dict[int, str] = {}       # checkpointed loop id -> its Checkpoints object
        self.deferred: list = []                # code to fill in once in-place writes are decided
        self.branches = 0                       # depth of branches being reversed
        self.shape_only: set[str] = set()       # pushed names the backward sweep reads only the shape of
        self.stack_notes: dict[str, str] = {}   # stack -> why the backward sweep needs what it holds
        self.row_stacks: dict[str, RowStack] = {}   # stacks of small arrays of one shape (see vectorize)
        self.trip_loops: list[ast.For] = []     # the loops running a loop's trips backward
        self.carries: dict[int, list] = {}      # loop id -> (value, loop variable, its stack): see carried_to_next_trip
        self.batches: dict[int, dict] = {}      # loop id -> weight -> (rows list, columns list)
        self.batch_lists: dict[int, dict] = {}  # loop id -> value -> the list collecting it
        self.wrt = wrt
        self.analysis = analysis
        self.active = analysis.active
        self.module = module
        self.names = names
        self.adjoints: dict[str, str] = {}
        self.has: set[str] = set()             # names whose adjoint holds a value now
        self.sparse: set[str] = set()          # ... and may hold a SparseGrad
        self.pushes: dict[int, list[str]] = {}  # block id -> names pushed at its end
        self.stacks: dict[str, str] = {}        # name -> its stack
        self.loops: list = []                   # enclosing loops while reversing
        self.stack_owner: dict[int, list] = {}  # outermost loop id -> stacks to create before it
        self.trips: dict[int, str] = {}         # loop id -> trip counter
        self.records: dict[int, str] = {}       # user-call statement id -> its record name
        self.may_alias: dict[str, bool] = {}    # adjoint may be the seed or a primal value itself
        self.pieces: dict[str, list] = {}       # a sequence's adjoint made as a list of pieces: the pieces
        self.primal_names = writes(fn.body) | set(fn.params)
        self.computed = _computed(fn.body) if "reuse" in optimizations else {}   # expression -> name holding it
        self.definitions = _definitions(fn.body)                               # name -> the value assigned

    # ---------------------------------------------------------------- entry

    def run(self) -> Sweeps:
        result = self.fn.result
        seed = self.names.fresh("d" + _base(result.name if isinstance(result, Var) else "out"))
        backward = []
        if self.is_active(result):
            self.adjoints[result.name] = seed
            self.has.add(result.name)
        backward += self.backward_block(self.fn.body, repeated=False)
        grads = []
        for param in self.wrt:
            if param not in self.has:
                grads.append(None)
            elif self.keep_sparse and param in self.sparse:
                grads.append(_name(self.adjoint_name(param)))
            elif self.may_alias.get(param, True) or param in self.sparse \
                    or self.analysis.kind.get(param) != TENSOR or self.analysis.arg_kinds.get(param) == TENSOR:
                # ("tensor" is how a 0-d array is specialized on: arithmetic on it gives NumPy scalars)
                grads.append(_call("complete", _name(self.adjoint_name(param)), _name(param)))
            else:
                grads.append(_name(self.adjoint_name(param)))
        self.in_place = in_place_writes(self.fn, backward) if "in_place_writes" in self.optimizations else set()
        for fill in self.deferred:
            fill()
        if "dead_primal_code" in self.optimizations:
            needed = _reads(backward) | _reads([ast.Expr(g) for g in grads])
            if self.value_needed and isinstance(result, Var):
                needed.add(result.name)
            self.dead = unneeded(self.fn.body, needed, self.analysis)
        forward = self.forward_block(self.fn.body)
        adjoint_shapes = {d: self.analysis.shapes.concrete(Var(x)) for x, d in self.adjoints.items()
                          if self.analysis.shapes.concrete(Var(x)) is not None}
        return Sweeps(forward, backward, atom_expr(result), seed, grads, row_stacks=self.row_stacks,
                      adjoint_shapes=adjoint_shapes, trip_loops=self.trip_loops)

    # ---------------------------------------------------------------- adjoint bookkeeping

    def is_active(self, atom) -> bool:
        return isinstance(atom, Var) and atom.name in self.active

    def adjoint_name(self, name: str) -> str:
        if name not in self.adjoints:
            self.adjoints[name] = self.names.fresh("d" + name, temporary=name in self.names.temporary)
        return self.adjoints[name]

    def read_adjoint(self, name: str) -> ast.expr:
        dname = _name(self.adjoint_name(name))
        return _call("densify", dname) if name in self.sparse else dname

    def contribute(self, atom, expr: ast.expr, origin=None) -> list:
        """Add `expr` to the adjoint of `atom`: assign if it is the first contribution."""
        if not self.is_active(atom):
            return []
        name = atom.name
        dname = self.adjoint_name(name)
        is_sparse = self.may_be_sparse(expr)
        if name in self.has:
            self.pieces[name] = None                  # a sum now, not the pieces of its first contribution
            if self.analysis.kind.get(name, TENSOR) == TENSOR and name not in self.sparse and not is_sparse:
                if "in_place_accumulation" in self.optimizations and not self.may_alias.get(name, True):
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
            else:
                value = _call("add_grads", _name(dname), expr)
                if not is_sparse:
                    self.sparse.discard(name)
            return [_assign(dname, value, origin)]
        self.has.add(name)
        self.may_alias[name] = _may_alias(expr) and not self.scatters_at_basic_index(expr)   # (zeros it made)
        self.pieces[name] = expr.elts if isinstance(expr, (ast.List, ast.Tuple)) else None
        if "symbolic_zeros" not in self.optimizations and self.analysis.kind.get(name, TENSOR) == TENSOR:
            expr = ast.BinOp(_call("zeros_like", _name(name)), ast.Add(), _call("densify", expr))
            self.may_alias[name] = False
        if is_sparse:
            self.sparse.add(name)
        if isinstance(expr, ast.Name) and expr.id == dname:
            return []
        return [_assign(dname, expr, origin)]

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

    def zero(self, name: str, origin=None) -> ast.stmt:
        self.has.add(name)
        self.may_alias[name] = False
        self.sparse.discard(name)
        return _assign(self.adjoint_name(name), _call("zeros_like", _name(name)), origin)

    # ---------------------------------------------------------------- backward sweep

    def backward_block(self, block: list, repeated: bool, defined=()) -> list:
        out = []
        for stmt in reversed(block):
            if isinstance(stmt, Assign):
                out += self.backward_assign(stmt)
            elif isinstance(stmt, If):
                out += self.backward_if(stmt, repeated)
            else:
                out += self.backward_while(stmt)
        if repeated:
            local = set(defined)
            for stmt in block:
                local.update(stmt.results if not isinstance(stmt, Assign) else [stmt.target] if stmt.target else [])
                if id(stmt) in self.trips:
                    local.add(self.trips[id(stmt)])
                if id(stmt) in self.records and not is_recomputed(stmt.value.fn):
                    local.add(self.records[id(stmt)])
            needed = sorted(local & _reads(out)) if "to_be_recorded" in self.optimizations else sorted(local)
            if "shape_only_pushes" in self.optimizations:
                self.shape_only |= (set(needed) & _reads(out)) - value_reads(out)
            carried = self.carried_to_next_trip(block, [n for n in needed if n in _reads(out)])
            needed = [n for n in needed if n not in carried]
            self.pushes[id(block)] = needed
            owner = self.stack_owner.setdefault(id(self.loops[0]), [])
            pops = []
            for name in needed:
                hint = f"{_base(name)}_shape_stack" if name in self.shape_only else f"{_base(name)}_stack"
                stack = self.stacks.setdefault(name, self.names.fresh(hint))
                self.stack_notes.setdefault(stack, _why_kept(name, out, name in self.shape_only))
                owner.append(stack)
                if self.holds_small_rows(name):
                    self.row_stacks[stack] = RowStack(self.analysis.shapes.concrete(Var(name)), self.row_dtype(name),
                                                      self.gathered_by_trip(block, name))
                pops.append(_assign(name, _pop(stack)))
            for value, param in carried.items():
                stack = self.stacks[param]
                self.carries.setdefault(id(self.loops[-1]), []).append((value, param, stack))
                self.stack_notes[stack] += f"; {_why_kept(value, out, False)} one trip earlier"
                out.append(_assign(value, _name(param)))
            out = pops + out
        return out

    def carried_to_next_trip(self, block: list, needed: list) -> dict[str, str]:
        """Values a loop body ends with that the next trip starts with as a loop variable, both read by the
        backward sweep: value -> loop variable. They are not pushed: the loop variable's stack holds them,
        and the loop's final value is pushed after it (``h_2`` of one trip is ``h`` of the next)."""
        loop = self.loops[-1] if self.loops else None
        if "carried_pushes" not in self.optimizations or loop is None or block is not loop.body \
                or id(loop) in self.drivers:
            return {}
        carried = {}
        for param, out in zip(loop.params, loop.body_outs):
            if isinstance(out, Var) and out.name in needed and param in needed and out.name not in loop.params \
                    and not {out.name, param} & self.shape_only and out.name not in carried:
                carried[out.name] = param
        return carried

    def holds_small_rows(self, name: str) -> bool:
        """Is `name` an array of one known, small shape every trip (its stack can be popped as rows)?"""
        shape = self.analysis.shapes.concrete(Var(name))
        return "vectorize" in self.optimizations and name not in self.shape_only \
            and self.analysis.kind.get(name) == TENSOR and bool(shape) and int(np.prod(shape)) <= ROW_SIZE_LIMIT

    def gathered_by_trip(self, body: list, name: str) -> str | None:
        """The parameter A if `name` is ``A[j]`` in trip j of the loop with this `body` (counting from 0):
        then the values pushed are the rows of A in order, and can be read from A itself (see vectorize)."""
        loop = self.loops[-1] if self.loops else None
        if loop is None or body is not loop.body or self.checkpoint is not None \
                or any(outer.checkpoint is not None for outer in self.loops):
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

    def backward_assign(self, stmt: Assign) -> list:
        target = stmt.target
        if target is None or target not in self.active or target not in self.has:
            return []
        owned = target not in self.sparse and not self.may_alias.get(target, True) \
            and "in_place_accumulation" in self.optimizations
        dtarget = self.read_adjoint(target)
        self.has.discard(target)
        self.sparse.discard(target)
        value = stmt.value
        origin = stmt.loc
        if owned and isinstance(value, Op) and value.fn is primitives.setitem:
            return self.backward_write_in_place(stmt, dtarget)
        if not isinstance(value, Op):
            return self.contribute(value, dtarget, origin)
        fn = value.fn
        if fn in (primitives.make_tuple, primitives.make_list):
            out = []
            pieces = self.pieces.get(target)
            for k, item in enumerate(value.args):
                element = ast.Subscript(dtarget, ast.Constant(k), ast.Load())
                if not (pieces and k < len(pieces) and _is_slice(pieces[k])):    # a slice is never missing
                    element = _call("grad_or_zeros", element, atom_expr(item))
                out += self.contribute(item, element, origin)
            return out
        if is_user_function(fn):
            return self.backward_call(stmt, dtarget)
        rule = rule_for(fn)
        if rule is None:
            refusal = opaque_call_error(fn, stmt.loc)
            if refusal is not None:
                raise refusal
            label = primitives.label(fn, value.args, value.name)
            if fn in primitives.WRITERS:
                raise NoDerivativeRule(
                    f"no derivative rule for {label}, which writes into its first argument", stmt.loc,
                    "compute the new array as a value instead (np.where, y[i] = v, y = y + ...), or wrap the "
                    "values written in s2sgrad.stop_gradient(...) if no gradient should flow through them")
            if hasattr(fn, "s2sgrad_derivative"):          # a derivative s2sgrad made: its vjp, at run time
                bound = self.module.call_arguments(value, stmt.loc)
                rule = fn.s2sgrad_derivative.adjoint_rule(fn, value.name, [self.is_active(a) for a in bound], stmt.loc)
            elif hasattr(fn, "cache_info") and hasattr(fn, "__wrapped__"):
                raise NoDerivativeRule(
                    f"{label} is cached with functools.lru_cache or functools.cache: a call may return a value "
                    "stored by an earlier call, which has no gradient", stmt.loc,
                    f"call the undecorated function ({label}.__wrapped__) where gradients flow, or wrap the "
                    "argument in s2sgrad.stop_gradient(...)")
        if rule is None:
            raise NoDerivativeRule(
                f"no derivative rule for {label}", stmt.loc,
                f"register one with @s2sgrad.adjoint({label}), or wrap the argument in "
                "s2sgrad.stop_gradient(...) if no gradient should flow through it")
        out = []
        reuse = _Reuse(self.computed)
        try:
            steps = expand(rule, value, target, dtarget, self.is_active, self.names, self.analysis.shapes,
                           self.optimizations)
        except S2SGradError as error:          # a call that does not match its rule: point at the user's line
            if error.location is not None:
                raise
            raise type(error)(error.message, stmt.loc, error.hint) from None
        for step in _merge_twins(steps) if "merge_twins" in self.optimizations else steps:
            if isinstance(step, Contribution):
                out += self.batch(step) or self.contribute(step.atom, reuse.visit(step.expr), origin)
            else:
                out.append(_origin(reuse.visit(step), origin))
        for statement in out:
            statement.rule = _rule_label(fn, value.name)
        return out

    def backward_write_in_place(self, stmt: Assign, dtarget: ast.Name) -> list:
        """``y_1 = setitem(y, i, v)`` where y_1's adjoint is a buffer the gradient owns: v's part is read out
        of it first, then zeroed in place (``dv = ...dy[i]...``, ``dy[i] = 0.0``), and the buffer becomes
        y's adjoint (no copy of the whole array per write)."""
        x, index, written_value = stmt.value.args
        steps = expand(rule_for(primitives.setitem), stmt.value, stmt.target, dtarget, self.is_active, self.names,
                       self.analysis.shapes, self.optimizations)
        out = []
        for step in steps:
            if isinstance(step, Contribution) and step.atom == written_value:
                out += self.contribute(written_value, step.expr, stmt.loc)
        if self.is_active(x):
            zero = ast.Assign([ast.Subscript(dtarget, primitives.index_expression(atom_expr(index)), ast.Store())],
                              ast.Constant(0.0))
            out.append(_origin(zero, stmt.loc))
            fresh = x.name not in self.has
            out += self.contribute(x, dtarget, stmt.loc)
            if fresh:
                self.may_alias[x.name] = False          # the same buffer: still the gradient's own
        for statement in out:
            statement.rule = _rule_label(primitives.setitem, stmt.value.name)
        return out

    def backward_call(self, stmt: Assign, dtarget: ast.expr) -> list:
        op = stmt.value
        args = self.module.call_arguments(op, stmt.loc)
        mask = tuple(self.is_active(a) for a in args)
        _, backward = self.module.callee(op.fn, mask, stmt.loc, args)
        record = self.records.setdefault(id(stmt), self.names.fresh(f"{_callee_name(op)}_record"))
        active_args = [a for a, m in zip(args, mask) if m]
        recomputation = []
        if is_recomputed(op.fn):
            forward, _ = self.module.callee(op.fn, mask, stmt.loc, args)
            saved = getattr(op, "random_states", None)         # the generators' states to draw again from
            call = ast.Call(_name(forward), [atom_expr(a) for a in args], []) if saved is None else \
                _call("replay", _name(saved), _name(forward), *[atom_expr(a) for a in args])
            recomputation = [_origin(ast.Assign([ast.Tuple([_store("_"), _store(record)], ast.Store())], call),
                                     stmt.loc)]
        temps = [self.names.fresh(f"d{a.name}_part", temporary=True) for a in active_args]
        targets = ast.Tuple([_store(t) for t in temps], ast.Store()) if len(temps) != 1 else _store(temps[0])
        out = recomputation + [_origin(ast.Assign([targets], ast.Call(_name(backward), [_name(record), dtarget], [])),
                                       stmt.loc)]
        for atom, temp in zip(active_args, temps):
            out += self.contribute(atom, _name(temp), stmt.loc)
        return out

    def backward_if(self, stmt: If, repeated: bool) -> list:
        flowing = [k for k, r in enumerate(stmt.results) if r in self.active and r in self.has]
        if not flowing:
            return []
        douts = {k: self.read_adjoint(stmt.results[k]) for k in flowing}
        before = set(self.has) - set(stmt.results)
        before_sparse = set(self.sparse)
        before_alias = dict(self.may_alias)
        branches, aliases = [], []
        self.branches += 1
        for block, outs in ((stmt.body, stmt.body_outs), (stmt.orelse, stmt.orelse_outs)):
            self.has = set(before)
            self.sparse = set(before_sparse)
            self.may_alias = dict(before_alias)
            code = []
            for k in flowing:
                code += self.contribute(outs[k], douts[k], stmt.loc)
            code += self.backward_block(block, repeated)
            branches.append((code, set(self.has)))
            aliases.append(self.may_alias)
        self.branches -= 1
        may_alias = {n: any(a.get(n, False) for a in aliases) for n in set(aliases[0]) | set(aliases[1])}
        merged = branches[0][1] | branches[1][1]
        self.has = merged
        self.sparse = before_sparse & self.sparse
        codes = []
        for code, has in branches:
            for name in sorted(merged - has):
                code.append(self.zero(name, stmt.loc))
            codes.append(code or [ast.Pass()])
        self.may_alias = may_alias
        if isinstance(stmt.test, Const):
            return codes[0 if stmt.test.value else 1]
        return [_origin(ast.If(atom_expr(stmt.test), codes[0], codes[1]), stmt.loc)]

    def schedule_of(self, loop: While):
        schedule = loop.checkpoint if loop.checkpoint is not None else \
            (self.checkpoint if not self.loops else None)
        if schedule is not None and self.loops:
            raise UnsupportedSyntax("only outermost loops can be checkpointed", loop.loc,
                                    "move the checkpointed marker to the outer loop")
        return schedule

    def backward_while(self, loop: While) -> list:
        carried = [k for k, p in enumerate(loop.params) if p in self.active]
        if not carried:
            return []
        schedule = self.schedule_of(loop)
        if schedule is None:
            trips = self.trips.setdefault(id(loop), self.names.fresh("trips"))
        out = []
        owned_on_entry = set()                  # carried adjoints that start as buffers the gradient owns
        for k in carried:
            result, param = loop.results[k], loop.params[k]
            if result in self.has:
                if result not in self.sparse and not self.may_alias.get(result, True):
                    owned_on_entry.add(param)
                out.append(_assign(self.adjoint_name(param), self.read_adjoint(result), loop.loc))
                self.has.discard(result)
            else:
                owned_on_entry.add(param)
                out.append(_assign(self.adjoint_name(param), _call("zeros_like", _name(result)), loop.loc))
        for name in self.receivers(loop):
            if name not in self.has:
                out.append(self.zero(name, loop.loc))
        self.sparse -= set(self.receivers(loop))
        if schedule is not None:
            return out + self.backward_checkpointed(loop, carried)
        body = self.adjoint_trip(loop, carried, owned_on_entry)
        before, after = self.flush(loop)
        out += before
        for value, _, stack in self.carries.get(id(loop), []):
            out.append(_noted(_assign(value, _pop(stack), loop.loc), "the loop's final value"))
        self.trip_loops.append(_origin(ast.For(_store("_"), _call("range", _name(trips)), body, [], None), loop.loc))
        out.append(self.trip_loops[-1])
        out += after
        for k in carried:
            out += self.contribute(loop.inits[k], _name(self.adjoint_name(loop.params[k])), loop.loc)
        return out

    def batch(self, step: Contribution) -> list:
        """In a backward loop, ``dW += outer(g, h)`` for a weight W the loop reads every trip becomes
        two appends; one matrix product after the loop adds them all up (`flush`)."""
        expr = step.expr
        if not self.loops or id(self.loops[0]) in self.drivers:
            return []                         # a checkpointed loop keeps O(1) trips' worth of values
        batching = "batched_accumulation" in self.optimizations
        if batching and isinstance(expr, ast.Name) and not self.branches:
            return self.batch_sum(step)
        if not (batching and self.loops and isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
                and isinstance(expr.func.value, ast.Name) and expr.func.value.id == "np"
                and expr.func.attr == "outer" and len(expr.args) == 2
                and all(isinstance(a, ast.Name) for a in expr.args)):
            return []
        rows, columns = (a.id for a in expr.args)
        weight = step.atom.name
        shapes = self.analysis.shapes
        if weight != step.atom.name or step.atom.name not in self.receivers(self.loops[-1]) \
                or len(shapes.concrete(Var(weight)) or ()) != 2 or len(shapes.concrete(Var(columns)) or ()) != 1:
            return []
        batches = self.batches.setdefault(id(self.loops[-1]), {})
        if weight in batches:
            return []
        lists = self.batch_lists.setdefault(id(self.loops[-1]), {})
        appends = []
        for value in (rows, columns):             # one list per value, shared by the weights that use it
            if value not in lists:
                lists[value] = self.names.fresh(f"{_base(value)}_rows")
                appends.append(ast.Expr(ast.Call(_attr(lists[value], "append"), [_name(value)], [])))
        batches[weight] = (lists[rows], lists[columns])
        return appends or [ast.Pass()]

    def batch_sum(self, step: Contribution) -> list:
        """``db += g`` every trip, for a b the loop reads every trip: collected, summed once after the loop."""
        weight, value = step.atom.name, step.expr.id
        if weight not in self.receivers(self.loops[-1]) or self.analysis.shapes.concrete(Var(weight)) is None \
                or weight in self.batches.get(id(self.loops[-1]), {}):
            return []
        lists = self.batch_lists.setdefault(id(self.loops[-1]), {})
        appends = []
        if value not in lists:
            lists[value] = self.names.fresh(f"{_base(value)}_rows")
            appends.append(ast.Expr(ast.Call(_attr(lists[value], "append"), [_name(value)], [])))
        self.batches.setdefault(id(self.loops[-1]), {})[weight] = (lists[value], None)
        return appends or [ast.Pass()]

    def flush(self, loop: While) -> tuple[list, list]:
        """The lists a loop's batched accumulations collect into (before it), and their sums (after it)."""
        lists = self.batch_lists.get(id(loop), {}).values()
        before = [_assign(name, ast.List([], ast.Load()), loop.loc) for name in lists]
        after = [_assign(name, _np_call("array", _name(name)), loop.loc) for name in lists]
        for weight, (rows, columns) in self.batches.get(id(loop), {}).items():
            if columns is None:               # a sum of the rows
                total = _np_call("sum", _name(rows), ast.Constant(0))
            else:                             # a sum of outer products
                total = ast.BinOp(ast.Attribute(_name(rows), "T", ast.Load()), ast.MatMult(), _name(columns))
            after += self.contribute(Var(weight), total, loop.loc)    # in place only into the gradient's own buffer
        return before, after

    def adjoint_trip(self, loop: While, carried: list, owned_on_entry=frozenset()) -> list:
        """The adjoint of one trip of `loop`'s body, with the pops it needs first. A carried adjoint owned on
        entry stays owned every trip where the body only writes into the loop variable and reads from it
        (`written_in_place`): its writes' adjoints then zero it in place."""
        outer = set(self.has)
        self.has = set(outer)
        before = dict(self.may_alias)
        self.loops.append(loop)
        body = []
        carried_in = {k: _name(self.adjoint_name(loop.params[k])) for k in carried}
        if any(isinstance(loop.body_outs[k], Var) and loop.body_outs[k].name in loop.params for k in carried):
            for k in carried:
                temp = self.names.fresh(f"d{loop.params[k]}_next")
                body.append(_assign(temp, carried_in[k], loop.loc))
                carried_in[k] = _name(temp)
        for k in carried:
            out_atom = loop.body_outs[k]
            if isinstance(out_atom, Var) and out_atom.name == loop.params[k]:
                self.has.add(out_atom.name)
                continue
            body += self.contribute(out_atom, carried_in[k], loop.loc)
            if loop.params[k] in owned_on_entry and "in_place_accumulation" in self.optimizations \
                    and _written_in_place(loop, k):
                self.may_alias[out_atom.name] = False
        body += self.backward_block(loop.body, repeated=True, defined=loop.params)
        for k in carried:
            if loop.params[k] not in self.has:
                body.append(self.zero(loop.params[k], loop.loc))
        for name, aliased in before.items():    # a loop may run no trip: what may alias before still may
            if aliased:
                self.may_alias[name] = True
        self.loops.pop()
        self.has = outer
        return body

    def backward_checkpointed(self, loop: While, carried: list) -> list:
        """Reverse a checkpointed loop: the schedule's work, each piece a run of steps forward,
        recorded and then reversed, or only advanced."""
        driver = self.drivers.setdefault(id(loop), self.names.fresh("checkpoints"))
        work = self.names.fresh("work")
        adjoint = self.adjoint_trip(loop, carried)
        state = ast.Tuple([_store(p) for p in loop.params], ast.Store())
        record_loop = _origin(ast.For(_store("_"), _call("range", _attr(work, "steps")), [], [], None), loop.loc)
        advance_loop = _origin(ast.For(_store("_"), _call("range", _attr(work, "steps")), [], [], None), loop.loc)
        handback = ast.Assign([ast.Attribute(_name(driver), "state", ast.Store())],
                              ast.Tuple([_name(p) for p in loop.params], ast.Load()))
        handback.plumbing = True          # hands the current state back: not a read of an earlier version

        def fill():
            record_loop.body = self.loop_trip(loop, record=True)
            advance_loop.body = self.loop_trip(loop, record=False)
        self.deferred.append(fill)
        reverse = [record_loop, _origin(ast.For(_store("_"), _call("range", _attr(work, "steps")), adjoint, [], None),
                                        loop.loc)]
        body = [_assign_tuple(state, _attr(work, "state"), loop.loc),
                ast.If(_attr(work, "reverse"), reverse, [advance_loop, handback])]
        stacks = [self.declare(s, loop.loc) for s in dict.fromkeys(self.stack_owner.get(id(loop), []))]
        before, after = self.flush(loop)
        out = stacks + before + [_origin(ast.For(_store(work), ast.Call(_attr(driver, "backward"), [], []), body,
                                                 [], None), loop.loc)] + after
        for k in carried:
            out += self.contribute(loop.inits[k], _name(self.adjoint_name(loop.params[k])), loop.loc)
        return out

    def loop_trip(self, loop: While, record: bool) -> list:
        """One trip of `loop`'s body in the forward direction, recording (pushes) or not."""
        pushed = self.pushes.get(id(loop.body), []) if record else []
        body = self.push([n for n in pushed if n in loop.params])
        body += self.forward_block(loop.body, record)
        body += self.push([n for n in pushed if n not in loop.params])
        if loop.params:
            targets = ast.Tuple([_store(p) for p in loop.params], ast.Store())
            values = ast.Tuple([atom_expr(o) for o in loop.body_outs], ast.Load())
            body.append(_origin(ast.Assign([targets], values), loop.loc))
        return body

    def receivers(self, loop: While) -> list[str]:
        """Names from outside `loop` whose adjoints its body can add to (active loop invariants)."""
        return [c for c in captures(loop) if c in self.active and c in self.primal_names]

    # ---------------------------------------------------------------- forward sweep

    def forward_block(self, block: list, record: bool = True) -> list:
        """The primal code of `block`; with `record`, also what the backward sweep needs kept."""
        out = []
        for stmt in block:
            if id(stmt) in self.dead:
                continue
            if isinstance(stmt, Assign):
                out += self.forward_assign(stmt, record)
            elif isinstance(stmt, If):
                out.append(_origin(ast.If(
                    atom_expr(stmt.test),
                    self.forward_branch(stmt.body, stmt.body_outs, stmt.results, stmt.loc, record),
                    self.forward_branch(stmt.orelse, stmt.orelse_outs, stmt.results, stmt.loc, record)), stmt.loc))
            else:
                out += self.forward_while(stmt, record)
        return out

    def push(self, names: list) -> list:
        """Push each name onto its stack (only its shape, where the backward sweep needs no more)."""
        return [ast.Expr(ast.Call(ast.Attribute(_name(self.stacks[n]), "push", ast.Load()),
                                  [_call("like", _name(n)) if n in self.shape_only else _name(n)], []))
                for n in names]

    def forward_branch(self, block, outs, results, loc, record) -> list:
        code = self.forward_block(block, record)
        code += [_assign(r, atom_expr(o), loc) for r, o in zip(results, outs)]
        if record:
            code += self.push(self.pushes.get(id(block), []))
        return code or [ast.Pass()]

    def forward_assign(self, stmt: Assign, record: bool = True) -> list:
        value = stmt.value
        if isinstance(value, Op) and is_user_function(value.fn):
            return self.forward_call(stmt, record)
        if stmt.target is None:
            return [_origin(ast.Expr(value_expr(value)), stmt.loc)]
        if isinstance(value, Op) and value.fn in MUTATIONS and value.args[0].name in self.in_place:
            return self.write_in_place(stmt)
        return [_assign(stmt.target, value_expr(value), stmt.loc)]

    def write_in_place(self, stmt: Assign) -> list:
        """``y_1 = setitem(y, i, v)`` as ``y[i] = v`` (and ``list_append`` as ``.append``)."""
        op = stmt.value
        obj = atom_expr(op.args[0])
        if op.fn is primitives.setitem:
            write = ast.Assign([ast.Subscript(obj, primitives.index_expression(atom_expr(op.args[1])), ast.Store())],
                               atom_expr(op.args[2]))
        else:
            write = ast.Expr(ast.Call(ast.Attribute(obj, "append", ast.Load()), [atom_expr(op.args[1])], []))
        return [_origin(write, stmt.loc), _assign(stmt.target, atom_expr(op.args[0]), stmt.loc)]

    def forward_call(self, stmt: Assign, recording: bool = True) -> list:
        op = stmt.value
        args = self.module.call_arguments(op, stmt.loc)
        mask = tuple(self.is_active(a) for a in args)
        record = self.records.get(id(stmt)) if recording and not is_recomputed(op.fn) else None
        forward, _ = self.module.callee(op.fn, mask if record else (False,) * len(args), stmt.loc, args)
        call = ast.Call(_name(forward), [atom_expr(a) for a in args], [])
        if record is None:
            if stmt.target is None:
                return [_origin(ast.Expr(call), stmt.loc)]
            return [_assign(stmt.target, call, stmt.loc)]
        targets = ast.Tuple([_store(stmt.target), _store(record)], ast.Store())
        return [_origin(ast.Assign([targets], call), stmt.loc)]

    def forward_while(self, loop: While, record: bool = True) -> list:
        out = [_assign(p, atom_expr(i), loop.loc) for p, i in zip(loop.params, loop.inits)]
        trips = self.trips.get(id(loop)) if record else None
        driver = self.drivers.get(id(loop)) if record else None
        if trips:
            out.append(_assign(trips, ast.Constant(0), loop.loc))
        if driver:
            schedule = self.schedule_of_checkpointed(loop)
            args = [ast.parse(repr(schedule), mode="eval").body]
            if loop.trips is not None:
                args.append(atom_expr(loop.trips))
            call = _call("Checkpoints", *args)
            randoms = generators(loop.cond + loop.body, "a checkpointed loop")
            if randoms:                   # the trips run again draw what they drew (see randomness)
                call.keywords.append(ast.keyword("randoms", ast.Tuple([atom_expr(g) for g in randoms], ast.Load())))
            out.append(_assign(driver, call, loop.loc))
        body = self.forward_block(loop.cond, record)
        body.append(_origin(ast.If(ast.UnaryOp(ast.Not(), atom_expr(loop.test)), [ast.Break()], []), loop.loc))
        if driver:
            state = ast.Tuple([_name(p) for p in loop.params], ast.Load())
            body.append(_origin(ast.Expr(ast.Call(_attr(driver, "step"), [state], [])), loop.loc))
        body += self.loop_trip(loop, record and not driver)
        if trips:
            body.append(_origin(ast.AugAssign(_store(trips), ast.Add(), ast.Constant(1)), loop.loc))
        out.append(_origin(ast.While(ast.Constant(True), body, []), loop.loc))
        out += [_assign(r, _name(p), loop.loc) for r, p in zip(loop.results, loop.params)]
        if record:
            results = dict(zip(loop.params, loop.results))
            out += [_noted(ast.Expr(ast.Call(_attr(stack, "push"), [_name(results[param])], [])),
                           "the loop's final value")
                    for _, param, stack in self.carries.get(id(loop), [])]
        stacks = self.stack_owner.get(id(loop), []) if record and not driver else []
        if stacks:
            out = [self.declare(s, loop.loc) for s in dict.fromkeys(stacks)] + out
        return out

    def declare(self, stack: str, origin) -> ast.stmt:
        """``y_stack = Stack()``, with a comment saying which adjoint reads what it holds."""
        statement = _assign(stack, _call("Stack"), origin)
        statement.note = self.stack_notes.get(stack)
        return statement

    def schedule_of_checkpointed(self, loop: While):
        return loop.checkpoint if loop.checkpoint is not None else self.checkpoint


OPERATOR_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "pow": "**", "matmul": "@",
                    "neg": "unary -", "getitem": "indexing", "seq_getitem": "indexing", "setitem": "an indexed write",
                    "list_append": "append"}


def _rule_label(fn, name=None) -> str:
    """How a comment names a primitive: ``np.sin``, ``*``, ``indexing``."""
    dotted = primitives.WRITERS.get(fn) or primitives.python_name(fn) or name or getattr(fn, "__name__", "?")
    return OPERATOR_SYMBOLS.get(dotted.split(".")[-1] if dotted.startswith(("operator.",)) or
                                dotted in OPERATOR_SYMBOLS else dotted, dotted)


def _why_kept(name: str, code: list, shape_only: bool) -> str:
    """Which adjoint reads `name` (the first in `code`), for the comment on its stack."""
    if name not in _reads(code):
        return "the backward sweep does not read it (to_be_recorded is off)"
    for statement in code:
        for node in ast.walk(statement):
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == name:
                where = f" at {os.path.basename(node.origin.filename)}:{node.origin.line}" \
                    if getattr(node, "origin", None) else ""
                return f"which branch was taken{where}"
            if isinstance(node, ast.For) and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.iter)):
                return "the trip count of an inner loop"
            rule = getattr(node, "rule", None)
            if rule and any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                            for n in ast.walk(node)):
                where = f" ({os.path.basename(node.origin.filename)}:{node.origin.line})" \
                    if getattr(node, "origin", None) else ""
                what = "its shape" if shape_only else "it"
                return f"the adjoint of {rule}{where} reads {what}"
    return "the backward sweep reads it" if not shape_only else "the backward sweep reads its shape"


def _merge_twins(steps: list) -> list:
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


def _written_in_place(loop: While, k: int) -> bool:
    """Does the trip take loop variable k through writes alone (``y_1 = setitem(y, i, v)``, ...), the trip's
    last version being what it carries to the next, with every version otherwise only indexed
    (``y[j]``) at the trip's top level? Then the adjoint of each version is the one buffer: owned on
    entry, owned every trip."""
    uses: dict[str, list] = {}
    for stmt in loop.cond + loop.body:
        if isinstance(stmt, Assign) and isinstance(stmt.value, Op):
            for position, atom in [*enumerate(stmt.value.args), *((None, a) for a in stmt.value.kwargs.values())]:
                if isinstance(atom, Var):
                    uses.setdefault(atom.name, []).append((stmt, position))
        elif isinstance(stmt, Assign) and isinstance(stmt.value, Var):
            uses.setdefault(stmt.value.name, []).append((stmt, None))
    chain = [loop.params[k]]
    while True:
        writes = [stmt for stmt, position in uses.get(chain[-1], [])
                  if position == 0 and stmt.value.fn is primitives.setitem]
        if len(writes) > 1 or any(not (position == 0 and stmt.value.fn in (primitives.setitem, operator.getitem))
                                  for stmt, position in uses.get(chain[-1], [])):
            return False
        if not writes:
            break
        chain.append(writes[0].target)
    nested = reads([stmt for stmt in loop.body if isinstance(stmt, (If, While))])
    out = loop.body_outs[k]
    return len(chain) > 1 and isinstance(out, Var) and out.name == chain[-1] and not set(chain) & nested


def _definitions(block: list) -> dict:
    """Every name assigned in `block`, nested blocks included, and the value assigned to it."""
    out = {}
    for stmt in block:
        if isinstance(stmt, Assign) and stmt.target:
            out[stmt.target] = stmt.value
        elif isinstance(stmt, If):
            out.update(_definitions(stmt.body), **_definitions(stmt.orelse))
        elif isinstance(stmt, While):
            out.update(_definitions(stmt.cond), **_definitions(stmt.body))
    return out


def _computed(block: list) -> dict:
    """The pure expressions the function's top level computes, and the names that hold them."""
    out = {}
    for stmt in block:
        if isinstance(stmt, Assign) and stmt.target and isinstance(stmt.value, Op) \
                and not is_user_function(stmt.value.fn) and stmt.value.fn not in MUTATIONS \
                and (rule_for(stmt.value.fn) or is_nondifferentiable(stmt.value.fn)):
            out.setdefault(ast.dump(value_expr(stmt.value)), stmt.target)
    return out


class _Reuse(ast.NodeTransformer):
    """In backward code, use the forward sweep's value instead of computing it again (``np.sin(x)`` -> ``sin``)."""

    def __init__(self, computed: dict):
        self.computed = computed

    def generic_visit(self, node):
        if isinstance(node, (ast.Call, ast.BinOp, ast.UnaryOp)) and self.computed:
            name = self.computed.get(ast.dump(node))
            if name is not None:
                return ast.Name(name, ast.Load())
        return super().generic_visit(node)


FRESH_RESULTS = {"matmul_grad_a", "matmul_grad_b", "zeros_like", "tensordot_grad_a", "tensordot_grad_b"}


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


def _reads(stmts: list) -> set[str]:
    names = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                names.add(node.id)
    return names


def _base(name: str) -> str:
    """The user's variable name behind a versioned one: ``y_3`` -> ``y``."""
    head, _, tail = name.rpartition("_")
    return head if head and tail.isdigit() else name


def _callee_name(op: Op) -> str:
    """A name for what a call of a user function keeps: the function's own name, as an identifier."""
    return identifier(getattr(op.fn, "__name__", None) or op.name or "call")


__all__ = ["Reverse", "Sweeps", "is_user_function", "is_recomputed"]
