"""Fresh, deterministic, readable names for generated code.

    >>> names = Names(reserved={"x", "y"})
    >>> names.fresh("y", owner=True), names.fresh("y", owner=True), names.fresh("t"), names.fresh("t")
    ('y', 'y_1', 't', 't_1')
"""
from __future__ import annotations

import builtins

from . import runtime

RESERVED = {"np", "math", "operator", "builtins", *runtime.__all__, *dir(builtins)}


class Names:
    """Hands out each name once. A reserved name goes only to its `owner` (the user's own variable)."""

    def __init__(self, reserved=()):
        self.reserved = set(reserved) | RESERVED
        self.taken: set[str] = set()
        self.temporary: set[str] = set()     # names of values a reader need not see (folded when used once)

    def fresh(self, hint: str, owner: bool = False, temporary: bool = False) -> str:
        if not owner:
            hint = hint.strip("_") or "t"
        if hint[0].isdigit():
            hint = "t" + hint
        candidate, k = hint, 0
        while candidate in self.taken or (candidate in self.reserved and not (owner and candidate == hint)):
            k += 1
            candidate = f"{hint}_{k}"
        self.taken.add(candidate)
        if temporary or hint in self.temporary:
            self.temporary.add(candidate)
        return candidate

    def reserve(self, hint: str) -> str:
        """A fresh name set aside for a hidden variable (a loop counter, a flag) that lowering will define."""
        candidate, k = hint, 0
        while candidate in self.taken or candidate in self.reserved:
            k += 1
            candidate = f"{hint}_{k}"
        self.reserved.add(candidate)
        self.temporary.add(candidate)
        return candidate

    def take(self, name: str) -> str:
        self.taken.add(name)
        return name


def identifier(text: str) -> str:
    """`text` made fit to be part of a generated name: ``<lambda>`` -> ``lambda``, ``T.step`` -> ``T_step``.
    (Generated names always add to it: ``dlambda_dx``, ``step_forward``.)

        >>> identifier("<lambda>"), identifier("T.step")
        ('lambda', 'T_step')
    """
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in text).strip("_") or "f"
    return "f_" + cleaned if cleaned[0].isdigit() else cleaned
