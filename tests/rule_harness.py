"""Run derivative-rule templates directly, without the pipeline, and check them against finite differences.

`rule_vjp` evaluates a rule: it binds a call to the rule's signature, computes the
primal result, and executes the template's statements with ``d[v]`` rewritten into
dictionary reads and ``d[x] = e`` into accumulations. `check_rule` compares, for a
random output adjoint ``dy`` and a random direction ``v`` per argument, the rule's
``<d[x], v>`` with ``<dy, (f(x + h v) - f(x - h v)) / 2h>`` (a fourth-order stencil).
"""
from __future__ import annotations

import ast
import copy
import math
import types
from dataclasses import dataclass, field

import numpy as np

from s2sgrad import runtime
from s2sgrad.rules import rule_for
from s2sgrad.runtime import records

STEP = 1e-4
RTOL = 1e-6
ATOL = 1e-9


# --- executing a template ------------------------------------------------------

def adjoint_name(node) -> str | None:
    """`v` if `node` is ``d[v]``, else None."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "d":
        assert isinstance(node.slice, ast.Name), ast.unparse(node)
        return node.slice.id
    return None


class _Rewrite(ast.NodeTransformer):
    """``d[v]`` (read) becomes ``__adjoint__['v']``; ``d[x] = e`` becomes ``__accumulate__('x', e)``."""

    def visit_Assign(self, node):
        self.generic_visit(node)
        name = adjoint_name(node.targets[0]) if len(node.targets) == 1 else None
        if name is None:
            return node
        call = ast.Call(ast.Name("__accumulate__", ast.Load()), [ast.Constant(name), node.value], [])
        return ast.copy_location(ast.Expr(call), node)

    def visit_Subscript(self, node):
        self.generic_visit(node)
        name = adjoint_name(node)
        if name is None or not isinstance(node.ctx, ast.Load):
            return node
        return ast.copy_location(ast.Subscript(ast.Name("__adjoint__", ast.Load()), ast.Constant(name), ast.Load()),
                                 node)


def live_statements(body: list[ast.stmt], wanted: set[str]) -> list[ast.stmt]:
    """The statements the adjoints of `wanted` need: their ``d[x] = ...`` and the temporaries those read."""
    kept, needed = [], set()
    for stmt in reversed(body):
        keep = True
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            name = adjoint_name(target)
            if name is not None:
                keep = name in wanted
            elif isinstance(target, ast.Name):
                keep = target.id in needed
        if keep:
            kept.append(stmt)
            needed |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
    return kept[::-1]


def _densify(g):
    if isinstance(g, (list, tuple)):
        return [None if v is None else _densify(v) for v in g]
    if isinstance(g, dict):
        return {k: _densify(v) for k, v in g.items() if v is not None}
    return runtime.densify(g)


def parts(x):
    """A dict's items or a record's fields, as a dict (a record's direction and adjoint are dicts of fields)."""
    return x if isinstance(x, dict) else records.fields(x)


def is_structure(x) -> bool:
    """A dict or a record: a value whose adjoint is a dict (a missing key or field is a zero)."""
    return isinstance(x, dict) or records.is_record(x)


def rule_vjp(primitive, args, kwargs, dy, wanted, rule=None):
    """The primal result and the adjoints that the rule of `primitive` (or `rule`) gives the parameters named
    in `wanted`."""
    rule = rule or rule_for(primitive)
    assert rule is not None, f"no rule for {primitive!r}"
    bound = rule.signature.bind(*args, **kwargs)
    bound.apply_defaults()
    y = primitive(*args, **kwargs)
    grads = {}

    def accumulate(name, g):
        grads[name] = g if name not in grads else runtime.add_grads(grads[name], g)

    namespace = {"np": np, "math": math, **{n: getattr(runtime, n) for n in runtime.__all__}}
    namespace.update(bound.arguments)
    namespace.update({rule.output: y, "__adjoint__": {rule.output: dy}, "__accumulate__": accumulate})
    body = [_Rewrite().visit(copy.deepcopy(s)) for s in live_statements(rule.body, set(wanted))]
    module = ast.fix_missing_locations(ast.Module(body, []))
    exec(compile(module, f"<rule {rule.template.__module__}.{rule.template.__name__}>", "exec"), namespace)
    return y, {name: _densify(g) for name, g in grads.items()}


# --- finite differences --------------------------------------------------------

def random_like(rng, x):
    """A random value with the structure of `x`: a float for a float, an array for an array, lists for lists."""
    if isinstance(x, (list, tuple)):
        return [random_like(rng, v) for v in x]
    if is_structure(x):
        return {k: random_like(rng, v) if records.is_differentiable(v) else None for k, v in parts(x).items()}
    if np.iscomplexobj(x):
        return rng.standard_normal(np.shape(x)) + 1j * rng.standard_normal(np.shape(x))
    if isinstance(x, (float, int)) or np.ndim(x) == 0:
        return float(rng.standard_normal())
    return rng.standard_normal(np.shape(x))


def axpy(x, t, v):
    """``x + t v`` with the structure (and for floats the type) of `x`."""
    if isinstance(x, (list, tuple)):
        return type(x)(axpy(a, t, b) for a, b in zip(x, v))
    if isinstance(x, dict):
        return {k: a if v.get(k) is None else axpy(a, t, v[k]) for k, a in x.items()}
    if is_structure(x):
        out = x
        for k, a in parts(x).items():
            out = out if v.get(k) is None else runtime.with_field(out, k, axpy(a, t, v[k]))
        return out
    if isinstance(x, float):
        return x + t * v
    return np.asarray(x) + t * v


def inner(a, b) -> float:
    """The dot product of two values of the same structure; None is zero. With complex values, ``Re(sum(a * b))``:
    the change of ``L`` along `b` when `a` is the adjoint of a complex value, ``dL/dRe(z) - 1j * dL/dIm(z)``."""
    if a is None or b is None:
        return 0.0
    if isinstance(a, (list, tuple)):
        return sum(inner(u, v) for u, v in zip(a, b))
    if isinstance(a, dict) or is_structure(b):
        b = parts(b)
        return sum(inner(v, b[k]) for k, v in parts(a).items())
    return float(np.real(np.sum(_numbers(a) * _numbers(b))))


def _numbers(x):
    return np.asarray(x) if np.iscomplexobj(x) else np.asarray(x, dtype=float)


def difference(y1, y0, scale):
    if isinstance(y1, (list, tuple)):
        return [difference(a, b, scale) for a, b in zip(y1, y0)]
    if is_structure(y1):
        y0 = parts(y0)
        return {k: difference(v, y0[k], scale) if records.is_differentiable(v) else None
                for k, v in parts(y1).items()}
    if y1 is None or isinstance(y1, str):
        return None
    return (_numbers(y1) - _numbers(y0)) * scale


def same_structure(g, x) -> bool:
    if g is None:
        return True
    if isinstance(x, (list, tuple)):
        return isinstance(g, (list, tuple)) and len(g) == len(x) and all(map(same_structure, g, x))
    if is_structure(x):
        x = parts(x)
        return isinstance(g, dict) and g.keys() <= x.keys() and all(same_structure(v, x[k]) for k, v in g.items())
    return np.shape(g) == np.shape(x)


@dataclass
class Case:
    """One rule check: ``primitive(*args, **kwargs)``, differentiated with respect to `wrt` (positions or keywords).

    An argument that is a Python function (a lambda) is a maker: called with a random generator it gives the value.
    """

    primitive: object
    args: tuple
    kwargs: dict = field(default_factory=dict)
    wrt: tuple = (0,)
    name: str = ""

    def values(self, rng):
        make = lambda v: v(rng) if isinstance(v, types.FunctionType) else v  # noqa: E731
        return [make(a) for a in self.args], {k: make(v) for k, v in self.kwargs.items()}


def _where_bound(signature, nargs, kwargs, wrt):
    """(parameter name, index in a *args tuple or None) for a position or keyword of the call."""
    if isinstance(wrt, str):
        return wrt, None
    markers = [object() for _ in range(nargs)]
    bound = signature.bind(*markers, **kwargs)
    for name, value in bound.arguments.items():
        if value is markers[wrt]:
            return name, None
        if isinstance(value, tuple) and any(v is markers[wrt] for v in value):
            return name, [v is markers[wrt] for v in value].index(True)
    raise AssertionError(f"argument {wrt} not bound")


def check_rule(case: Case, seed: int, rule=None) -> None:
    """Assert that the rule of `case.primitive` agrees with central finite differences (see module docstring)."""
    rng = np.random.default_rng(seed)
    args, kwargs = case.values(rng)
    before = copy.deepcopy((args, kwargs))
    rule = rule or rule_for(case.primitive)
    places = [_where_bound(rule.signature, len(args), kwargs, w) for w in case.wrt]
    f = lambda a, k: case.primitive(*a, **k)  # noqa: E731
    y0 = f(args, kwargs)
    dy = random_like(rng, y0)
    y, grads = rule_vjp(case.primitive, args, kwargs, dy, {name for name, _ in places}, rule)
    for (name, index), w in zip(places, case.wrt):
        g = grads.get(name)
        if index is not None:
            g = None if g is None else g[index]
        x = kwargs[w] if isinstance(w, str) else args[w]
        assert same_structure(g, x), f"d[{name}] has shape {np.shape(g)}, the argument {np.shape(x)}"
        v = random_like(rng, x)

        def at(t):
            a, k = list(args), dict(kwargs)
            if isinstance(w, str):
                k[w] = axpy(x, t, v)
            else:
                a[w] = axpy(x, t, v)
            return f(a, k)

        h = STEP
        stencil = [(at(2 * h), -1.0), (at(h), 8.0), (at(-h), -8.0), (at(-2 * h), 1.0)]
        numeric = sum(c * inner(dy, difference(yt, y0, 1.0)) for yt, c in stencil) / (12 * h)
        analytic = inner(g, v)
        assert abs(analytic - numeric) <= RTOL * max(abs(analytic), abs(numeric)) + ATOL, \
            f"d[{name}]: rule gives <d[x], v> = {analytic!r}, finite differences {numeric!r}"
    after = (args, kwargs)
    assert _equal(before, after), "the rule modified an argument in place"


def _equal(a, b) -> bool:
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if is_structure(a):
        return type(a) is type(b) and _equal(parts(a), parts(b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b, equal_nan=np.asarray(a).dtype.kind == "f")
    return a == b or a is b
