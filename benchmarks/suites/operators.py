"""autograd's differential operators built from s2sgrad's: what a user porting autograd code writes.

Each operator takes ``(fun, argnum=0)`` as autograd's do; `argnum` becomes s2sgrad's `wrt` (a list becomes
a tuple). A Python function is handed to s2sgrad as it is, so that operators nest (``grad(grad(f))`` is
s2sgrad's derivative of its own derivative); a library function (``grad(np.tanh)``) is wrapped in the
one-line Python function a user would write (`wrappers.python_call`).

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(x ** 3)
    >>> float(grad(f)(np.array([1.0, 2.0]))[1])
    12.0
    >>> jacobian(lambda x: x ** 2)(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
"""
from __future__ import annotations

import functools

import numpy as np

import s2sgrad as sg

from .checks import leaves, rebuild
from .wrappers import is_python_function, python_call


class NotMapped(Exception):
    """An autograd operator or option that has no counterpart here (counted apart from s2sgrad's results)."""


def _wrt(argnum):
    return tuple(argnum) if isinstance(argnum, list) else argnum


USED = [0]         # how many derivatives the operators made (a test that made none checks nothing)


def _lift(operator, fun, argnum):
    """``operator(fun, wrt=argnum)``, for a library function once its number of arguments is known."""
    USED[0] += 1
    if getattr(fun, "__adapter__", False):
        raise NotMapped("a derivative made by the adapter's own operators cannot be differentiated again")
    wrt = _wrt(argnum)
    if is_python_function(fun):
        return operator(fun, wrt)

    @functools.wraps(fun)
    def lifted(*args, **kwargs):
        n = len(args) - (operator in (sg.vjp, sg.jvp, sg.hvp))      # the seed, tangent or direction is last
        function, called, kwargs, moved = python_call(fun, args[:n], kwargs, wrt)
        return operator(function, moved)(*called, *args[n:], **kwargs)
    return lifted


def _adapter(f):
    """Mark `f` as made here: s2sgrad cannot differentiate it (its source is this module's)."""
    f.__adapter__ = True
    return f


def grad(fun, argnum=0):
    return _lift(sg.grad, fun, argnum)


def value_and_grad(fun, argnum=0):
    return _lift(sg.value_and_grad, fun, argnum)


def _selected(args, argnum):
    return args[argnum] if isinstance(argnum, int) else tuple(args[k] for k in argnum)


def make_vjp(fun, argnum=0):
    """``make_vjp(fun)(*args)`` is ``(vjp, fun(*args))`` with ``vjp(dout)`` the vector-Jacobian product."""
    vjp = _lift(sg.vjp, fun, argnum)

    def at(*args, **kwargs):
        return _adapter(lambda dout: vjp(*args, dout, **kwargs)[1]), fun(*args, **kwargs)
    return _adapter(at)


def make_jvp(fun, argnum=0):
    """``make_jvp(fun)(*args)(v)`` is ``(fun(*args), J v)``."""
    jvp = _lift(sg.jvp, fun, argnum)

    def at(*args, **kwargs):
        return _adapter(lambda v: jvp(*args, v, **kwargs))
    return _adapter(at)


def elementwise_grad(fun, argnum=0):
    """The vjp with a seed of ones: the derivative of an elementwise function."""
    vjp = _lift(sg.vjp, fun, argnum)

    def at(*args, **kwargs):
        return vjp(*args, np.ones_like(fun(*args, **kwargs), dtype=float), **kwargs)[1]
    return _adapter(at)


def deriv(fun, argnum=0):
    """The jvp along ones."""
    jvp = _lift(sg.jvp, fun, argnum)

    def at(*args, **kwargs):
        x = _selected(args, argnum)
        return jvp(*args, np.ones_like(x, dtype=float) if np.ndim(x) else 1.0, **kwargs)[1]
    return _adapter(at)


def jacobian(fun, argnum=0):
    """The Jacobian, of shape ``out.shape + x.shape``, one vjp per output element."""
    vjp = _lift(sg.vjp, fun, argnum)

    def at(*args, **kwargs):
        out = np.asarray(fun(*args, **kwargs), dtype=float)
        rows = []
        for k in range(out.size):
            seed = np.zeros(out.size)
            seed[k] = 1.0
            seed = seed.reshape(out.shape) if out.ndim else 1.0
            rows.append(np.asarray(vjp(*args, seed, **kwargs)[1], dtype=float))
        x = np.asarray(_selected(args, argnum))
        return np.reshape(np.stack(rows), out.shape + x.shape)
    return _adapter(at)


def hessian(fun, argnum=0):
    return _lift(sg.hessian, fun, argnum)


def hessian_tensor_product(fun, argnum=0):
    """``(x, v) -> H v``."""
    return _lift(sg.hvp, fun, argnum)


hessian_vector_product = hessian_tensor_product


def make_hvp(fun, argnum=0):
    """``make_hvp(fun)(*args)`` is ``(v -> H v, grad(fun)(*args))``."""
    hvp = _lift(sg.hvp, fun, argnum)

    def at(*args, **kwargs):
        return _adapter(lambda v: hvp(*args, v, **kwargs)), grad(fun, argnum)(*args, **kwargs)
    return _adapter(at)


def tensor_jacobian_product(fun, argnum=0):
    """``(*args, v) -> tensordot(v, J, ndim(v))``: `v` contracts the leading axes of the output."""
    full = jacobian(fun, argnum)

    def at(*args, **kwargs):
        *args, v = args
        return np.tensordot(v, full(*args, **kwargs), axes=np.ndim(v))
    return _adapter(at)


vector_jacobian_product = tensor_jacobian_product


def grad_named(fun, argname):
    return _lift(sg.grad, fun, argname)


def _not_mapped(name):
    def operator(*args, **kwargs):
        raise NotMapped(f"autograd.{name} has no counterpart in this adapter")
    operator.__name__ = name
    return operator


class ComplexOnly(NotMapped):
    """An operator of complex functions (out of scope: counted with the complex inputs)."""


def holomorphic_grad(fun, argnum=0):
    raise ComplexOnly("autograd.holomorphic_grad differentiates complex functions")


def grad_and_aux(fun, argnum=0):
    """``(*args) -> (gradient of the first output, the second output)`` for `fun` returning ``(value, aux)``:
    the vjp with the seed 1 for the value and zeros for `aux`."""
    vjp = _lift(sg.vjp, fun, argnum)

    def at(*args, **kwargs):
        value, aux = fun(*args, **kwargs)
        zeros = rebuild(aux, [np.zeros(np.shape(leaf)) if np.ndim(leaf) else 0.0 for leaf in leaves(aux)])
        return vjp(*args, (1.0, zeros), **kwargs)[1], aux
    return _adapter(at)


make_ggnvp = _not_mapped("make_ggnvp")
multigrad_dict = _not_mapped("multigrad_dict")


def checkpoint(fun):
    """autograd's checkpoint changes only memory use: the function itself."""
    return fun


class Unary:
    """`fun` as a function of its argument(s) `argnum` alone, the others fixed at `args` (what autograd's
    `unary_to_nary` hands its operators); `core_make_vjp` differentiates `fun` itself."""

    def __init__(self, fun, argnum, args, kwargs):
        self.fun, self.argnum, self.args, self.kwargs = fun, argnum, args, kwargs

    def __call__(self, x):
        moved = list(self.args)
        for k, value in ([(self.argnum, x)] if isinstance(self.argnum, int) else zip(self.argnum, x)):
            moved[k] = value
        return self.fun(*moved, **self.kwargs)


def unary_to_nary(operator):
    """autograd's decorator: ``operator(fun, x)`` becomes ``operator(fun, argnum)(*args)``."""
    @functools.wraps(operator)
    def nary(fun, argnum=0, *op_args, **op_kwargs):
        def at(*args, **kwargs):
            return operator(Unary(fun, argnum, args, kwargs), _selected(args, argnum), *op_args, **op_kwargs)
        return at
    return nary


def core_make_vjp(fun, x):
    """autograd.core's ``make_vjp(fun, x)``: ``(vjp, fun(x))`` for a unary `fun` (or a `Unary`)."""
    if isinstance(fun, Unary):
        vjp = make_vjp(fun.fun, fun.argnum)
        return vjp(*fun.args, **fun.kwargs)
    return make_vjp(fun, 0)(x)
