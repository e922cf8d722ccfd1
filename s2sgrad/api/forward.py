"""Forward mode and higher-order derivatives: `jvp`, `hvp`, `hessian`, `grad_of_grad`.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(np.sin(x) * x)
    >>> value, tangent = jvp(f)(np.ones(3), np.array([1.0, 0.0, 0.0]))     # doctest: +SKIP
    >>> hvp(f)(np.ones(3), np.array([1.0, 0.0, 0.0]))                       # doctest: +SKIP
    >>> hessian(f)(np.ones(3)).shape                                        # doctest: +SKIP
    (3, 3)

`jvp` generates the forward-mode (tangent) code of a function. `hvp` is
forward over reverse: it generates the gradient (reverse mode), reads that
generated code back in, and generates its forward-mode code, so one call costs
a small multiple of one gradient. `hessian` assembles the Hessian column by
column from Hessian-vector products; `grad_of_grad` is one forward pass over a
gradient. Generated code is cached per function, `wrt` and argument kinds.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from ..analysis.activity import SCALAR, TENSOR
from ..analysis.dtypes import dtype_of
from ..errors import S2SGradError, WrtError
from ..ir.names import identifier
from ..pipeline.kinds import array_namespace_of, kinds_of
from ..runtime import zeros_like
from .derivatives import (
    ONE,
    Term,
    arg_direction,
    assemble_hessian,
    attach,
    derivative_source,
    generators_of,
    spec_of,
    transform,
)
from .generation import (
    DIFFERENTIATED,
    call_values,
    check_differentiable,
    checked_options,
    dot_hint,
    extra_name,
    forward_generated,
    generated,
    parameter_names,
    refuse_complex,
    wrt_names,
    wrt_targets,
)
from .partials import of_partial
from .pytrees import is_bound_method, method_derivative


def _prepared(f, names: list[str], args, kwargs) -> tuple[list, tuple]:
    """The call's argument values (defaults filled in), checked for `names`, and their kinds."""
    values = call_values(f, args, kwargs)
    params = parameter_names(f)
    for name in names:
        check_differentiable(f, name, values[params.index(name)])
    space = array_namespace_of(values)
    if space is not None:
        raise S2SGradError(f"forward mode (jvp, hvp) runs on NumPy arrays; {f.__name__} was given arrays of {space}",
                           hint="use reverse mode (grad, value_and_grad, vjp), which runs on them, or pass NumPy "
                                "arrays")
    return values, kinds_of(values, with_values=True)


def _split_last(args: tuple, what: str, f) -> tuple[tuple, object]:
    if not args:
        raise S2SGradError(f"the derivative of {f.__name__} takes {what} as its last argument")
    return args[:-1], args[-1]


def jvp(f: Callable | None = None, wrt=0, *, verbose: bool = False, backend: str = "numpy") -> Callable:
    """Forward mode: ``df(*args, tangent)`` returns ``(f(*args), the directional derivative along tangent)``.

    For a tuple `wrt` the tangent is a tuple, one per argument named; ``backend="numba"`` compiles it with
    numba (as `grad`'s).

        >>> jvp(lambda x: x * x)(3.0, 1.0)                 # doctest: +SKIP
        (9.0, 6.0)
    """
    backend = checked_options({"backend": backend})["backend"]
    if f is None:
        return lambda g: jvp(g, wrt, verbose=verbose, backend=backend)
    if isinstance(f, functools.partial):
        return of_partial(jvp, f, wrt, verbose=verbose, backend=backend)
    if is_bound_method(f):
        return method_derivative(jvp, f, wrt, verbose=verbose, backend=backend)
    if spec_of(f) is not None:
        if backend != "numpy":
            raise S2SGradError("backend= applies to the derivative of a function, not of a derivative",
                               hint='leave out backend="numba" for the outer transform')
        return transform("jvp", f, wrt)
    targets, many = wrt_targets(f, wrt)
    names = list(dict.fromkeys(name for name, _ in targets))       # an item of *args: the tuple's tangent
    if len(names) < len(targets) and any(position is None for _, position in targets):
        raise WrtError(f"wrt={wrt!r} names *{names[0]} both whole and by item", hint="name it one way")

    seen: dict = {}

    def generate(args, kwargs):
        args, tangent = _split_last(args, "the tangent", f)
        values, kinds = _prepared(f, names, args, kwargs)
        fn = seen[kinds] = forward_generated(f, names, kinds, verbose, dtypes=tuple(map(dtype_of, values)),
                                             backend=backend)
        return kinds, (fn,), values, tangent

    def derivative(*args, **kwargs):
        _, (fn,), values, tangent = generate(args, kwargs)
        tangents = _tangents(f, targets, names, values, tangent if many else (tangent,))
        value, derivative_along = fn(*values, *tangents)
        refuse_complex(f, names, derivative_along)
        return value, derivative_along

    params = tuple(parameter_names(f))
    params += (extra_name(params, "tangent"),)
    tangent = Term(forwards=((tuple(names), many, arg_direction(len(params) - 1)),))
    items = any(position is not None for _, position in targets)
    output = None if items else ("tuple", (Term(), tangent))
    return attach(derivative, f, params, output, f"jvp({f.__name__})", kind="jvp", of=f.__name__, names=names,
                  generate=lambda args, kwargs: generate(args, kwargs)[:2], seen=lambda: _single(seen))


def _single(seen: dict) -> dict:
    return {key: (fn,) for key, fn in seen.items()}


def _tangents(f, targets, names: list, values: list, given: tuple) -> list:
    """The tangent of each parameter in `names`: as given, or, for items of ``*args`` (`targets` with a
    position), the tuple of the given ones there and zeros at the other items."""
    if all(position is None for _, position in targets):
        return list(given)
    params = parameter_names(f)
    by_name = {}
    for (name, position), t in zip(targets, given):
        if position is None:
            by_name[name] = t
            continue
        items = values[params.index(name)]
        parts = by_name.setdefault(name, [zeros_like(v) for v in items])
        parts[position] = t
    return [tuple(by_name[n]) if isinstance(by_name[n], list) else by_name[n] for n in names]


def _hvp_function(f, names: list[str], kinds: tuple, verbose: bool, dtypes: tuple | None = None):
    """Forward mode over the generated gradient: ``name(*args, seed, *directions) -> (gradient, H @ direction)``."""
    gradient = generated(f, names, "grad", kinds, dtypes=dtypes, optimize=DIFFERENTIATED)
    return forward_generated(gradient, names, kinds + (SCALAR,), verbose, dot_hint,
                             identifier(f"hvp_{f.__name__}_{'_'.join(names)}"))


def hvp(f: Callable | None = None, wrt=0, *, verbose: bool = False) -> Callable:
    """The Hessian-vector product of scalar `f`: ``hvp(f)(*args, v)`` is the Hessian with respect to
    `wrt` times `v`, by forward mode over the generated gradient (a few times the cost of a gradient).
    For a tuple `wrt`, `v` and the result are tuples.

        >>> hvp(lambda x: x ** 3)(2.0, 1.0)                # doctest: +SKIP
        12.0
    """
    if f is None:
        return lambda g: hvp(g, wrt, verbose=verbose)
    if isinstance(f, functools.partial):
        return of_partial(hvp, f, wrt, verbose=verbose)
    if is_bound_method(f):
        return method_derivative(hvp, f, wrt, verbose=verbose)
    if spec_of(f) is not None:
        return transform("hvp", f, wrt)
    names, many = wrt_names(f, wrt)

    seen: dict = {}

    def generate(args, kwargs):
        args, direction = _split_last(args, "the direction v", f)
        values, kinds = _prepared(f, names, args, kwargs)
        fn = seen[kinds] = _hvp_function(f, names, kinds, verbose, tuple(map(dtype_of, values)))
        return kinds, (fn,), values, direction

    def product(*args, **kwargs):
        _, (fn,), values, direction = generate(args, kwargs)
        _, out = fn(*values, 1.0, *(direction if many else (direction,)))
        refuse_complex(f, names, out)
        return (out,) if many and len(names) == 1 else out

    params = tuple(parameter_names(f))
    params += (extra_name(params, "v"),)
    output = Term(tuple(names), many, ONE, ((tuple(names), many, arg_direction(len(params) - 1)),))
    return attach(product, f, params, output, f"hvp({f.__name__})", kind="hvp", of=f.__name__, names=names,
                  generate=lambda args, kwargs: generate(args, kwargs)[:2], seen=lambda: _single(seen))


def hessian(f: Callable, wrt=0) -> Callable:
    """The Hessian of scalar `f` with respect to `wrt`, one Hessian-vector product per input element
    (meant for small inputs). For an argument of shape s it has shape ``s + s``; for a tuple `wrt`,
    block ``[i][j]`` is the Hessian with respect to arguments i and j. For a list, tuple or dict
    argument each block is that structure of that structure of blocks: ``H["a"]["b"]`` for a dict.

        >>> hessian(lambda x: np.sum(x ** 3))(np.ones(2))   # doctest: +SKIP
        array([[6., 0.],
               [0., 6.]])
    """
    if isinstance(f, functools.partial):
        return of_partial(hessian, f, wrt)
    if spec_of(f) is not None:
        return transform("hessian", f, wrt)
    names, many = wrt_names(f, wrt)
    product = hvp(f, tuple(names))
    params = parameter_names(f)

    def second(*args, **kwargs):
        values = call_values(f, args, kwargs)
        points = [values[params.index(n)] for n in names]
        return assemble_hessian(points, many, lambda direction: product(*args, direction, **kwargs),
                                generators_of(f, values))

    def generate(args, kwargs):
        values = call_values(f, args, kwargs)
        direction = tuple(values[params.index(n)] for n in names)
        return product.plan(args + (direction,), kwargs)
    return attach(second, f, params, None, f"hessian({f.__name__})", kind="hessian", of=f.__name__, names=names,
                  generate=generate, seen=product.seen)


def grad_of_grad(f: Callable, inner=0, outer=0) -> Callable:
    """``grad(grad(f, wrt=inner), wrt=outer)``: the derivative with respect to argument `outer` of
    ``∂f/∂(argument inner)``, where argument `inner` is a scalar (so that the gradient is one too).

    By symmetry of second derivatives it is ``∂/∂inner`` of ``∂f/∂outer``: one forward pass,
    along argument `inner`, over the generated gradient with respect to `outer`.

        >>> grad_of_grad(lambda x: x ** 3)(2.0)           # doctest: +SKIP
        12.0
    """
    (inner_name,), _ = wrt_names(f, inner)
    (outer_name,), _ = wrt_names(f, outer)

    seen: dict = {}

    def generate(args, kwargs):
        values, kinds = _prepared(f, [inner_name, outer_name], args, kwargs)
        if np.ndim(values[parameter_names(f).index(inner_name)]) != 0:
            raise S2SGradError(f"grad of grad needs '{inner_name}' to be a scalar: the inner gradient must be "
                               "a scalar to be differentiated by grad", hint="use sg.hvp or sg.hessian")
        gradient = generated(f, [outer_name], "grad", kinds)
        fn = seen[kinds] = forward_generated(gradient, [inner_name], kinds + (SCALAR,), False, dot_hint,
                                             identifier(f"d2{f.__name__}_d{outer_name}_d{inner_name}"))
        return kinds, (fn,), values

    def second(*args, **kwargs):
        _, (fn,), values = generate(args, kwargs)
        _, out = fn(*values, 1.0, 1.0)
        return out

    output = Term((outer_name,), False, ONE, (((inner_name,), False, ONE),))
    return attach(second, f, parameter_names(f), output, f"grad(grad({f.__name__}))", kind="grad",
                  of=f"grad({f.__name__})", names=[outer_name],
                  generate=lambda args, kwargs: generate(args, kwargs)[:2], seen=lambda: _single(seen))


def source(f: Callable, wrt=0, *, mode: str = "forward", args=None) -> str:
    """The generated forward-mode (``mode="forward"``) or Hessian-vector product (``mode="hvp"``) module
    of `f`, as a string. `args`, if given, are example arguments to specialize on."""
    if spec_of(f) is not None:
        return derivative_source(f, wrt, mode, args)
    names, _ = wrt_names(f, wrt)
    kinds = kinds_of(call_values(f, args, {}), with_values=True) if args is not None else ()
    if mode == "forward":
        return forward_generated(f, names, kinds).source
    if mode == "hvp":
        return _hvp_function(f, names, kinds or (TENSOR,) * len(parameter_names(f)), False).source
    raise S2SGradError(f"unknown mode {mode!r}: expected 'forward' or 'hvp'")
