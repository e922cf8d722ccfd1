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

    def __init__(self, message: str, location: Location | None = None, hint: str | None = None):
        self.message = message
        self.location = location
        self.hint = hint
        super().__init__(self._format())

    def _format(self) -> str:
        parts = []
        if self.location is None:
            parts.append(self.message)
        else:
            parts.append(f"{self.location}: {self.message}")
            if self.location.text:
                parts.append(self.location.text.rstrip())
                parts.append(" " * self.location.col + "^")
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


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
            "through s2sgrad.stop_gradient(...)")


class NotCompilable(S2SGradError):
    """A construct or derivative rule the numba backend (``backend="numba"``) cannot compile."""
