"""Ordinary Python constructs s2sgrad differentiates (see test_constructs.py): each function is checked
through grad, jvp and hvp against finite differences."""
import dataclasses
import typing

import numpy as np


class Pair(typing.NamedTuple):
    a: np.ndarray
    b: float


def builtin_sum_of_array(x):
    return sum(x) ** 2


def builtin_sum_of_matrix(x):
    return np.sum(sum(x) ** 2)


def builtin_sum_of_list(x):
    return sum([x, x * 2.0], 1.0) ** 2


def builtin_sum_of_product(x):
    s = sum(x * x)
    return s * 3.0


def named_tuple_indexed(p):
    return np.sum(p[0] * p[1]) + np.sum(np.sin(p[0]))


def named_tuple_unpacked(p):
    a, b = p
    return np.sum(a * b * a)


def named_tuple_not_differentiated(x, p):
    return np.sum(x * p[0]) * p[1]


def named_tuple_attributes(p):
    return np.sum(p.a * p.b * np.cos(p.a))


def named_tuple_attributes_not_differentiated(x, p):
    return np.sum(x * p.a) * p.b


def list_write_after_appends(x):
    ys = []
    ys.append(x)
    ys.append(x * 2.0)
    ys[1] = x * 3.0
    return np.sum(ys[0] * ys[1])


def list_write_in_a_loop(x):
    ys = []
    for i in range(3):
        ys.append(x * (i + 1.0))
    for i in range(3):
        ys[i] = ys[i] * x
    return np.sum(ys[0] + ys[1] * ys[2])


def list_write_reading_another_element(x):
    ys = [x, x]
    ys[0] = ys[1] * 2.0
    return np.sum(ys[0] * ys[1])


def list_write_of_a_slice(x):
    ys = [x, x * 2.0, x * 3.0]
    ys[0:2] = [np.sin(x)]
    return np.sum(ys[0] * ys[1])


def list_write_of_numbers(x):
    ys = [1.0, 2.0]
    ys[0] = x * x
    return ys[0] * ys[1]


def list_concatenation(x):
    ys = [x] + [x * 2.0]
    return np.sum(ys[0] * ys[1])


def list_augmented_concatenation(x):
    ys = [x]
    ys += [x * 2.0]
    return np.sum(ys[0] * ys[1])


def list_concatenation_in_a_loop(x):
    ys = [x]
    for i in range(2):
        ys = ys + [ys[-1] * x]
    return np.sum(ys[2] * ys[1])


def list_augmented_concatenation_in_a_loop(x):
    ys = [x]
    for i in range(2):
        ys += [np.sin(ys[-1])]
    return np.sum(ys[2])


def tuple_concatenation_and_list_repetition(x):
    a = [x, 2.0]
    b = (x, x * 3.0)
    ys = a + [x] * 2
    zs = b + (x,)
    ws = 2 * [np.cos(x)]
    return np.sum(ys[0] * ys[3] * zs[1] * zs[2] * ws[1])


def reversed_range(x):
    s = 0.0
    for i in reversed(range(3)):
        s = s * x[i] + x[i]
    return np.sum(s)


def reversed_range_with_start_and_step(x):
    s = 0.0
    for i in reversed(range(1, 3, 1)):
        s = np.sin(s) + x[i] * i
    return s


def reversed_list(x):
    s = 0.0
    for v in reversed([x, x * 2.0, np.sin(x)]):
        s = s * v + v
    return np.sum(s)


def enumerate_reversed(x):
    s = 0.0
    for k, v in enumerate(reversed(x)):
        s = s + v * (k + 1.0) * v
    return s


def dict_argument_loop(params):
    s = 0.0
    for k in params:
        s = s + np.sum(params[k] ** 2)
    return s


def dict_items(params):
    s = 0.0
    for k, v in params.items():
        s = s + np.sum(np.sin(v) * v)
    return s


def dict_values(params):
    s = 1.0
    for v in params.values():
        s = s * np.sum(v ** 2)
    return s


def dict_keys(params):
    s = 0.0
    for k in params.keys():
        s = s + np.sum(params[k] ** 3)
    return s


def dict_items_in_a_comprehension(params):
    return sum([np.sum(v * v) for v in params.values()])


def sum_of_squares(params):
    s = 0.0
    for k in params:
        s = s + np.sum(params[k] ** 2)
    return s


def passes_a_dict_to_a_helper(params):
    return sum_of_squares(params) * np.sum(params["a"])


def field_product(p):
    return np.sum(p.a) * p.b


def passes_a_named_tuple_on(p):
    return field_product(p) + np.sum(p.a ** 3)


def ndindex_loop(x):
    s = 0.0
    for i, j in np.ndindex(2, 2):
        s = s + x[i, j] ** 2 * (i + 1)
    return s


def ndindex_of_a_shape(x):
    s = 0.0
    for index in np.ndindex(x.shape):
        s = s + np.sin(x[index]) * x[index]
    return s


def constructors_of_constant_values(x):
    c = 0.5
    n = x.shape[0]
    return np.sum(np.full_like(x, c) * x) + np.sum(np.arange(n) * x) + np.sum(np.linspace(0.0, 1.0, n) * x) \
        + np.sum(np.full(x.shape, 2.0) * x * x)


@dataclasses.dataclass
class Scale:
    c: float

    def __call__(self, x):
        return x * self.c


SCALE = Scale(2.0)


def calls_an_unhashable_callable_on_a_constant(x):
    return np.sum(x * SCALE(2.0))


X = np.array([0.3, 0.7, 1.1])
M = np.array([[0.2, 0.5, 0.9], [1.3, -0.4, 0.6]])
D = {"a": np.array([1.0, 2.0]), "b": np.array([0.5, -1.5])}

CASES = [
    (builtin_sum_of_array, (X,), 0),
    (builtin_sum_of_matrix, (M,), 0),
    (builtin_sum_of_list, (0.4,), 0),
    (builtin_sum_of_product, (X,), 0),
    (named_tuple_indexed, (Pair(X, 2.0),), 0),
    (named_tuple_unpacked, (Pair(X, 2.0),), 0),
    (named_tuple_not_differentiated, (X, Pair(X, 2.0)), 0),
    (named_tuple_not_differentiated, (X, Pair(X, 2.0)), 1),
    (named_tuple_attributes, (Pair(X, 2.0),), 0),
    (named_tuple_attributes_not_differentiated, (X, Pair(X, 2.0)), 0),
    (named_tuple_attributes_not_differentiated, (X, Pair(X, 2.0)), 1),
    (list_write_after_appends, (X,), 0),
    (list_write_in_a_loop, (X,), 0),
    (list_write_reading_another_element, (X,), 0),
    (list_write_of_a_slice, (X,), 0),
    (list_write_of_numbers, (0.6,), 0),
    (list_concatenation, (X,), 0),
    (list_augmented_concatenation, (X,), 0),
    (list_concatenation_in_a_loop, (X,), 0),
    (list_augmented_concatenation_in_a_loop, (X,), 0),
    (tuple_concatenation_and_list_repetition, (X,), 0),
    (reversed_range, (X,), 0),
    (reversed_range_with_start_and_step, (X,), 0),
    (reversed_list, (X,), 0),
    (enumerate_reversed, (X,), 0),
    (dict_argument_loop, (D,), 0),
    (dict_items, (D,), 0),
    (dict_values, (D,), 0),
    (dict_keys, (D,), 0),
    (dict_items_in_a_comprehension, (D,), 0),
    (passes_a_dict_to_a_helper, (D,), 0),
    (passes_a_named_tuple_on, (Pair(X, 2.0),), 0),
    (ndindex_loop, (M[:, :2],), 0),
    (ndindex_of_a_shape, (M,), 0),
    (calls_an_unhashable_callable_on_a_constant, (X,), 0),
    (constructors_of_constant_values, (X,), 0),
]
