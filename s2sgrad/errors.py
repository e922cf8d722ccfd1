"""Errors raised by s2sgrad, each pointing at the user's own source line.

Example::

    >>> err = UnsupportedSyntax("'try' is not supported", Location("f.py", 3, 4, "    try:"),
    ...                         hint="move the try block out of the differentiated function")
    >>> print(err)
    f.py:3:5: 'try' is not supported
        try:
        ^
    hint: move the try block out of the differentiated function
"""
from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A place in the user's source: file, 1-based line, 0-based column, and the line's text."""

    filename: str
    line: int
    col: int = 0
    text: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col + 1}"


class S2SGradError(Exception):
    """Base class of every error s2sgrad raises about the user's code or call."""

    def __init__(self, message: str, location: Location | None = None, hint: str | None = None,
                 calls: tuple = ()):
        self.message = message
        self.location = location
        self.hint = hint
        self.calls = tuple(calls)       # (what happens there, a Location) below the error's: calls, innermost first
        super().__init__(self._format())

    def _format(self) -> str:
        parts = []
        if self.location is None:
            parts.append(self.message)
        else:
            parts.append(f"{self.location}: {self.message}")
            parts.extend(_shown(self.location))
        for said, where in self.calls:
            parts.append(f"{where}: {said}")
            parts.extend(_shown(where))
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


def _shown(location: Location) -> list[str]:
    """The line of `location` and a caret under its column (nothing if its text is unknown)."""
    return [location.text.rstrip(), " " * location.col + "^"] if location.text else []


def called_from(error: S2SGradError, name: str, call: Location | None, qualified: str | None = None) -> S2SGradError:
    """`error`, found in the function `name`, with that function's call at `call` (in its caller) added to the
    calls it shows. Where the error lies in another file than the call (a package's source), the error is the
    call's: it names the function (by its importable name, `qualified`) at the caller's line, shows where in the
    other file the construct is, and says to register a rule for it rather than edit that file.

        >>> inner = UnsupportedSyntax("'match' is not supported", Location("lib.py", 4, 4, "    match x:"))
        >>> print(called_from(inner, "f", Location("model.py", 7, 11, "    return lib.f(x)"), "lib.f"))
        model.py:7:12: lib.f cannot be differentiated from its source in lib.py: 'match' is not supported
            return lib.f(x)
                   ^
        lib.py:4:5: inside lib.f
            match x:
            ^
        hint: register a derivative rule for lib.f (@sg.adjoint(lib.f), and @sg.tangent(lib.f) for forward mode) \
rather than editing lib.py, or pass what reaches it through sg.stop_gradient(...)
    """
    if call is None or error.location is None:
        return error
    if call.filename == error.location.filename or any(c.filename == call.filename for _, c in error.calls):
        return type(error)(error.message, error.location, error.hint, (*error.calls, (f"in {name}, called here", call)))
    name = qualified or name
    where = os.path.join(*error.location.filename.split(os.sep)[-2:]) \
        if os.path.basename(error.location.filename) == "__init__.py" else os.path.basename(error.location.filename)
    own = f"; if {where} is your own code, change it there: {error.hint}" if error.hint else ""
    return type(error)(
        f"{name} cannot be differentiated from its source in {where}: {error.message}", call,
        f"register a derivative rule for {name} (@sg.adjoint({name}), and @sg.tangent({name}) for forward mode) "
        f"rather than editing {where}, or pass what reaches it through sg.stop_gradient(...){own}",
        ((f"inside {name}", error.location), *error.calls))


COMPLEX_HINT = ("complex values may pass only through arithmetic, NumPy's holomorphic ufuncs, sums, matrix "
                "products, reshapes, np.abs/real/imag/conj/angle and np.fft; elsewhere compute with the real and "
                "imaginary parts as real arrays")


class UnsupportedSyntax(S2SGradError):
    """A Python construct s2sgrad cannot differentiate (yet)."""


class NoDerivativeRule(S2SGradError):
    """A call of a function that has no derivative rule and whose source cannot be transformed."""


class NonScalarOutput(S2SGradError):
    """`grad` of a function whose output is not a scalar."""


class WrtError(S2SGradError):
    """A `wrt` that names no argument, or an argument that cannot be differentiated."""


class SourceNotFound(S2SGradError):
    """The source of a function to transform cannot be found (builtins, `exec`, the REPL)."""


def derivative_call_refusal(fn, name: str, how: str) -> tuple[str, str]:
    """The message and hint refusing to differentiate, by `how`, through a call of a derivative s2sgrad made
    (say a gradient penalty ``np.sum(dg(x) ** 2)``)."""
    label = fn.s2sgrad_derivative.label if hasattr(fn, "s2sgrad_derivative") else repr(fn)
    return (f"'{name}' is {label}, a derivative made by s2sgrad, which {how} cannot differentiate through",
            "differentiate the function calling it with sg.grad, sg.value_and_grad or sg.vjp (the gradient of "
            "np.sum(dg(x) ** 2), dg = sg.grad(g), is 2 * sg.hvp(g)(x, dg(x))), or pass what reaches the call "
            "through sg.stop_gradient(...)")


class NotCompilable(S2SGradError):
    """A construct or derivative rule the numba backend (``backend="numba"``) cannot compile."""
