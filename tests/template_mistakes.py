"""Rule templates with mistakes, for tests/test_rule_templates.py (each mistake is on a line marked ``# here``)."""
import numpy as np

from s2sgrad.rules import d


def triple(x):
    return 3.0 * x


def adjoint_of_no_parameter(y, x):
    d[z] = 3.0 * d[y]  # here  # noqa: F821


def adjoint_reads_an_argument(y, x):
    d[x] = 3.0 * d[x]  # here


def misspelled_parameter(y, x):
    d[x] = 3.0 * d[y] * xx  # here  # noqa: F821


def statement_not_inlined(y, x):
    if x > 0:  # here
        d[x] = 3.0 * d[y]


def tangent_reads_no_parameter(y, x):
    d[y] = 3.0 * d[z]  # here  # noqa: F821


def tangent_sets_an_argument(y, x):
    d[x] = 3.0 * d[y]  # here


def tangent_sets_nothing(y, x):  # here
    t = 3.0 * d[x]  # noqa: F841


def sum_with_a_wrong_parameter(y, array, axis=None):  # here
    d[array] = np.ones_like(array) * d[y]


def partial(g, y, x):
    return g
