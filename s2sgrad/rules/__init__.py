"""Derivative rules, one short template per primitive. The rule table is the documentation.

Each adjoint (reverse-mode) rule has a tangent (forward-mode) twin beside it;
`runtime_helpers` gives forward-mode rules to what generated gradients call.
Importing this package registers every built-in rule.
"""
from . import (  # noqa: F401  (importing a table registers its rules)
    arrangements,
    builtins,
    containers,
    decompositions,
    dicts,
    fft,
    linalg,
    math_scalar,
    nondifferentiable,
    operators,
    records,
    reductions,
    runtime_helpers,
    shapes,
    ufuncs,
)
from .registry import Rule, RuleTemplateError, adjoint, d, is_nondifferentiable, rule_for, tangent, tangent_rule_for
from .registry import nondifferentiable as mark_nondifferentiable

__all__ = ["Rule", "RuleTemplateError", "adjoint", "d", "is_nondifferentiable", "mark_nondifferentiable", "rule_for",
           "tangent", "tangent_rule_for"]
