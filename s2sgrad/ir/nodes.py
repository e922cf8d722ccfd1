"""The lowered form: functional control flow in A-normal form.

Every statement is ``name = op(atom, ...)`` or a copy ``name = atom``; a loop is a
`While` with explicit loop variables (`params`, entered with `inits`, updated to
`body_outs`, leaving as `results`), a `cond` block computing `test`, and a `body`
block; what the loop reads from outside is `captures(loop)`. A branch is an `If`
with explicit `results`. Names are single-assignment within the whole function,
so a name means one value everywhere.

`to_source` prints the form as runnable Python, loops as ``while_loop(cond, body, vars, captures)``:

    >>> print(to_source(lower(parse_function(f))))      # doctest: +SKIP
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterator, Union

from ..errors import Location
from . import primitives
from .syntax import function as _function_def


@dataclass(frozen=True)
class Var:
    """A local value, by its single-assignment name."""
    name: str


@dataclass(frozen=True)
class Const:
    """A literal: a number, string, None, a tuple of those, a slice or Ellipsis."""
    value: object


@dataclass(frozen=True, eq=False)
class Global:
    """A free name of the user's code (module global or closure value), written as the user wrote it."""
    name: str
    value: object


Atom = Union[Var, Const, Global]


@dataclass(eq=False)
class Op:
    """An application of a function (a primitive with a rule, or a user function) to atoms."""
    fn: object
    args: list
    kwargs: dict = field(default_factory=dict)
    name: str | None = None          # how the user wrote `fn`, when it is not a library function
    augmented: bool = False          # a write ``y[i] op= v`` (Python changes the element y[i] itself)


@dataclass(eq=False)
class Assign:
    target: str | None               # None: evaluated for its effect only (print, assert)
    value: Union[Atom, Op]
    loc: Location | None = None


@dataclass(eq=False)
class If:
    test: Atom
    body: list
    body_outs: list
    orelse: list
    orelse_outs: list
    results: list
    loc: Location | None = None


@dataclass(eq=False)
class While:
    params: list
    inits: list
    cond: list
    test: Atom
    body: list
    body_outs: list
    results: list
    loc: Location | None = None
    checkpoint: object = None        # a schedule from s2sgrad.schedules, or None: store every trip
    trips: object = None             # an atom holding the trip count when it is known on entry


Stmt = Union[Assign, If, While]


@dataclass(eq=False)
class Function:
    name: str
    params: list
    body: list
    result: Atom
    loc: Location | None = None
    source: object = field(default=None, repr=False)     # the ParsedFunction it came from
    defaults: list = field(default_factory=list)          # source text of the parameters' defaults
    free_names: dict = field(default_factory=dict)        # a free name renamed in generated code -> the user's
    objects: dict = field(default_factory=dict)           # names known to hold records -> their kinds


def atoms_of(stmt) -> Iterator[Atom]:
    """The atoms a statement reads directly (not those of nested blocks)."""
    if isinstance(stmt, Assign):
        if isinstance(stmt.value, Op):
            yield from stmt.value.args
            yield from stmt.value.kwargs.values()
        else:
            yield stmt.value
    elif isinstance(stmt, If):
        yield stmt.test
    elif isinstance(stmt, While):
        yield from stmt.inits
        if stmt.trips is not None:
            yield stmt.trips


def assignments(block: list) -> Iterator[Assign]:
    """Every assignment of `block` and of the blocks in it, in program order (a loop's `cond` before its body).

        >>> inner = Assign("b", Const(2))
        >>> [s.target for s in assignments([Assign("a", Const(1)), If(Var("t"), [inner], [], [], [], [])])]
        ['a', 'b']
    """
    for stmt in block:
        if isinstance(stmt, Assign):
            yield stmt
        elif isinstance(stmt, If):
            yield from assignments(stmt.body)
            yield from assignments(stmt.orelse)
        elif isinstance(stmt, While):
            yield from assignments(stmt.cond)
            yield from assignments(stmt.body)


def defined_names(stmt) -> list[str]:
    """The names a statement binds in its enclosing block."""
    if isinstance(stmt, Assign):
        return [stmt.target] if stmt.target else []
    return list(stmt.results)


def reads(block: list, extra: list = ()) -> set[str]:
    """Every name a block (and its nested blocks) reads, plus the names in `extra` atoms."""
    names = {a.name for a in extra if isinstance(a, Var)}
    for stmt in block:
        names.update(a.name for a in atoms_of(stmt) if isinstance(a, Var))
        if isinstance(stmt, If):
            names |= reads(stmt.body, stmt.body_outs) | reads(stmt.orelse, stmt.orelse_outs)
        elif isinstance(stmt, While):
            names |= reads(stmt.cond, [stmt.test]) | reads(stmt.body, stmt.body_outs)
    return names


def writes(block: list) -> set[str]:
    """Every name a block (and its nested blocks, loop parameters included) binds."""
    names = set()
    for stmt in block:
        names.update(defined_names(stmt))
        if isinstance(stmt, If):
            names |= writes(stmt.body) | writes(stmt.orelse)
        elif isinstance(stmt, While):
            names |= set(stmt.params) | writes(stmt.cond) | writes(stmt.body)
    return names


def captures(loop: While) -> list[str]:
    """The names a loop reads from outside it (its loop invariants), in a stable order."""
    inner = writes(loop.cond) | writes(loop.body) | set(loop.params)
    read = reads(loop.cond, [loop.test]) | reads(loop.body, loop.body_outs)
    return sorted(read - inner)


# ---------------------------------------------------------------- printing

def atom_expr(atom: Atom) -> ast.expr:
    """An atom as a Python expression."""
    if isinstance(atom, Var):
        return ast.Name(atom.name, ast.Load())
    if isinstance(atom, Global):
        parts = atom.name.split(".")
        node: ast.expr = ast.Name(parts[0], ast.Load())
        for part in parts[1:]:
            node = ast.Attribute(node, part, ast.Load())
        return node
    return primitives.constant(atom.value)


def op_expr(op: Op) -> ast.expr:
    """An operation as a Python expression, the way a person writes it (``a + b``, ``x[i]``)."""
    return primitives.expression(op.fn, [atom_expr(a) for a in op.args],
                                 {k: atom_expr(v) for k, v in op.kwargs.items()}, op.name)


def value_expr(value) -> ast.expr:
    return op_expr(value) if isinstance(value, Op) else atom_expr(value)


def _store(names: list[str]) -> ast.expr:
    if len(names) == 1:
        return ast.Name(names[0], ast.Store())
    return ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())


def _load_tuple(atoms: list) -> ast.expr:
    return ast.Tuple([atom_expr(a) for a in atoms], ast.Load())


class _Printer:
    def __init__(self):
        self.count = 0

    def block(self, stmts: list) -> list[ast.stmt]:
        out = []
        for stmt in stmts:
            out.extend(self.stmt(stmt))
        return out

    def stmt(self, stmt) -> list[ast.stmt]:
        if isinstance(stmt, Assign):
            if stmt.target is None:
                return [ast.Expr(value_expr(stmt.value))]
            return [ast.Assign([ast.Name(stmt.target, ast.Store())], value_expr(stmt.value))]
        self.count += 1
        k = self.count
        if isinstance(stmt, If):
            then = self._def(f"then_{k}", [], stmt.body, _load_tuple(stmt.body_outs))
            orelse = self._def(f"orelse_{k}", [], stmt.orelse, _load_tuple(stmt.orelse_outs))
            call = ast.Call(ast.Name("if_else", ast.Load()),
                            [atom_expr(stmt.test), ast.Name(then.name, ast.Load()),
                             ast.Name(orelse.name, ast.Load())], [])
            return [then, orelse, ast.Assign([_store_all(stmt.results)], call)]
        invariants = captures(stmt)
        cond = self._def(f"cond_{k}", stmt.params + invariants, stmt.cond, atom_expr(stmt.test))
        body = self._def(f"body_{k}", stmt.params + invariants, stmt.body, _load_tuple(stmt.body_outs))
        call = ast.Call(ast.Name("while_loop", ast.Load()),
                        [ast.Name(cond.name, ast.Load()), ast.Name(body.name, ast.Load()),
                         _load_tuple(stmt.inits), _load_tuple([Var(c) for c in invariants])], [])
        return [cond, body, ast.Assign([_store_all(stmt.results)], call)]

    def _def(self, name, params, block, result) -> ast.FunctionDef:
        body = self.block(block) + [ast.Return(result)]
        return _function_def(name, params, body)


def _store_all(names: list[str]) -> ast.expr:
    return ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())



def to_ast(fn: Function) -> ast.FunctionDef:
    """The lowered function as a runnable Python function definition."""
    body = _Printer().block(fn.body) + [ast.Return(atom_expr(fn.result))]
    node = _function_def(fn.name, fn.params, body)
    node.args.defaults = [ast.parse(d, mode="eval").body for d in fn.defaults]
    return ast.fix_missing_locations(node)


def to_source(fn: Function) -> str:
    """The lowered function as Python source (loops as ``while_loop``, branches as ``if_else``)."""
    return ast.unparse(to_ast(fn))
