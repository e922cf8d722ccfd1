"""Derivative checks against central finite differences, and the classes of their outcomes.

A check differentiates `f` with s2sgrad at `args` and compares the result with
central finite differences along a random direction. It never raises: it
returns an `Outcome` whose status is one of

* ``passed``
* ``refused``: s2sgrad raised an `S2SGradError` (a clear refusal),
* ``crashed``: any other exception inside s2sgrad or the code it generated,
* ``wrong``: a derivative (or the value returned with it) that differs from
  finite differences, or is not shaped like its argument: the worst class,
* ``complex``: an input or the output is complex (out of scope here),
* ``no-numpy``: plain NumPy cannot run `f` itself (not s2sgrad's business), or `f` is not finite at
  `args`, or `args` is at the edge of its domain, where its derivative is infinite,
* ``not-mapped``: what the test asks for has no counterpart in the adapter.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(np.sin(x) * x)
    >>> check_vjp(f, (np.arange(3.0),), {}, 0).status
    'passed'
"""
from __future__ import annotations

import copy
import pathlib
import traceback
from dataclasses import dataclass

import numpy as np

import s2sgrad as sg

STEPS = (1e-6, 1e-5, 1e-4, 1e-7)      # finite-difference steps: a derivative is right if one of them agrees
RTOL, ATOL = 1e-5, 1e-7
ORDER = {"wrong": 0, "crashed": 1, "refused": 2, "passed": 3, "not-mapped": 4, "no-numpy": 5, "complex": 6}
MEASURED = ("wrong", "crashed", "refused", "passed")     # the statuses that say something about s2sgrad


@dataclass
class Outcome:
    """What one check found: `mode` is ``rev`` (vjp) or ``fwd`` (jvp); `message` the first line of the
    error or of the mismatch; `kind` the exception's class name."""
    mode: str
    status: str
    message: str = ""
    kind: str = ""

    def as_dict(self) -> dict:
        return {"mode": self.mode, "status": self.status, "message": self.message, "kind": self.kind}


def worst(outcomes: list) -> Outcome | None:
    """The outcome of the worst class among `outcomes` (None for none)."""
    return min(outcomes, key=lambda o: ORDER[o.status]) if outcomes else None


# --- values as lists of leaves -------------------------------------------------------

def leaves(value) -> list:
    """The leaves of nested lists, tuples and dicts, in order (dicts by insertion order)."""
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in leaves(item)]
    if isinstance(value, dict):
        return [leaf for key in value for leaf in leaves(value[key])]
    return [value]


def rebuild(like, new: list):
    """`like` with its leaves replaced, in order, by the items of `new` (consumed from the front)."""
    if isinstance(like, (list, tuple)):
        items = [rebuild(item, new) for item in like]
        return items if isinstance(like, list) else type(like)(*items) if hasattr(like, "_fields") \
            else tuple(items)
    if isinstance(like, dict):
        return {key: rebuild(like[key], new) for key in like}
    return new.pop(0)


def is_float(leaf) -> bool:
    """A leaf finite differences move: a float or an array of floats (not ints, bools, or other objects)."""
    if isinstance(leaf, (bool, np.bool_)):
        return False
    return (isinstance(leaf, (float, np.floating))
            or (isinstance(leaf, np.ndarray) and np.issubdtype(leaf.dtype, np.floating)))


def is_complex(value) -> bool:
    return any(np.iscomplexobj(leaf) for leaf in leaves(value) if isinstance(leaf, (complex, np.ndarray, np.generic)))


def random_like(value, rng):
    """Random normal leaves where `value` has float leaves, zeros elsewhere; the structure of `value`."""
    new = [rng.standard_normal(np.shape(leaf)) if is_float(leaf) else np.zeros(np.shape(leaf))
           for leaf in leaves(value)]
    new = [float(n) if np.ndim(leaf) == 0 and not isinstance(leaf, np.ndarray) else n
           for n, leaf in zip(new, leaves(value))]
    return rebuild(value, new)


def moved(value, direction, t: float):
    """``value + t * direction``, leaf by leaf, for float leaves (other leaves stay as they are)."""
    return rebuild(value, [leaf + t * d if is_float(leaf) else leaf
                           for leaf, d in zip(leaves(value), leaves(direction))])


def inner(a, b) -> float:
    """The sum of the elementwise products of the float leaves of `a` and `b`."""
    return float(sum(np.sum(np.asarray(x, dtype=float) * np.asarray(y, dtype=float))
                     for x, y in zip(leaves(a), leaves(b)) if is_float(y)))


def same_structure(grad, arg) -> str:
    """'' if `grad` is shaped like `arg` leaf by leaf, else what differs."""
    g, a = leaves(grad), leaves(arg)
    if len(g) != len(a):
        return f"the derivative has {len(g)} leaves, the argument {len(a)}"
    for gl, al in zip(g, a):
        if is_float(al) and np.shape(gl) != np.shape(al):
            return f"a derivative of shape {np.shape(gl)} for an argument of shape {np.shape(al)}"
    return ""


# --- the checks -----------------------------------------------------------------------

def _close(analytic: float, numeric: float) -> bool:
    if not (np.isfinite(analytic) and np.isfinite(numeric)):
        return False
    return abs(analytic - numeric) <= ATOL + RTOL * max(1.0, abs(analytic), abs(numeric))


EDGE = "the derivative is not finite here, and f is not defined on both sides (the edge of its domain)"


def _at_edge(analytic: float, numeric_at) -> bool:
    """Is a derivative that is not finite taken where `f` itself stops being defined on one side (like
    ``arccos`` at 1)? There it is what it is, and no difference quotient can check it."""
    return not np.isfinite(analytic) and not all(np.isfinite(numeric_at(1e-7, side)) for side in (1, -1))


def _selected(args, argnum):
    return args[argnum] if isinstance(argnum, int) else tuple(args[k] for k in argnum)


def _substituted(args, argnum, x):
    args = list(args)
    for k, value in ([(argnum, x)] if isinstance(argnum, int) else zip(argnum, x)):
        args[k] = value
    return args


def _directional(f, args, kwargs, argnum, direction, step, side: int = 0):
    """The difference quotient of `f` along `direction` (in the space of the `argnum` arguments): central
    for ``side=0``, one-sided towards ``+direction`` (1) or ``-direction`` (-1)."""
    x = _selected(args, argnum)

    def at(t):
        return f(*copy.deepcopy(_substituted(args, argnum, moved(x, direction, t))), **kwargs)
    plus, minus = at(step if side >= 0 else 0.0), at(-step if side <= 0 else 0.0)
    width = step * (2 if side == 0 else 1)
    return rebuild(plus, [(np.asarray(p, dtype=float) - np.asarray(m, dtype=float)) / width
                          if is_float(p) or is_float(m) else np.zeros(np.shape(p))
                          for p, m in zip(leaves(plus), leaves(minus))])


def _failure(mode: str, error: BaseException) -> Outcome:
    status = "refused" if isinstance(error, sg.S2SGradError) else "crashed"
    text = (str(error).strip().splitlines() or [""])[0]
    if status == "crashed":
        frame = traceback.extract_tb(error.__traceback__)[-1]
        text = f"{text}  [at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}]"
    return Outcome(mode, status, text[:300], type(error).__name__)


def _from_s2sgrad(error: BaseException) -> bool:
    """Was `error` raised by s2sgrad, or inside code it generated?"""
    package = pathlib.Path(sg.__file__).parent
    return isinstance(error, sg.S2SGradError) or any(
        frame.filename.startswith("<s2sgrad") or pathlib.Path(frame.filename).is_relative_to(package)
        for frame in traceback.extract_tb(error.__traceback__))


def _start(mode, f, args, kwargs):
    """The plain value of `f`, or the outcome that ends the check before it starts."""
    if is_complex(args):
        return None, Outcome(mode, "complex")
    try:
        y = f(*copy.deepcopy(list(args)), **kwargs)
    except Exception as error:
        if _from_s2sgrad(error):                   # a derivative `f` itself calls failed
            return None, _failure(mode, error)
        return None, Outcome(mode, "no-numpy", f"{type(error).__name__}: {error}"[:300], type(error).__name__)
    if is_complex(y):
        return None, Outcome(mode, "complex")
    if not all(np.all(np.isfinite(leaf)) for leaf in leaves(y) if is_float(leaf)):
        return None, Outcome(mode, "no-numpy", "f is not finite at this point")
    return y, None


def _agrees(analytic: float, numeric_at) -> tuple[bool, float]:
    """Whether `analytic` is the derivative `numeric_at(step, side)` estimates: the central difference at
    one of the `STEPS`, or, where `f` is not smooth (a branch or a kink at this point: the one-sided
    differences disagree), one of the one-sided derivatives, which is the derivative of one of the pieces."""
    numerics = []
    for step in STEPS:
        numeric = numeric_at(step, 0)
        if _close(analytic, numeric):
            return True, numeric
        numerics.append(numeric)
    for step in (1e-7, 1e-8):
        right, left = numeric_at(step, 1), numeric_at(step, -1)
        if not _close(right, left) and (_close(analytic, right) or _close(analytic, left)):
            return True, right
    return False, numerics[0]


def check_vjp(f, args, kwargs: dict, argnum, seed: int = 0) -> Outcome:
    """``s2sgrad.vjp(f, wrt=argnum)`` at `args` against central finite differences: for random `dout` and
    direction `v`, ``<vjp(dout), v>`` must equal ``<dout, (f(x + h v) - f(x - h v)) / 2h>``."""
    y, early = _start("rev", f, args, kwargs)
    if early:
        return early
    rng = np.random.default_rng(seed)
    dout = random_like(y, rng)
    direction = random_like(_selected(args, argnum), rng)
    try:
        value, g = sg.vjp(f, wrt=argnum)(*copy.deepcopy(list(args)), dout, **kwargs)
    except Exception as error:
        return _failure("rev", error)
    try:
        if not np.allclose(inner(value, dout), inner(y, dout), rtol=1e-7, atol=1e-9):
            return Outcome("rev", "wrong", f"the value returned with the vjp differs from f: {value!r} vs {y!r}"[:300])
        mismatch = same_structure(g, _selected(args, argnum))
        if mismatch:
            return Outcome("rev", "wrong", mismatch)
        analytic = inner(g, direction)

        def numeric_at(h, side):
            return inner(_directional(f, args, kwargs, argnum, direction, h, side), dout)
        if _at_edge(analytic, numeric_at):
            return Outcome("rev", "no-numpy", EDGE)
        ok, numeric = _agrees(analytic, numeric_at)
    except Exception as error:
        return _failure("rev", error)
    if not ok:
        return Outcome("rev", "wrong", f"vjp . v = {analytic:.10g}, finite differences {numeric:.10g}")
    return Outcome("rev", "passed")


def check_jvp(f, args, kwargs: dict, argnum, seed: int = 0) -> Outcome:
    """``s2sgrad.jvp(f, wrt=argnum)`` at `args` along a random tangent against central finite differences
    (compared through a random covector)."""
    y, early = _start("fwd", f, args, kwargs)
    if early:
        return early
    rng = np.random.default_rng(seed)
    tangent = random_like(_selected(args, argnum), rng)
    covector = random_like(y, rng)
    try:
        value, t = sg.jvp(f, wrt=argnum)(*copy.deepcopy(list(args)), tangent, **kwargs)
    except Exception as error:
        return _failure("fwd", error)
    try:
        if not np.allclose(inner(value, covector), inner(y, covector), rtol=1e-7, atol=1e-9):
            return Outcome("fwd", "wrong", f"the value returned with the jvp differs from f: {value!r} vs {y!r}"[:300])
        mismatch = same_structure(t, y)
        if mismatch:
            return Outcome("fwd", "wrong", "tangent vs output: " + mismatch)
        analytic = inner(t, covector)

        def numeric_at(h, side):
            return inner(_directional(f, args, kwargs, argnum, tangent, h, side), covector)
        if _at_edge(analytic, numeric_at):
            return Outcome("fwd", "no-numpy", EDGE)
        ok, numeric = _agrees(analytic, numeric_at)
    except Exception as error:
        return _failure("fwd", error)
    if not ok:
        return Outcome("fwd", "wrong", f"w . jvp = {analytic:.10g}, finite differences {numeric:.10g}")
    return Outcome("fwd", "passed")


def check_second_order(f, args, kwargs: dict, argnum, seed: int = 0) -> Outcome:
    """Second derivatives, forward over reverse, against central differences of the first derivative
    (which `check_vjp` checks): ``s2sgrad.hvp(f)`` for an output of one element, else the jvp of the vjp,
    ``s2sgrad.jvp(s2sgrad.vjp(f))`` along a random direction with a random `dout`."""
    y, early = _start("rev2", f, args, kwargs)
    if early:
        return early
    rng = np.random.default_rng(seed)
    x = _selected(args, argnum)
    direction, covector = random_like(x, rng), random_like(x, rng)
    one_element = not isinstance(y, (list, tuple, dict)) and np.size(y) == 1
    try:
        if one_element:
            first = sg.grad(f, wrt=argnum)
            second = sg.hvp(f, wrt=argnum)(*copy.deepcopy(list(args)), direction, **kwargs)
        else:
            dout = random_like(y, rng)
            vjp = sg.vjp(f, wrt=argnum)

            def first(*a, **k):
                return vjp(*a, dout, **k)[1]
            second = sg.jvp(vjp, wrt=argnum)(*copy.deepcopy(list(args)), dout, direction, **kwargs)[1][1]
    except Exception as error:
        return _failure("rev2", error)
    try:
        mismatch = same_structure(second, x)
        if mismatch:
            return Outcome("rev2", "wrong", mismatch)
        analytic = inner(second, covector)

        def numeric_at(h, side):
            return inner(_directional(first, args, kwargs, argnum, direction, h, side), covector)
        if _at_edge(analytic, numeric_at):
            return Outcome("rev2", "no-numpy", EDGE)
        ok, numeric = _agrees(analytic, numeric_at)
    except Exception as error:
        return _failure("rev2", error)
    if not ok:
        return Outcome("rev2", "wrong", f"second derivative . (v, w) = {analytic:.10g}, finite differences "
                                        f"{numeric:.10g}")
    return Outcome("rev2", "passed")
