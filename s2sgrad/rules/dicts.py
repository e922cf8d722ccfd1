"""Rules for dicts used as values (``{"a": x}``, ``d.get(k, v)``, ``d.values()``, ``d.items()``), for the
unpacking of ``a, *rest = xs`` and of ``f(*xs)``, and for a name read after the loop that binds it.

A dict's adjoint is a dict of the keys something flowed into (a missing key is a zero).
"""
from .. import runtime
from ..runtime import (
    dict_get,
    dict_got,
    dict_items,
    dict_items_tangent,
    dict_of_values,
    dict_unmade,
    dict_values,
    dict_without,
    grad_or_zeros,
    make_dict,
    unpack_starred,
    unpacked_grad,
)
from .registry import adjoint, d, nondifferentiable, tangent


@adjoint(runtime.make_dict)
def make_dict(y, keys, values):
    d[values] = dict_unmade(d[y], keys)


@tangent(runtime.make_dict)
def make_dict(y, keys, values):
    d[y] = make_dict(keys, d[values])


@adjoint(runtime.dict_get)
def dict_get(y, mapping, key, default=None):
    d[mapping] = dict_got(d[y], mapping, key)
    d[default] = grad_or_zeros(None if key in mapping else d[y], default)


@tangent(runtime.dict_get)
def dict_get(y, mapping, key, default=None):
    d[y] = d[mapping][key] if key in mapping else d[default]


@adjoint(runtime.dict_without)
def dict_without(y, mapping, keys):
    d[mapping] = d[y]


@tangent(runtime.dict_without)
def dict_without(y, mapping, keys):
    d[y] = dict_without(d[mapping], keys)


@adjoint(runtime.dict_values)
def dict_values(y, mapping):
    d[mapping] = dict_of_values(d[y], mapping)


@tangent(runtime.dict_values)
def dict_values(y, mapping):
    d[y] = dict_values(d[mapping])


@adjoint(runtime.dict_items)
def dict_items(y, mapping):
    d[mapping] = dict_of_values(d[y], mapping, True)


@tangent(runtime.dict_items)
def dict_items(y, mapping):
    d[y] = dict_items_tangent(d[mapping])


@adjoint(runtime.unpack_starred)
def unpack_starred(y, seq, before, after, rest):
    d[seq] = unpacked_grad(d[y], seq, before, after, rest)


@tangent(runtime.unpack_starred)
def unpack_starred(y, seq, before, after, rest):
    d[y] = unpack_starred(d[seq], before, after, rest)


@adjoint(runtime.read_after_loop)
def read_after_loop(y, value, name):
    d[value] = d[y]


@tangent(runtime.read_after_loop)
def read_after_loop(y, value, name):
    d[y] = d[value]


nondifferentiable(runtime.raise_error, runtime.exception_of)
