"""Rules for ``scipy.signal.convolve`` and ``scipy.signal.correlate`` of real arrays (any number of axes),
registered when the program imports ``scipy.signal``.

The full convolution's gradient in one operand is the correlation of the gradient with the
other (``valid`` part); `signal_full` first puts a ``same`` or ``valid`` result's gradient in
its place in the full one. ``correlate(in1, in2)`` is ``convolve(in1, flip(in2))``.
"""
import numpy as np
from scipy import signal

from ..runtime import scipy_signal, signal_full
from .registry import adjoint, d, tangent


@adjoint(signal.convolve)
def convolve(y, in1, in2, mode="full", method="auto"):
    d[in1] = scipy_signal.correlate(signal_full(d[y], in1, in2, mode), in2, "valid")
    d[in2] = scipy_signal.correlate(signal_full(d[y], in1, in2, mode), in1, "valid")


@tangent(signal.convolve)
def convolve(y, in1, in2, mode="full", method="auto"):
    d[y] = scipy_signal.convolve(d[in1], in2, mode, method) + scipy_signal.convolve(in1, d[in2], mode, method)


@adjoint(signal.correlate)
def correlate(y, in1, in2, mode="full", method="auto"):
    d[in1] = scipy_signal.correlate(signal_full(d[y], in1, in2, mode), np.flip(in2), "valid")
    d[in2] = np.flip(scipy_signal.correlate(signal_full(d[y], in1, in2, mode), in1, "valid"))


@tangent(signal.correlate)
def correlate(y, in1, in2, mode="full", method="auto"):
    d[y] = scipy_signal.correlate(d[in1], in2, mode, method) + scipy_signal.correlate(in1, d[in2], mode, method)
