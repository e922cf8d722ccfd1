"""Read generated gradient code back in, so that it can be differentiated again (forward over reverse).

A generated gradient is plain Python registered in `linecache`, so it parses
like a user's function. Two things set it apart:

- its stacks are objects changed by methods, which lowering does not take; they
  become calls of runtime helpers that have tangent rules, so that a stack of
  values carries a stack of their tangents::

      h_stack.push(h)          ->   h_stack = stack_push(h_stack, h)
      h = h_stack.pop()        ->   h_stack, h = stack_pop(h_stack)

- its lines are the generated file's; each statement is located instead at the
  user's line it came from, which the generated code names in its
  ``# file.py:line`` comments (a line without one continues the one above).

    >>> parsed = parse_generated(sg.api.generated(f, ["x"], "grad"))     # doctest: +SKIP
"""
from __future__ import annotations

import inspect
import linecache
import os
import re
from dataclasses import dataclass, field

import gast

from .errors import Location
from .parse import ParsedFunction, parse_function

GENERATED_PREFIX = "<s2sgrad "
_ORIGIN = re.compile(r"#\s*(?P<file>[^#\s]+):(?P<line>\d+)\s*$")


def is_generated(fn) -> bool:
    """Was `fn` compiled from a module s2sgrad generated?"""
    code = getattr(inspect.unwrap(fn), "__code__", None) if callable(fn) else None
    return code is not None and code.co_filename.startswith(GENERATED_PREFIX)


@dataclass
class GeneratedFunction(ParsedFunction):
    """A parsed generated function whose statements are located at the user's lines they came from."""

    origins: dict = field(default_factory=dict, repr=False)    # generated line -> the user's Location

    def location(self, node) -> Location:
        line = (getattr(node, "lineno", None) or self.tree.lineno) + self.line_offset
        return self.origins.get(line) or super().location(node)


def parse_generated(fn) -> GeneratedFunction:
    """Parse the generated function `fn`, with its stacks made functional and its lines mapped to the user's."""
    parsed = parse_function(fn)
    tree = _FunctionalStacks().visit(parsed.tree)
    return GeneratedFunction(parsed.fn, tree, parsed.filename, parsed.line_offset, parsed.col_offset,
                             parsed.globals, parsed.closure, _origins(parsed.filename))


def _origins(filename: str) -> dict:
    """Each line of a generated file -> the user's Location its statement came from."""
    origins, current = {}, None
    for number, text in enumerate(linecache.getlines(filename), start=1):
        if text.lstrip().startswith("def "):
            current = None
        match = _ORIGIN.search(text)
        if match:
            path = _full_path(match["file"])
            line = int(match["line"])
            current = Location(path, line, 0, linecache.getline(path, line))
        if current is not None:
            origins[number] = current
    return origins


def _full_path(basename: str) -> str:
    """The file the comment names: the source file of that name that has been read, if any."""
    for path in list(linecache.cache):
        if os.path.basename(path) == basename and not path.startswith("<"):
            return path
    return basename


def _located(new, old):
    """`new` and every node in it at `old`'s place in the source."""
    for node in gast.walk(new):
        gast.copy_location(node, old)
    return new


def _name(id_: str, ctx) -> gast.Name:
    return gast.Name(id=id_, ctx=ctx, annotation=None, type_comment=None)


def _call(fn: str, *args) -> gast.Call:
    return gast.Call(func=_name(fn, gast.Load()), args=list(args), keywords=[])


def _method_call(node, method: str, nargs: int):
    """The receiver's name if `node` is ``receiver.method(...)`` with `nargs` arguments, else None."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == method \
            and isinstance(node.func.value, gast.Name) and len(node.args) == nargs and not node.keywords:
        return node.func.value.id
    return None


class _FunctionalStacks(gast.NodeTransformer):
    """``s.push(v)`` -> ``s = stack_push(s, v)``; ``v = s.pop()`` -> ``s, v = stack_pop(s)``."""

    def visit_Expr(self, node):
        stack = _method_call(node.value, "push", 1)
        if stack is None:
            return node
        call = _call("stack_push", _name(stack, gast.Load()), node.value.args[0])
        return _located(gast.Assign(targets=[_name(stack, gast.Store())], value=call, type_comment=None), node)

    def visit_Assign(self, node):
        stack = _method_call(node.value, "pop", 0)
        if stack is None or len(node.targets) != 1:
            return node
        targets = gast.Tuple(elts=[_name(stack, gast.Store()), node.targets[0]], ctx=gast.Store())
        return _located(gast.Assign(targets=[targets], value=_call("stack_pop", _name(stack, gast.Load())),
                                    type_comment=None), node)


__all__ = ["GeneratedFunction", "is_generated", "parse_generated"]
