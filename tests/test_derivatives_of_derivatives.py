"""Transforms of derivatives s2sgrad made: every transform (grad, value_and_grad, vjp, jvp, hvp, hessian,
check_grad, source) of every derivative (grad, grad with a tuple wrt or wrt by name, value_and_grad, vjp, jvp,
hvp) of a scalar, an array and a loop function, against central differences of the inner derivative; the
refusals (a derivative with an array or tuple output under grad) by class and message; grad nested three and
four times against hand-derived derivatives; a derivative called inside a differentiated function.

Every test function lives at module level: s2sgrad reads its source with `inspect`.
"""
import numpy as np
import pytest

import s2sgrad as sg

STEP = 1e-3


def scalars(a, b):
    return np.sin(a * b) + a ** 3 * b


def arrays(x, w):
    return np.sum(np.tanh(x * w) ** 2) + w * np.sum(x ** 3)


def loop(x, w):
    y = x
    for i in range(3):
        y = np.sin(y) * w + x
    return np.sum(y * y)


FUNCTIONS = {
    "scalars": (scalars, (0.4, 0.7)),
    "arrays": (arrays, (np.array([0.3, -0.5, 0.8]), 0.6)),
    "loop": (loop, (np.array([0.3, -0.5]), 0.9)),
}

INNER = {
    "grad": lambda f: sg.grad(f),
    "grad_tuple": lambda f: sg.grad(f, wrt=(0, 1)),
    "grad_by_name": lambda f: sg.grad(f, wrt=list(FUNCTIONS[f.__name__][0].__code__.co_varnames)[1]),
    "value_and_grad": lambda f: sg.value_and_grad(f),
    "vjp": lambda f: sg.vjp(f),
    "jvp": lambda f: sg.jvp(f),
    "hvp": lambda f: sg.hvp(f),
}


def _like(x, scale):
    return np.full(np.shape(x), scale) + 0.1 * np.arange(np.size(x)).reshape(np.shape(x)) \
        if np.ndim(x) else float(scale)


def inner_arguments(kind, args):
    """The inner derivative's arguments: f's, then a seed, tangent or direction where it takes one."""
    extra = {"vjp": (0.7,), "jvp": (_like(args[0], 0.5),), "hvp": (_like(args[0], -0.4),)}
    return args + extra.get(kind, ())


def flat(value) -> np.ndarray:
    if isinstance(value, (tuple, list)):
        return np.concatenate([flat(v) for v in value]) if value else np.zeros(0)
    return np.ravel(np.asarray(value, dtype=float))


def moved(args, k, direction, t):
    out = list(args)
    out[k] = args[k] + t * direction
    return out


def difference(fn, args, k, direction):
    """Fourth-order central difference of fn's (flattened) output along `direction` in argument k."""
    points = [(2, -1.0), (1, 8.0), (-1, -8.0), (-2, 1.0)]
    return sum(c * flat(fn(*moved(args, k, direction, s * STEP))) for s, c in points) / (12 * STEP)


def gradient_difference(fn, args, k):
    """Central differences of scalar fn with respect to argument k, element by element, in its shape."""
    x = np.asarray(args[k], dtype=float)
    out = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        unit = np.zeros(x.shape)
        unit[i] = 1.0
        out[i] = difference(fn, args, k, unit if x.ndim else 1.0)[0]
    return out


def close(got, expected, rtol=1e-6, atol=1e-8):
    got, expected = flat(got), flat(expected)
    assert got.shape == expected.shape, f"{got.shape} != {expected.shape}"
    assert np.allclose(got, expected, rtol=rtol, atol=atol), f"{got} != {expected}"


def is_scalar(value) -> bool:
    return not isinstance(value, tuple) and np.ndim(value) == 0


CASES = [(f, i) for f in FUNCTIONS for i in INNER]


@pytest.mark.parametrize("fname, inner", CASES)
def test_jvp_of_a_derivative_is_its_directional_derivative(fname, inner):
    f, args = FUNCTIONS[fname]
    d = INNER[inner](f)
    a = inner_arguments(inner, args)
    t = _like(args[0], 0.3)
    value, tangent = sg.jvp(d)(*a, t)
    close(value, d(*a), rtol=1e-12)
    close(tangent, difference(d, a, 0, t))


@pytest.mark.parametrize("fname, inner", CASES)
def test_vjp_of_a_derivative_is_a_cotangent_times_its_jacobian(fname, inner):
    f, args = FUNCTIONS[fname]
    d = INNER[inner](f)
    a = inner_arguments(inner, args)
    out = d(*a)
    cotangent = _scale(out)
    value, g = sg.vjp(d)(*a, cotangent)
    close(value, out, rtol=1e-12)
    close(g, gradient_difference(lambda *b: flat(d(*b)) @ flat(cotangent), a, 0))


def _scale(value):
    if isinstance(value, tuple):
        return tuple(_scale(v) for v in value)
    return _like(value, 1.3)


@pytest.mark.parametrize("fname, inner", CASES)
def test_grad_value_and_grad_and_check_grad_of_a_derivative(fname, inner):
    f, args = FUNCTIONS[fname]
    d = INNER[inner](f)
    a = inner_arguments(inner, args)
    out = d(*a)
    if not is_scalar(out):
        what = "returns a tuple" if isinstance(out, tuple) else "an array of shape"
        for transform in (sg.grad, sg.value_and_grad):
            with pytest.raises(sg.NonScalarOutput, match=what):
                transform(d)(*a)
        with pytest.raises(sg.NonScalarOutput, match=what):
            sg.check_grad(d, *a)
        return
    expected = gradient_difference(d, a, 0)
    close(sg.grad(d)(*a), expected)
    value, g = sg.value_and_grad(d)(*a)
    close(value, out, rtol=1e-12)
    close(g, expected)
    assert sg.check_grad(d, *a) < 1e-6


@pytest.mark.parametrize("fname, inner", CASES)
def test_hvp_and_hessian_of_a_derivative(fname, inner):
    f, args = FUNCTIONS[fname]
    d = INNER[inner](f)
    a = inner_arguments(inner, args)
    v = _like(args[0], 0.8)
    if not is_scalar(d(*a)):
        for call in (lambda: sg.hvp(d)(*a, v), lambda: sg.hessian(d)(*a)):
            with pytest.raises(sg.NonScalarOutput, match="scalar"):
                call()
        return
    gradient = sg.grad(d)
    close(sg.hvp(d)(*a, v), difference(gradient, a, 0, v))
    x = np.asarray(a[0], dtype=float)
    columns = [difference(gradient, a, 0, unit.reshape(x.shape) if x.ndim else 1.0) for unit in np.eye(x.size)]
    hessian = sg.hessian(d)(*a)
    assert np.shape(hessian) == x.shape + x.shape
    close(np.reshape(hessian, (x.size, x.size)).T, np.array(columns))


@pytest.mark.parametrize("fname, inner", CASES)
def test_source_of_a_transform_of_a_derivative_is_the_forward_code_that_runs(fname, inner):
    f, args = FUNCTIONS[fname]
    d = INNER[inner](f)
    a = inner_arguments(inner, args)
    text = sg.source(d, mode="forward", args=a)
    reverse = inner not in ("jvp",)
    assert f"def jvp_{'d' if reverse else 'jvp_'}{fname}" in text and "_dot" in text
    assert "def jvp_" in sg.source(d, mode="vjp", args=a)


def test_jvp_of_grad_is_the_hessian_vector_product():
    x, w = FUNCTIONS["loop"][1]
    v = np.array([0.2, -0.7])
    gradient, product = sg.jvp(sg.grad(loop))(x, w, v)
    close(gradient, sg.grad(loop)(x, w), rtol=1e-12)
    close(product, sg.hvp(loop)(x, w, v), rtol=1e-10)


def test_outer_wrt_by_index_name_and_tuple():
    x, w = FUNCTIONS["arrays"][1]
    d = sg.grad(arrays, wrt="w")                         # a scalar
    close(sg.grad(d, wrt="x")(x, w), gradient_difference(d, (x, w), 0))
    close(sg.grad(d, wrt=1)(x, w), gradient_difference(d, (x, w), 1))
    gx, gw = sg.grad(d, wrt=(0, "w"))(x, w)
    close(gx, gradient_difference(d, (x, w), 0))
    close(gw, gradient_difference(d, (x, w), 1))
    (single,) = sg.grad(d, wrt=(1,))(x, w)
    close(single, gw)


def test_vjp_of_a_tuple_gradient_sums_over_its_parts():
    x, w = FUNCTIONS["arrays"][1]
    d = sg.grad(arrays, wrt=(0, 1))
    cotangent = (np.array([0.5, -1.0, 2.0]), 0.3)
    _, g = sg.vjp(d, wrt=1)(x, w, cotangent)
    close(g, gradient_difference(lambda *b: flat(d(*b)) @ flat(cotangent), (x, w), 1))


# --- nested three and four deep, against hand-derived derivatives ----------------------------

def quartic(a):
    return np.exp(2.0 * a) + a ** 4


def test_grad_three_and_four_times():
    a = 0.3
    third = sg.grad(sg.grad(sg.grad(quartic)))
    fourth = sg.grad(third)
    assert third(a) == pytest.approx(8 * np.exp(2 * a) + 24 * a, rel=1e-12)
    assert fourth(a) == pytest.approx(16 * np.exp(2 * a) + 24, rel=1e-12)
    assert sg.value_and_grad(third)(a)[1] == pytest.approx(fourth(a), rel=1e-12)
    assert sg.hvp(sg.grad(quartic))(a, 2.0) == pytest.approx(2 * third(a), rel=1e-12)
    assert sg.hessian(sg.grad(sg.grad(quartic)))(a) == pytest.approx(fourth(a), rel=1e-12)
    assert sg.jvp(sg.jvp(sg.grad(quartic)))(a, 1.0, 1.0)[1][1] == pytest.approx(third(a), rel=1e-12)
    # vjp(grad)(a, u) = (f'(a), u f''(a)); its vjp in a with cotangent (c1, c2) is c1 f''(a) + c2 u f'''(a)
    u, c1, c2 = 0.5, 1.0, 2.0
    second = 4 * np.exp(2 * a) + 12 * a ** 2
    assert sg.vjp(sg.vjp(sg.grad(quartic)))(a, u, (c1, c2))[1] == pytest.approx(c1 * second + c2 * u * third(a),
                                                                                 rel=1e-12)


def mixed(a, b):
    return a ** 3 * b ** 2 + np.exp(a * b)


def test_mixed_third_derivatives_in_any_order():
    a, b = 0.4, -0.6
    e = np.exp(a * b)
    daab = 12 * a * b + e * (2 * b + a * b * b)        # ∂³/∂a²∂b
    for d in (sg.grad(sg.grad(sg.grad(mixed, 0), 0), 1), sg.grad(sg.grad(sg.grad(mixed, 0), 1), 0),
              sg.grad(sg.grad(sg.grad(mixed, 1), 0), 0)):
        assert d(a, b) == pytest.approx(daab, rel=1e-12)


def test_jvp_nested_four_deep_over_a_loop():
    x, w = FUNCTIONS["loop"][1]
    t = np.array([0.2, -0.7])
    third = sg.jvp(sg.jvp(sg.grad(loop)))            # (x, w, t1, t2)
    fourth = sg.jvp(third)
    (_, _), (_, d3) = third(x, w, t, t)
    close(d3, difference(lambda *b: sg.jvp(sg.grad(loop))(*b)[1], (x, w, t), 0, t), rtol=1e-5)
    out = fourth(x, w, t, t, t)
    close(out[1][1][1], difference(lambda *b: third(*b)[1][1], (x, w, t, t), 0, t), rtol=1e-5)


# --- refusals ------------------------------------------------------------------------------

def test_derivative_with_respect_to_a_tangent_is_refused():
    with pytest.raises(sg.WrtError, match="extra argument 'v' of hvp\\(loop\\)"):
        sg.jvp(sg.hvp(loop), wrt=2)


def test_hessian_of_a_hessian_is_refused():
    with pytest.raises(sg.S2SGradError, match="assembled in Python"):
        sg.jvp(sg.hessian(arrays))


def test_options_of_an_outer_transform_are_refused():
    with pytest.raises(sg.S2SGradError, match="checkpoint"):
        sg.grad(sg.grad(quartic), checkpoint=sg.Revolve(2))


def checkpointed_loop(x):
    y = x
    for i in sg.checkpointed(range(4), sg.Periodic(2)):
        y = np.sin(y) * 1.1
    return np.sum(y)


def test_second_derivative_of_a_checkpointed_loop_is_refused():
    with pytest.raises(sg.UnsupportedSyntax, match="checkpointed loop"):
        sg.jvp(sg.grad(checkpointed_loop))(np.ones(2), np.ones(2))


# --- a derivative called inside a differentiated function ----------------------------------

def inner_loss(x):
    return np.sum(np.sin(x) * x)


def two_argument_loss(x, w):
    return np.sum(np.tanh(x * w) ** 2) * w


d_inner = sg.grad(inner_loss)
vg_inner = sg.value_and_grad(inner_loss)
d_both = sg.grad(two_argument_loss, wrt=(0, 1))
hvp_inner = sg.hvp(inner_loss)
d2_quartic = sg.grad(sg.grad(quartic))
jvp_inner = sg.jvp(inner_loss)


def penalty(x, w):
    return np.sum(d_inner(x) ** 2) * w


def penalty_of_a_value_and_grad(x):
    value, g = vg_inner(x)
    return np.sum(g ** 3)


def penalty_of_both(x, w):
    gx, gw = d_both(x, w)
    return np.sum(gx * x) + gw ** 2


def penalty_in_a_loop(x, w):
    total = 0.0
    h = x
    for i in range(3):
        total = total + np.sum(d_inner(h) ** 2)
        h = np.sin(h) * w
    return total


def penalty_of_an_hvp(x, v):
    return np.sum(hvp_inner(x, v) ** 2)


def penalty_of_a_second_derivative(a, b):
    return d2_quartic(a * b) * b


def penalty_of_a_jvp(x, t):
    value, tangent = jvp_inner(x, t)
    return value * tangent


PENALTIES = [(penalty, (np.array([0.3, -0.4, 0.8]), 2.0)), (penalty_of_a_value_and_grad, (np.array([0.3, -0.4]),)),
             (penalty_of_both, (np.array([0.3, -0.4]), 0.7)), (penalty_in_a_loop, (np.array([0.3, -0.4]), 0.9)),
             (penalty_of_a_second_derivative, (0.3, 0.6))]


@pytest.mark.parametrize("f, args", PENALTIES, ids=lambda c: getattr(c, "__name__", ""))
def test_a_derivative_called_inside_a_differentiated_function(f, args):
    for k in range(len(args)):
        close(sg.grad(f, wrt=k)(*args), gradient_difference(f, args, k))
        t = _like(args[k], 0.7)
        value, tangent = sg.jvp(f, wrt=k)(*args, t)
        close(value, f(*args), rtol=1e-12)
        close(tangent, difference(f, args, k, t))


def test_the_gradient_penalty_is_what_the_hint_says():
    x = np.array([0.3, -0.4])
    close(sg.grad(penalty)(x, 2.0), 2 * 2.0 * sg.hvp(inner_loss)(x, d_inner(x)), rtol=1e-12)
    assert "derivative_vjp(d_inner, 'x'," in sg.source(penalty, args=(x, 2.0))


def test_a_tangent_the_called_derivative_takes_is_refused_when_differentiated():
    x = np.array([0.3, -0.4])
    with pytest.raises(sg.NoDerivativeRule, match=r"extra argument 'v' of hvp\(inner_loss\)") as info:
        sg.grad(penalty_of_an_hvp, wrt=1)(x, x)
    assert info.value.location.line == penalty_of_an_hvp.__code__.co_firstlineno + 1
    close(sg.grad(penalty_of_an_hvp, wrt=0)(x, x), gradient_difference(penalty_of_an_hvp, (x, x), 0))
    with pytest.raises(sg.NoDerivativeRule, match=r"extra argument 'tangent' of jvp\(inner_loss\)"):
        sg.jvp(penalty_of_a_jvp, wrt=1)(x, x, x)


def test_second_derivatives_through_a_called_derivative_are_refused():
    x = np.array([0.3, -0.4])
    with pytest.raises(sg.NoDerivativeRule, match=r"'d_inner' is grad\(inner_loss\).*forward mode") as info:
        sg.hvp(penalty)(x, 2.0, x)
    assert info.value.location.line == penalty.__code__.co_firstlineno + 1
    assert "stop_gradient" in info.value.hint
    with pytest.raises(sg.NoDerivativeRule, match=r"'d_inner' is grad\(inner_loss\).*forward mode"):
        sg.jvp(sg.jvp(penalty))(x, 2.0, x, x)


def test_a_derivative_called_on_values_that_do_not_reach_wrt():
    x = np.array([0.3, -0.4])
    close(sg.grad(penalty, wrt=1)(x, 2.0), np.sum(d_inner(x) ** 2), rtol=1e-12)
    close(sg.jvp(penalty, wrt=1)(x, 2.0, 1.0)[1], np.sum(d_inner(x) ** 2), rtol=1e-12)


def test_a_wrapper_of_a_derivative_is_not_taken_for_the_derivative():
    import functools
    d = sg.grad(quartic)

    @functools.wraps(d)
    def doubled(a):
        return 2.0 * d(a)
    assert doubled(0.3) == pytest.approx(2 * d(0.3))
    with pytest.raises(sg.UnsupportedSyntax, match="wraps grad\\(quartic\\), a derivative made by s2sgrad"):
        sg.grad(doubled)(0.3)
    with pytest.raises(sg.UnsupportedSyntax, match="wraps grad\\(quartic\\)"):
        sg.jvp(doubled)(0.3, 1.0)
