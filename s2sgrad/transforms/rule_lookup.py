"""The derivative rule of a primitive's call, for either mode, or the error saying why there is none.

Both reverse mode (`Mode.ADJOINT`) and forward mode (`Mode.TANGENT`) look a call's function up here: a
registered rule; for a derivative s2sgrad made, the rule it carries (its vjp or jvp at run time);
otherwise a refusal at the user's line that says what to do instead.

    >>> import numpy as np
    >>> from s2sgrad.ir import Assign, Op, Var
    >>> rule_of(Assign("y", Op(np.sin, [Var("x")])), ADJOINT, None, lambda atom: True).output
    'y'
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import NoDerivativeRule, derivative_call_refusal
from ..ir import primitives
from ..ir.nodes import Assign
from ..rules import rule_for, tangent_rule_for
from ..rules.nondifferentiable import opaque_call_error
from ..rules.registry import Rule
from ..runtime import derivative_jvp, derivative_vjp, random_draw


@dataclass(frozen=True)
class Mode:
    """What a mode calls its rules, where it finds them, and how a user registers one."""
    what: str                       # "derivative rule", "forward-mode (tangent) rule"
    lookup: Callable
    register: str                   # the decorator that registers one
    carried: str                    # the method of a derivative's Spec giving its rule
    flows: str                      # what flows through a call: "gradient", "derivative"


ADJOINT = Mode("derivative rule", rule_for, "sg.adjoint", "adjoint_rule", "gradient")
TANGENT = Mode("forward-mode (tangent) rule", tangent_rule_for, "sg.tangent", "tangent_rule", "derivative")


def rule_of(stmt: Assign, mode: Mode, module, differentiated: Callable) -> Rule:
    """The `mode` rule of `stmt`'s call; `module` binds a call's arguments to its function's parameters,
    `differentiated(atom)` says whether an argument carries a derivative."""
    op = stmt.value
    fn = op.fn
    rule = mode.lookup(fn)
    if rule is not None:
        return rule
    refusal = opaque_call_error(fn, stmt.loc)
    if refusal is not None:
        raise refusal
    label = primitives.label(fn, op.args, op.name)
    if fn in primitives.WRITERS:
        raise NoDerivativeRule(
            f"no {mode.what} for {label}, which writes into its first argument", stmt.loc,
            "compute the new array as a value instead (np.where, y[i] = v, y = y + ...), or wrap the "
            f"values written in sg.stop_gradient(...) if no {mode.flows} should flow through them")
    if hasattr(fn, "s2sgrad_derivative"):          # a derivative s2sgrad made: its vjp or jvp, at run time
        bound = module.call_arguments(op, stmt.loc)
        carried = getattr(fn.s2sgrad_derivative, mode.carried)
        return carried(fn, op.name, [differentiated(a) for a in bound], stmt.loc)
    if fn is derivative_vjp or fn is derivative_jvp:
        from_derivative = op.args[0]
        message, hint = derivative_call_refusal(from_derivative.value, from_derivative.name, "forward mode over "
                                                "a derivative (hvp, jvp(grad(f)), jvp(jvp(f)))")
        raise NoDerivativeRule(message, stmt.loc, hint)
    if hasattr(fn, "cache_info") and hasattr(fn, "__wrapped__"):
        raise NoDerivativeRule(
            f"{label} is cached with functools.lru_cache or functools.cache: a call may return a value "
            f"stored by an earlier call, which has no {mode.flows}", stmt.loc,
            f"call the undecorated function ({label}.__wrapped__) where {mode.flows}s flow, or wrap the "
            "argument in sg.stop_gradient(...)")
    if fn is random_draw or isinstance(getattr(fn, "__self__", None), (np.random.RandomState, np.random.Generator)):
        if fn is random_draw:
            label = f"{getattr(op.args[0], 'name', 'rng')}.{op.args[1].value}"
        raise NoDerivativeRule(
            f"no {mode.what} for {label}: a random draw has no {mode.flows} with respect to its parameters",
            stmt.loc, f"draw standard noise and shift and scale it (x + s * rng.standard_normal(size), the "
            f"reparametrization), through which the {mode.flows} flows, or wrap the parameters in "
            f"sg.stop_gradient(...)")
    public = public_name(fn) if label == op.name != getattr(fn, "__name__", None) else None
    if public is not None and public != label:
        label, called = public, f"{label} ({public})"
    else:
        called = label
    raise NoDerivativeRule(
        f"no {mode.what} for {called}", stmt.loc,
        f"register one with @{mode.register}({label}), or wrap the argument in "
        f"sg.stop_gradient(...) if no {mode.flows} should flow through it")



def public_name(fn) -> str | None:
    """The shortest importable dotted name of a library function (``scipy.linalg.expm`` for the function that
    ``scipy.linalg._matfuncs`` defines), or None."""
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(name, str) or "<" in name:
        return None
    parts = module.split(".")
    for k in range(1, len(parts) + 1):
        loaded = sys.modules.get(".".join(parts[:k]))
        if loaded is not None and getattr(loaded, name, None) is fn:
            return ".".join(["np" if parts[0] == "numpy" and k == 1 else parts[0], *parts[1:k], name])
    return None
