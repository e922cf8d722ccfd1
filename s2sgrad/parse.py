"""Stage 1: find a function's source, parse it with gast, and resolve what its free names mean.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sin(x) * scale
    >>> scale = 2.0
    >>> src = parse_function(f)
    >>> src.tree.name, src.resolve("scale")
    ('f', 2.0)
"""
from __future__ import annotations

import builtins
import inspect
import linecache
import textwrap
from dataclasses import dataclass, field

import gast

from .errors import Location, SourceNotFound, UnsupportedSyntax

MISSING = object()


@dataclass
class ParsedFunction:
    """A user function's syntax tree, where it came from, and the namespaces its names live in."""

    fn: object
    tree: gast.FunctionDef
    filename: str
    line_offset: int               # add to a tree line number to get the file's line number
    col_offset: int                # add to a tree column to get the file's column
    globals: dict = field(repr=False)
    closure: dict = field(repr=False)

    def location(self, node) -> Location:
        """The user's file, line and column of a syntax node, with the line's text."""
        line = getattr(node, "lineno", None) or self.tree.lineno
        col = getattr(node, "col_offset", 0) or 0
        absolute = line + self.line_offset
        text = linecache.getline(self.filename, absolute)
        return Location(self.filename, absolute, col + self.col_offset, text)

    def resolve(self, name: str):
        """What a free name of the function refers to: a closure cell, a global or a builtin."""
        if name in self.closure:
            return self.closure[name]
        if name in self.globals:
            return self.globals[name]
        return getattr(builtins, name, MISSING)

    @property
    def name(self) -> str:
        return self.tree.name


def parse_function(fn) -> ParsedFunction:
    """Parse `fn`'s source into a gast FunctionDef (decorators dropped), resolving its namespaces."""
    wrapper, fn = fn, inspect.unwrap(fn)
    derivative = getattr(fn, "s2sgrad_derivative", None)
    if derivative is not None:
        raise UnsupportedSyntax(f"{getattr(wrapper, '__name__', wrapper)!r} wraps {derivative.label}, a derivative "
                                "made by s2sgrad, whose code is generated, not written in its source",
                                hint="transform the derivative itself (sg.jvp(sg.grad(f)), sg.hvp(f), ...), or "
                                     "write the wrapper's change as a function of your own that calls f")
    code = getattr(fn, "__code__", None)
    if code is None:
        raise SourceNotFound(f"{getattr(fn, '__name__', fn)!r} is not a Python function, so it has no source "
                             "to transform", hint="register a derivative rule for it with s2sgrad.adjoint")
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError) as error:
        raise SourceNotFound(f"cannot find the source of {fn.__qualname__!r} ({error})",
                             hint="define the function in a file (not in the REPL or via exec) "
                                  "or register a rule with s2sgrad.adjoint") from None
    filename = inspect.getsourcefile(fn) or code.co_filename
    raw = "".join(lines)
    source = textwrap.dedent(raw)
    indent = len(lines[0]) - len(lines[0].lstrip()) if source != raw else 0
    try:
        module = gast.parse(source)
    except SyntaxError:
        module = None
    tree = _find_function(module, fn) if module is not None else None
    if tree is None and fn.__name__ == "<lambda>":
        tree = _lambda_as_function(raw, fn, filename, first_line)
        indent = 0
    if tree is None:
        raise SourceNotFound(f"cannot parse the source of {fn.__qualname__!r}",
                             Location(filename, first_line, 0, linecache.getline(filename, first_line)))
    tree.decorator_list = []
    closure = {}
    if fn.__closure__:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
    return ParsedFunction(fn, tree, filename, first_line - 1, indent, fn.__globals__, closure)


def _find_function(module, fn):
    for node in module.body:
        if isinstance(node, gast.FunctionDef) and node.name == fn.__name__:
            return node
    return None


def _lambda_as_function(raw, fn, filename, first_line):
    """A lambda's source is the whole line it sits on: find the one lambda there and make it a def."""
    text = raw.strip()
    for candidate in (text, text.rstrip(",)"), "(" + text + ")"):
        try:
            module = gast.parse(candidate if not candidate.startswith(("@", ".")) else candidate[1:])
        except SyntaxError:
            continue
        lambdas = [n for n in gast.walk(module) if isinstance(n, gast.Lambda)]
        if len(lambdas) != 1:
            raise UnsupportedSyntax("cannot tell which lambda on this line is being differentiated",
                                    Location(filename, first_line, 0, linecache.getline(filename, first_line)),
                                    hint="define the function with def")
        lam = lambdas[0]
        body = gast.Return(value=lam.body)
        gast.copy_location(body, lam.body)
        tree = gast.FunctionDef(name="<lambda>", args=lam.args, body=[body], decorator_list=[],
                                returns=None, type_comment=None, type_params=[])
        gast.copy_location(tree, lam)
        return tree
    return None
