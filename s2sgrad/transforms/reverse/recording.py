"""The recording plan: what the forward sweep keeps for the backward sweep, and on which stack.

The backward sweep of a loop body or of a branch inside a loop decides what it reads; `Recording.record`
turns that into the pushes of the block (each name onto its stack, or only its shape), the pops the
backward code starts with, and the values carried to the next trip. The forward sweep then emits exactly
the plan: `LoopRecord` for each loop, `BranchRecord` for each branch, a record name for each call of a
user function. The plan is keyed by each statement's first single-assignment result, unique in the
function:

    >>> LoopRecord(trips="trips")
    LoopRecord(trips='trips', counted_by=None, counter=None, counts_down=False, checkpoints=None,
               schedule=None, pushes=[], carries=[], stacks=[], recorded_trip=None)
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

from ...analysis.inplace import value_reads
from ...frontend.functions import is_recomputed
from ...ir.names import Names, base_name
from ...ir.nodes import Assign, If, Var, While
from ...ir.syntax import assign as _assign
from ...ir.syntax import call as _call
from ...ir.syntax import name as _name
from ...ir.syntax import names_read, noted, origin_of
from .recomputation import Recomputation, insert
from .rows import RowFinder, RowStack
from .syntax import pop


@dataclass(frozen=True)
class Carry:
    """A value one trip ends with that the next starts with as loop variable `param`: not pushed itself,
    `param`'s stack holds it (and the loop's final value is pushed after the loop)."""
    value: str
    param: str
    stack: str


@dataclass
class LoopRecord:
    """What a loop's forward sweep records."""
    trips: str | None = None             # the trip counter (None: the loop is checkpointed, or not reversed)
    counted_by: str | None = None        # the result of a loop variable counting the trips, which trips copies
    counter: str | None = None           # ... that loop variable: the backward sweep counts it down, not popped
    counts_down: bool = False            # ... which it does where its backward trips read it
    checkpoints: str | None = None       # the Checkpoints object of a checkpointed loop
    schedule: object = None              # ... and its schedule
    pushes: list = field(default_factory=list)      # names the body pushes at its end
    carries: list = field(default_factory=list)     # `Carry`s of the body
    stacks: list = field(default_factory=list)      # stacks to create before it (an outermost loop)
    recorded_trip: list | None = None    # a checkpointed loop's trip, recording, where its driver says so


@dataclass
class BranchRecord:
    """The names each side of a branch inside a loop pushes at its end."""
    body: list = field(default_factory=list)
    orelse: list = field(default_factory=list)


def key(stmt: If | While) -> str | None:
    """The name the plan keys `stmt` by: its first result (None: a statement with no result, never recorded)."""
    return stmt.results[0] if stmt.results else None


@dataclass(frozen=True)
class RecordingOptions:
    """The optimization switches the plan follows."""
    to_be_recorded: bool = True          # push only what the backward code reads
    shape_only_pushes: bool = True       # push like(x) where the backward code reads only x's shape
    carried_pushes: bool = True          # a value carried to the next trip is pushed once


class Recording:
    """The plan of one function's forward sweep: per loop, branch and call, what it keeps."""

    def __init__(self, names: Names, options: RecordingOptions, rows: RowFinder | None,
                 recomputation: Recomputation | None = None):
        self.names = names
        self.options = options
        self.rows = rows                        # None: no stack is popped as rows (vectorize is off)
        self.recomputation = recomputation      # None: every value read is pushed (recompute_cheap is off)
        self.loops: dict[str, LoopRecord] = {}
        self.branches: dict[str, BranchRecord] = {}
        self.calls: dict[str, str] = {}         # target of a call of a user function -> its record name
        self.stacks: dict[str, str] = {}        # name -> its stack
        self.notes: dict[str, str] = {}         # stack -> why the backward sweep needs what it holds
        self.shape_only: set[str] = set()       # pushed names the backward sweep reads only the shape of
        self.row_stacks: dict[str, RowStack] = {}   # stacks of small arrays of one shape (see vectorize)

    def loop(self, loop: While) -> LoopRecord:
        """`loop`'s record (a new one the first time)."""
        return self.loops.setdefault(key(loop), LoopRecord())

    def is_checkpointed(self, loop: While) -> bool:
        return key(loop) in self.loops and self.loops[key(loop)].checkpoints is not None

    def pushed_by(self, stmt: If | While) -> LoopRecord | BranchRecord | None:
        """The record of `stmt`, if the backward sweep made one."""
        return (self.loops if isinstance(stmt, While) else self.branches).get(key(stmt))

    def kept_for(self, stmt) -> list[str]:
        """The names the recorded forward code of `stmt` defines beyond its results: a loop's trip count,
        the record of a call of a user function that is not recomputed."""
        if isinstance(stmt, While):
            trips = self.loops[key(stmt)].trips if key(stmt) in self.loops else None
            return [trips] if trips else []
        if isinstance(stmt, Assign) and stmt.target in self.calls and not is_recomputed(stmt.value.fn):
            return [self.calls[stmt.target]]
        return []

    def record(self, block: list, local: set, code: list, loops: list) -> tuple[list, list]:
        """Plan the pushes of `block`, repeated inside `loops` (outermost first), whose backward code is
        `code` and which defines `local`: the names pushed, and the backward code with the pops it runs
        first, the values it computes again (recompute_cheap) and the carried values it assigns last."""
        read = names_read(code)
        needed = sorted(local & read) if self.options.to_be_recorded else sorted(local)
        if self.options.shape_only_pushes:
            self.shape_only |= (set(needed) & read) - value_reads(code)
        carried = self.carried_to_next_trip(block, [n for n in needed if n in read], loops)
        needed = [n for n in needed if n not in carried]
        record = self.loop(loops[-1]) if loops and block is loops[-1].body else None
        counter = record.counter if record is not None and record.counter not in self.shape_only else None
        needed = [n for n in needed if n != counter]        # the trip's value of the loop's counter: counted down
        if self.recomputation is not None:
            references = {s.target for s in block if isinstance(s, Assign) and self.recomputation.item_read(s)}
            values = [n for n in needed if n in read and (n not in self.shape_only or n in references)]
            by_rows = self.rows is not None and block is loops[-1].body and not self.is_checkpointed(loops[-1])
            again = self.recomputation.plan(block, local, values, set(values) | set(carried) | {counter},
                                            value_reads(code), loops, by_rows)
            needed = [n for n in needed if n not in again.names]
            code = insert(code, again.statements)
        counted = []
        if counter is not None and counter in names_read(code):
            record.counts_down = True
            counted = [_assign(counter, ast.BinOp(_name(counter), ast.Sub(), ast.Constant(1)))]
        owner = self.loop(loops[0]).stacks
        pops = []
        for name in needed:
            hint = f"{base_name(name)}_shape_stack" if name in self.shape_only else f"{base_name(name)}_stack"
            stack = self.stacks.setdefault(name, self.names.fresh(hint))
            self.notes.setdefault(stack, why_kept(name, code, name in self.shape_only))
            owner.append(stack)
            row_stack = self.rows.row_stack(name, block, loops) \
                if self.rows is not None and name not in self.shape_only else None
            if row_stack is not None:
                self.row_stacks[stack] = row_stack
            pops.append(_assign(name, pop(stack)))
        after = []
        for value, param in carried.items():
            stack = self.stacks[param]
            self.loop(loops[-1]).carries.append(Carry(value, param, stack))
            self.notes[stack] += f"; {why_kept(value, code, False)} one trip earlier"
            after.append(_assign(value, _name(param)))
        return needed, counted + pops + code + after

    def carried_to_next_trip(self, block: list, needed: list, loops: list) -> dict[str, str]:
        """Values a loop body ends with that the next trip starts with as a loop variable, both read by the
        backward sweep: value -> loop variable. They are not pushed: the loop variable's stack holds them,
        and the loop's final value is pushed after it (``h_2`` of one trip is ``h`` of the next)."""
        loop = loops[-1] if loops else None
        if not self.options.carried_pushes or loop is None or block is not loop.body \
                or self.is_checkpointed(loop):
            return {}
        carried = {}
        for param, out in zip(loop.params, loop.body_outs):
            if isinstance(out, Var) and out.name in needed and param in needed and out.name not in loop.params \
                    and not {out.name, param} & self.shape_only and out.name not in carried:
                carried[out.name] = param
        return carried

    def push(self, names: list) -> list:
        """Push each name onto its stack (only its shape, where the backward sweep needs no more)."""
        return [ast.Expr(ast.Call(ast.Attribute(_name(self.stacks[n]), "push", ast.Load()),
                                  [_call("like", _name(n)) if n in self.shape_only else _name(n)], []))
                for n in names]

    def declaration(self, stack: str, origin) -> ast.stmt:
        """``y_stack = Stack()``, with a comment saying which adjoint reads what it holds."""
        return noted(_assign(stack, _call("Stack"), origin), self.notes.get(stack))


def why_kept(name: str, code: list, shape_only: bool) -> str:
    """Which adjoint reads `name` (the first in `code`), for the comment on its stack."""
    if name not in names_read(code):
        return "the backward sweep does not read it (to_be_recorded is off)"
    for statement in code:
        for node in ast.walk(statement):
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == name:
                line = origin_of(node)
                where = f" at {os.path.basename(line.filename)}:{line.line}" if line else ""
                return f"which branch was taken{where}"
            if isinstance(node, ast.For) and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.iter)):
                return "the trip count of an inner loop"
            rule = getattr(node, "rule", None)
            if rule and any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                            for n in ast.walk(node)):
                line = origin_of(node)
                where = f" ({os.path.basename(line.filename)}:{line.line})" if line else ""
                what = "its shape" if shape_only else "it"
                return f"the adjoint of {rule}{where} reads {what}"
    return "the backward sweep reads it" if not shape_only else "the backward sweep reads its shape"
