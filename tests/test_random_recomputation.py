"""Random numbers in recomputation: a `sg.recompute` function or a checkpointed loop (Periodic, Revolve,
Online; a marker or the `checkpoint=` option) that draws random numbers draws the same ones when run again,
from NumPy's legacy global state and from Generator / RandomState objects that are globals or closure
variables. Each gradient is checked against central differences with the generators re-seeded identically
for every evaluation, its forward value against the function's, and the generators' states after the
gradient call against their states after one call of the function. Unseeded generators are refused.

Every differentiated function lives at module level (s2sgrad reads source with `inspect`).
"""
import numpy as np
import pytest

import s2sgrad as sg

RNG = np.random.default_rng(11)                  # a global Generator
LEGACY_OBJECT = np.random.RandomState(5)        # a global RandomState
_START = {}


def reseed():
    """Every generator the functions read, back to one fixed state."""
    np.random.seed(3)
    for g in (RNG, CLOSURE_RNG):
        g.bit_generator.state = _START.setdefault(id(g), g.bit_generator.state)
    LEGACY_OBJECT.seed(5)


def states():
    return (repr(np.random.get_state()), repr(RNG.bit_generator.state), repr(CLOSURE_RNG.bit_generator.state),
            repr(LEGACY_OBJECT.get_state()))


# --- recomputed functions -------------------------------------------------------------------

@sg.recompute
def noisy_legacy(h, w):
    return np.tanh(h * w + 0.5 * np.random.normal(size=h.shape))


@sg.recompute
def noisy_generator(h, w):
    return np.tanh(h * w + 0.5 * RNG.normal(size=h.shape)) * RNG.uniform(0.5, 1.5)


@sg.recompute
def noisy_random_state(h, w):
    return np.sin(h * w + LEGACY_OBJECT.standard_normal(h.shape))


def make_closure_block(rng):
    @sg.recompute
    def noisy_closure(h, w):
        return np.tanh(h * w + 0.5 * rng.normal(size=h.shape))
    return noisy_closure, rng


closure_block, CLOSURE_RNG = make_closure_block(np.random.default_rng(23))


def noise_helper(h):
    return h + 0.3 * np.random.standard_normal(h.shape)


@sg.recompute
def noisy_through_helper(h, w):
    return np.tanh(noise_helper(h) * w)


def recompute_once_legacy(x, w):
    return np.sum(noisy_legacy(x, w) ** 2) + np.random.normal()        # and a draw after it


def recompute_once_generator(x, w):
    return np.sum(noisy_generator(x, w) ** 2)


def recompute_once_random_state(x, w):
    return np.sum(noisy_random_state(x, w) ** 2)


def recompute_once_closure(x, w):
    return np.sum(closure_block(x, w) ** 2)


def recompute_through_helper(x, w):
    return np.sum(noisy_through_helper(x, w) ** 2)


def recompute_in_a_loop(x, w):
    h = x
    for i in range(4):
        h = noisy_legacy(h, w) + noisy_generator(h, w)
    return np.sum(h ** 2)


def recompute_nested_def(x, w):
    @sg.recompute
    def inner(h):
        return np.tanh(h * w + 0.5 * np.random.normal(size=h.shape))
    return np.sum(inner(inner(x)) ** 2)


# --- checkpointed loops ---------------------------------------------------------------------

def periodic_legacy(x, w):
    h = x
    for t in sg.checkpointed(range(7), sg.Periodic(2)):
        h = np.tanh(h * w + 0.2 * np.random.normal(size=h.shape))
    return np.sum(h ** 2)


def revolve_generator(x, w):
    h = x * RNG.normal()                                            # a draw before the loop
    for t in sg.checkpointed(range(9), sg.Revolve(2)):
        h = np.tanh(h * w + 0.2 * RNG.normal(size=h.shape))
        if RNG.uniform() < 0.5:
            h = h * 1.1
    return np.sum(h ** 2) + RNG.normal()                            # and one after it


def online_closure(x, w):
    h = x
    t = 0
    while sg.checkpointed(t < 8, sg.Online(2)):
        h = np.sin(h * w + 0.2 * CLOSURE_RNG.normal(size=h.shape)) + 0.1 * np.random.normal()
        t += 1
    return np.sum(h ** 2)


def option_checkpointed(x, w):
    h = x
    for t in range(6):
        h = np.tanh(h * w + 0.2 * LEGACY_OBJECT.normal(size=h.shape) + 0.1 * noise_helper(h))
    return np.sum(h ** 2)


CASES = [
    (recompute_once_legacy, {}), (recompute_once_generator, {}), (recompute_once_random_state, {}),
    (recompute_once_closure, {}), (recompute_through_helper, {}), (recompute_in_a_loop, {}),
    (recompute_nested_def, {}), (periodic_legacy, {}), (revolve_generator, {}), (online_closure, {}),
    (option_checkpointed, {"checkpoint": sg.Revolve(2)}), (option_checkpointed, {"checkpoint": sg.Periodic(3)}),
]


def reseeded(f, *args):
    reseed()
    return f(*args)


def differences(f, x, w, step=1e-6):
    out = np.zeros(x.shape)
    for i in range(x.size):
        unit = np.zeros(x.shape)
        unit[i] = step
        out[i] = (reseeded(f, x + unit, w) - reseeded(f, x - unit, w)) / (2 * step)
    return out


@pytest.mark.parametrize("f, options", CASES, ids=lambda c: getattr(c, "__name__", str(c)))
def test_recomputation_draws_the_numbers_it_drew(f, options):
    x, w = np.array([0.3, -0.6, 0.9]), 0.8
    value = reseeded(f, x, w)
    after_call = states()
    reseed()
    got_value, gradient = sg.value_and_grad(f, **options)(x, w)
    assert states() == after_call, "the gradient call left the generators elsewhere than a call of f does"
    assert got_value == value
    np.testing.assert_allclose(gradient, differences(f, x, w), rtol=1e-6, atol=1e-8)
    reseed()
    np.testing.assert_allclose(sg.grad(f, **options)(x, w), gradient, rtol=1e-12)
    assert states() == after_call


def test_the_generated_code_saves_and_replays_the_states():
    text = sg.source(recompute_once_generator, args=(np.ones(3), 0.5))
    assert "noisy_generator_random = random_state(RNG)" in text
    assert "replay(noisy_generator_random, noisy_generator_forward, x, w)" in text
    assert "randoms=(RNG,)" in sg.source(revolve_generator, args=(np.ones(3), 0.5))
    assert "randoms=(CLOSURE_RNG, np.random)" in sg.source(online_closure, args=(np.ones(3), 0.5))
    assert "random_state" not in sg.source(periodic_plain, args=(np.ones(3), 0.5))
    assert "random_state" not in sg.source(recompute_once_legacy, mode="forward", args=(np.ones(3), 0.5))


def periodic_plain(x, w):
    h = x
    for t in sg.checkpointed(range(7), sg.Periodic(2)):
        h = np.tanh(h * w)
    return np.sum(h ** 2)


def test_a_replay_puts_the_states_back_even_when_the_function_raises():
    from s2sgrad.runtime import random_state, replay
    saved = random_state(np.random)
    np.random.normal()
    now = np.random.get_state()

    def fails():
        np.random.normal()
        raise ValueError("inside")
    with pytest.raises(ValueError):
        replay(saved, fails)
    assert repr(np.random.get_state()) == repr(now)


# --- refusals -------------------------------------------------------------------------------

@sg.recompute
def fresh_entropy(h):
    np.random.seed()
    return h * np.random.normal()


def recompute_fresh_entropy(x):
    return np.sum(fresh_entropy(x))


def loop_fresh_entropy(x):
    h = x
    for t in sg.checkpointed(range(4), sg.Periodic(2)):
        np.random.seed(None)
        h = h * np.random.normal()
    return np.sum(h)


def seeded_inside(x):
    h = x
    for t in sg.checkpointed(range(4), sg.Periodic(2)):
        np.random.seed(t)
        h = np.sin(h * np.random.normal())
    return np.sum(h)


@pytest.mark.parametrize("f, what, call", [
    (recompute_fresh_entropy, "the recomputed function 'fresh_entropy'", "np.random.seed()"),
    (loop_fresh_entropy, "a checkpointed loop", "np.random.seed(None)")])
def test_an_unseeded_generator_is_refused(f, what, call):
    with pytest.raises(sg.UnsupportedSyntax, match=f"unseeded random number generator in {what}") as info:
        sg.grad(f)(np.ones(2))
    assert call in info.value.location.text and info.value.location.filename == __file__
    assert "seed" in info.value.hint


def test_a_generator_seeded_inside_needs_nothing_saved():
    x = np.array([0.2, 0.4])
    np.testing.assert_allclose(sg.grad(seeded_inside)(x), differences(lambda x, w: seeded_inside(x), x, 0.0),
                               rtol=1e-6)


@pytest.mark.parametrize("f", [recompute_once_legacy, recompute_once_closure, recompute_in_a_loop,
                               recompute_through_helper])
def test_hvp_over_a_recomputation_draws_the_numbers_it_drew(f):
    x, w, v = np.array([0.3, -0.6, 0.9]), 0.8, np.array([0.5, 1.0, -0.2])
    reseed()
    g = sg.grad(f)(x, w)
    after = states()
    reseed()
    product = sg.hvp(f)(x, w, v)
    assert states() == after
    step = 1e-6
    expected = (reseeded(sg.grad(f), x + step * v, w) - reseeded(sg.grad(f), x - step * v, w)) / (2 * step)
    np.testing.assert_allclose(product, expected, rtol=1e-6, atol=1e-8)
    reseed()
    gradient, tangent = sg.jvp(sg.grad(f))(x, w, v)
    np.testing.assert_allclose(gradient, g, rtol=1e-12)
    np.testing.assert_allclose(tangent, product, rtol=1e-10)


def noisy_quadratic(x):
    return np.sum(np.sin(x) * (x + np.random.normal(size=x.shape)) * RNG.uniform())


def test_every_column_of_a_hessian_and_every_part_of_a_transform_draws_the_same_numbers():
    x, ones = np.array([0.3, -0.6, 0.9]), np.ones(3)
    reseed()
    noisy_quadratic(x)
    after = states()
    columns = []
    for k in range(3):
        reseed()
        columns.append(sg.hvp(noisy_quadratic)(x, np.eye(3)[k]))
    reseed()
    hessian = sg.hessian(noisy_quadratic)(x)
    assert states() == after
    np.testing.assert_allclose(hessian, np.array(columns).T, rtol=1e-12)
    reseed()
    gradient, tangent = sg.jvp(sg.grad(noisy_quadratic))(x, ones)          # two terms, one realization
    assert states() == after
    reseed()
    np.testing.assert_allclose(gradient, sg.grad(noisy_quadratic)(x), rtol=1e-12)
    np.testing.assert_allclose(tangent, np.sum(columns, axis=0), rtol=1e-12)
