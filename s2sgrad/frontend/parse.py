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
import copy
import inspect
import linecache
import sys
import textwrap
from dataclasses import dataclass, field

import gast
import numpy as np

from .. import guards
from ..errors import Location, SourceNotFound, UnsupportedSyntax
from ..ir.trees import walk
from .array_namespaces import read_as_numpy
from .signatures import flatten

MISSING = guards.MISSING


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
    cells: dict = field(default_factory=dict, repr=False, kw_only=True)     # name -> the closure cell holding it

    @property
    def nodes(self) -> list:
        """Every node of `tree`, as `ir.trees.walk` yields them (walked once per tree: lowering desugars a copy)."""
        walked = self.__dict__.get("_walked")
        if walked is None or walked[0] is not self.tree:
            walked = self.__dict__["_walked"] = (self.tree, list(walk(self.tree)))
        return walked[1]

    def location(self, node) -> Location:
        """The user's file, line and column of a syntax node, with the line's text."""
        line = getattr(node, "lineno", None) or self.tree.lineno
        col = getattr(node, "col_offset", 0) or 0
        absolute = line + self.line_offset
        text = linecache.getline(self.filename, absolute)
        return Location(self.filename, absolute, col + self.col_offset, text)

    def resolve(self, name: str):
        """What a free name of the function refers to: a closure cell, a global or a builtin (noted, see
        `guards`: generated code depends on it)."""
        if name in self.cells:
            value = self.closure.get(name, MISSING)
            guards.note(self.cells[name], name, value)
            return value
        if name in self.closure:
            return self.closure[name]
        value = self.globals.get(name, MISSING)
        guards.note(self.globals, name, value)
        if value is MISSING:
            value = builtins.__dict__.get(name, MISSING)
            guards.note(builtins.__dict__, name, value)
        return value

    def attribute(self, dotted: str, base, attr: str):
        """``base.attr``, where `base` is what the dotted path of free name and attributes `dotted` refers to
        (noted, as `resolve` notes names); MISSING if it has no such attribute."""
        value = getattr(base, attr, MISSING)
        root, _, attributes = f"{dotted}.{attr}".partition(".")
        if root in self.parameters:     # a module or function passed in: the code is specialized on that object
            guards.note({"base": base}, "base", value, attr)
        elif root in self.cells:
            guards.note(self.cells[root], root, value, attributes)
        elif root in self.globals:
            guards.note(self.globals, root, value, attributes)
        else:
            guards.note(builtins.__dict__, root, value, attributes)
        return value

    @property
    def parameters(self) -> set[str]:
        """The names of the function's parameters."""
        args = self.tree.args
        return {a.id for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a}

    @property
    def name(self) -> str:
        return self.tree.name


def call_signature(fn) -> inspect.Signature:
    """The signature calls of `fn` bind to: its own, or, for a wrapper that takes ``*args``/``**kwargs`` and
    names the function it wraps in ``__wrapped__`` (``functools.wraps``), that function's. (Found once per
    generation.)"""
    memo = guards.memo()
    found = memo.get(("signature", id(fn))) if memo is not None else None
    if found is not None and found[0] is fn:
        return found[1]
    if guards.passes_arguments_on(fn) and hasattr(fn, "__wrapped__"):
        signature = inspect.signature(fn)
    else:
        signature = inspect.signature(fn, follow_wrapped=False)
    if memo is not None:
        memo["signature", id(fn)] = (fn, signature)
    return signature


def refuse_cached(fn) -> None:
    """A function cached by ``functools.lru_cache`` returns values stored by earlier calls: no gradient."""
    if hasattr(fn, "cache_info") and hasattr(fn, "__wrapped__"):
        name = getattr(fn, "__name__", "the function")
        raise SourceNotFound(f"{name!r} is cached with functools.lru_cache or functools.cache: a call may return "
                             "a value stored by an earlier call, which has no gradient",
                             hint=f"differentiate the undecorated function, {name}.__wrapped__")


def parse_function(fn) -> ParsedFunction:
    """Parse `fn`'s source into a gast FunctionDef (decorators dropped), resolving its namespaces.

    A decorated function is the decorator's wrapper, whose source is parsed: a wrapper of the usual form,
    ``def wrapper(*args, **kwargs): ... fn(*args, **kwargs) ...`` with ``functools.wraps``, gets the
    parameters of the function it wraps. A derivative s2sgrad made has no source of its own: it, or a
    wrapper of it, is refused (its transforms go through `api.derivatives`).

    A function is parsed once per generation (`guards.memo`; a called function is lowered to find its
    effects, then again to transform it): each call gets a copy of the `ParsedFunction` with a closure of its
    own (desugaring adds names to it), sharing the tree, which lowering only reads."""
    memo = guards.memo()
    if memo is None:
        return _parse(fn)
    key = ("parsed", id(fn))
    if key not in memo:
        memo[key] = (fn, _parse(fn))
    parsed = copy.copy(memo[key][1])
    parsed.closure = dict(parsed.closure)
    return parsed


def _parse(fn) -> ParsedFunction:
    derivative = getattr(inspect.unwrap(fn), "s2sgrad_derivative", None)
    if derivative is not None:
        raise UnsupportedSyntax(f"{getattr(fn, '__name__', fn)!r} wraps {derivative.label}, a derivative "
                                "made by s2sgrad, whose code is generated, not written in its source",
                                hint="transform the derivative itself (sg.jvp(sg.grad(f)), sg.hvp(f), ...), or "
                                     "write the wrapper's change as a function of your own that calls f")
    refuse_cached(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        raise SourceNotFound(f"{getattr(fn, '__name__', fn)!r} is not a Python function, so it has no source "
                             "to transform", hint="register a derivative rule for it with sg.adjoint")
    guards.note_function(fn)
    lines, first_line, filename = _source_lines(fn, code)
    raw = "".join(lines)
    source = textwrap.dedent(raw)
    indent = len(lines[0]) - len(lines[0].lstrip()) if source != raw else 0
    try:
        module = gast.parse(source)
    except SyntaxError:
        module = None
    tree = _find_function(module, code.co_name) if module is not None else None
    if tree is None and code.co_name == "<lambda>":
        tree = _lambda_as_function(raw, fn, filename, first_line)
        indent = 0
    if tree is None:
        raise SourceNotFound(f"cannot parse the source of {fn.__qualname__!r}",
                             Location(filename, first_line, 0, linecache.getline(filename, first_line)))
    tree.decorator_list = []
    closure, cells = {}, {}
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        cells[name] = cell
        try:
            closure[name] = cell.cell_contents
        except ValueError:                    # not bound yet: reading it is an error, as in Python
            pass
    parsed = ParsedFunction(fn, tree, filename, first_line - 1, indent, fn.__globals__, closure, cells=cells)
    if (tree.args.vararg or tree.args.kwarg) and hasattr(fn, "__wrapped__"):
        _pass_arguments_on(parsed, call_signature(fn))
    flatten(tree)
    if "array_api_compat" in sys.modules and read_as_numpy(tree, parsed.resolve, parsed.location) \
            and parsed.resolve("np") is not np:
        parsed.closure["np"] = np       # (the array API's functions read as NumPy's, in a module without np)
    return parsed


def _source_lines(fn, code) -> tuple[list, int, str]:
    """The lines of `fn`'s source, the first one's number, and the file's name (found once per generation)."""
    memo = guards.memo()
    found = memo.get(("source", id(fn))) if memo is not None else None
    if found is not None and found[0] is fn and found[1] is code:
        return found[2]
    # the code that runs, not a __wrapped__ one; a plain function's own module is known (its code's would be
    # searched for among all modules)
    unwrapped = inspect.isfunction(fn) and not hasattr(fn, "__wrapped__")
    try:
        lines, first_line = inspect.getsourcelines(fn if unwrapped else code)
    except (OSError, TypeError) as error:
        raise SourceNotFound(f"cannot find the source of {fn.__qualname__!r} ({error})",
                             hint="define the function in a file (not in the REPL or via exec) "
                                  "or register a rule with sg.adjoint") from None
    source = (lines, first_line, inspect.getsourcefile(code) or code.co_filename)
    if memo is not None:
        memo["source", id(fn)] = (fn, code, source)
    return source


def _find_function(module, name: str):
    for node in module.body:
        if isinstance(node, gast.FunctionDef) and node.name == name:
            return node
    return None


def _pass_arguments_on(parsed: ParsedFunction, signature: inspect.Signature) -> None:
    """Give a wrapper ``def wrapper(*args, **kwargs)`` the parameters of the function it wraps (its signature,
    by ``functools.wraps``): ``fn(*args, **kwargs)`` becomes ``fn(x, y)``. Refused where the wrapper uses
    ``args`` or ``kwargs`` otherwise, or passes them to a function with other parameters."""
    tree = parsed.tree
    arguments = tree.args
    star = arguments.vararg.id if arguments.vararg else None
    double = arguments.kwarg.id if arguments.kwarg else None
    hint = "write the wrapper with the parameters of the function it wraps (def wrapper(x, y): ... fn(x, y))"

    def refuse(message, node=tree):
        raise UnsupportedSyntax(message, parsed.location(node), hint)
    params = list(signature.parameters.values())
    if arguments.args or arguments.posonlyargs or arguments.kwonlyargs:
        refuse(f"the wrapper '{tree.name}' takes parameters besides *{star or 'args'} and **{double or 'kwargs'}")
    if any(p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params):
        refuse(f"the function '{tree.name}' wraps has *args, **kwargs, keyword-only or positional-only parameters")
    names = [p.name for p in params]
    taken = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)} - {star, double}
    clash = [n for n in names if n in taken]
    if clash:
        refuse(f"the wrapper '{tree.name}' uses the name '{clash[0]}', a parameter of the function it wraps",
               tree)
    for node in gast.walk(tree):
        if not isinstance(node, gast.Call):
            continue
        passes_on = [a for a in node.args if isinstance(a, gast.Starred) and isinstance(a.value, gast.Name)
                     and a.value.id == star] + \
            [k for k in node.keywords if k.arg is None and isinstance(k.value, gast.Name) and k.value.id == double]
        if not passes_on:
            continue
        forwards = len(node.args) == (star is not None) and len(node.keywords) == (double is not None) \
            and len(passes_on) == len(node.args) + len(node.keywords)
        if not forwards:
            refuse(f"the wrapper '{tree.name}' passes on its arguments with others added or left out", node)
        target = parsed.resolve(node.func.id) if isinstance(node.func, gast.Name) else MISSING
        try:
            theirs = list(call_signature(target).parameters.values()) if callable(target) else None
        except (TypeError, ValueError):
            theirs = None
        if theirs is None or [(p.name, p.kind) for p in theirs] != [(p.name, p.kind) for p in params]:
            refuse(f"the wrapper '{tree.name}' passes its arguments on to a function whose parameters are not "
                   f"those it claims ({', '.join(names)})", node)
        node.args = [gast.Name(n, gast.Load(), None, None) for n in names]
        node.keywords = []
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and node.id in (star, double) and not isinstance(node.ctx, gast.Param):
            refuse(f"the wrapper '{tree.name}' uses '{node.id}' other than passing it on", node)
    tree.args = gast.arguments(args=[gast.Name(n, gast.Param(), None, None) for n in names], posonlyargs=[],
                               vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def _lambda_as_function(raw, fn, filename, first_line):
    """A lambda's source is the whole line it sits on: find the one lambda there and make it a def."""
    text = raw.strip()
    indent = len(raw) - len(raw.lstrip())
    for candidate in (text, text.rstrip(",)"), "(" + text + ")"):
        dropped = candidate.startswith(("@", "."))
        try:
            module = gast.parse(candidate if not dropped else candidate[1:])
        except SyntaxError:
            continue
        lambdas = [n for n in gast.walk(module) if isinstance(n, gast.Lambda)]
        shift = indent - candidate.startswith("(") + dropped     # a first line's column in the file
        lambdas = _lambdas_running(lambdas, fn.__code__, first_line, shift) if len(lambdas) > 1 else lambdas
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


def _lambdas_running(lambdas: list, code, first_line: int, shift: int) -> list:
    """Of several lambdas on the lines of `code`, the innermost whose body holds where `code` starts running
    (the first position of its instructions, Python 3.11 on), as a one-element list; all of them if unknown."""
    positions = getattr(code, "co_positions", None)
    start = next(((line, col) for line, _, col, end in (positions() if positions else ())
                  if line is not None and col is not None and (col, end) != (0, 0)), None)
    if start is None:
        return lambdas

    def where(line, col):
        return first_line + line - 1, col + (shift if line == 1 else 0)
    holding = [lam for lam in lambdas if where(lam.body.lineno, lam.body.col_offset) <= start
               < where(lam.body.end_lineno, lam.body.end_col_offset)]
    innermost = [lam for lam in holding if not any(other is not lam and other in set(gast.walk(lam.body))
                                                   for other in holding)]
    return innermost or lambdas
