"""Scalar loops for tests/test_coefficient_arrays.py: each a loop over Python floats whose body is arithmetic."""
import math

import numpy as np

STEP = 0.01


def euler(y, n):
    i = 0
    while i < n:
        y = y + STEP * (np.sin(y) * 1.01 + 0.1 * y * y - 0.05 * y * y * y)
        i += 1
    return y


def two_carried(x, n):
    y = x
    z = 0.5
    for _ in range(n):
        y, z = np.tanh(y * z + x), z + 0.1 * y * y
    return y + z


def quotients(x, n):
    y = x
    for i in range(n):
        y = y / (1.0 + y * y) + x / (2.0 + np.exp(-y))
    return y


def powers(x, n):
    y = x
    for _ in range(n):
        y = 0.5 * y ** 2 + np.sqrt(1.0 + y ** 2) * 0.3 - x ** 3 * 0.1
    return y


def counter_in_body(x, n):
    y = x
    for i in range(n):
        y = np.cos(y) * 0.9 + 0.01 * i * y
    return y


def counter_while(x, n):
    y = x
    i = 0
    while i < n:
        y = np.cos(y) * 0.9 + 0.01 * i * y
        i += 1
    return y


def counter_from_two(x, n):
    y = x
    for i in range(2, n):
        y = np.cos(y) * 0.9 + 0.01 * i * y
    return y


def counter_nested(x, n):
    y = x
    for _ in range(3):
        for i in range(n):
            y = np.sin(y) * x + 0.02 * i * y
        y = y * 0.9
    return y


def counter_term(x, n):
    y = x
    z = 0.2
    for i in range(n):
        z = z + y * i
        y = np.sin(y) * x
    return y + z


def counter_factor(x, n):
    y = x
    for i in range(n):
        y = y * (i * 0.1) + x * 0.5
    return y


def counter_alone(x, n):
    y = x
    for i in range(n):
        y = y * i + x * 0.5
    return y


def math_calls(x, n):
    y = x
    k = 0
    while k < n:
        y = math.sin(y) * x + math.exp(-y * y) * 0.5
        k += 1
    return y


def nested(x, n):
    y = x
    for _ in range(3):
        for _ in range(n):
            y = np.sin(y) * x + 0.2
        y = y * 0.9
    return y


def branch_in_body(x, n):
    y = x
    for _ in range(n):
        if y > 0.3:
            y = np.sin(y) * x
        else:
            y = y * y + 0.1
    return y


def read_after(x, n):
    y = x
    s = 0.0
    for _ in range(n):
        s = s + y * y
        y = np.sin(y) * x
    return s * y
