"""The walk the analyses that run forward through the lowered form share.

The lowered form has no jumps: a block is a list of statements, a branch (`If`) binds its `results` from the
outs of its two blocks, and a loop (`While`) enters its variables with `inits` and updates them to
`body_outs` trip after trip. Names are single-assignment, so one table, name -> fact, holds all an analysis
knows (no fact per program point is needed, as it is on a control-flow graph). `Forward` walks a block in
order: `transfer` gives the fact of an `Assign`'s target, `join` the fact of a branch's result from those
of its two outs, and a loop's variables are joined with their outs round after round until they settle (a
fixpoint, at most `rounds` rounds; `widen` says what holds when they did not settle). Every fact the walk
finds goes into the table through `bind`.

    >>> from s2sgrad.ir.nodes import Assign, Const, If, Op, Var, While
    >>> class Constants(Forward):
    ...     '''The names that certainly hold one known number.'''
    ...     def fact(self, atom):
    ...         return atom.value if isinstance(atom, Const) else self.facts.get(atom.name)
    ...     def transfer(self, stmt):
    ...         return None if isinstance(stmt.value, Op) else self.fact(stmt.value)
    ...     def join(self, a, b):
    ...         return a if a == b else None
    >>> walk = Constants()
    >>> walk.block([Assign("a", Const(1)),
    ...             If(Var("t"), [], [Const(1)], [], [Var("a")], ["b"]),
    ...             While(["i"], [Const(0)], [], Var("i"), [Assign("j", Op(abs, [Var("i")]))], [Var("j")], ["n"])])
    >>> walk.facts
    {'a': 1, 'b': 1, 'i': None, 'j': None, 'n': None}
"""
from __future__ import annotations

import itertools

from ..ir.nodes import Assign, If, Var, While


def names(atoms) -> set[str]:
    """The names among `atoms` (constants and globals have none).

        >>> from s2sgrad.ir.nodes import Const
        >>> sorted(names([Var("x"), Const(1.0), Var("y")]))
        ['x', 'y']
    """
    return {a.name for a in atoms if isinstance(a, Var)}




class Forward:
    """A forward walk over the lowered form keeping one fact per name in `facts`. A subclass says what the
    facts are: `fact` of an atom, `transfer` of an assignment, `join` of two facts, `same` for two facts."""

    rounds: int | None = None          # a loop's rounds at most; None: until its variables settle

    def __init__(self, facts: dict | None = None):
        self.facts: dict = dict(facts or {})

    # ---------------------------------------------------------------- what an analysis says

    def fact(self, atom):
        """The fact of an atom: a name's from the table (None where there is none)."""
        return self.facts.get(atom.name) if isinstance(atom, Var) else None

    def transfer(self, stmt: Assign):
        """The fact of the value `stmt` assigns to its target."""
        raise NotImplementedError

    def join(self, a, b):
        """The fact of a value that is one of two values with facts `a` and `b` (a branch's, a loop's)."""
        raise NotImplementedError

    def same(self, a, b) -> bool:
        """Do facts `a` and `b` say the same (a loop whose variables' facts are the same has settled)?"""
        return a == b

    def bind(self, name: str, fact) -> None:
        """Record the fact the walk found for `name`."""
        self.facts[name] = fact

    # ---------------------------------------------------------------- the walk

    def block(self, block: list) -> None:
        for stmt in block:
            if isinstance(stmt, Assign):
                self.assign(stmt)
            elif isinstance(stmt, If):
                self.branch(stmt)
            elif isinstance(stmt, While):
                self.loop(stmt)

    def assign(self, stmt: Assign) -> None:
        if stmt.target:
            self.bind(stmt.target, self.transfer(stmt))

    def branch(self, stmt: If) -> None:
        self.block(stmt.body)
        self.block(stmt.orelse)
        for r, a, b in zip(stmt.results, stmt.body_outs, stmt.orelse_outs):
            self.bind(r, self.join(self.fact(a), self.fact(b)))

    def loop(self, loop: While) -> None:
        """Walk the loop's blocks until its variables settle (the facts then hold on every trip)."""
        self.enter(loop)
        for _ in itertools.count() if self.rounds is None else range(self.rounds):
            self.block(loop.cond)
            self.block(loop.body)
            if not self.carry(loop):
                break
        else:
            self.widen(loop)
        self.leave(loop)

    def enter(self, loop: While) -> None:
        """The loop variables' facts on the first trip: their inits'."""
        for p, init in zip(loop.params, loop.inits):
            self.bind(p, self.fact(init))

    def carry(self, loop: While) -> bool:
        """Join each loop variable's fact with its out's after a round; whether any fact changed."""
        before = [self.facts.get(p) for p in loop.params]
        joined = [self.join(old, self.fact(out)) for old, out in zip(before, loop.body_outs)]
        changed = False
        for p, old, new in zip(loop.params, before, joined):
            self.bind(p, new)
            changed |= not self.same(self.facts.get(p), old)
        return changed

    def widen(self, loop: While) -> None:
        """The loop's variables did not settle in `rounds` rounds: by default the last round's facts stay."""

    def leave(self, loop: While) -> None:
        """The loop's results have its variables' facts."""
        for r, p in zip(loop.results, loop.params):
            self.bind(r, self.facts.get(p))
