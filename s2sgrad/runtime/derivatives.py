"""Calls of derivatives s2sgrad made, inside a function s2sgrad differentiates: the derivative's own
transformed code gives their gradient (`derivative_vjp`) and tangent (`derivative_jvp`).
"""
from __future__ import annotations

from .gradients import zeros_like


def derivative_vjp(derivative, name: str, cotangent, *args):
    """The gradient with respect to argument `name` of ``⟨cotangent, derivative(*args)⟩``, for a derivative
    s2sgrad made called inside a differentiated function (`s2sgrad.api.derivatives.derivative_rule`)."""
    spec = derivative.s2sgrad_derivative
    grad = spec.transformed("vjp", derivative, name)(*args, cotangent)[1]
    if grad is None:                        # every part of the cotangent is a zero
        grad = zeros_like(args[list(spec.params).index(name)])
    return grad


def derivative_jvp(derivative, names: tuple, tangents: tuple, *args):
    """The tangent of ``derivative(*args)`` along `tangents` of the arguments `names`, for a derivative
    s2sgrad made called inside a function forward mode differentiates."""
    return derivative.s2sgrad_derivative.transformed("jvp", derivative, names)(*args, tangents)[1]
