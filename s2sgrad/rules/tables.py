"""Rule pairs written once: the adjoint and the tangent template of an elementwise function from its partials.

    >>> import numpy as np
    >>> from s2sgrad.rules import rule_for, tangent_rule_for
    >>> def cube(x):
    ...     return x ** 3
    >>> elementwise(cube, lambda g, y, x: g * 3.0 * x * x)
    >>> [ast.unparse(s) for s in rule_for(cube).body + tangent_rule_for(cube).body]
    ['d[x] = d[y] * 3.0 * x * x', 'd[y] = d[x] * 3.0 * x * x']

A partial is written as JAX's ``defjvp`` writes one: ``lambda g, y, x1, x2: ...``
takes the incoming derivative `g`, the result `y` and the primitive's parameters,
and is linear in `g`. The k-th partial is that of the k-th parameter: the adjoint
template gets ``d[xk] = partial(d[y])``, the tangent template ``d[y]`` = the sum of
``partial(d[xk])``. `broadcasting` does the same for a function whose arguments
NumPy broadcasts, summing each adjoint back to its argument's shape (``unbroadcast``).
With ``scalar=math.sin``, `elementwise` registers the same rules for the `math`
twin too, with ``np.f`` in the partials read as ``math.f``.
"""
from __future__ import annotations

import ast
import functools
import inspect
import linecache
import math
from typing import Callable

from ..ir.trees import copy_tree, walk
from .registry import Rule, RuleTemplateError, TemplateSource, parsed_file, register_adjoint, register_tangent


def elementwise(primitives, *partials: Callable, scalar=None) -> None:
    """Register the adjoint and tangent rules of `primitives` (a function, or a tuple of functions that share
    the rules) from the partials of their leading parameters; with `scalar`, of the `math` twin too."""
    _register(primitives, partials, broadcast=False)
    if scalar is not None:
        _register(scalar, partials, broadcast=False, twin=True)


def broadcasting(primitives, *partials: Callable) -> None:
    """`elementwise` for a function whose arguments broadcast: each adjoint is summed back to its argument's shape."""
    _register(primitives, partials, broadcast=True)


def _register(primitives, partials, broadcast: bool, twin: bool = False) -> None:
    primitives = primitives if isinstance(primitives, tuple) else (primitives,)
    parsed = [_parse_partial(p) for p in partials]
    first, source = parsed[0][0], parsed[0][1]
    names = [a.arg for a in first.args.args]
    if len(names) < len(partials) + 2:
        raise RuleTemplateError(f"a partial takes the incoming derivative, the result and the parameters: "
                                f"lambda g, y, x: ... (here {ast.unparse(first.args)})", source.location(first))
    for lam, where in parsed[1:]:
        if [a.arg for a in lam.args.args] != names:
            raise RuleTemplateError(f"the partials of one function take the same parameters "
                                    f"({', '.join(names)})", where.location(lam))
    seed, output, params = names[0], names[1], names[2:]
    bodies = [_math_twin(lam.body, where) if twin else lam.body for lam, where in parsed]
    signature = inspect.signature(partials[0])
    signature = signature.replace(parameters=list(signature.parameters.values())[2:])

    def derivative(name: str) -> ast.Subscript:
        return ast.Subscript(ast.Name("d", ast.Load()), ast.Name(name, ast.Load()), ast.Load())

    def term(body, of: str) -> ast.expr:
        return _Seed(seed, derivative(of)).visit(copy_tree(body))

    adjoints = []
    for body, param in zip(bodies, params):
        value = term(body, output)
        if broadcast:
            value = ast.Call(ast.Name("unbroadcast", ast.Load()), [value, ast.Name(param, ast.Load())], [])
        adjoints.append(_assign(derivative(param), value, body))
    total = functools.reduce(lambda a, b: ast.BinOp(a, ast.Add(), b), [term(b, p) for b, p in zip(bodies, params)])
    tangents = [_assign(derivative(output), total, bodies[0])]
    register_adjoint(primitives, Rule(None, partials[0], output, signature, adjoints, source=source))
    register_tangent(primitives, Rule(None, partials[0], output, signature, tangents, source=source))


def _assign(target: ast.Subscript, value: ast.expr, like: ast.expr) -> ast.Assign:
    target = copy_tree(target)
    target.ctx = ast.Store()
    return ast.fix_missing_locations(ast.copy_location(ast.Assign([target], value), like))


class _Seed(ast.NodeTransformer):
    """The partial's incoming derivative `g` replaced by ``d[...]``."""

    def __init__(self, seed: str, derivative: ast.expr):
        self.seed, self.derivative = seed, derivative

    def visit_Name(self, node):
        return copy_tree(self.derivative) if node.id == self.seed else node


def _math_twin(body: ast.expr, source: TemplateSource) -> ast.expr:
    """`body` with ``np.f`` read as ``math.f``; every ``np`` name used must have its `math` twin."""
    body = copy_tree(body)
    for node in walk(body):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "np":
            if not hasattr(math, node.attr):
                raise RuleTemplateError(f"np.{node.attr} has no twin in math: write the math function's rule "
                                        f"apart", source.location(node))
            node.value.id = "math"
    return body


def _parse_partial(partial: Callable) -> tuple[ast.Lambda, TemplateSource]:
    """The lambda expression `partial` was made from (its line numbers relative to its own line), and where
    it is written."""
    code = getattr(partial, "__code__", None)
    if code is None or partial.__name__ != "<lambda>":
        raise RuleTemplateError(f"a partial is a lambda expression, not {partial!r}")
    filename = inspect.getsourcefile(partial) or "<unknown>"
    line = code.co_firstlineno
    source = TemplateSource(filename, line)
    columns = {c for ln, _, c, end in code.co_positions() if ln == line and c is not None and end and end > c}
    found = [n for n in _lambdas("".join(linecache.getlines(filename))).get(line, ())
             if [a.arg for a in n.args.args] == list(code.co_varnames[:code.co_argcount])
             and all(n.body.col_offset <= c < (n.end_col_offset if n.end_lineno == line else 1 << 30)
                     for c in columns)]
    if len({ast.dump(n) for n in found}) != 1:
        raise RuleTemplateError("cannot tell which lambda on this line the partial is: write one a line",
                                source.location())
    lam = copy_tree(found[0])
    ast.increment_lineno(lam, 1 - line)
    return lam, source


@functools.lru_cache(maxsize=16)
def _lambdas(text: str) -> dict[int, list[ast.Lambda]]:
    """The lambda expressions of a source file's `text`, by the line each starts on."""
    by_line: dict[int, list[ast.Lambda]] = {}
    for node in walk(parsed_file(text)):
        if isinstance(node, ast.Lambda):
            by_line.setdefault(node.lineno, []).append(node)
    return by_line
