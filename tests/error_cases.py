"""Functions s2sgrad must refuse, each with a clear error at the right line (see test_errors.py)."""
import statistics

import numpy as np

import s2sgrad as sg

try:                                   # (scipy is optional)
    import scipy.optimize
    import scipy.special
    import scipy.stats
except ImportError:
    scipy = None

COUNT = 3


def uses_try(x):
    try:
        return x * 2
    except ValueError:
        y = x
    return y


def uses_with(x):
    with open("f") as f:
        y = x
    return y


def uses_yield(x):
    yield x


def uses_global(x):
    global COUNT
    COUNT = 4
    return x


def defines_class(x):
    class Box:
        pass
    return x


def calls_without_rule(x):
    y = np.nanmedian(x * x)
    return np.sum(y * y)


# Library code without a rule is refused at the user's call, never transformed as the user's own code.

def through_a_scipy_special_function(x):
    y = x * 2.0
    return np.sum(scipy.special.kv(1.5, y))


def through_a_scipy_stats_method(x):
    y = x * 0.1
    return np.sum(scipy.stats.norm.ppf(y))


def through_a_numpy_python_function(x):
    y = x * 2.0
    return np.sum(np.nanvar(y))


def through_the_standard_library(x):
    y = x * 2.0
    return statistics.fmean([y[0], y[1]])


def through_an_installed_package(x):
    y = x * 2.0
    return scipy.optimize.rosen(y)


def vector_output(x):
    return x * 2.0


def recursive(x, n):
    if n == 0:
        return x
    return recursive(x * 2.0, n - 1)


def attribute_write(x):
    x.flags = 1
    return x


def while_else(x):
    while x < 1.0:
        x = x * 2.0
        if x > 0.5 and (y := x) > 0.7:
            break
    return x


def sets_a_view(x):
    y = x * 1.0
    v = y[0:2]
    y[0] = 5.0
    return np.sum(v)


def undefined_after_loop(x):
    if x > 0:
        z = x * 2
    return z


def bad_schedule(x):
    for i in sg.checkpointed(range(3), 12):
        x = x * 2.0
    return x


def complex_in_between(x):
    z = x * (1.0 + 2.0j)
    return np.linalg.norm(z) ** 2        # (np.linalg.norm's rule does not hold for complex values)


def complex_through_unknown_dtype(x):
    phase = np.exp(np.outer(x, [1j, 2j]))      # a dtype the analysis does not follow
    return np.sum(np.real(phase))


def adds_into_a_list_element(x):
    ys = [x * 1.0]
    ys[0] += x
    return np.sum(ys[0] * x)


def evaluates_a_string(x):
    return np.sum(eval("x ** 2"))


def executes_a_string(x):
    exec("y = x")
    return np.sum(x)


def through_str(x):
    return np.sum(float(str(x[0])) * x)


def through_repr(x):
    return np.sum(float(repr(x[0])) * x)


def through_format(x):
    return np.sum(float(format(x[0], ".17g")) * x)


def through_an_f_string(x):
    return np.sum(float(f"{x[0]:.17g}") * x)


def through_hash(x):
    return np.sum(hash(x[0]) * x)


def through_id(x):
    return np.sum(id(x) * x)


def returns_a_comparison(x):
    total = np.sum(x)
    return total > 0.0


def returns_np_all(x):
    return np.all(x > 0.0)


def reverses_enumerate(x):
    s = 0.0
    for k, v in reversed(enumerate(x)):
        s = s + v
    return s


class Unhashable(list):
    def __call__(self, x):
        return x * 2.0


UNHASHABLE = Unhashable()


def calls_an_unhashable_callable(x):
    return np.sum(UNHASHABLE(x))


def prints_and_formats(x):
    width = 9
    print(f"x[0] = {x[0]:.3f}, {str(x[1])!r} [{x[2]:{width}.2f}] {{braces}} {width!r:>4}")
    label = str(x)
    return np.sum(x * 2.0)


def through_unique(x):
    return np.sum(np.unique(x))


def through_heaviside(x):
    return np.sum(np.heaviside(x - 1.0, x))


def through_a_random_draw(x):
    return np.sum(np.random.normal(x, 1.0))


def sum_where(x):
    return np.sum(x * x, where=np.array([True, False, True]))
