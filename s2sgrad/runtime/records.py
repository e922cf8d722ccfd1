"""Objects as records of fields: their fields, gradients, and functional writes.

A record is an instance of a dataclass, of a class registered with `register` (``sg.register_pytree_node``),
or of any other user class (its fields: its ``__dict__``). A field holding floats (a float, a float array, a
list, tuple or dict of them, another record holding some) is differentiable; every other field (ints, bools,
strings, None, callables, generators, ...) is static. Inside generated code the gradient of a record is a
dict from field names to the fields' gradients (a missing field, or None, is a zero), merged by `add_grads`;
`complete` hands the user an instance of the record's class: differentiable fields replaced by their
gradients, static fields as they were (as the auxiliary data of a JAX pytree).

    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Layer:
    ...     W: np.ndarray
    ...     n: int
    >>> layer = Layer(np.ones(2), 3)
    >>> field_grad(np.array([1.0, 2.0]), layer, "W")
    {'W': array([1., 2.])}
    >>> record_complete({"W": np.array([1.0, 2.0])}, layer, lambda g, x: g)
    Layer(W=array([1., 2.]), n=3)
"""
from __future__ import annotations

import copy
import dataclasses
import sys
import types

import numpy as np

from ..errors import S2SGradError

_REGISTERED: dict = {}          # class -> (flatten, unflatten), as JAX's register_pytree_node takes them
_FOREIGN = {"numpy", "scipy", "s2sgrad", "gast", "dask", "torch", "jax", "jaxlib", "cupy", "array_api_strict",
            "array_api_compat"} | set(sys.stdlib_module_names)


def register(cls: type, flatten, unflatten) -> None:
    """Make instances of `cls` records whose fields are ``flatten(obj)[0]`` (positions 0, 1, ...), rebuilt
    by ``unflatten(aux, children)``."""
    _REGISTERED[cls] = (flatten, unflatten)


def is_record(x) -> bool:
    """Is `x` a record: a dataclass instance, a registered class's instance, or a user class's instance?"""
    return is_record_class(type(x)) and (type(x) in _REGISTERED or dataclasses.is_dataclass(x)
                                         or hasattr(x, "__dict__"))


def is_record_class(cls: type) -> bool:
    """Are instances of `cls` records (a dataclass, a registered class, a user class that is no function,
    class, module or NumPy type)?"""
    if cls in _REGISTERED or dataclasses.is_dataclass(cls):
        return True
    if issubclass(cls, (type, types.ModuleType, types.FunctionType, types.MethodType, np.ndarray, np.generic,
                        tuple, list, dict)):
        return False
    module = (getattr(cls, "__module__", None) or "builtins").split(".")[0]
    return module not in _FOREIGN


def fields(x) -> dict:
    """The fields of record `x`, by name (by position for a registered class)."""
    if type(x) in _REGISTERED:
        return dict(enumerate(_REGISTERED[type(x)][0](x)[0]))
    if dataclasses.is_dataclass(type(x)):             # (a record being made may not have all its fields yet)
        return {f.name: getattr(x, f.name) for f in dataclasses.fields(x) if hasattr(x, f.name)}
    return dict(vars(x))


def is_differentiable(value, inside: frozenset = frozenset()) -> bool:
    """Does `value` hold floats a gradient can flow to (a float, float array, container or record of them)?
    (`inside`: the ids of the objects `value` was found in, which do not count again.)"""
    if isinstance(value, (float, np.floating)) and not isinstance(value, bool):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f"
    if id(value) in inside:
        return False
    inside = inside | {id(value)}
    if isinstance(value, (list, tuple)):
        return any(is_differentiable(v, inside) for v in value)
    if isinstance(value, dict):
        return any(is_differentiable(v, inside) for v in value.values())
    return is_record(value) and any(is_differentiable(v, inside) for v in fields(value).values())


def field_key(x, name: str):
    """The key of `x`'s field read as ``x.name``: the name, or for a registered class the position of the child
    that attribute is."""
    if type(x) not in _REGISTERED:
        return name
    value = getattr(x, name)
    for k, child in fields(x).items():
        if child is value:
            return k
    if isinstance(getattr(type(x), name, None), property):
        raise S2SGradError(f"'{type(x).__name__}.{name}' is computed by a property of a registered class, "
                           "not one of the children its flatten function returns",
                           hint="read the children themselves, or give the class no flatten function (a plain "
                                "class's properties are differentiated as methods)")
    return None


def field_grad(g, x, name: str):
    """The gradient of reading ``x.name``: a record gradient holding `g` at that field."""
    key = field_key(x, name)
    return {} if g is None or key is None else {key: g}


def field_tangent(t, x, name: str):
    """The tangent of ``x.name`` where `t` is the tangent of record `x` (an instance, or a dict of fields);
    None for a zero."""
    parts = t if isinstance(t, dict) else fields(t) if t is not None else {}
    return parts.get(field_key(x, name))


def as_parts(g) -> dict:
    """A record gradient as a dict of fields (an instance's differentiable fields, None as no fields)."""
    if g is None:
        return {}
    if isinstance(g, dict):
        return g
    return {k: v for k, v in fields(g).items() if is_differentiable(v)}


def record_complete(g, x, complete):
    """The gradient of record `x` handed to the user: an instance of x's class, each differentiable field
    ``complete(its gradient, field)``, static fields as they are."""
    parts = as_parts(g)
    new = {k: complete(parts.get(k), v) if is_differentiable(v) else v for k, v in fields(x).items()}
    if type(x) in _REGISTERED:
        flatten, unflatten = _REGISTERED[type(x)]
        return unflatten(flatten(x)[1], [new[k] for k in sorted(new)])
    out = copy.copy(x)
    for k, v in new.items():
        object.__setattr__(out, k, v)
    return out


def new_record(cls):
    """An instance of `cls` with no fields yet, made without calling its ``__init__``."""
    return cls.__new__(cls)


def with_field(x, name: str, value):
    """A copy of record `x` with its field `name` set to `value` (``x.name = value`` made functional); of a
    record's tangent held as a dict of fields, that dict with the field's tangent."""
    if isinstance(x, dict):
        return {**x, name: value}
    out = copy.copy(x)
    object.__setattr__(out, name, value)
    return out


def without_field(g, name: str):
    """The gradient of the record a ``with_field(x, name, v)`` wrote into: `g` but at the field written."""
    parts = as_parts(g)
    return {k: v for k, v in parts.items() if k != name} if parts else None


def written_field(g, name: str):
    """The gradient of the value ``with_field(x, name, v)`` wrote: `g`'s field `name` (None for zero)."""
    return as_parts(g).get(name)


def as_named(cls, items: tuple):
    """The named tuple of class `cls` holding `items` (``P(a, b)`` made in the function)."""
    return cls(*items)


def random_draw(generator, method: str, *args, **kwargs):
    """``generator.method(*args, **kwargs)``: a draw from a generator passed in as an argument."""
    return getattr(generator, method)(*args, **kwargs)
