"""Fresh, deterministic, readable names for generated code.

    >>> names = Names(reserved={"x", "y"})
    >>> names.fresh("y", owner=True), names.fresh("y", owner=True), names.fresh("t"), names.fresh("t")
    ('y', 'y_1', 't', 't_1')
"""
from __future__ import annotations

import builtins
import keyword
import math
import operator
import re

import numpy as np

from .. import runtime, schedules

SCHEDULES = ("Online", "Periodic", "Revolve")
# What generated code means by a name of its own (`generated_names`): no variable of the user's takes one of
# these names (the user's ``like`` becomes ``like_1``), and a global of the user's that has one of them and is
# something else is renamed in generated code. Builtins among them: those the code around derivative rules
# calls, and those the rule templates call (`TEMPLATE_BUILTINS`, user rules included).
GENERATED = {"np", "math", "operator", "builtins", *runtime.__all__, *SCHEDULES,
             "float", "len", "list", "min", "range", "slice", "sum", "tuple", "zip"}
OWN = GENERATED | set(keyword.kwlist) | {"_"}        # ``_`` is the counter of generated backward loops
RESERVED = OWN | set(keyword.softkwlist) | set(dir(builtins))       # no generated name is one of these


TEMPLATE_BUILTINS: set[str] = set()  # builtins the rule templates call (`rules.registry` adds them as it parses)


def base_name(name: str) -> str:
    """The variable a single-assignment version belongs to: ``y_3`` -> ``y``, ``dy_2`` -> ``dy``.

        >>> base_name("y_3"), base_name("dy"), base_name("x_")
        ('y', 'dy', 'x_')
    """
    return re.sub(r"_\d+$", "", name)


def generated_names() -> set[str]:
    """The names generated code uses for objects of its own (see `meaning`)."""
    return GENERATED | TEMPLATE_BUILTINS


def own_names() -> set[str]:
    """Names no variable of the user's may take in generated code."""
    return OWN | TEMPLATE_BUILTINS


def meaning(name: str):
    """The object generated code means by `name` (one of `generated_names()`).

        >>> meaning("np").__name__, meaning("like") is runtime.like, meaning("zip") is zip
        ('numpy', True, True)
    """
    modules = {"np": np, "math": math, "operator": operator, "builtins": builtins}
    if name in modules:
        return modules[name]
    if name in SCHEDULES:
        return getattr(schedules, name)
    if hasattr(runtime, name) and name in runtime.__all__:
        return getattr(runtime, name)
    return getattr(builtins, name)


class Names:
    """Hands out each name once. A reserved name goes only to its `owner` (the user's own variable), and not
    even to it if generated code uses that name itself (`OWN`): the user's ``like`` becomes ``like_1``.
    No name is a keyword."""

    def __init__(self, reserved=()):
        self.reserved = set(reserved) | RESERVED
        self.own = own_names()
        self.taken: set[str] = set()
        self.temporary: set[str] = set()     # names of values a reader need not see (folded when used once)
        self.numbered: dict[str, int] = {}   # hint -> k: hint_1 .. hint_k are taken or reserved (and stay so)

    def fresh(self, hint: str, owner: bool = False, temporary: bool = False) -> str:
        if not owner:
            hint = hint.strip("_") or "t"
        if hint[0].isdigit():
            hint = "t" + hint
        candidate = hint
        if candidate in self.taken or (candidate in self.reserved and not (owner and candidate not in self.own)):
            candidate = self._numbered(hint)
        self.taken.add(candidate)
        if temporary or hint in self.temporary:
            self.temporary.add(candidate)
        return candidate

    def reserve(self, hint: str) -> str:
        """A fresh name set aside for a hidden variable (a loop counter, a flag) that lowering will define."""
        candidate = hint
        if candidate in self.taken or candidate in self.reserved:
            candidate = self._numbered(hint)
        self.reserved.add(candidate)
        self.temporary.add(candidate)
        return candidate

    def _numbered(self, hint: str) -> str:
        """The first of ``hint_1``, ``hint_2``, ... neither taken nor reserved (names are only ever added to
        both: the search goes on from the last one handed out)."""
        k = self.numbered.get(hint, 0)
        while True:
            k += 1
            candidate = f"{hint}_{k}"
            if candidate not in self.taken and candidate not in self.reserved:
                self.numbered[hint] = k
                return candidate

    def take(self, name: str) -> str:
        self.taken.add(name)
        return name


def identifier(text: str) -> str:
    """`text` made fit to be part of a generated name: ``<lambda>`` -> ``lambda``, ``T.step`` -> ``T_step``.
    (Generated names always add to it: ``dlambda_dx``, ``step_forward``.)

        >>> identifier("<lambda>"), identifier("T.step"), identifier("jvp_<lambda>_x")
        ('lambda', 'T_step', 'jvp_lambda_x')
    """
    text = re.sub(r"<(\w+)>", r"\1", text)              # <lambda>, <listcomp>: the word inside
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in text).strip("_") or "f"
    return "f_" + cleaned if cleaned[0].isdigit() else cleaned
