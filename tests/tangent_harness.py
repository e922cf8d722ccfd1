"""Run tangent (forward-mode) rules at one call site, without the rest of the pipeline, and check them
against finite differences.

`rule_jvp` inlines a rule the way forward mode does (`s2sgrad.transforms.tangent_templates.expand_tangent`, zeros
simplified away for the arguments that have no tangent), compiles the statements and the value it gives,
and runs them on the call's values. `check_tangent` compares that with central finite differences of the
primitive along the same directions (a fourth-order stencil), for the tangents of all `wrt` arguments
together and for each alone.
"""
from __future__ import annotations

import ast
import copy
import math

import numpy as np
from rule_harness import axpy, is_structure, parts, random_like

from s2sgrad import runtime
from s2sgrad.ir.names import Names
from s2sgrad.ir.nodes import Const, Op, Var
from s2sgrad.rules import tangent_rule_for
from s2sgrad.runtime import records
from s2sgrad.transforms.tangent_templates import expand_tangent

STEP = 1e-4
RTOL = 1e-6
ATOL = 1e-8


def _is_value(v) -> bool:
    """Arguments passed as names (arrays, numbers, lists, functions); the rest (axes, strings, None) as constants."""
    if isinstance(v, (list, tuple)):
        return any(_is_value(x) for x in v) and not all(isinstance(x, (int, np.integer)) for x in v)
    if is_structure(v):
        return True
    return isinstance(v, (np.ndarray, float, complex, type)) and not isinstance(v, bool) or callable(v)  # (a dtype too)


def _as_tuples(value):
    """Lists of constants written as tuples (the lowered form has no list constants)."""
    return tuple(map(_as_tuples, value)) if isinstance(value, (list, tuple)) else value


def call_site(primitive, args, kwargs):
    """The `Op` of a call, the namespace binding its argument names, and the name of each argument passed by name."""
    namespace, atoms, kwatoms, names = {}, [], {}, {}
    for key, value in [*enumerate(args), *kwargs.items()]:
        if _is_value(value):
            names[key] = f"arg{key}" if isinstance(key, int) else key
            namespace[names[key]] = value
            atom = Var(names[key])
        else:
            atom = Const(_as_tuples(value))
        if isinstance(key, int):
            atoms.append(atom)
        else:
            kwatoms[key] = atom
    return Op(primitive, atoms, kwatoms), namespace, names


def rule_jvp(primitive, args, kwargs, tangents: dict):
    """The tangent the rule of `primitive` gives for `tangents` of some arguments (by position or keyword),
    and the rule's expansion (statements and value)."""
    op, namespace, names = call_site(primitive, args, kwargs)
    tangent_names = {names[key]: "d" + names[key] for key in tangents}
    rule = tangent_rule_for(primitive)
    assert rule is not None, f"no tangent rule for {primitive!r}"
    expansion = expand_tangent(rule, op, "y", lambda atom: ast.Name(tangent_names[atom.name], ast.Load())
                               if atom.name in tangent_names else None, Names(set(namespace)))
    if expansion.value is None:
        return None, expansion
    namespace.update({"np": np, "math": math, **{n: getattr(runtime, n) for n in runtime.__all__}})
    namespace["y"] = primitive(*copy.deepcopy(args), **copy.deepcopy(kwargs))
    namespace.update({tangent_names[names[key]]: copy.deepcopy(value) for key, value in tangents.items()})
    module = ast.Module([*expansion.statements, ast.Assign([ast.Name("tangent", ast.Store())], expansion.value)], [])
    exec(compile(ast.fix_missing_locations(module), f"<tangent of {primitive!r}>", "exec"), namespace)
    return namespace["tangent"], expansion


def flat(value) -> list:
    """The arrays in a value (tuples, lists, sparse and lazily indexed gradients included), as float arrays."""
    if value is None:
        return []
    if isinstance(value, runtime.SparseGrad):
        return [value.dense()]
    if isinstance(value, str):                         # (a dict's key: a constant, its tangent a zero)
        return [np.zeros(())]
    if is_structure(value):                            # (a record's static fields have no tangent)
        return [a for v in parts(value).values() if records.is_differentiable(v) for a in flat(v)]
    if isinstance(value, (list, tuple)) or hasattr(value, "__getitem__") and hasattr(value, "__len__") \
            and not isinstance(value, np.ndarray):
        return [a for i in range(len(value)) for a in flat(value[i])]
    return [np.asarray(value) if np.iscomplexobj(value) else np.asarray(value, dtype=float)]


def finite_difference(primitive, args, kwargs, directions: dict):
    def at(t):
        a, k = copy.deepcopy(list(args)), copy.deepcopy(dict(kwargs))
        for key, v in directions.items():
            if isinstance(key, str):
                k[key] = axpy(k[key], t, v)
            else:
                a[key] = axpy(a[key], t, v)
        return flat(primitive(*a, **k))
    h = STEP
    points = [(at(2 * h), -1.0), (at(h), 8.0), (at(-h), -8.0), (at(-2 * h), 1.0)]
    return [sum(c * p[i] for p, c in points) / (12 * h) for i in range(len(points[0][0]))]


def check_tangent(primitive, args, kwargs, wrt, seed: int) -> None:
    """Assert that the tangent rule agrees with finite differences, for all of `wrt` together and each alone."""
    rng = np.random.default_rng(seed)
    directions = {w: random_like(rng, kwargs[w] if isinstance(w, str) else args[w]) for w in wrt}
    before = copy.deepcopy((args, kwargs))
    patterns = [tuple(wrt)] + ([(w,) for w in wrt] if len(wrt) > 1 else [])
    for pattern in patterns:
        given = {w: directions[w] for w in pattern}
        tangent, _ = rule_jvp(primitive, args, kwargs, given)
        numeric = finite_difference(primitive, args, kwargs, given)
        analytic = flat(tangent)
        if not analytic:                               # the rule says zero
            analytic = [np.zeros_like(n) for n in numeric]
        assert len(analytic) == len(numeric), f"tangent has {len(analytic)} parts, the result {len(numeric)}"
        for a, n in zip(analytic, numeric):
            assert np.shape(a) == np.shape(n), f"tangent of shape {np.shape(a)} for a result of shape {np.shape(n)}"
            assert np.allclose(a, n, rtol=RTOL, atol=ATOL + RTOL * float(np.max(np.abs(n), initial=0.0))), \
                f"tangents of {pattern}: rule gives {a!r}, finite differences {n!r}"
    assert _equal(before, (args, kwargs)), "the rule modified an argument in place"


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
