"""Rules for records (objects whose fields are differentiated, `runtime.records`): reading a field and writing
one functionally. The adjoint of a record is a dict of its fields' adjoints, in which a missing field is a zero.

    >>> from s2sgrad.rules.registry import rule_for
    >>> rule_for(primitives.attribute) is not None, rule_for(runtime.with_field) is not None
    (True, True)
"""
from .. import runtime
from ..ir import primitives
from ..runtime import field_grad, field_tangent, grad_or_zeros, new_record, with_field, without_field, written_field
from .registry import adjoint, d, nondifferentiable, tangent

nondifferentiable(new_record, primitives.static_attribute)


@adjoint(primitives.attribute)
def attribute(y, obj, name):
    d[obj] = field_grad(d[y], obj, name)


@tangent(primitives.attribute)
def attribute(y, obj, name):
    d[y] = grad_or_zeros(field_tangent(d[obj], obj, name), y)


@adjoint(runtime.as_named)
def as_named(y, cls, items):
    d[items] = d[y]


@tangent(runtime.as_named)
def as_named(y, cls, items):
    d[y] = d[items]


@adjoint(runtime.with_field)
def with_field(y, x, name, value):
    d[x] = without_field(d[y], name)
    d[value] = grad_or_zeros(written_field(d[y], name), value)


@tangent(runtime.with_field)
def with_field(y, x, name, value):
    d[y] = with_field(d[x], name, d[value])


@tangent(runtime.field_grad)
def field_grad(y, g, x, name):
    d[y] = field_grad(d[g], x, name)


@tangent(runtime.without_field)
def without_field(y, g, name):
    d[y] = without_field(d[g], name)


@tangent(runtime.written_field)
def written_field(y, g, name):
    d[y] = written_field(d[g], name)


@tangent(runtime.field_tangent)
def field_tangent(y, t, x, name):
    d[y] = field_tangent(d[t], x, name)
