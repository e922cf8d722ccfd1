"""Rules for dicts used as values (``{"a": x}``, ``d.get(k, v)``, ``d.values()``, ``d.items()``), for the
unpacking of ``a, *rest = xs`` and of ``f(*xs)``, and for a name read after the loop that binds it.

A dict's adjoint is a dict of the keys something flowed into (a missing key is a zero).
"""
from .. import runtime
from ..runtime import (
    bind_call,
    bound_grad,
    dict_get,
    dict_got,
    dict_items,
    dict_items_tangent,
    dict_of_values,
    dict_unmade,
    dict_values,
    dict_without,
    filled_grad,
    grad_or_zeros,
    make_dict,
    unpack_filled,
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


@adjoint(runtime.unpack_filled)
def unpack_filled(y, seq, required, defaults):
    d[seq] = filled_grad(d[y], seq, required, defaults)
    d[defaults] = filled_grad(d[y], seq, required, defaults, True)


@tangent(runtime.unpack_filled)
def unpack_filled(y, seq, required, defaults):
    d[y] = unpack_filled(d[seq], required, d[defaults])


@adjoint(runtime.bind_call)
def bind_call(y, parameters, args, kwargs, defaults):
    d[args] = bound_grad(d[y], parameters, args, kwargs, defaults, "args")
    d[kwargs] = bound_grad(d[y], parameters, args, kwargs, defaults, "kwargs")
    d[defaults] = bound_grad(d[y], parameters, args, kwargs, defaults, "defaults")


@tangent(runtime.bind_call)
def bind_call(y, parameters, args, kwargs, defaults):
    d[y] = bind_call(parameters, d[args], d[kwargs], d[defaults])


@adjoint(runtime.read_after_loop)
def read_after_loop(y, value, name):
    d[value] = d[y]


@tangent(runtime.read_after_loop)
def read_after_loop(y, value, name):
    d[y] = d[value]


nondifferentiable(runtime.raise_error, runtime.exception_of)


# --- forward-mode rules of the gradient helpers above (linear in the gradient), for forward over reverse

@tangent(dict_unmade)
def dict_unmade(y, g, keys):
    d[y] = dict_unmade(d[g], keys)


@tangent(dict_got)
def dict_got(y, g, mapping, key):
    d[y] = dict_got(d[g], mapping, key)


@tangent(dict_of_values)
def dict_of_values(y, g, mapping, items=False):
    d[y] = dict_of_values(d[g], mapping, items)


@tangent(unpacked_grad)
def unpacked_grad(y, g, seq, before, after, rest):
    d[y] = unpacked_grad(d[g], seq, before, after, rest)


@tangent(filled_grad)
def filled_grad(y, g, seq, required, defaults, of_defaults=False):
    d[y] = filled_grad(d[g], seq, required, defaults, of_defaults)


@tangent(bound_grad)
def bound_grad(y, g, parameters, args, kwargs, defaults, part):
    d[y] = bound_grad(d[g], parameters, args, kwargs, defaults, part)


@tangent(dict_items_tangent)
def dict_items_tangent(y, tangent):
    d[y] = dict_items_tangent(d[tangent])
