"""What ``sg.grad(f)`` (and `value_and_grad`, `vjp`, `jvp`, `hvp`, `hessian`, and their compositions) returns.

A `Derivative` is called like the function it computes. It says what it is, and hands out the plain
generated code it runs: `source` for given arguments, `generated` (what it generated so far, per kinds
of arguments) and `generated_for`, the generated function itself, to step through with pdb. It is not
`f` and does not claim to be (no ``__wrapped__``): its name is ``grad_f``.

    >>> import numpy as np, s2sgrad as sg
    >>> def f(x):
    ...     return np.sum(np.sin(x) * x)
    >>> df = sg.grad(f)
    >>> df
    <gradient of f w.r.t. x>
    >>> df.__name__
    'grad_f'
    >>> print(df.source(np.ones(3)).splitlines()[5])
    def df_dx(x, dsum=1.0):
    >>> gen = df.generated_for(np.ones(3))           # what df(np.ones(3)) runs
    >>> gen.__name__, list(df.generated.values()) == [gen]
    ('df_dx', True)

``import pdb; pdb.runcall(df.generated_for(x), x)`` stops at the first line of the generated gradient
(for `grad`, `value_and_grad`, `vjp` and `jvp` the generated function takes the derivative's own
arguments; see its ``def`` line for the others). An error raised inside generated code gets a note
naming the user's line the failing statement came from (`origin_notes`).
"""
from __future__ import annotations

import types
from typing import Callable

from ..backend.generated_source import Source
from .origin_notes import add_origin_note


class Derivative:
    """A derivative s2sgrad made: `call` computes it; ``plan(args, kwargs)`` (`generate`) returns the
    argument kinds and the generated functions (one or more) a call with those arguments runs, generating
    them if need be; ``seen()`` returns those generated so far, per argument kinds."""

    def __init__(self, call: Callable, name: str, description: str, doc: str, module: str | None,
                 generate: Callable, seen: Callable[[], dict]):
        self._call = call
        self.plan = generate
        self.seen = seen
        self.__name__ = self.__qualname__ = name
        self.__doc__ = doc
        self.__module__ = module
        self.description = description

    def __call__(self, *args, **kwargs):
        try:
            return self._call(*args, **kwargs)
        except Exception as error:
            add_origin_note(error)
            raise

    def __get__(self, obj, owner=None):
        """As a function does: an attribute of a class called on an instance passes it first."""
        return self if obj is None else types.MethodType(self, obj)

    def __repr__(self) -> str:
        return f"<{self.description}>"

    @property
    def generated(self) -> dict:
        """The generated functions this derivative has run or made, per kinds of its arguments (a tuple where a
        call runs several)."""
        return {key: fns[0] if len(fns) == 1 else fns for key, fns in self.seen().items()}

    def generated_for(self, *args, **kwargs):
        """The plain generated function a call with these arguments runs (the last, where it runs several)."""
        return self.plan(args, kwargs)[1][-1]

    def source(self, *args, **kwargs) -> Source:
        """The generated module(s) a call with these arguments runs (a `Source`: plain text, with its line map)."""
        return joined([fn.source for fn in self.plan(args, kwargs)[1]])


def joined(sources: list) -> Source:
    """`sources` one after the other (two blank lines between), with their line maps.

        >>> joined([Source("a\\n", {1: "x"}), Source("b\\n", {1: "y"})]).origins
        {1: 'x', 4: 'y'}
    """
    text, origins = "", {}
    for source in dict.fromkeys(sources):
        if text:
            text += "\n\n"
        offset = text.count("\n")
        origins.update({offset + k: v for k, v in getattr(source, "origins", {}).items()})
        text += source
    return Source(text, origins)
