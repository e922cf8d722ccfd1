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
from typing import Callable, Sequence

import numpy as np

from .. import guards
from ..analysis.dtypes import dtype_of
from ..backend.generated_source import Source
from ..errors import NonScalarOutput, S2SGradError, WrtError
from ..frontend.lower import lowered_source
from ..frontend.parse import call_signature
from ..optimizations import Optimize
from ..pipeline.kinds import array_namespace_of, kinds_of
from ..schedules import Schedule
from .derivatives import ONE, Term, arg_direction, attach, derivative_source, spec_of, transform
from .forward import source as forward_source
from .generation import (
    Wrt,
    call_values,
    check_differentiable,
    checked_options,
    def_location,
    extra_name,
    flatten,
    generated,
    generated_entry,
    in_argument_dtypes,
    parameter_names,
    refuse_complex,
    return_location,
    wrt_names,
    wrt_targets,
)
from .partials import of_partial
from .pytrees import is_bound_method, method_derivative, method_wrt


class _Call:
    """How a derivative binds its arguments: `f`'s signature, and the positions of the `wrt` parameters; made again
    when `f`'s code or defaults change."""

    def __init__(self, f, wrt: Wrt):
        self.f, self.wrt = f, wrt
        self.state = guards.function_state(f)
        self.targets, self.many = wrt_targets(f, wrt)
        self.names = list(dict.fromkeys(name for name, _ in self.targets))     # an *args tuple once
        self.params = parameter_names(f)
        self.positions = [self.params.index(name) for name in self.names]
        self.signature = call_signature(f)
        self.plain = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in self.signature.parameters.values())

    def picked(self, grads, args) -> tuple:
        """The gradient of each `wrt` item, from those of `names` (an item of ``*args`` out of its tuple's)."""
        by_name = dict(zip(self.names, grads if len(self.names) > 1 else (grads,)))
        out = []
        for name, position in self.targets:
            g = by_name[name]
            if position is not None:
                items = args[self.params.index(name)]
                if position >= len(items):
                    index, passed = len(self.params) - 1 + position, len(self.params) - 1 + len(items)
                    raise WrtError(f"wrt={index} designates item {position} of *{name}, but the call passes "
                                   f"{passed} positional argument(s) (indices 0 to {passed - 1})", def_location(self.f),
                                   f"pass at least {index + 1} positional arguments, or differentiate with "
                                   f"respect to indices below {passed}")
                g = g[position]
            out.append(g)
        return tuple(out)

    def current(self) -> "_Call":
        """This binding, or a new one if `f`'s code or defaults changed since it was made."""
        return self if guards.same(guards.function_state(self.f), self.state) else _Call(self.f, self.wrt)

CACHE_LIMIT = 32            # generated functions a derivative keeps (one per kinds and dtypes of its arguments)


def _make(f, wrt: Wrt, mode: str, verbose: bool, options: dict):
    options = checked_options(options)
    call = _Call(f, wrt)
    compiled: dict = {}                     # argument kinds and dtypes -> (guard, generated function)

    def prepared(args: tuple, kwargs: dict):
        """The call's arguments (bound, defaults filled in), its seed, and the entry of the generated code for them."""
        nonlocal call
        seed = ()
        if mode == "vjp":
            if not args:
                raise S2SGradError("vjp functions take the output's adjoint as their last argument")
            args, seed = args[:-1], args[-1:]
        while True:
            bound = args
            if kwargs or len(args) != len(call.params) or not call.plain:
                binding = call.signature.bind(*args, **kwargs)
                binding.apply_defaults()
                bound = tuple(binding.arguments.values())
            for name, position in call.targets:
                value = bound[call.params.index(name)]
                if position is not None and position < len(value):
                    value = value[position]
                check_differentiable(f, name, value)
            kinds = kinds_of(bound)
            dtypes = tuple(map(dtype_of, (*bound, *seed)))
            space = array_namespace_of(bound)
            entry = compiled.get((kinds, dtypes, space))
            if entry is not None and (entry[0].check() or entry[0].take_in()):
                return bound, seed, entry
            fresh = call.current()
            if fresh is call:
                break
            call = fresh                        # f's code or defaults changed: bind the arguments again
        entry = compiled[kinds, dtypes, space] = generated_entry(f, call.names, mode,
                                                                 kinds_of(bound, with_values=True), verbose, dtypes,
                                                                 options, space)
        while len(compiled) > CACHE_LIMIT:
            del compiled[next(iter(compiled))]
        return bound, seed, entry

    def derivative(*args, **kwargs):
        args, seed, entry = prepared(args, kwargs)
        names = call.names
        try:
            out = entry[1](*args, *seed)
        except NonScalarOutput as error:
            raise NonScalarOutput(error.message, return_location(f), error.hint) from None
        refuse_complex(f, names, out if mode == "grad" else out[1])
        wrt_args = [args[k] for k in call.positions]
        if mode == "grad":
            out = in_argument_dtypes(out, wrt_args, len(names) > 1)
        else:
            out = (out[0], in_argument_dtypes(out[1], wrt_args, len(names) > 1))
        grads = call.picked(out if mode == "grad" else out[1], args)
        grads = grads if call.many else grads[0]
        return grads if mode == "grad" else (out[0], grads)

    def generate(args, kwargs):
        args, seed, (_, fn) = prepared(args, kwargs)
        return next(key for key, entry in compiled.items() if entry[1] is fn), (fn,)

    params, names, many = tuple(call.params), call.names, call.many
    if mode == "grad":
        output = Term(tuple(names), many, ONE)
    else:
        if mode == "vjp":
            params += (extra_name(params, "dout"),)
        seed = ONE if mode == "value_and_grad" else arg_direction(len(params) - 1)
        output = ("tuple", (Term(), Term(tuple(names), many, seed)))
    if any(position is not None for _, position in call.targets):
        output = None                     # an item of *args: no term of f's parameters (not transformed further)
    return attach(derivative, f, params, output, f"{mode}({f.__name__})", options["checkpoint"], kind=mode,
                  of=f.__name__, names=names, generate=generate,
                  seen=lambda: {key: (entry[1],) for key, entry in compiled.items()})


def _derivative(f, kind: str, wrt, options: dict):
    """`kind` of `f` if `f` is a derivative s2sgrad made (forward mode over its generated code), else None."""
    if spec_of(f) is None:
        return None
    given = {k: v for k, v in options.items() if v not in (None, False, True)}
    if given:
        raise S2SGradError(f"the option(s) {', '.join(sorted(given))} cannot be given to {kind} of a derivative",
                           hint="give them to the call that made the inner derivative")
    return transform(kind, f, wrt)


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
    if isinstance(f, functools.partial):
        return of_partial(grad, f, wrt, verbose=verbose, **options)
    if is_bound_method(f):
        return method_derivative(grad, f, wrt, verbose=verbose, **options)
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
    if isinstance(f, functools.partial):
        return of_partial(value_and_grad, f, wrt, verbose=verbose, **options)
    if is_bound_method(f):
        return method_derivative(value_and_grad, f, wrt, verbose=verbose, **options)
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
    if isinstance(f, functools.partial):
        return of_partial(vjp, f, wrt, verbose=verbose, **options)
    if is_bound_method(f):
        return method_derivative(vjp, f, wrt, verbose=verbose, **options)
    return _derivative(f, "vjp", wrt, options) or _make(f, wrt, "vjp", verbose, options)


def source(f: Callable, wrt: Wrt = 0, *, mode: str = "grad", stage: str = "gradient",
           args: Sequence | None = None, lines: bool = False, checkpoint: Schedule | None = None,
           optimize: Optimize = True, sparse: bool = False, **unknown) -> Source:
    """The generated module for `f`, as a `Source` (a string, highlighted in Jupyter): with example arguments
    `args`, exactly what runs for arguments of their kinds, shapes and dtypes (lists and tuples of arrays are
    specialized on); without, the code for arguments of unknown kind.

    `stage="lowered"` prints the functional control-flow form instead. ``lines=True`` follows every line
    with the user's line it came from (``# file.py:N  <that line>``). The options are those of `grad`
    (forward mode always runs every optimization):

        >>> print(sg.source(f, optimize=False))              # the naive scheme     # doctest: +SKIP
        >>> print(sg.source(f, args=(x,), lines=True))       # each line with its origin   # doctest: +SKIP
    """
    text = _source(f, wrt, mode, stage, args, checkpoint, optimize, sparse, unknown)
    text = text if isinstance(text, Source) else Source(text)
    return Source(text.annotated()) if lines else text


def _source(f, wrt, mode, stage, args, checkpoint, optimize, sparse, unknown) -> str:
    options = checked_options(_options(checkpoint, optimize, sparse, unknown))
    if spec_of(f) is not None:
        if stage != "gradient":
            raise S2SGradError(f"stage={stage!r} is not available for a derivative made by s2sgrad",
                               hint="print the lowered form of the original function")
        return derivative_source(f, wrt, mode, args)
    f = getattr(f, "__wrapped__", f)
    if is_bound_method(f):                    # (the generated code takes the object first)
        args = None if args is None else (f.__self__, *args)
        f, wrt = f.__func__, method_wrt(f, wrt)
    if mode in ("forward", "hvp"):
        if options["backend"] != "numpy":
            raise S2SGradError(f"source(mode={mode!r}) prints the NumPy backend's code only",
                               hint='leave out backend=, or print the reverse-mode gradient (mode="grad")')
        return forward_source(f, wrt, mode=mode, args=args)
    values = call_values(f, args, {}) if args is not None else None
    kinds = kinds_of(values, with_values=True) if args is not None else ()
    dtypes = tuple(dtype_of(v) for v in values) if args is not None else None
    if dtypes is not None and mode == "vjp":
        dtypes += (None,)                     # any seed
    if stage == "lowered":
        scalars = [p for p, k in zip(parameter_names(f), kinds) if k in ("scalar", "int")]
        vectors = [p for p, k in zip(parameter_names(f), kinds) if isinstance(k, tuple) and len(k) == 1]
        return lowered_source(f, scalars, vectors)
    names = list(dict.fromkeys(name for name, _ in wrt_targets(f, wrt)[0]))   # an item of *args: all of them
    space = array_namespace_of(values) if values is not None else None
    return generated(f, names, mode, kinds, dtypes=dtypes, array_namespace=space, **options).source


def check_grad(f: Callable, *args, wrt: Wrt = 0, eps: float = 1e-6, seed: int = 0) -> float:
    """Largest relative difference between `grad(f)` and central finite differences at `args`,
    along a random direction for each `wrt` argument (which may be a list, tuple or dict of arrays).

        >>> check_grad(lambda x: np.sum(x ** 3), np.ones(3)) < 1e-6     # doctest: +SKIP
        True
    """
    names, _ = wrt_names(f, wrt)
    grads = grad(f, tuple(names))(*args)
    params = parameter_names(f)
    worst = 0.0
    rng = np.random.default_rng(seed)
    for name, g in zip(names, grads):
        k = params.index(name)
        leaves, rebuild = flatten(args[k])
        directions = [rng.standard_normal(leaf.shape) for leaf in leaves]

        def at(t):
            moved = list(args)
            moved[k] = rebuild([leaf + t * v for leaf, v in zip(leaves, directions)])
            return float(np.reshape(f(*moved), ()))        # a scalar, or an array of one element
        numeric = (at(eps) - at(-eps)) / (2 * eps)
        analytic = sum(float(np.sum(np.asarray(gl) * v)) for gl, v in zip(flatten(g)[0], directions))
        worst = max(worst, abs(numeric - analytic) / max(1.0, abs(numeric), abs(analytic)))
    return worst
