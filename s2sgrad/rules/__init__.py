"""Derivative rules, one short template per primitive. The rule table is the documentation.

Importing this package registers every built-in rule.
"""
from . import (containers, linalg, math_scalar, nondifferentiable, operators, reductions,  # noqa: F401  (registers)
               shapes, ufuncs)
from .registry import Rule, adjoint, d, is_nondifferentiable, nondifferentiable as mark_nondifferentiable, rule_for, tangent

__all__ = ["Rule", "adjoint", "d", "is_nondifferentiable", "mark_nondifferentiable", "rule_for", "tangent"]
