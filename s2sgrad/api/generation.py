"""Generated code for a user's function: made by the pipeline, compiled, and cached while what it
assumed holds (`s2sgrad.guards`); how a derivative binds and checks its arguments and casts its results.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(x * x)
    >>> df = generated(f, ["x"], "grad")
    >>> df(np.array([1.0, 2.0]))
    array([2., 4.])
"""
from __future__ import annotations

import inspect
import re
from typing import Sequence, Union

import gast
import numpy as np

from .. import guards
from ..backend.numba.build import NUMBA_KINDS, numba_module
from ..errors import COMPLEX_HINT, Location, NotCompilable, S2SGradError, SourceNotFound, UnsupportedSyntax, WrtError
from ..frontend.parse import call_signature, parse_function, refuse_cached
from ..frontend.relower import is_generated
from ..ir.names import base_name
from ..optimizations import ALL, resolve
from ..pipeline.driver import GradientModule
from ..pipeline.forward import ForwardModule
from ..runtime import SparseGrad, rebuilt
from ..runtime.records import fields as record_fields
from ..runtime.records import is_differentiable, is_record, record_complete
from ..transforms.forward import tangent_hint
from .pytrees import record_leaves

Wrt = Union[int, str, Sequence[Union[int, str]]]

_CACHE = guards.Cache()

_CACHE_COUNT = [0]                   # modules generated so far


def parameter_names(f) -> list[str]:
    refuse_cached(f)
    if not hasattr(f, "__code__") and not hasattr(f, "s2sgrad_derivative"):      # (a derivative has a signature)
        raise SourceNotFound(f"{getattr(f, '__name__', f)!r} is not a Python function, so it has no source "
                             "to transform", hint="differentiate a Python function that calls it; give it a "
                                                  "derivative rule with sg.adjoint if it has none")
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


def wrt_targets(f, wrt: Wrt) -> tuple[list[tuple[str, int | None]], bool]:
    """What `wrt` designates: per item, a parameter's name and, for an index past the named positional parameters
    of a function taking ``*args``, the position in that tuple (as JAX's argnums count positional arguments:
    ``grad(f, 1)(a, b)`` with ``def f(*xs)`` differentiates b); and whether the gradient is a tuple. An index
    counts positional arguments only: a keyword-only parameter or ``**kwargs`` is named (``wrt="scale"``)."""
    params = parameter_names(f)                # (refuses what has no source first)
    signature = call_signature(f)
    positional = [p.name for p in signature.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    vararg = next((p.name for p in signature.parameters.values() if p.kind is p.VAR_POSITIONAL), None)
    many = isinstance(wrt, (tuple, list))
    targets = []
    for item in (wrt if many else [wrt]):
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise WrtError(f"wrt must be an argument index or name, not {item!r}", def_location(f))
        if isinstance(item, int):
            if vararg is not None and item >= len(positional):
                targets.append((vararg, item - len(positional)))
                continue
            if not -len(positional) <= item < len(positional):
                named = [p for p in params if p not in positional]
                raise WrtError(f"wrt={item} is out of range: {f.__name__} has {len(positional)} positional "
                               f"argument(s) ({', '.join(positional)})", def_location(f),
                               f"name the argument: wrt={named[0]!r}" if named else None)
            targets.append((positional[item], None))
        else:
            if item not in params:
                raise WrtError(f"wrt={item!r} names no argument of {f.__name__} (its arguments: "
                               f"{', '.join(params)})", def_location(f))
            targets.append((item, None))
    if len(set(targets)) != len(targets):
        raise WrtError(f"wrt names an argument twice: {wrt!r}", def_location(f))
    return targets, many


def wrt_names(f, wrt: Wrt) -> tuple[list[str], bool]:
    """The parameter names `wrt` designates, and whether the gradient is a tuple (an item of ``*args`` is refused:
    see `wrt_targets`, which reverse mode uses)."""
    targets, many = wrt_targets(f, wrt)
    for name, position in targets:
        if position is not None:
            raise WrtError(f"wrt={wrt!r} designates an item of *{name}, which this transform differentiates as "
                           "a whole", def_location(f), f"use wrt={name!r}: the tangent is then a tuple, one per item")
    return [name for name, _ in targets], many


def check_differentiable(f, name: str, value) -> None:
    if type(value) is float or isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return
    leaves = []
    path: list = []                            # the objects being walked, outermost first

    def walk(v):
        if any(v is outer for outer in path):
            raise WrtError(f"argument '{name}' of {f.__name__} holds an object that holds it (a cycle): its "
                           "gradient would be infinitely deep", def_location(f),
                           hint="differentiate with respect to the arrays or a tree of objects without back "
                                "references")
        if isinstance(v, (list, tuple, dict)) or is_record(v):
            path.append(v)
        try:
            walk_items(v)
        finally:
            if path and path[-1] is v:
                path.pop()

    def walk_items(v):
        if isinstance(v, (list, tuple)):
            for item in v:
                walk(item)
        elif isinstance(v, dict):
            for item in v.values():
                walk(item)
        elif is_record(v):                     # static fields (ints, strings, callables, ...) have no gradient
            for item in record_fields(v).values():
                if is_differentiable(item):
                    walk(item)
            if not is_differentiable(v):
                leaves.append(v)
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


BACKENDS = ("numpy", "numba")     # what runs the generated gradient: NumPy (the default), or numba's compiler


def checked_options(options: dict) -> dict:
    """Every option, defaults filled in and ``optimize`` resolved to the set of optimizations it switches on
    (so that equal settings share generated code); an unknown option is an error."""
    unknown = set(options) - {"checkpoint", "optimize", "sparse", "backend"}
    if unknown:
        raise S2SGradError(f"unknown option(s): {', '.join(sorted(unknown))}",
                           hint="the options are checkpoint=, optimize=, sparse= and backend=")
    backend = options.get("backend") or "numpy"
    if backend not in BACKENDS:
        raise S2SGradError(f"unknown backend {backend!r}", hint=f"the backends are {', '.join(map(repr, BACKENDS))}")
    optimizations = resolve(options.get("optimize", True))
    if options.get("sparse") and "symbolic_zeros" not in optimizations:
        raise S2SGradError("sparse=True needs the optimization 'symbolic_zeros': a zero made first is dense",
                           hint="add 'symbolic_zeros' to optimize=, or leave out sparse=True")
    return {"checkpoint": options.get("checkpoint"), "optimize": optimizations, "sparse": options.get("sparse", False),
            "backend": backend}


# What the gradients that forward mode differentiates run (hvp, derivatives of derivatives): specialized on
# dtypes (so complex values between real ones are followed), but with no row written in place, which forward
# mode over them would see as a changed alias.
DIFFERENTIATED = frozenset(ALL - {"rows_in_place", "coefficient_arrays"})
PER_TRIP_IN_NUMBA = frozenset({"coefficient_arrays"})   # (numba compiles the trips' float arithmetic itself)


def generated(f, wrt: list[str], mode: str, kinds: tuple = (), verbose: bool = False, dtypes: tuple | None = None,
              array_namespace: str | None = None, **options):
    """The compiled generated function (cached) for `f`, `wrt`, `mode` and argument kinds (and, if given,
    the dtype descriptors of the arguments and then of the seed: see `dtypes`; the module of the arguments'
    arrays where not NumPy's)."""
    return generated_entry(f, wrt, mode, kinds, verbose, dtypes, checked_options(options), array_namespace)[1]


def generated_entry(f, wrt: list[str], mode: str, kinds: tuple, verbose: bool, dtypes: tuple | None, options: dict,
                    array_namespace: str | None = None):
    """(guard, generated function) for `f`: cached while the guard holds (see `guards`); `array_namespace`: the
    module of the arguments' arrays where not NumPy's."""
    key = (tuple(wrt), mode, kinds, dtypes, tuple(sorted(options.items())), array_namespace)
    hit = _CACHE.get(f, key)
    if hit is not None:
        return hit
    with guards.recording() as reads:
        optimizations = options["optimize"] - PER_TRIP_IN_NUMBA if options["backend"] == "numba" \
            else options["optimize"]
        module = GradientModule(checkpoint=options["checkpoint"], optimizations=optimizations,
                                sparse=options["sparse"], array_namespace=array_namespace)
        params = parameter_names(f)
        arg_kinds = dict(zip(params, kinds))
        arg_dtypes = dict(zip(params, dtypes)) if dtypes is not None else None
        seed_dtype = dtypes[len(params)] if dtypes is not None and len(dtypes) > len(params) else float
        node = module.gradient(f, wrt, mode, arg_kinds, arg_dtypes=arg_dtypes, seed_dtype=seed_dtype)
        if options["backend"] == "numba":
            numpy = {**options, "backend": "numpy"}
            return _numba_entry(f, key, reads, module, node.name, arg_kinds, verbose,
                                fallback=lambda: generated_entry(f, wrt, mode, kinds, False, dtypes, numpy)[1])
        _CACHE_COUNT[0] += 1
        namespace = module.compile(node.name)
    fn = namespace[node.name]
    fn.__defaults__ = _defaults(f) + fn.__defaults__ if fn.__defaults__ else _defaults(f)
    fn.source = module.compiled_source
    guards.forget_lines_with(fn, module.filename)
    if verbose:
        print(fn.source)
    entry = guards.Guard(reads, namespace, module.renamed), fn
    _CACHE.put(f, key, entry)
    return entry


def _numba_entry(f, key, reads, module, name: str, arg_kinds: dict, verbose: bool, fallback, cache=_CACHE,
                 numbers=None):
    """(guard, the function `name` of `module`, generated for `f`, compiled with numba: see `backend.numba`), put
    in `cache`; `numbers` are the parameters passed numbers (those of number kinds, if not given); `fallback()`
    the NumPy backend's function."""
    if numbers is None:
        numbers = {p for p, k in arg_kinds.items() if k in NUMBA_KINDS}
    others = [p for p, k in arg_kinds.items() if k not in NUMBA_KINDS and not isinstance(k, tuple)]
    if others:
        raise NotCompilable(f"the numba backend takes numbers and NumPy arrays, not the {others[0]!r} passed",
                            def_location(f), 'pass arrays, or leave out backend="numba"')
    fn, source = numba_module(module.functions, name, module.user_globals(), module.origin, numbers,
                              def_location(f), fallback)
    fn.source = source
    if verbose:
        print(source)
    guard = guards.Guard(reads, {}, module.renamed)
    guard.take_in = lambda: False           # numba compiled the globals in as constants: a change compiles anew
    entry = guard, fn
    cache.put(f, key, entry)
    return entry


def return_location(f):
    """Where `f` returns (its last return statement), for errors about its output."""
    parsed = parse_function(f)
    returns = [n for n in gast.walk(parsed.tree) if isinstance(n, gast.Return)]
    return parsed.location(returns[-1] if returns else parsed.tree)


def _defaults(f) -> tuple:
    """The user's own defaults (evaluated in their module), for the generated function (which a call with other
    than plain parameters reaches through `call_values` only)."""
    params = call_signature(f).parameters.values()
    if any(p.kind is not p.POSITIONAL_OR_KEYWORD for p in params):
        return ()
    return tuple(p.default for p in params if p.default is not p.empty)


def call_values(f, args, kwargs) -> list:
    bound = call_signature(f).bind(*args, **kwargs)
    bound.apply_defaults()
    return list(bound.arguments.values())


def extra_name(params, base: str) -> str:
    """`base`, or `base` with underscores after it, whichever names no parameter."""
    while base in params:
        base += "_"
    return base


def in_argument_dtypes(grads, wrt_args: list, many: bool):
    """Each gradient in its argument's floating dtype, leaf by leaf through lists, tuples and dicts. The
    generated code computes a float32 argument's gradient in float32 already; it is float64, and cast here,
    only where the function's own arithmetic promoted (a float32 argument times a float64 or integer array).

        >>> in_argument_dtypes(np.ones(2), [np.zeros(2, dtype=np.float32)], False).dtype
        dtype('float32')
    """
    def cast(g, x):
        if type(g) is type(x) and (type(x) is float or type(x) is np.ndarray and g.dtype == x.dtype):
            return g
        if isinstance(x, (list, tuple)) and isinstance(g, (list, tuple)):
            return rebuilt(g, [cast(a, b) for a, b in zip(g, x)])
        if isinstance(x, dict) and isinstance(g, dict):
            return {k: cast(g[k], x[k]) if k in x else g[k] for k in g}
        if is_record(x) and type(g) is type(x):
            return record_complete({k: cast(record_fields(g)[k], v) for k, v in record_fields(x).items()
                                    if is_differentiable(v)}, g, lambda part, _: part)
        if hasattr(g, "rechunk") and getattr(x, "chunks", None) not in (None, g.chunks) and g.shape == x.shape:
            return g.rechunk(x.chunks)             # (a Dask gradient has its argument's chunks)
        dtype = getattr(x, "dtype", None)
        if isinstance(dtype, np.dtype) and dtype.kind == "f" and dtype != np.float64 \
                and isinstance(g, (np.ndarray, np.generic)) and g.dtype != dtype and g.dtype.kind == "f":
            return g.astype(dtype) if isinstance(g, np.ndarray) else dtype.type(g)
        return g
    if many:
        return type(grads)(cast(g, x) for g, x in zip(grads, wrt_args))
    return cast(grads, wrt_args[0])


def refuse_complex(f, names: list[str], derivatives) -> None:
    """A complex gradient or tangent of real arguments means a complex value on the differentiated path,
    where the rules' results would be wrong: refuse it. (With dtypes known, generation refuses it first,
    at its line.)"""
    if type(derivatives) is float or type(derivatives) is np.ndarray and derivatives.dtype.kind == "f":
        return
    pending = [derivatives]
    while pending:
        leaf = pending.pop()
        if isinstance(leaf, (tuple, list, dict)):
            pending += leaf.values() if isinstance(leaf, dict) else leaf
            continue
        if is_record(leaf):
            pending += record_fields(leaf).values()
            continue
        values = leaf.values if isinstance(leaf, SparseGrad) else leaf
        if isinstance(values, complex) or "complex" in str(getattr(values, "dtype", "")):
            raise UnsupportedSyntax(f"a complex value lies between {', '.join(map(repr, names))} and the "
                                    f"output of {f.__name__}: s2sgrad differentiates real arithmetic only",
                                    return_location(f), COMPLEX_HINT)


def flatten(value):
    """The float leaves of a number, array, object, or list/tuple/dict of them, and a function rebuilding it."""
    if is_record(value):
        return record_leaves(value, flatten)
    if isinstance(value, (list, tuple)):
        parts = [flatten(v) for v in value]
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
        leaves, build = flatten([value[k] for k in keys])
        return leaves, lambda new: dict(zip(keys, build(new)))
    if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        return [np.asarray(value, dtype=float)], lambda new: float(new[0])
    return [np.asarray(value, dtype=float)], lambda new: new[0]


_FORWARD_CACHE = guards.Cache()          # generated code per function, valid while its guard holds (see guards)


def dot_hint(name: str) -> str:
    """How second-order code calls the tangent of `name`: ``x_dot`` (``dx`` is the gradient's own name)."""
    return base_name(name) + "_dot"


def forward_generated(f, wrt: list[str], kinds: tuple = (), verbose: bool = False, hint=tangent_hint,
                      name: str | None = None, dtypes: tuple | None = None, backend: str = "numpy"):
    """The compiled forward-mode function (cached) of `f` with respect to `wrt`, specialized on argument kinds:
    ``name(*args, *tangents) -> (value, tangent)``. `f` may be a generated gradient. With the arguments'
    `dtypes`, calls on complex values are checked (see `ForwardModule.jvp`); `backend` as `checked_options`."""
    key = (tuple(wrt), kinds, hint, name, dtypes) + ((backend,) if backend != "numpy" else ())
    # the code over a generated gradient lives on the gradient (its guard reads the gradient's namespace)
    cache = f.__dict__.setdefault("s2sgrad_forward", guards.Table()) if is_generated(f) else _CACHE
    hit = cache.get(f, key)
    if hit is not None:
        return hit[1]
    with guards.recording() as reads:
        module = ForwardModule(hint)
        params = parameter_names(f)
        node = module.jvp(f, wrt, dict(zip(params, kinds)), name,
                          dict(zip(params, dtypes)) if dtypes is not None else None)
        if backend == "numba":           # (a tangent of a number is a number)
            tangents = dict(zip(wrt, (a.arg for a in node.args.args[len(params):])))
            numbers = {p for p, k in zip(params, kinds) if k in NUMBA_KINDS}
            return _numba_entry(f, key, reads, module, node.name, dict(zip(params, kinds)), verbose,
                                lambda: forward_generated(f, wrt, kinds, False, hint, name, dtypes), cache,
                                numbers | {tangents[p] for p in numbers if p in tangents})[1]
        _CACHE_COUNT[0] += 1
        namespace = module.compile(node.name)
    fn = namespace[node.name]
    fn.source = module.compiled_source
    if verbose:
        print(fn.source)
    cache.put(f, key, (guards.Guard(reads, namespace, module.renamed), fn))
    return fn
