"""Functions for test_views.py: names for one object made by NumPy functions, containers and helpers."""
import types

import numpy as np

G = np.ones(4)
CONFIG = types.SimpleNamespace(W=np.ones(4))


def list_of_slices(x):
    y = x * 1.0
    parts = [y[0:2], y[2:4]]
    y *= 2.0
    return np.sum(parts[0] * parts[1])                      # read: parts


def appended_slices(x):
    y = x * 1.0
    parts = []
    for i in range(2):
        parts.append(y[2 * i:2 * i + 2])
    y[0] = 7.0
    return np.sum(parts[0] * parts[1])                      # read: parts


def tuple_unpacked(x):
    y = x * 1.0
    pair = (y, x)
    a, b = pair
    a[0] = 3.0
    return np.sum(y * b)                                    # read: y


def list_builtin(x):
    y = np.reshape(x * 1.0, (2, 2))
    rows = list(y)
    y *= 2.0
    return np.sum(rows[0])                                  # read: rows


def element_of_list_changed(x):
    y = x * 1.0
    parts = [y[0:2], y[2:4]]
    first = parts[0]
    first *= 3.0
    return np.sum(y)                                        # read: y


def list_changed_not_its_items(x):
    y = x * 1.0
    parts = [y[0:2]]
    parts.append(x * 2.0)                                   # changes the list, not y
    return np.sum(y * x) + np.sum(parts[0] * parts[1][0:2])


def write_into(a, s):
    a[0] = s
    return np.sum(a)


def scale_in_place(a):
    a *= 2.0
    return 1.0


def append_to(items, v):
    items.append(v)
    return 0.0


def helper_changes_argument(x):
    y = x * 1.0
    s = write_into(y, x[1])
    return s + np.sum(y * x)                                # y as changed by write_into


def helper_scales_argument(x):
    y = x * 1.0
    s = scale_in_place(y)
    return s + np.sum(y * x)                                # read: y


def write_through_alias(a, s):
    b = a
    b[2] = s
    return 0.5 * s


def helper_changes_through_alias(x):
    y = x * 1.0
    t = write_through_alias(y, x[0])
    return np.sum(y * x) + t                                # read: y


def helper_changes_argument_of_alias(x):
    y = x * 1.0
    z = y
    t = write_into(z, x[3])
    return np.sum(z * x) + t + np.sum(y)                    # read: y


def helper_changes_argument_not_read(x):
    y = x * 1.0
    s = write_into(y, x[1] * x[2])
    return s * np.sum(x)


def helper_changes_a_view(x):
    y = x * 1.0
    t = scale_in_place(y[0:2])
    return np.sum(y * x) * t                                # read: y


def helper_changes_an_alias(x):
    y = x * 1.0
    z = y
    t = scale_in_place(z)
    return np.sum(y * x) * t                                # read: y


def helper_appends(x):
    items = [x]
    s = append_to(items, x * 2.0)
    return np.sum(items[-1] * x) + s


def helper_changes_in_loop(x):
    y = x * 1.0
    s = 0.0
    for i in range(3):
        s = s + write_into(y, x[i]) * x[i]
    return s


def first_two(a):
    return a[0:2]


def helper_returns_a_view(x):
    y = x * 1.0
    v = first_two(y)
    y *= 2.0
    return np.sum(v * x[0:2])                               # read: v


def doubled(a):
    b = a * 2.0
    b[0] = 1.0
    return b


def helper_returns_a_new_array(x):
    y = x * 1.0
    v = doubled(y)
    y *= 2.0
    v[1] = x[0]
    return np.sum(v * x) + np.sum(y)


def step(h, x):
    h += np.tanh(x)
    return h


def recurrence_through_helper(x):
    h = x * 0.5
    for i in range(3):
        h = step(h, x)
    return np.sum(h * h)


def recurrence_kept_in_list(x):
    h = x * 0.5
    hs = []
    for i in range(3):
        hs.append(h)                                        # read: hs (next trip)
        h = step(h, x)
    return np.sum(hs[0] * h)


def nested_changes_parameter(x):
    y = x * 1.0

    def inner(a):
        a[1] = 0.0
        return np.sum(a)
    t = inner(y)
    return t + np.sum(y * x)


def changes_default(x, a=np.zeros(2)):
    a[0] = x[0]
    return np.sum(a)


def calls_with_default(x):
    return changes_default(x) * np.sum(x)


def alias_of_global(x):
    a = G
    a[0] = 5.0
    return np.sum(a * x)


def alias_of_attribute(x):
    w = CONFIG.W
    w *= 2.0
    return np.sum(w * x)


def changes_global(x):
    a = G
    a[1] = x[0]
    return 1.0


def helper_changes_global(x):
    return changes_global(x) * np.sum(x)


def write_broadcast(x):
    v = np.broadcast_to(x, (2, 4))
    v[0, 0] = 1.0
    return np.sum(v)


def write_diagonal_in_list(x):
    B = np.reshape(x * 1.0, (2, 2))
    parts = [np.diagonal(B), x]
    d = parts[0]
    d *= 2.0
    return np.sum(B)


def diagonal_read_after_write(x):
    B = np.reshape(x * 1.0, (2, 2))
    d = np.diagonal(B)
    B *= 3.0
    return np.sum(d * d)                                    # read: d


def reshape_written(x):
    y = x * 1.0
    v = np.reshape(y, (2, 2))
    v[0, 0] = 5.0
    return np.sum(y * x)                                    # read: y


def unknown_function_result(x):
    y = x * 1.0
    v = np.lib.stride_tricks.as_strided(y)
    y[0] = 2.0
    return np.sum(v)                                        # read: v


def returns_global():
    return G


def result_is_a_global(x):
    r = returns_global()
    r[0] = x[0]
    return np.sum(r * x)



def concatenated_lists(x):
    p = [x * 1.0]
    r = p + [x * 2.0]
    e = r[0]
    e[0] = 5.0
    return np.sum(p[0] * x)                                 # read: p


def rows_changed(x):
    B = np.reshape(x * 1.0, (2, 2))
    for row in B:
        row *= 2.0
    return np.sum(B * B)


def zipped_rows(x):
    B = np.reshape(x * 1.0, (2, 2))
    pairs = list(zip(B, B))
    B *= 2.0
    return np.sum(pairs[0][0])                              # read: pairs


def fill(a, s):
    a[0] = s


def fill_in_branches(a, s):
    if s > 0.0:
        a[1] = s
        return 1.0
    a[2] = s
    return 2.0


def helper_without_return(x):
    y = x * 1.0
    fill(y, x[1] * 3.0)
    return np.sum(y * x)


def helper_called_with_keywords(x):
    y = x * 1.0
    fill(s=x[2], a=y)
    return np.sum(y * x)


def helper_returning_in_branches(x):
    y = x * 1.0
    t = fill_in_branches(y, x[0])
    return np.sum(y * x) * t                                # read: y


def filled_count(a, s):
    a[0] = a[0] + s
    return a[0]


def helper_statement_in_loop(x):
    y = x * 1.0
    for i in range(3):
        fill(y, y[1] * x[i])
    return np.sum(y * x)


def helper_in_loop_condition(x):
    y = x * 1.0
    k = 0
    while filled_count(y, 0.5) < 3.0 and k < 10:
        k = k + 1
    return np.sum(y * x)                                    # read: y


def helper_in_conditional_expression(x):
    y = x * 1.0
    t = filled_count(y, x[1]) if x[0] > 0.0 else 0.0
    return np.sum(y * x) + t                                # read: y
