"""Helpers for end-to-end gradient tests.

`assert_grad_matches_fd(f, args, wrt)` compares ``s2sgrad.grad(f, wrt)(*args)`` with
central finite differences taken elementwise (inputs are small), and checks that the
gradient has the structure of its argument, that no input was modified in place and
that no returned gradient aliases an input or the seed.

`run_lowered(f, *args)` executes the ``stage="lowered"`` form of `f` and calls it.
"""
from __future__ import annotations

import copy
import functools
import inspect
import math
import operator
import types

import numpy as np
import pytest

import s2sgrad as sg
from s2sgrad import runtime
from s2sgrad.frontend.lower import assert_true
from s2sgrad.ir.primitives import astype, make_list, make_tuple, not_in, seq_getitem

STEP = 1e-4
for _shared in (types.ModuleType, functools.partial):      # a module (xp) or partial argument is shared, as a
    copy._deepcopy_dispatch.setdefault(_shared, copy._deepcopy_atomic)    # function argument is


# --- structure helpers -----------------------------------------------------------

def leaves(value):
    """The numeric leaves of a (nested) list/tuple/dict, in order."""
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in leaves(item)]
    if isinstance(value, dict):
        return [leaf for key in value for leaf in leaves(value[key])]
    return [value]


def _param_index(f, item) -> int:
    params = list(inspect.signature(f).parameters)
    if isinstance(item, str):
        return params.index(item)
    return item % len(params)


def _assert_same_structure(grad, arg, where: str):
    """`grad` is shaped like `arg`: a float for a float, an array of the same shape, same containers."""
    if isinstance(arg, (list, tuple)):
        assert type(grad) is type(arg), f"{where}: gradient is a {type(grad).__name__}, argument a {type(arg).__name__}"
        assert len(grad) == len(arg), f"{where}: gradient has {len(grad)} items, argument {len(arg)}"
        for i, (g, a) in enumerate(zip(grad, arg)):
            _assert_same_structure(g, a, f"{where}[{i}]")
    elif isinstance(arg, dict):
        assert isinstance(grad, dict), f"{where}: gradient is a {type(grad).__name__}, argument a dict"
        assert set(grad) == set(arg), f"{where}: gradient keys {sorted(grad)} != argument keys {sorted(arg)}"
        for key in arg:
            _assert_same_structure(grad[key], arg[key], f"{where}[{key!r}]")
    elif isinstance(arg, np.ndarray):
        assert isinstance(grad, np.ndarray), f"{where}: gradient is a {type(grad).__name__}, argument an ndarray"
        assert grad.shape == arg.shape, f"{where}: gradient shape {grad.shape} != argument shape {arg.shape}"
        assert grad.dtype.kind == "f", f"{where}: gradient has dtype {grad.dtype}, not a float dtype"
        assert grad.flags.writeable, f"{where}: gradient is a read-only array (a broadcast view?)"
    else:
        assert isinstance(grad, (float, np.floating)) and not isinstance(grad, np.ndarray), \
            f"{where}: gradient of a float is a {type(grad).__name__}: {grad!r}"


def _assert_equal_values(after, before, where: str):
    if isinstance(before, (list, tuple)):
        assert type(after) is type(before) and len(after) == len(before), f"{where} was modified"
        for i, (a, b) in enumerate(zip(after, before)):
            _assert_equal_values(a, b, f"{where}[{i}]")
    elif isinstance(before, dict):
        assert set(after) == set(before), f"{where} was modified"
        for key in before:
            _assert_equal_values(after[key], before[key], f"{where}[{key!r}]")
    elif isinstance(before, np.ndarray):
        assert np.array_equal(after, before, equal_nan=True), f"{where} was modified in place"
    else:
        assert after == before or (after != after and before != before), f"{where} was modified"


def assert_inputs_unchanged(args, snapshot, names="argument"):
    for i, (a, b) in enumerate(zip(args, snapshot)):
        _assert_equal_values(a, b, f"{names} {i}")


def _containers(value):
    if isinstance(value, (list, tuple, dict)):
        items = value.values() if isinstance(value, dict) else value
        return [value] + [c for item in items for c in _containers(item)]
    return []


def assert_no_alias(result, objects, what="input"):
    """No array or container in `result` is, or shares memory with, one in `objects`.

    (Python floats are immutable, so sharing one is harmless and not checked.)
    """
    objects = list(objects)
    others = [o for o in leaves(objects) if isinstance(o, np.ndarray)]
    other_containers = [c for o in objects for c in _containers(o)]
    for c in _containers(result):
        if c is result:
            continue
        assert all(c is not o for o in other_containers), f"a returned gradient is the same container as an {what}"
    for g in leaves(result):
        if not isinstance(g, np.ndarray):
            continue
        for o in others:
            assert g is not o, f"a returned gradient is the same object as an {what}"
            assert not np.shares_memory(g, o), f"a returned gradient shares memory with an {what}"


# --- finite differences ----------------------------------------------------------

def _replace_leaf(value, k, new):
    """A deep copy of `value` whose k-th leaf (in `leaves` order) is `new`."""
    counter = [0]

    def walk(v):
        if isinstance(v, (list, tuple)):
            return runtime.rebuilt(v, [walk(item) for item in v])
        if isinstance(v, dict):
            return {key: walk(item) for key, item in v.items()}
        if counter[0] == k:
            counter[0] += 1
            return new
        counter[0] += 1
        return copy.deepcopy(v)
    return walk(value)


def _call_scalar(f, args):
    return float(f(*copy.deepcopy(list(args))))


def finite_difference(f, args, index, step=STEP):
    """Central (fourth-order) finite-difference gradient of scalar f w.r.t. args[index], same structure."""
    arg = args[index]
    flat = leaves(arg)

    def partial(k, leaf):
        is_array = isinstance(leaf, np.ndarray)
        base = np.array(leaf, dtype=float)
        out = np.zeros(base.shape)
        for pos in np.ndindex(base.shape):
            values = []
            for t in (-2, -1, 1, 2):
                moved = base.copy()
                moved[pos] += t * step
                new_leaf = moved if is_array else float(moved)
                new_arg = _replace_leaf(arg, k, new_leaf)
                call_args = list(args)
                call_args[index] = new_arg
                values.append(_call_scalar(f, call_args))
            fm2, fm1, fp1, fp2 = values
            out[pos] = (fm2 - 8 * fm1 + 8 * fp1 - fp2) / (12 * step)
        return out if is_array else float(out)

    fd_leaves = [partial(k, leaf) for k, leaf in enumerate(flat)]
    it = iter(fd_leaves)

    def rebuild(v):
        if isinstance(v, (list, tuple)):
            return runtime.rebuilt(v, [rebuild(item) for item in v])
        if isinstance(v, dict):
            return {key: rebuild(item) for key, item in v.items()}
        return next(it)
    return rebuild(arg)


def _assert_close(grad, fd, rtol, atol, where):
    for i, (g, n) in enumerate(zip(leaves(grad), leaves(fd))):
        g = np.asarray(g, dtype=float)
        n = np.asarray(n, dtype=float)
        assert g.shape == n.shape, f"{where} leaf {i}: shape {g.shape} != {n.shape}"
        assert np.allclose(g, n, rtol=rtol, atol=atol), \
            f"{where} leaf {i}: gradient\n{g}\n!= finite differences\n{n}\n(max abs diff {np.max(np.abs(g - n))})"


def assert_grad_matches_fd(f, args, wrt=0, rtol=1e-6, atol=1e-8, expected=None):
    """Check ``sg.grad(f, wrt)(*args)`` against finite differences (and `expected`, if given).

    Returns the gradient. `wrt` may be an index, a name, or a tuple of them.
    """
    args = list(args)
    many = isinstance(wrt, (tuple, list))
    items = list(wrt) if many else [wrt]
    indices = [_param_index(f, item) for item in items]

    snapshot = copy.deepcopy(args)
    grads = sg.grad(f, wrt)(*args)
    assert_inputs_unchanged(args, snapshot)
    if many:
        assert isinstance(grads, tuple) and len(grads) == len(items), \
            f"grad with a tuple wrt returned {type(grads).__name__} {grads!r}"
        grad_list = list(grads)
    else:
        grad_list = [grads]
    assert_no_alias(grad_list, args, "input")

    for item, index, g in zip(items, indices, grad_list):
        _assert_same_structure(g, args[index], f"gradient w.r.t. {item!r}")
        fd = finite_difference(f, args, index)
        _assert_close(g, fd, rtol, atol, f"gradient w.r.t. {item!r}")
    if expected is not None:
        exp_list = list(expected) if many else [expected]
        for item, g, e in zip(items, grad_list, exp_list):
            _assert_close(g, e, 1e-10, 1e-12, f"gradient w.r.t. {item!r} (hand-derived)")

    # the seed: pass an explicit one through vjp and make sure no gradient is it
    value = f(*copy.deepcopy(args))
    seed = np.ones_like(np.asarray(value, dtype=float))
    seed_copy = seed.copy()
    vjp_args = copy.deepcopy(args)
    _, vgrads = sg.vjp(f, wrt)(*vjp_args, seed)
    assert np.array_equal(seed, seed_copy), "the seed was modified in place"
    assert_inputs_unchanged(vjp_args, snapshot)
    assert_no_alias(vgrads, [seed] + vjp_args, "input or the seed")
    return grads


def assert_vjp_matches_fd(f, args, wrt, dout, rtol=1e-6, atol=1e-8):
    """``sg.vjp(f, wrt)(*args, dout)`` against finite differences of ``sum(f * dout)``."""
    args = list(args)
    snapshot = copy.deepcopy(args)
    dout_copy = np.copy(dout)
    value, g = sg.vjp(f, wrt)(*args, dout)
    assert_inputs_unchanged(args, snapshot)
    assert np.array_equal(dout, dout_copy), "dout was modified in place"
    assert_no_alias(g, list(args) + [dout], "input or the seed")
    np.testing.assert_allclose(value, f(*copy.deepcopy(args)), rtol=1e-12, atol=1e-14)
    index = _param_index(f, wrt)
    _assert_same_structure(g, args[index], f"vjp w.r.t. {wrt!r}")

    def scalar(*a):
        return float(np.sum(np.asarray(f(*a)) * dout))
    fd = finite_difference(scalar, args, index)
    _assert_close(g, fd, rtol, atol, f"vjp w.r.t. {wrt!r}")
    return value, g


# --- the lowered form ------------------------------------------------------------

def lowered_namespace(f) -> dict:
    f = getattr(f, "__wrapped__", f)
    namespace = dict(f.__globals__)
    if f.__closure__:
        for name, cell in zip(f.__code__.co_freevars, f.__closure__):
            namespace[name] = cell.cell_contents
    namespace.update(np=np, math=math, operator=operator)
    for name in runtime.__all__:
        namespace[name] = getattr(runtime, name)
    namespace.update(make_tuple=make_tuple, make_list=make_list, seq_getitem=seq_getitem, astype=astype,
                     not_in=not_in, assert_true=assert_true)
    return namespace


def run_lowered(f, *args, **kwargs):
    """Execute the lowered form of `f` and call it on `args`; returns its result."""
    f = getattr(f, "__wrapped__", f)
    src = sg.source(f, stage="lowered", args=args)
    namespace = lowered_namespace(f)
    exec(compile(src, f"<lowered {f.__name__}>", "exec"), namespace)
    return namespace[f.__name__](*args, **kwargs)


def assert_lowered_matches(f, *args, **kwargs):
    """The lowered form of `f` returns what `f` returns (on private copies of the arguments)."""
    expected = f(*copy.deepcopy(args), **copy.deepcopy(kwargs))
    got = run_lowered(f, *copy.deepcopy(args), **copy.deepcopy(kwargs))
    _assert_tree_equal(got, expected)
    return got


def _assert_tree_equal(got, expected):
    if isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(expected), f"{got!r} != {expected!r}"
        for g, e in zip(got, expected):
            _assert_tree_equal(g, e)
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and set(got) == set(expected)
        for key in expected:
            _assert_tree_equal(got[key], expected[key])
    else:
        np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(expected, dtype=float),
                                   rtol=1e-12, atol=1e-14)


def lowered_params(cases, xfail: dict) -> list:
    """pytest parameters (function, arguments) for `test_lowered_form`; `xfail` maps names to reasons."""
    params, seen = [], {}
    for f, args in cases:
        seen[f.__name__] = seen.get(f.__name__, 0) + 1
        name = f.__name__ if seen[f.__name__] == 1 else f"{f.__name__}-{seen[f.__name__]}"
        marks = [pytest.mark.xfail(strict=True, reason=xfail[f.__name__])] if f.__name__ in xfail else []
        params.append(pytest.param(f, args, id=name, marks=marks))
    return params
