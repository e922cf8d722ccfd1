"""The callable values lowering knows (`callables` lowers what is done with them): a function named by a
module-level name or passed as an argument (an `ir.Global`), a lambda or nested def (`LiftedFunction`), a
`Partial`, a dict or list of functions (`Table`); and `Static`, the kind of an argument that is a function
or a module.

    >>> import numpy as np
    >>> Static(np.sin) == Static(np.sin), Static(np.sin) == Static(np.cos), is_static(np), is_static(2.0)
    (True, False, True, False)
"""
from __future__ import annotations

import functools
import inspect
import types
from dataclasses import dataclass, field

import numpy as np

from ..ir.nodes import Global, Var
from ..ir.primitives import python_name
from .functions import LiftedFunction, is_user_function


class Static:
    """The kind of an argument that is a function or a module: generated code assumes that very object."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, Static) and other.value is self.value

    def __hash__(self):
        return hash(id(self.value))

    def __repr__(self):
        return f"Static({getattr(self.value, '__name__', type(self.value).__name__)})"


def is_static(value) -> bool:
    """Is `value` a function, a partial of one, or a module (specialized on, see `Static`)?"""
    return isinstance(value, (types.ModuleType, functools.partial, np.ufunc)) or inspect.isroutine(value)


@dataclass(eq=False)
class Partial:
    """``functools.partial(target, *args, **keywords)``: `target` a callable value (a Global, a
    LiftedFunction or a Partial), its bound arguments atoms, evaluated where the partial is made."""

    target: object
    args: list = field(default_factory=list)
    keywords: dict = field(default_factory=dict)

    @property
    def __name__(self):
        return getattr(self.target, "__name__", None) or self.target.name


@dataclass(eq=False)
class Table:
    """A dict or list of callable values made in the function (``acts = {"tanh": np.tanh, ...}``)."""

    items: dict                    # key (or index) -> callable value


def is_callable_value(value) -> bool:
    """Is `value` (what a name is bound to while lowering) a function known to lowering?"""
    return isinstance(value, (LiftedFunction, Partial, Table)) or isinstance(value, Global) and is_static(value.value)


def free_names(value) -> list:
    """The names a call of callable value `value` reads where it is called (a lambda's free variables, the
    variables holding a partial's bound arguments)."""
    if isinstance(value, LiftedFunction):
        return list(value.free)
    if isinstance(value, Partial):
        bound = [*value.args, *value.keywords.values()]
        held = [n for a in bound for n in ([a.name] if isinstance(a, Var) else free_names(a))]
        return free_names(value.target) + held
    if isinstance(value, Table):
        return [n for item in value.items.values() for n in free_names(item)]
    return []


def static_parameters(kinds: dict) -> dict:
    """The parameters of kind `Static`, each bound to the object it is (as generated code names it)."""
    return {p: Global(p, k.value) for p, k in kinds.items() if isinstance(k, Static)}


def named_by_generated_code(value) -> bool:
    """Is `value` a function generated code calls by the name it has where it is called (one without a library
    name that is not transformed either: a callable with a rule of the user's, passed as an argument)? A lambda
    calling it then takes it as a parameter."""
    return isinstance(value, Global) and python_name(value.value) is None and not is_user_function(value.value) \
        and not isinstance(value.value, types.ModuleType)
