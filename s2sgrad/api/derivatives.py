"""Derivatives of derivatives: every transform of a derivative s2sgrad made.

Every derivative object s2sgrad hands out (``grad(f)``, ``vjp(f)``, ``jvp(f)``, ``hvp(f)``, and what the
transforms here make of them) carries a `Spec`: its parameters and what its output is, as a structure of
`Term`s. A term is one mixed partial derivative of the user's function, contracted with tangents: forward
mode along each of `forwards` over reverse mode (`free`, seeded with `seed`) of `f`. Mixed partials commute,
so a transform of a derivative is again such a term: `jvp` adds a forward direction; `grad` (of a scalar
term) turns the term's reverse direction into a forward one along 1.0 and reverses in the new `wrt`
instead; `vjp` contracts the reverse direction with the cotangent. Only forward mode ever runs over
generated code, which is why any nesting works.

    >>> import s2sgrad as sg
    >>> d3 = sg.grad(sg.grad(sg.grad(lambda x: x ** 4)))
    >>> float(d3(2.0))
    48.0
"""
from __future__ import annotations

import ast
import functools
import inspect
import weakref
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import guards
from ..analysis.activity import INT, SCALAR, TENSOR
from ..analysis.dtypes import dtype_of
from ..analysis.randomness import generators
from ..errors import NoDerivativeRule, NonScalarOutput, S2SGradError, WrtError, derivative_call_refusal
from ..frontend.lower import lower_function
from ..frontend.objects import is_dict_kind
from ..frontend.relower import is_generated
from ..ir.names import identifier
from ..pipeline.kinds import kind_of, structure_fields
from ..rules.registry import Rule
from ..runtime import random_state, rebuilt
from ..runtime.records import fields, is_differentiable, is_record, record_complete
from ..transforms.forward import tangent_hint
from .derivative_objects import Derivative, joined
from .generation import (
    DIFFERENTIATED,
    call_values,
    check_differentiable,
    dot_hint,
    extra_name,
    flatten,
    forward_generated,
    generated,
    parameter_names,
    refuse_complex,
)


def _shaped(value, items: list):
    """`items` (one per array or number in `value`, in `flatten`'s order) in the structure of `value`:
    the Hessian of a dict argument is a dict of dicts of blocks."""
    items = list(items)

    def build(v):
        if is_record(v):
            return record_complete({k: build(u) for k, u in fields(v).items() if is_differentiable(u)}, v,
                                   lambda g, x: g)
        if isinstance(v, (list, tuple)):
            return rebuilt(v, [build(u) for u in v])
        if isinstance(v, dict):
            return {k: build(v[k]) for k in v}
        return items.pop(0)
    return build(value)


ONE = ("one",)                     # the direction 1.0 (a scalar argument's unit tangent, a scalar output's seed)


def arg_direction(k: int, path: tuple = ()) -> tuple:
    """The direction given by argument k of the derivative's call (element `path` of it, if a tuple)."""
    return ("arg", k, path)


@dataclass(frozen=True)
class Term:
    """``∂/∂forwards[-1] … ∂/∂forwards[0] ∂/∂free ⟨seed, f⟩``. `free`: the names reverse mode differentiates
    (None: no reverse mode, the term has f's output's shape); `forwards`: ``(names, many, direction)``."""

    free: tuple | None = None
    many: bool = False
    seed: tuple | None = None
    forwards: tuple = ()

    def along(self, names: tuple, many: bool, direction: tuple) -> "Term":
        return Term(self.free, self.many, self.seed, self.forwards + ((names, many, direction),))


@dataclass(frozen=True)
class Spec:
    """What a derivative object computes: `output` is a Term, ``("tuple", items)`` or ``("sum", items)``
    (None: assembled in Python, not differentiable again). `params` are f's parameters, then the extra
    ones (tangents, cotangents), which the call passes last and positionally."""

    f: Callable
    params: tuple
    output: object
    label: str
    checkpoint: object = None

    @property
    def extras(self) -> tuple:
        return self.params[len(parameter_names(self.f)):]

    # What the stages and the runtime ask of a derivative called inside code being differentiated; they
    # reach these through the derivative's attribute and import nothing of the public API.

    def adjoint_rule(self, fn, written: str | None, active: list, loc) -> Rule:
        """The reverse-mode rule of a call of `fn` (this derivative), see `derivative_rule`."""
        return derivative_rule(fn, written, active, loc)

    def tangent_rule(self, fn, written: str | None, active: list, loc) -> Rule:
        """The forward-mode rule of a call of `fn` (this derivative), see `derivative_tangent_rule`."""
        return derivative_tangent_rule(fn, written, active, loc)

    def transformed(self, kind: str, fn, wrt):
        """``kind(fn, wrt=wrt)`` of `fn` (this derivative), made once (see `transform_of`)."""
        return transform_of(kind, fn, wrt)


def spec_of(fn) -> Spec | None:
    """The `Spec` of a derivative object s2sgrad made, or None for any other function (also for a wrapper
    that copied a derivative's attributes, as ``functools.wraps`` does: its own code may change the result)."""
    return getattr(fn, "s2sgrad_derivative", None) if getattr(fn, "s2sgrad_owner", None) == id(fn) else None


def _terms(output):
    if isinstance(output, Term):
        yield output
    else:
        for item in output[1]:
            yield from _terms(item)


def _map_terms(output, change):
    if isinstance(output, Term):
        return change(output)
    return (output[0], tuple(_map_terms(item, change) for item in output[1]))


WHAT = {"grad": "gradient", "value_and_grad": "value and gradient", "vjp": "vector-Jacobian product",
        "jvp": "Jacobian-vector product", "hvp": "Hessian-vector product", "hessian": "Hessian"}


def attach(call, f, params, output, label: str, checkpoint=None, *, kind: str, of: str, names,
           generate: Callable, seen: Callable[[], dict]) -> Derivative:
    """The `Derivative` computed by `call`: `kind` (a key of `WHAT`) of `of` (f's name, or a derivative's
    label) with respect to `names`, made by s2sgrad from `f` (its `Spec`), with its own signature; it does
    not unwrap to `f`, so nothing mistakes it for `f`. `generate` and `seen`: see `Derivative`."""
    derivative = Derivative(call, identifier(f"{kind}_{of}"), f"{WHAT[kind]} of {of} w.r.t. {', '.join(names)}",
                            f"The {WHAT[kind]} of {of} with respect to {', '.join(names)} ({label}), made by s2sgrad.",
                            getattr(f, "__module__", None), generate, seen)
    derivative.s2sgrad_derivative = Spec(f, tuple(params), output, label, checkpoint)
    derivative.s2sgrad_owner = id(derivative)
    base = inspect.signature(f).parameters.values()
    extras = [inspect.Parameter(p, inspect.Parameter.POSITIONAL_ONLY) for p in params[len(base):]]
    if extras:
        base = [p.replace(default=inspect.Parameter.empty, kind=inspect.Parameter.POSITIONAL_ONLY) for p in base]
    derivative.__signature__ = inspect.Signature([*base, *extras])
    return derivative


def _role(spec: Spec, name: str) -> str:
    return f"the extra argument '{name}' of {spec.label} (a tangent or cotangent, which it is linear in)"


def _names(spec: Spec, wrt, transform: str) -> tuple[tuple, bool]:
    """The parameters of f that `wrt` designates in the derivative's signature."""
    many = isinstance(wrt, (tuple, list))
    names = []
    for item in (wrt if many else [wrt]):
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise WrtError(f"wrt must be an argument index or name, not {item!r}")
        if isinstance(item, int):
            if not -len(spec.params) <= item < len(spec.params):
                raise WrtError(f"wrt={item} is out of range: {spec.label} has {len(spec.params)} argument(s) "
                               f"({', '.join(spec.params)})")
            item = spec.params[item]
        elif item not in spec.params:
            raise WrtError(f"wrt={item!r} names no argument of {spec.label} (its arguments: "
                           f"{', '.join(spec.params)})")
        if item in spec.extras:
            raise WrtError(f"{transform} with respect to {_role(spec, item)} is not supported",
                           hint="differentiate with respect to an argument of the original function; the "
                                "derivative along a tangent w is the derivative called with w in its place")
        names.append(item)
    if len(set(names)) != len(names):
        raise WrtError(f"wrt names an argument twice: {wrt!r}")
    return tuple(names), many


def _scalar_output(spec: Spec, transform: str, alternative: str):
    """The term(s) of a derivative whose output must be a scalar (the output of a function `transform` takes)."""
    if isinstance(spec.output, Term) or spec.output[0] == "sum":
        terms = list(_terms(spec.output))
        if not any(t.many for t in terms):
            return spec.output
    raise NonScalarOutput(f"{transform} needs a function with a scalar output, but {spec.label} returns a tuple",
                          hint=alternative)


def _to_grad(term: Term, names: tuple, many: bool) -> Term:
    """The gradient, with respect to `names`, of a scalar term."""
    if term.free is None:
        return Term(names, many, ONE, term.forwards)
    return Term(names, many, term.seed, term.forwards + ((term.free, False, ONE),))


def _to_vjp(term: Term, names: tuple, many: bool, direction: tuple) -> Term:
    """The cotangent `direction` times the term's Jacobian with respect to `names`."""
    if term.free is None:
        return Term(names, many, direction, term.forwards)
    return Term(names, many, term.seed, term.forwards + ((term.free, term.many, direction),))


def _vjp_output(output, names, many, k, path=()):
    if isinstance(output, Term):
        return _to_vjp(output, names, many, arg_direction(k, path))
    if output[0] == "tuple":
        return ("sum", tuple(_vjp_output(item, names, many, k, path + (i,)) for i, item in enumerate(output[1])))
    return ("sum", tuple(_vjp_output(item, names, many, k, path) for item in output[1]))

_ALTERNATIVES = {
    "grad": "for a vector of derivatives use sg.jvp(sg.grad(f)) (forward over reverse), sg.vjp(sg.grad(f)), "
            "sg.hvp(f) or sg.hessian(f)",
    "hvp": "use sg.jvp(sg.grad(f)) for a Hessian-vector product of f",
}


def transform(kind: str, fn, wrt=0):
    """`kind` ("grad", "value_and_grad", "vjp", "jvp", "hvp" or "hessian") of the derivative object `fn`."""
    spec = spec_of(fn)
    if spec.output is None:
        raise S2SGradError(f"{spec.label} is assembled in Python from Hessian-vector products, so s2sgrad cannot "
                           f"differentiate it again", hint="differentiate sg.hvp(f) instead, e.g. "
                                                           "sg.jvp(sg.hvp(f)) or sg.hessian(sg.grad(f, wrt=...))")
    names, many = _names(spec, wrt, kind)
    wrt_label = wrt if isinstance(wrt, (int, str)) else tuple(wrt)
    label = f"{kind}({spec.label}{'' if wrt_label == 0 else f', wrt={wrt_label!r}'})"
    params, out = spec.params, spec.output
    if kind == "hessian":
        return _hessian(spec, names, many, label)
    if kind in ("grad", "value_and_grad", "hvp"):
        scalar = _scalar_output(spec, kind, _ALTERNATIVES.get(kind, _ALTERNATIVES["grad"]))
        gradient = _map_terms(scalar, lambda t: _to_grad(t, names, many))
        if kind == "grad":
            out = gradient
        elif kind == "value_and_grad":
            out = ("tuple", (spec.output, gradient))
        else:
            params = params + (extra_name(params, "v"),)
            out = _map_terms(gradient, lambda t: t.along(names, many, arg_direction(len(params) - 1)))
    elif kind == "vjp":
        params = params + (extra_name(params, "cotangent"),)
        out = ("tuple", (spec.output, _vjp_output(spec.output, names, many, len(params) - 1)))
    elif kind == "jvp":
        params = params + (extra_name(params, "tangent"),)
        direction = arg_direction(len(params) - 1)
        out = ("tuple", (spec.output, _map_terms(spec.output, lambda t: t.along(names, many, direction))))
    else:
        raise S2SGradError(f"unknown transform {kind!r}")
    new = Spec(spec.f, params, out, label, spec.checkpoint)
    seen: dict = {}

    def derivative(*args, **kwargs):
        return evaluate(new, _bound(new, args, kwargs), _recorder(seen))
    return attach(derivative, spec.f, params, out, label, spec.checkpoint, kind=kind, of=spec.label, names=names,
                  generate=lambda args, kwargs: _generate(new, _bound(new, args, kwargs), seen),
                  seen=lambda: seen)


def _recorder(seen: dict) -> Callable:
    """What `evaluate` calls with the argument values and each generated function it runs: kept in `seen`, per
    the values' kinds."""
    def record(values: list, fn) -> None:
        if is_generated(fn):
            fns = seen.setdefault(tuple(kind_of(v) for v in values), ())
            if fn not in fns:
                seen[tuple(kind_of(v) for v in values)] = fns + (fn,)
    return record


def _generate(spec: Spec, values: list, seen: dict) -> tuple:
    """The kinds of `values` and the generated functions a call of the derivative `spec` with them runs."""
    record = _recorder(seen)
    for term in dict.fromkeys(_terms(spec.output)):
        record(values, _plan(spec, term, values)[0])
    key = tuple(kind_of(v) for v in values)
    return key, seen.get(key, ())


def _bound(spec: Spec, args: tuple, kwargs: dict) -> list:
    """The call's values for every parameter of the derivative (f's defaults filled in)."""
    n_extra = len(spec.extras)
    if len(args) < n_extra:
        raise S2SGradError(f"{spec.label} takes {', '.join(spec.extras)} as its last argument(s)")
    base, extras = args[:len(args) - n_extra], args[len(args) - n_extra:]
    return call_values(spec.f, base, kwargs) + list(extras)


def _direction(values: list, direction: tuple):
    if direction == ONE:
        return 1.0
    if direction[1] >= len(values):            # `source`: a direction not given
        return None
    value = values[direction[1]]
    for i in direction[2]:
        value = value[i]
    return value


def _plan(spec: Spec, term: Term, values: list | None):
    """The generated function computing `term`, the values to call it with (None without `values`), and how
    many tangent parts to take of its output. A tangent is specialized like the argument it goes with; without
    `values` (`source` without example arguments) every argument is an array of unknown shape."""
    params = parameter_names(spec.f)
    x = values[:len(params)] if values is not None else None
    kind = {p: (kind_of(v) if x is not None else TENSOR) for p, v in zip(params, x or params)}
    if x is not None:
        for name in set(term.free or ()) | {n for names, _, _ in term.forwards for n in names}:
            check_differentiable(spec.f, name, x[params.index(name)])
    kinds = [kind[p] for p in params]
    call = list(x) if x is not None else None
    if term.free is None:
        fn = spec.f
    else:
        mode = "grad" if term.seed == ONE else "vjp"
        options = {"checkpoint": spec.checkpoint} if spec.checkpoint is not None else {}
        options["optimize"] = DIFFERENTIATED
        dtypes = tuple(map(dtype_of, x)) + ((None,) if mode == "vjp" else ()) if x is not None else None
        fn = generated(spec.f, list(term.free), mode, tuple(kinds) if x is not None else (), dtypes=dtypes, **options)
        seed = 1.0 if term.seed == ONE else (_direction(values, term.seed) if x is not None else None)
        kinds.append(SCALAR if term.seed == ONE else (kind_of(seed) if x is not None else TENSOR))
        if call is not None:
            call.append(seed)
    for names, many, direction in term.forwards:
        if direction == ONE and x is not None:
            for name in names:
                point = x[params.index(name)]
                if np.ndim(point) != 0:
                    raise NonScalarOutput(f"{spec.label} needs a scalar to differentiate, but the derivative "
                                          f"with respect to '{name}' inside it is an array of shape "
                                          f"{np.shape(point)}", hint=_ALTERNATIVES["grad"])
        fn = forward_generated(fn, list(names), tuple(kinds), False, tangent_hint if fn is spec.f else dot_hint)
        kinds += [SCALAR if direction == ONE else kind[n] for n in names]
        if call is not None:
            tangent = _direction(values, direction)
            call += [tangent] if not many else list(tangent) if tangent is not None else [None] * len(names)
    return fn, call, len(term.forwards), int(term.free is not None and term.seed != ONE)


def _term_value(spec: Spec, term: Term, values: list, record: Callable | None):
    fn, call, layers, extract = _plan(spec, term, values)
    if record is not None:
        record(values, fn)
    out = fn(*call)
    for _ in range(layers):
        out = out[1]
    if extract:
        out = out[1]
    if term.free is not None:
        refuse_complex(spec.f, list(term.free), out)
        if term.many and len(term.free) == 1:
            out = (out,)
    return out


def _term_value_or_zero(spec: Spec, term: Term, values: list, record: Callable | None):
    """The term's value, or None where one of its directions is a zero (None, as in a list of adjoints)."""
    directions = [d for _, _, d in term.forwards] + ([term.seed] if term.seed not in (None, ONE) else [])
    if any(d != ONE and _direction(values, d) is None for d in directions):
        return None
    return _term_value(spec, term, values, record)


def _add(a, b):
    if isinstance(a, tuple):
        return tuple(map(_add, a, b))
    return a + b

_GENERATORS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()     # f -> {argument kinds: generators}


def generators_of(f, values: list) -> tuple:
    """The random number generators `f` draws from (see `randomness`), lowered as for arguments `values`."""
    kinds = tuple(kind_of(v) for v in values[:len(parameter_names(f))])
    known = _GENERATORS.setdefault(f, {})
    if kinds not in known:
        params = parameter_names(f)
        scalars = [p for p, k in zip(params, kinds) if k in (SCALAR, INT)]
        vectors = [p for p, k in zip(params, kinds) if isinstance(k, tuple) and len(k) == 1]
        what = f"'{f.__name__}', which a higher derivative runs once for each derivative it combines"
        by_param = dict(zip(params, kinds))
        lowered = lower_function(f, scalars, vectors, [p for p, k in by_param.items() if is_dict_kind(k)],
                                 structure_fields(by_param))[0]
        known[kinds] = tuple(g.value for g in generators(lowered.body, what, objects=lowered.objects))
    return known[kinds]


def evaluate(spec: Spec, values: list, record: Callable | None = None):
    """The output of the derivative `spec` at `values` (one call of generated code per distinct term, each
    passed to `record` with `values` first). Every term draws the random numbers one call of f draws: each
    starts from the generators' states at the call."""
    memo: dict = {}
    distinct = len(set(_terms(spec.output))) > 1
    generators = generators_of(spec.f, values) if distinct else ()
    start = random_state(*generators) if generators else None

    def value_of(output):
        if isinstance(output, Term):
            if output not in memo:
                if start is not None:
                    start.restore()
                memo[output] = _term_value_or_zero(spec, output, values, record)
            return memo[output]
        items = [value_of(item) for item in output[1]]
        if output[0] == "tuple":
            return tuple(items)
        items = [item for item in items if item is not None]
        return functools.reduce(_add, items) if items else None
    return value_of(spec.output)


def _hessian(spec: Spec, names: tuple, many: bool, label: str):
    """Block (i, j) of the Hessian, column by column from Hessian-vector products of the derivative."""
    scalar = _scalar_output(spec, "hessian", _ALTERNATIVES["hvp"])
    gradient = _map_terms(scalar, lambda t: _to_grad(t, names, True))
    params = spec.params + (extra_name(spec.params, "v"),)
    product = Spec(spec.f, params, _map_terms(gradient, lambda t: t.along(names, True, arg_direction(len(params) - 1))),
                   label, spec.checkpoint)
    positions = [spec.params.index(n) for n in names]
    seen: dict = {}

    def second(*args, **kwargs):
        values = _bound(spec, args, kwargs)
        points = [values[k] for k in positions]
        return assemble_hessian(points, many, lambda direction: evaluate(product, values + [direction],
                                                                         _recorder(seen)),
                                generators_of(spec.f, values))

    def generate(args, kwargs):
        values = _bound(spec, args, kwargs)
        return _generate(product, values + [tuple(values[k] for k in positions)], seen)
    return attach(second, spec.f, spec.params, None, label, spec.checkpoint, kind="hessian", of=spec.label,
                  names=names, generate=generate, seen=lambda: seen)


def assemble_hessian(points: list, many: bool, product, generators: tuple):
    """The Hessian blocks from `product(directions) -> H @ directions` (a tuple per argument); each product
    draws the random numbers one call of the function draws (from the `generators`' states at the start).
    A list, tuple or dict argument gives blocks in its structure (see `hessian`)."""
    start = random_state(*generators) if generators else None
    leaves = [flatten(x)[0] for x in points]              # per argument, its arrays (or numbers)
    zeros = [[np.zeros(np.shape(leaf)) for leaf in arg] for arg in leaves]
    columns: dict = {}                                     # (i, a, j, b): columns of block (i, a), (j, b)
    for j, arg in enumerate(leaves):
        for b, leaf in enumerate(arg):
            for k in range(np.size(leaf)):
                unit = np.zeros(np.size(leaf))
                unit[k] = 1.0
                direction = [_shaped(x, zeros[i]) for i, x in enumerate(points)]
                direction[j] = _shaped(points[j], [*zeros[j][:b], unit.reshape(np.shape(leaf)), *zeros[j][b + 1:]])
                if start is not None:
                    start.restore()
                for i, hv in enumerate(product(tuple(direction))):
                    for a, part in enumerate(flatten(hv)[0]):
                        columns.setdefault((i, a, j, b), []).append(np.ravel(part))

    def block(i, a, j, b):
        out = np.stack(columns[i, a, j, b], axis=-1).reshape(np.shape(leaves[i][a]) + np.shape(leaves[j][b]))
        return float(out) if np.ndim(out) == 0 else out

    blocks = [[_shaped(points[i], [_shaped(points[j], [block(i, a, j, b) for b in range(len(leaves[j]))])
                                   for a in range(len(leaves[i]))])
               for j in range(len(points))] for i in range(len(points))]
    return tuple(tuple(row) for row in blocks) if many else blocks[0][0]


def derivative_source(fn, wrt=0, mode: str = "grad", args=None) -> str:
    """The generated modules that ``mode(fn, wrt)`` of the derivative object `fn` runs, one per term (the
    gradients it differentiates are in the modules they came from: `source` of the user's function shows them)."""
    kind = {"forward": "jvp"}.get(mode, mode)
    if kind not in ("grad", "value_and_grad", "vjp", "jvp", "hvp"):
        raise S2SGradError(f"unknown mode {mode!r} for a derivative made by s2sgrad",
                           hint="one of 'grad', 'value_and_grad', 'vjp', 'forward', 'hvp'")
    spec = spec_of(transform(kind, fn, wrt))
    values = _bound(spec_of(fn), tuple(args), {}) if args is not None else None
    texts = []
    for term in dict.fromkeys(_terms(spec.output)):
        text = getattr(_plan(spec, term, values)[0], "source", None)
        if text is not None and text not in texts:
            texts.append(text)
    return joined(texts)

_MADE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()     # derivative -> {(kind, wrt): transform}


def transform_of(kind: str, derivative, wrt):
    """``kind(derivative, wrt=wrt)`` (a vjp or jvp of a derivative called in generated code), made once."""
    made = _MADE.setdefault(derivative, {})
    if (kind, wrt) not in made:
        made[kind, wrt] = transform(kind, derivative, wrt)
    return made[kind, wrt]


def derivative_rule(fn, written: str | None, active: list, loc) -> Rule:
    """The reverse-mode rule of a call of the derivative object `fn` (written `written`) inside a function
    being differentiated, say a gradient penalty ``np.sum(dg(x) ** 2)``: each active argument's gradient is
    the vjp of the derivative (``derivative_vjp(dg, "x", dout, x)``: by symmetry, forward over the generated
    gradient). Refused where a tangent or cotangent the derivative takes is active."""
    spec = _called_derivative(fn, written, active, loc, "reverse mode")
    output = extra_name(spec.params, "out")
    adjoint = ast.Subscript(ast.Name("d", ast.Load()), ast.Name(output, ast.Load()), ast.Load())
    arguments = [ast.Name(p, ast.Load()) for p in spec.params]
    body = [ast.Assign([ast.Subscript(ast.Name("d", ast.Load()), ast.Name(p, ast.Load()), ast.Store())],
                       ast.Call(ast.Name("derivative_vjp", ast.Load()),
                                [ast.parse(written, mode="eval").body, ast.Constant(p), adjoint, *arguments], []))
            for p in spec.params[:len(spec.params) - len(spec.extras)]]
    for statement in body:
        ast.fix_missing_locations(statement)
    return Rule(fn, None, output, inspect.signature(fn), body)


def _called_derivative(fn, written, active: list, loc, how: str) -> Spec:
    """The `Spec` of a derivative called in differentiated code, refusing what cannot be differentiated."""
    spec = spec_of(fn)
    if spec is None or spec.output is None or written is None:
        message, hint = derivative_call_refusal(fn, written or getattr(fn, "__name__", "?"), how)
        raise NoDerivativeRule(message, loc, hint)
    for param, is_active in zip(spec.params, active):
        if is_active and param in spec.extras:
            raise NoDerivativeRule(f"'{written}' is {spec.label}, and {_role(spec, param)} is differentiated here",
                                   loc, "pass it through sg.stop_gradient(...), or differentiate only "
                                        "arguments of the original function")
    return spec


def derivative_tangent_rule(fn, written: str | None, active: list, loc) -> Rule:
    """The forward-mode rule of a call of the derivative object `fn` inside a function being differentiated:
    ``d[out] = derivative_jvp(dg, ("x",), (d[x],), x)``, for the arguments that have a tangent."""
    spec = _called_derivative(fn, written, active, loc, "forward mode")
    output = extra_name(spec.params, "out")
    names = [p for p, is_active in zip(spec.params, active) if is_active]

    def tangent(p):
        return ast.Subscript(ast.Name("d", ast.Load()), ast.Name(p, ast.Load()), ast.Load())
    call = ast.Call(ast.Name("derivative_jvp", ast.Load()),
                    [ast.parse(written, mode="eval").body, ast.Tuple([ast.Constant(p) for p in names], ast.Load()),
                     ast.Tuple([tangent(p) for p in names], ast.Load()),
                     *[ast.Name(p, ast.Load()) for p in spec.params]], [])
    body = [ast.fix_missing_locations(ast.Assign([tangent(output)], call))]
    body[0].targets[0].ctx = ast.Store()
    return Rule(fn, None, output, inspect.signature(fn), body)

_FORWARD_CACHE = guards.Cache()          # generated code per function, valid while its guard holds (see guards)
