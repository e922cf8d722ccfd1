"""Random numbers in recomputation: the generators a piece of code draws from, so that running it again (a
`recompute` function in the backward sweep, the trips of a checkpointed loop) draws the same numbers.

As ``torch.utils.checkpoint(preserve_rng_state=True)`` does, the states of those generators are saved where
the forward sweep runs the code (``block_random = random_state(rng, np.random)``) and put back around the
run again (``replay(block_random, block_forward, x, w)``; a checkpointed loop's `runtime.Checkpoints` keeps
them with its snapshots). Afterwards every generator is back where the forward sweep left it, so a gradient
call leaves them as one call of the function does. The generators are those the code (and the functions it
calls) reads as free names: NumPy's legacy global state (``np.random.normal``), and ``np.random.Generator``
and ``RandomState`` objects (``rng.normal``) that are globals or closure variables. Fresh entropy (an
unseeded ``np.random.default_rng()``, ``np.random.seed()``) cannot be drawn again, and is refused.
"""
from __future__ import annotations

import inspect

import numpy as np

from ..errors import UnsupportedSyntax
from ..frontend.functions import LiftedFunction, is_user_function
from ..frontend.lower import lower_function
from ..frontend.objects import is_dict_kind, kind_of_object
from ..ir.nodes import Assign, Const, Global, If, Op, Var, While
from ..rules.registry import nondifferentiable
from ..runtime import random_state, swap_random_state

nondifferentiable(random_state, swap_random_state)

# Constructors that, without a seed, draw fresh entropy from the operating system.
_ENTROPY = (np.random.default_rng, np.random.RandomState, np.random.SeedSequence, np.random.PCG64,
            np.random.MT19937, np.random.Philox, np.random.SFC64, np.random.PCG64DXSM)


def generators(block: list, what: str, seen: frozenset = frozenset(), objects: dict | None = None) -> list[Global]:
    """The generators `block` (and the user functions it calls) draws from, as atoms naming them. `objects`:
    the names of `block` known to hold objects, with their kinds (`ir.Function.objects`)."""
    found: dict = {}
    for stmt in block:
        if isinstance(stmt, If):
            inner = [*generators(stmt.body, what, seen, objects), *generators(stmt.orelse, what, seen, objects)]
        elif isinstance(stmt, While):
            inner = [*generators(stmt.cond, what, seen, objects), *generators(stmt.body, what, seen, objects)]
        elif isinstance(stmt, Assign) and isinstance(stmt.value, Op):
            fn = stmt.value.fn
            if is_user_function(fn) and id(fn) in seen:
                inner = []
            elif is_user_function(fn):
                callee = _lowered_callee(stmt.value, objects or {})
                inner = generators(callee.body, what, seen | {id(fn)}, callee.objects)
            else:
                inner = [g for g in [_generator(stmt, what)] if g is not None]
        else:
            inner = []
        for atom in inner:
            found.setdefault(id(atom.value), atom)
    return list(found.values())


def _lowered_callee(op: Op, objects: dict):
    """The user function `op` calls, lowered knowing which of its arguments hold objects."""
    if isinstance(op.fn, LiftedFunction):
        return lower_function(op.fn)[0]
    params = list(inspect.signature(op.fn).parameters)
    kinds = {p: objects.get(a.name) if isinstance(a, Var) else kind_of_object(a.value) if isinstance(a, Global)
             else None for p, a in zip(params, op.args)}
    kinds = {p: k for p, k in kinds.items() if k is not None}
    return lower_function(op.fn, dicts=[p for p, k in kinds.items() if is_dict_kind(k)], fields=kinds)[0]


def _generator(stmt: Assign, what: str) -> Global | None:
    op = stmt.value
    owner = getattr(op.fn, "__self__", None)
    reseeds = op.fn is np.random.seed or isinstance(owner, np.random.RandomState) and \
        getattr(op.fn, "__name__", "") == "seed"
    if (op.fn in _ENTROPY or reseeds) and (not op.args or isinstance(op.args[0], Const) and op.args[0].value is None) \
            and op.kwargs.get("seed", Const(None)) == Const(None):
        raise UnsupportedSyntax(f"an unseeded random number generator in {what} draws fresh entropy, which "
                                "running the code again cannot draw again", stmt.loc,
                                "create the generator outside and read it (rng = np.random.default_rng(seed)), "
                                "or give it a seed")
    if op.fn is np.random.seed or owner is np.random.mtrand._rand:          # the legacy global state
        return Global("np.random", np.random)
    if not isinstance(owner, (np.random.Generator, np.random.RandomState)):
        return None
    if op.name and "." in op.name:
        return Global(op.name.rsplit(".", 1)[0], owner)
    raise UnsupportedSyntax(f"{what} draws random numbers through '{op.name}', a method of a generator it does "
                            "not name, so its state cannot be saved for running the code again", stmt.loc,
                            "call the method on the generator itself (rng.normal(...))")


def save_states_for_recomputation(block: list, names, recomputed) -> None:
    """Before each call of a recomputed function that draws random numbers (in `block` and the blocks inside
    it), save the states of its generators: ``g_random = random_state(...)``; the call's Op gets the name as
    `random_states`, which its recomputation replays."""
    k = 0
    while k < len(block):
        stmt = block[k]
        if isinstance(stmt, If):
            save_states_for_recomputation(stmt.body, names, recomputed)
            save_states_for_recomputation(stmt.orelse, names, recomputed)
        elif isinstance(stmt, While):
            save_states_for_recomputation(stmt.cond, names, recomputed)
            save_states_for_recomputation(stmt.body, names, recomputed)
        elif isinstance(stmt, Assign) and isinstance(stmt.value, Op) and recomputed(stmt.value.fn):
            fn = stmt.value.fn
            sources = generators(lower_function(fn)[0].body, f"the recomputed function '{fn.__name__}'",
                                 frozenset({id(fn)}))
            if sources:
                saved = names.fresh(f"{fn.__name__}_random")
                block.insert(k, Assign(saved, Op(random_state, sources, name="random_state"), stmt.loc))
                stmt.value.random_states = saved
                k += 1
        k += 1


__all__ = ["generators", "save_states_for_recomputation"]
