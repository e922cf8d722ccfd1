"""Stage 6: the public functions. Generated code is cached per function, `wrt`, mode and options.

    >>> import s2sgrad as sg
    >>> def f(x):
    ...     return np.sum(np.sin(x) * x)
    >>> df = sg.grad(f)
    >>> df(np.array([0.0, 1.0]))                             # doctest: +SKIP
    array([0.        , 1.38177329])
"""
from __future__ import annotations

import functools
import inspect
import re
from typing import Callable, Sequence, Union

import gast
import numpy as np

from . import guards
from .errors import (COMPLEX_HINT, Location, NonScalarOutput, S2SGradError, SourceNotFound, UnsupportedSyntax,
                     WrtError)
from .lower import lowered_source
from .dtypes import dtype_of
from .module import GradientModule, kind_of
from .optimizations import Optimize, resolve
from .parse import call_signature, parse_function, refuse_cached
from .runtime import SparseGrad, rebuilt
from .rules.registry import nondifferentiable
from .schedules import Schedule

Wrt = Union[int, str, Sequence[Union[int, str]]]

_CACHE = guards.Cache()
_CACHE_COUNT = [0]


def stop_gradient(x):
    """`x` itself, through which no gradient flows."""
    return x


nondifferentiable(stop_gradient)


def recompute(g: Callable) -> Callable:
    """Mark `g` so that, inside a differentiated function, a call of it stores only its inputs
    and `g` is run again in the backward sweep (cf. ``tf.recompute_grad``).

    Called outside differentiation it is `g` itself:

        >>> @recompute
        ... def block(h, W):
        ...     return np.tanh(W @ h)
    """
    if not inspect.isfunction(g):
        raise S2SGradError(f"recompute needs a Python function (defined with def), not {g!r}",
                           hint="wrap the call in a function of your own and mark that one")
    g.__s2sgrad_recompute__ = True
    return g


def checkpointed(value, schedule):
    """`value` itself; in a loop header it marks the loop for checkpointing with `schedule`.

        for t in sg.checkpointed(range(n), sg.Revolve(snapshots=10)):
            ...
        while sg.checkpointed(t < T, sg.Online(snapshots=10)):
            ...
    """
    return value


def _parameters(f) -> list[str]:
    refuse_cached(f)
    if not hasattr(f, "__code__"):
        raise SourceNotFound(f"{getattr(f, '__name__', f)!r} is not a Python function, so it has no source "
                             "to transform", hint="differentiate a Python function that calls it; give it a "
                                                  "derivative rule with s2sgrad.adjoint if it has none")
    return list(call_signature(f).parameters)


def def_location(f) -> Location | None:
    """Where `f` is defined (its ``def`` or ``lambda`` line), for errors about how it is called."""
    try:
        lines, start = inspect.getsourcelines(inspect.unwrap(f))
        filename = inspect.getsourcefile(inspect.unwrap(f)) or "<unknown>"
    except (OSError, TypeError):
        return None
    for k, line in enumerate(lines):
        match = re.search(r"\b(def|lambda)\b", line)
        if match and not line.lstrip().startswith("@"):
            return Location(filename, start + k, match.start(), line)
    return Location(filename, start, 0, lines[0] if lines else "")


def wrt_names(f, wrt: Wrt) -> tuple[list[str], bool]:
    """The parameter names `wrt` designates, and whether the gradient is a tuple."""
    params = _parameters(f)
    many = isinstance(wrt, (tuple, list))
    names = []
    for item in (wrt if many else [wrt]):
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise WrtError(f"wrt must be an argument index or name, not {item!r}", def_location(f))
        if isinstance(item, int):
            if not -len(params) <= item < len(params):
                raise WrtError(f"wrt={item} is out of range: {f.__name__} has {len(params)} argument(s) "
                               f"({', '.join(params)})", def_location(f))
            names.append(params[item])
        else:
            if item not in params:
                raise WrtError(f"wrt={item!r} names no argument of {f.__name__} (its arguments: "
                               f"{', '.join(params)})", def_location(f))
            names.append(item)
    if len(set(names)) != len(names):
        raise WrtError(f"wrt names an argument twice: {wrt!r}", def_location(f))
    return names, many


def _check_differentiable(f, name: str, value) -> None:
    if type(value) is float or isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return
    leaves = []

    def walk(v):
        if isinstance(v, (list, tuple)):
            for item in v:
                walk(item)
        elif isinstance(v, dict):
            for item in v.values():
                walk(item)
        else:
            leaves.append(v)
    walk(value)
    for leaf in leaves:
        dtype = np.asarray(leaf).dtype
        if dtype.kind == "c":
            raise WrtError(f"argument '{name}' of {f.__name__} is complex: s2sgrad differentiates real "
                           f"arithmetic only", def_location(f), hint=COMPLEX_HINT)
        if dtype.kind in "biu":
            raise WrtError(f"argument '{name}' of {f.__name__} is an integer ({type(leaf).__name__}, "
                           f"dtype {dtype}): it has no gradient", def_location(f),
                           hint=f"pass a float (for example {name}=float(...) or "
                                f"np.asarray(..., dtype=float)), or leave '{name}' out of wrt")
        if dtype.kind not in "fc":
            raise WrtError(f"argument '{name}' of {f.__name__} is not a number ({type(leaf).__name__})",
                           def_location(f), hint=f"leave '{name}' out of wrt")


def checked_options(options: dict) -> dict:
    """Every option, defaults filled in and ``optimize`` resolved to the set of optimizations it switches on
    (so that equal settings share generated code); an unknown option is an error."""
    unknown = set(options) - {"checkpoint", "optimize", "sparse"}
    if unknown:
        raise S2SGradError(f"unknown option(s): {', '.join(sorted(unknown))}",
                           hint="the options are checkpoint=, optimize= and sparse=")
    optimizations = resolve(options.get("optimize", True))
    if options.get("sparse") and "symbolic_zeros" not in optimizations:
        raise S2SGradError("sparse=True needs the optimization 'symbolic_zeros': a zero made first is dense",
                           hint="add 'symbolic_zeros' to optimize=, or leave out sparse=True")
    return {"checkpoint": options.get("checkpoint"), "optimize": optimizations, "sparse": options.get("sparse", False)}


def generated(f, wrt: list[str], mode: str, kinds: tuple = (), verbose: bool = False, dtypes: tuple | None = None,
              **options):
    """The compiled generated function (cached) for `f`, `wrt`, `mode` and argument kinds (and, if given,
    the dtype descriptors of the arguments and then of the seed: see `dtypes`)."""
    return _generated(f, wrt, mode, kinds, verbose, dtypes, checked_options(options))[1]


def _generated(f, wrt: list[str], mode: str, kinds: tuple, verbose: bool, dtypes: tuple | None, options: dict):
    """(guard, generated function) for `f`: cached while the guard holds (see `guards`)."""
    key = (tuple(wrt), mode, kinds, dtypes, tuple(sorted(options.items())))
    hit = _CACHE.get(f, key)
    if hit is not None:
        return hit
    with guards.recording() as reads:
        module = GradientModule(checkpoint=options["checkpoint"], optimizations=options["optimize"],
                                sparse=options["sparse"])
        params = _parameters(f)
        arg_kinds = dict(zip(params, kinds))
        arg_dtypes = dict(zip(params, dtypes)) if dtypes is not None else None
        seed_dtype = dtypes[len(params)] if dtypes is not None and len(dtypes) > len(params) else float
        node = module.gradient(f, wrt, mode, arg_kinds, arg_dtypes=arg_dtypes, seed_dtype=seed_dtype)
        _CACHE_COUNT[0] += 1
        filename = f"<s2sgrad {node.name} #{_CACHE_COUNT[0]}>"        # one name per generated module
        namespace = module.compile(filename)
    fn = namespace[node.name]
    fn.__defaults__ = _defaults(f) + fn.__defaults__ if fn.__defaults__ else _defaults(f)
    fn.source = module.source()
    guards.forget_lines_with(fn, filename)
    if verbose:
        print(fn.source)
    entry = guards.Guard(reads, namespace), fn
    _CACHE.put(f, key, entry)
    return entry


def _return_location(f):
    """Where `f` returns (its last return statement), for errors about its output."""
    parsed = parse_function(f)
    returns = [n for n in gast.walk(parsed.tree) if isinstance(n, gast.Return)]
    return parsed.location(returns[-1] if returns else parsed.tree)


def _defaults(f) -> tuple:
    """The user's own defaults (evaluated in their module), for the generated function."""
    return tuple(p.default for p in call_signature(f).parameters.values() if p.default is not p.empty)


def _call_values(f, args, kwargs) -> list:
    bound = call_signature(f).bind(*args, **kwargs)
    bound.apply_defaults()
    return list(bound.arguments.values())


class _Call:
    """How a derivative binds its arguments: `f`'s signature, and the positions of the `wrt` parameters; made again
    when `f`'s code or defaults change."""

    def __init__(self, f, wrt: Wrt):
        self.f, self.wrt = f, wrt
        self.state = guards.function_state(f)
        self.names, self.many = wrt_names(f, wrt)
        self.params = _parameters(f)
        self.positions = [self.params.index(name) for name in self.names]
        self.signature = call_signature(f)

    def current(self) -> "_Call":
        """This binding, or a new one if `f`'s code or defaults changed since it was made."""
        return self if guards.same(guards.function_state(self.f), self.state) else _Call(self.f, self.wrt)


CACHE_LIMIT = 32            # generated functions a derivative keeps (one per kinds and dtypes of its arguments)


def _make(f, wrt: Wrt, mode: str, verbose: bool, options: dict):
    options = checked_options(options)
    call = _Call(f, wrt)
    compiled: dict = {}                     # argument kinds and dtypes -> (guard, generated function)

    @functools.wraps(f)
    def derivative(*args, **kwargs):
        nonlocal call
        called = args
        names = call.names
        seed = ()
        if mode == "vjp":
            if not args:
                raise S2SGradError("vjp functions take the output's adjoint as their last argument")
            args, seed = args[:-1], args[-1:]
        if kwargs or len(args) != len(call.params):
            bound = call.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args = tuple(bound.arguments.values())
        for name, k in zip(names, call.positions):
            _check_differentiable(f, name, args[k])
        kinds = tuple(map(kind_of, args))
        dtypes = tuple(map(dtype_of, (*args, *seed)))
        entry = compiled.get((kinds, dtypes))
        if entry is None or not (entry[0].check() or entry[0].take_in()):
            fresh = call.current()
            if fresh is not call:              # f's code or defaults changed: bind the arguments again
                call = fresh
                return derivative(*called, **kwargs)
            entry = compiled[kinds, dtypes] = _generated(f, names, mode, kinds, verbose, dtypes, options)
            while len(compiled) > CACHE_LIMIT:
                del compiled[next(iter(compiled))]
        try:
            out = entry[1](*args, *seed)
        except NonScalarOutput as error:
            raise NonScalarOutput(error.message, _return_location(f), error.hint) from None
        refuse_complex(f, names, out if mode == "grad" else out[1])
        wrt_args = [args[k] for k in call.positions]
        if mode == "grad":
            out = in_argument_dtypes(out, wrt_args, len(names) > 1)
        else:
            out = (out[0], in_argument_dtypes(out[1], wrt_args, len(names) > 1))
        if call.many:
            if mode == "grad":
                return out if len(names) > 1 else (out,)
            value, grad = out
            return value, (grad if len(names) > 1 else (grad,))
        return out

    from .higher import ONE, Term, arg_direction, attach
    params, names, many = tuple(call.params), call.names, call.many
    if mode == "grad":
        output = Term(tuple(names), many, ONE)
    else:
        if mode == "vjp":
            params += (_extra_name(params, "dout"),)
        seed = ONE if mode == "value_and_grad" else arg_direction(len(params) - 1)
        output = ("tuple", (Term(), Term(tuple(names), many, seed)))
    return attach(derivative, f, params, output, f"{mode}({f.__name__})", options["checkpoint"])


def _extra_name(params, base: str) -> str:
    """`base`, or `base` with underscores after it, whichever names no parameter."""
    while base in params:
        base += "_"
    return base


def _derivative(f, kind: str, wrt, options: dict):
    """`kind` of `f` if `f` is a derivative s2sgrad made (forward mode over its generated code), else None."""
    from .higher import spec_of, transform
    if spec_of(f) is None:
        return None
    given = {k: v for k, v in options.items() if v not in (None, False, True)}
    if given:
        raise S2SGradError(f"the option(s) {', '.join(sorted(given))} cannot be given to {kind} of a derivative",
                           hint="give them to the call that made the inner derivative")
    return transform(kind, f, wrt)


def in_argument_dtypes(grads, wrt_args: list, many: bool):
    """Each gradient in its argument's floating dtype (a float32 argument gets a float32 gradient, computed
    in float64 where NumPy promoted it), leaf by leaf through lists, tuples and dicts.

        >>> in_argument_dtypes(np.ones(2), [np.zeros(2, dtype=np.float32)], False).dtype
        dtype('float32')
    """
    def cast(g, x):
        if isinstance(x, (list, tuple)) and isinstance(g, (list, tuple)):
            return rebuilt(g, [cast(a, b) for a, b in zip(g, x)])
        if isinstance(x, dict) and isinstance(g, dict):
            return {k: cast(g[k], x[k]) if k in x else g[k] for k in g}
        dtype = getattr(x, "dtype", None)
        if dtype is not None and dtype.kind == "f" and dtype != np.float64 and isinstance(g, (np.ndarray, np.generic)) \
                and g.dtype != dtype and g.dtype.kind == "f":
            return g.astype(dtype) if isinstance(g, np.ndarray) else dtype.type(g)
        return g
    if many:
        return type(grads)(cast(g, x) for g, x in zip(grads, wrt_args))
    return cast(grads, wrt_args[0])


def refuse_complex(f, names: list[str], derivatives) -> None:
    """A complex gradient or tangent of real arguments means a complex value on the differentiated path,
    where the rules' results would be wrong: refuse it. (With dtypes known, generation refuses it first,
    at its line.)"""
    pending = [derivatives]
    while pending:
        leaf = pending.pop()
        if isinstance(leaf, (tuple, list, dict)):
            pending += leaf.values() if isinstance(leaf, dict) else leaf
            continue
        values = leaf.values if isinstance(leaf, SparseGrad) else leaf
        if isinstance(values, complex) or getattr(values, "dtype", None) is not None and values.dtype.kind == "c":
            raise UnsupportedSyntax(f"a complex value lies between {', '.join(map(repr, names))} and the "
                                    f"output of {f.__name__}: s2sgrad differentiates real arithmetic only",
                                    _return_location(f), COMPLEX_HINT)


def _options(checkpoint, optimize, sparse, unknown: dict) -> dict:
    return {"checkpoint": checkpoint, "optimize": optimize, "sparse": sparse, **unknown}


def grad(f: Callable | None = None, wrt: Wrt = 0, *, verbose: bool = False, checkpoint: Schedule | None = None,
         optimize: Optimize = True, sparse: bool = False, **unknown) -> Callable:
    """The gradient of scalar-valued `f` with respect to the argument(s) `wrt`.

    Usable as ``@grad`` or ``@grad(wrt=1)``. A tuple `wrt` gives a tuple of gradients.
    Options: ``checkpoint=`` a schedule for outermost loops; ``sparse=True`` returns the gradient
    of an array used only through row gathers (``W[idx]``) as a `runtime.SparseGrad`;
    ``optimize=`` the optimizations to run, by name (see `s2sgrad.OPTIMIZATIONS`): True for all,
    False for none (the naive scheme, for comparison), or the names to switch on:

        >>> grad(lambda x: x * x)(3.0)                     # doctest: +SKIP
        6.0
        >>> df = sg.grad(f, optimize=set(sg.OPTIMIZATIONS) - {"reuse"})   # all but one    # doctest: +SKIP
    """
    options = _options(checkpoint, optimize, sparse, unknown)
    if f is None:
        return lambda g: grad(g, wrt, verbose=verbose, **options)
    return _derivative(f, "grad", wrt, options) or _make(f, wrt, "grad", verbose, options)


def value_and_grad(f: Callable | None = None, wrt: Wrt = 0, *, verbose: bool = False,
                   checkpoint: Schedule | None = None, optimize: Optimize = True, sparse: bool = False,
                   **unknown) -> Callable:
    """Like `grad`, but the derivative returns ``(f(*args), gradient)``; the same options.

        >>> f_df = sg.value_and_grad(f, optimize=set(sg.OPTIMIZATIONS) - {"to_be_recorded"})   # doctest: +SKIP
    """
    options = _options(checkpoint, optimize, sparse, unknown)
    if f is None:
        return lambda g: value_and_grad(g, wrt, verbose=verbose, **options)
    return _derivative(f, "value_and_grad", wrt, options) or _make(f, wrt, "value_and_grad", verbose, options)


def vjp(f: Callable | None = None, wrt: Wrt = 0, *, verbose: bool = False, checkpoint: Schedule | None = None,
        optimize: Optimize = True, sparse: bool = False, **unknown) -> Callable:
    """The vector-Jacobian product: ``df(*args, dout)`` returns ``(f(*args), dout · ∂f/∂wrt)``;
    the options of `grad`.

        >>> df = sg.vjp(f, optimize={"activity", "symbolic_zeros"})   # only these two    # doctest: +SKIP
    """
    options = _options(checkpoint, optimize, sparse, unknown)
    if f is None:
        return lambda g: vjp(g, wrt, verbose=verbose, **options)
    return _derivative(f, "vjp", wrt, options) or _make(f, wrt, "vjp", verbose, options)


def source(f: Callable, wrt: Wrt = 0, *, mode: str = "grad", stage: str = "gradient",
           args: Sequence | None = None, checkpoint: Schedule | None = None, optimize: Optimize = True,
           sparse: bool = False, **unknown) -> str:
    """The generated module for `f` as a string: exactly what runs.

    `stage="lowered"` prints the functional control-flow form instead. `args`, if
    given, are example arguments (lists and tuples of arrays are specialized on).
    The options are those of `grad` (forward mode always runs every optimization):

        >>> print(sg.source(f, optimize=False))              # the naive scheme     # doctest: +SKIP
    """
    options = checked_options(_options(checkpoint, optimize, sparse, unknown))
    from .higher import derivative_source, spec_of
    if spec_of(f) is not None:
        if stage != "gradient":
            raise S2SGradError(f"stage={stage!r} is not available for a derivative made by s2sgrad",
                               hint="print the lowered form of the original function")
        return derivative_source(f, wrt, mode, args)
    f = getattr(f, "__wrapped__", f)
    if mode in ("forward", "hvp"):
        from .higher import source as higher_source
        return higher_source(f, wrt, mode=mode, args=args)
    values = _call_values(f, args, {}) if args is not None else None
    kinds = tuple(kind_of(v) for v in values) if args is not None else ()
    dtypes = tuple(dtype_of(v) for v in values) if args is not None else None
    if dtypes is not None and mode == "vjp":
        dtypes += (None,)                     # any seed
    if stage == "lowered":
        scalars = [p for p, k in zip(_parameters(f), kinds) if k in ("scalar", "int")]
        vectors = [p for p, k in zip(_parameters(f), kinds) if isinstance(k, tuple) and len(k) == 1]
        return lowered_source(f, scalars, vectors)
    names, _ = wrt_names(f, wrt)
    return generated(f, names, mode, kinds, dtypes=dtypes, **options).source


def _flatten(value):
    """The float leaves of a number, array, or list/tuple/dict of them, and a function rebuilding it."""
    if isinstance(value, (list, tuple)):
        parts = [_flatten(v) for v in value]
        leaves = [leaf for p in parts for leaf in p[0]]
        sizes = [len(p[0]) for p in parts]

        def rebuild(new):
            out, k = [], 0
            for (_, build), n in zip(parts, sizes):
                out.append(build(new[k:k + n]))
                k += n
            return rebuilt(value, out)
        return leaves, rebuild
    if isinstance(value, dict):
        keys = list(value)
        leaves, build = _flatten([value[k] for k in keys])
        return leaves, lambda new: dict(zip(keys, build(new)))
    if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        return [np.asarray(value, dtype=float)], lambda new: float(new[0])
    return [np.asarray(value, dtype=float)], lambda new: new[0]


def check_grad(f: Callable, *args, wrt: Wrt = 0, eps: float = 1e-6, seed: int = 0) -> float:
    """Largest relative difference between `grad(f)` and central finite differences at `args`,
    along a random direction for each `wrt` argument (which may be a list, tuple or dict of arrays).

        >>> check_grad(lambda x: np.sum(x ** 3), np.ones(3)) < 1e-6     # doctest: +SKIP
        True
    """
    names, _ = wrt_names(f, wrt)
    grads = grad(f, tuple(names))(*args)
    params = _parameters(f)
    worst = 0.0
    rng = np.random.default_rng(seed)
    for name, g in zip(names, grads):
        k = params.index(name)
        leaves, rebuild = _flatten(args[k])
        directions = [rng.standard_normal(leaf.shape) for leaf in leaves]

        def at(t):
            moved = list(args)
            moved[k] = rebuild([leaf + t * v for leaf, v in zip(leaves, directions)])
            return float(f(*moved))
        numeric = (at(eps) - at(-eps)) / (2 * eps)
        analytic = sum(float(np.sum(np.asarray(gl) * v)) for gl, v in zip(_flatten(g)[0], directions))
        worst = max(worst, abs(numeric - analytic) / max(1.0, abs(numeric), abs(analytic)))
    return worst


__all__ = ["grad", "value_and_grad", "vjp", "source", "check_grad", "stop_gradient", "recompute", "checkpointed",
           "generated", "wrt_names"]
