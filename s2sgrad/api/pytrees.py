"""Objects at the API boundary: classes registered as pytrees, derivatives of bound methods, and the float leaves
of an object (for `check_grad`).

Dataclasses, named tuples and plain classes need no registration: an object's fields are its dataclass
fields or its ``__dict__``, and its gradient is an instance of its class (made by copying it, without calling
``__init__``) whose float fields are the fields' gradients and whose other fields are as they were. A class
whose fields should be something else is registered as in JAX:

    >>> import numpy as np, s2sgrad as sg
    >>> class Scaled:
    ...     def __init__(self, w, k):
    ...         self.w, self.k = w, k
    >>> sg.register_pytree_node(Scaled, lambda s: ((s.w,), s.k), lambda k, children: Scaled(children[0], k))
    >>> def f(s):
    ...     return np.sum(s.w ** 2) * s.k
    >>> g = sg.grad(f)(Scaled(np.array([1.0, 2.0]), 3))
    >>> g.w, g.k
    (array([ 6., 12.]), 3)

A bound method is differentiated as its function with the object first: ``sg.grad(model.loss)(x)`` is the
gradient in ``x``, ``sg.grad(model.loss, wrt="self")(x)`` the gradient of the object (an instance of its class).
"""
from __future__ import annotations

import dataclasses
import inspect
from typing import Callable, Sequence

from ..runtime.records import fields, is_differentiable, is_record, record_complete, register


def register_pytree_node(cls: type, flatten: Callable, unflatten: Callable) -> None:
    """Register `cls` as a pytree node, as JAX's ``jax.tree_util.register_pytree_node`` does: ``flatten(obj)``
    returns ``(children, aux_data)``, ``unflatten(aux_data, children)`` rebuilds an object. The children are the
    fields gradients flow to (the gradient of an instance is ``unflatten(aux_data, gradients of the children)``);
    the function reads them as attributes (``obj.w`` must be one of the children itself, not a copy).

        >>> import numpy as np, s2sgrad as sg
        >>> class Pair:
        ...     def __init__(self, a, b):
        ...         self.a, self.b = a, b
        >>> sg.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
        >>> sg.grad(lambda p: p.a * p.b)(Pair(2.0, 5.0)).b
        2.0
    """
    register(cls, flatten, unflatten)


def register_dataclass(cls: type, data_fields: Sequence[str] | None = None, meta_fields: Sequence[str] = ()) -> type:
    """Register dataclass (or any class) `cls` with the fields that get gradients (`data_fields`, by default
    every dataclass field not in `meta_fields`) and those that stay as they are (`meta_fields`), as JAX's
    ``jax.tree_util.register_dataclass``; returns `cls`, so it can decorate the class.

        >>> import dataclasses, numpy as np, s2sgrad as sg
        >>> @sg.register_dataclass
        ... @dataclasses.dataclass
        ... class Layer:
        ...     W: np.ndarray
        >>> sg.grad(lambda layer: np.sum(layer.W ** 2))(Layer(np.ones(2)))
        Layer(W=array([2., 2.]))
    """
    if data_fields is None:
        data_fields = [f.name for f in dataclasses.fields(cls) if f.name not in meta_fields]
    data, meta = tuple(data_fields), tuple(meta_fields)

    def flatten(obj):
        return [getattr(obj, name) for name in data], tuple(getattr(obj, name) for name in meta)

    def unflatten(aux, children):
        obj = object.__new__(cls)
        for name, value in [*zip(data, children), *zip(meta, aux)]:
            object.__setattr__(obj, name, value)
        return obj
    register(cls, flatten, unflatten)
    return cls


def is_bound_method(f) -> bool:
    """Is `f` a method bound to a record (``model.loss``), differentiated as its function with the object first?"""
    return inspect.ismethod(f) and not isinstance(f.__self__, type) and inspect.isfunction(f.__func__) \
        and is_record(f.__self__)


def method_wrt(f, wrt):
    """`wrt` of bound method `f` as the same parameters of its function: an index counts the parameters after
    ``self``; ``"self"`` (or the first parameter's name) is the object."""
    first = next(iter(inspect.signature(f.__func__).parameters))

    def shifted(item):
        if item in ("self", first):
            return first
        return item + 1 if isinstance(item, int) and not isinstance(item, bool) and item >= 0 else item
    return tuple(map(shifted, wrt)) if isinstance(wrt, (tuple, list)) else shifted(wrt)


def method_derivative(transform: Callable, f, wrt, **options) -> Callable:
    """``transform(f.__func__, wrt', **options)`` called with ``f.__self__`` first, where `wrt'` names the same
    parameters of the function (`method_wrt`): a `Derivative` (``<gradient of loss w.r.t. x, bound to a
    Model>``) whose generated code is that of the function."""
    from .derivative_objects import Derivative
    derivative = transform(f.__func__, method_wrt(f, wrt), **options)
    obj = f.__self__
    return Derivative(lambda *args, **kwargs: derivative(obj, *args, **kwargs), derivative.__name__,
                      f"{derivative.description}, bound to a {type(obj).__name__}",
                      derivative.__doc__, derivative.__module__,
                      lambda args, kwargs: derivative.plan((obj, *args), kwargs), derivative.seen)


def record_leaves(value, flatten: Callable):
    """The float leaves of record `value` (those of its differentiable fields, by `flatten`), and a function
    rebuilding a record of its class from new leaves."""
    names = [k for k, v in fields(value).items() if is_differentiable(v)]
    leaves, rebuild = flatten([fields(value)[k] for k in names])

    def rebuilt(new):
        parts = dict(zip(names, rebuild(new)))
        return record_complete(parts, value, lambda g, x: g)
    return leaves, rebuilt
