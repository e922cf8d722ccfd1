"""Dicts as values of the lowered form: made (``{"a": x}``, ``dict(a=x)``), read (``d.get(k, v)``,
``d.values()``, ``d.items()``), and the gradients of these; a dict's gradient is a dict holding the keys
something flowed into (a missing key is a zero).

    >>> make_dict(("a", "b"), (1.0, 2.0))
    {'a': 1.0, 'b': 2.0}
    >>> dict_get({"a": 1.0}, "b", 3.0), dict_unmade({"b": 5.0}, ("a", "b"))
    (3.0, (None, 5.0))
"""
from __future__ import annotations

from ..errors import UnsupportedSyntax


def make_dict(keys: tuple, values: tuple) -> dict:
    """The dict display ``{k0: v0, k1: v1}``: `keys` and `values` in order (a repeated key keeps its last value)."""
    return dict(zip(keys, values))


def dict_unmade(g, keys: tuple) -> tuple:
    """The gradients of the values a dict was made of, from the dict's gradient `g` (None where zero)."""
    if g is None:
        return (None,) * len(keys)
    last = {k: i for i, k in enumerate(keys)}          # a repeated key: only its last value is in the dict
    return tuple(g.get(k) if last[k] == i else None for i, k in enumerate(keys))


def dict_get(mapping: dict, key, default=None):
    """``mapping.get(key, default)``."""
    return mapping.get(key, default)


def dict_got(g, mapping: dict, key):
    """The gradient of `mapping` from the gradient `g` of ``mapping.get(key, ...)``."""
    return {key: g} if key in mapping else None


def dict_without(mapping: dict, keys: tuple) -> dict:
    """`mapping` without `keys`: what ``**kwargs`` gets of ``f(**mapping)``, `keys` being f's other parameters."""
    if not isinstance(mapping, dict):          # dict(pairs) of pairs made elsewhere (dict(zip(keys, values)))
        raise UnsupportedSyntax("dict() of a sequence of pairs is supported only with the pairs written out "
                                "(dict([('a', x), ('b', y)]))", None,
                                "build the dict with a comprehension: {k: v for k, v in zip(keys, values)}")
    return {k: v for k, v in mapping.items() if k not in keys}


def dict_values(mapping: dict) -> list:
    """``mapping.values()``, as a list."""
    return list(mapping.values())


def dict_items(mapping: dict) -> list:
    """``mapping.items()``, as a list of pairs."""
    return list(mapping.items())


def dict_items_tangent(tangent: dict) -> list:
    """The tangent of ``mapping.items()``: a key has none (0.0), each value its own."""
    return [(0.0, v) for v in tangent.values()]


def dict_of_values(g, mapping: dict, items: bool = False) -> dict | None:
    """The gradient of `mapping` from the gradient `g` of its ``values()`` (or, with `items`, its ``items()``)."""
    if g is None:
        return None
    out = {}
    for key, gk in zip(mapping, g):
        if items:
            gk = None if gk is None else gk[1]
        if gk is not None:
            out[key] = gk
    return out
