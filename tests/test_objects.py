"""Models as objects: methods reading parameters as attributes, dataclasses, named tuples, plain and registered
classes as arguments (their gradients instances of their classes), objects made in the function, callable
instances, a module-level model's methods, bound methods, a generator passed in; each against finite
differences, with the gradient's structure and type checked and nothing of the user's modified."""
from __future__ import annotations

import copy
import dataclasses
from typing import NamedTuple

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg
from s2sgrad.api.generation import flatten
from s2sgrad.runtime.records import fields, is_differentiable, is_record

RNG = np.random.default_rng(7)


def normal(*shape):
    return RNG.normal(size=shape)


# ---------------------------------------------------------------- the user's classes

@dataclasses.dataclass
class Dense:
    W: np.ndarray
    b: np.ndarray
    name: str = "dense"

    def __call__(self, x):
        return np.tanh(self.W @ x + self.b)

    @property
    def WT(self):
        return self.W.T


@dataclasses.dataclass(frozen=True)
class Frozen:
    w: np.ndarray
    k: int = 2


class MLP:
    def __init__(self, layers, scale, activation="tanh"):
        self.layers = layers
        self.scale = scale
        self.activation = activation
        self.steps = 3

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.scale

    def loss(self, x):
        return np.sum(self.forward(x) ** 2)


class Params(NamedTuple):
    W: np.ndarray
    c: float


class Affine:
    def __init__(self, W, b=0.5):
        self.W = W
        self.b = b
        self.W = self.W * 2.0

    def apply(self, x):
        return self.W @ x + self.b


class Pair:
    def __init__(self, a, b, tag):
        self.a, self.b, self.tag = a, b, tag


sg.register_pytree_node(Pair, lambda p: ((p.a, p.b), p.tag), lambda tag, children: Pair(*children, tag))


@sg.register_dataclass
@dataclasses.dataclass
class Scaled:
    w: np.ndarray
    power: float


class Outer:
    def __init__(self, inner, gain):
        self.inner, self.gain = inner, gain

    def value(self, x):
        return self.gain * self.inner.loss(x)


MODEL = MLP([Dense(normal(3, 2), normal(3)), Dense(normal(2, 3), normal(2))], 1.5)


# ---------------------------------------------------------------- the functions differentiated

def method_loss(m, x):
    return m.loss(x)


def attribute_reads(d, x):
    return np.sum((d.W @ x + d.b) ** 2) + np.sum(d.WT)


def callable_instance(layer, x):
    return np.sum(layer(x))


def list_of_layers(layers, x):
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


def indexed_layer(layers, x):
    return np.sum(layers[1](layers[0](x)))


def named_tuple(p, x):
    return np.sum(np.sin(p.W @ x)) * p.c


def frozen_dataclass(f, x):
    return np.sum(f.w * x) ** f.k


def registered(p, x):
    return np.sum(p.a * x) * p.b


def registered_dataclass(s, x):
    return np.sum(s.w ** 2 * x) * s.power


def nested(o, x):
    return o.value(x)


def dataclass_made_inside(W, b, x):
    layer = Dense(W, b)
    return np.sum(layer(x) ** 2)


def init_made_inside(W, x):
    a = Affine(W)
    a.b = a.b + np.sum(W)
    return np.sum(a.apply(x) ** 2)


def replaced_inside(d, x):
    wider = dataclasses.replace(d, W=d.W * 3.0)
    return np.sum(wider(x))


FROZEN = Frozen(np.array([0.5, -1.0, 2.0]), 3)


def replaced_global(w, x):
    f = dataclasses.replace(FROZEN, w=w * x)
    return np.sum(f.w) ** f.k


def global_model(x):
    return np.sum(MODEL.forward(x))


def rng_draw(x, rng):
    return np.sum(x * rng.normal(size=2)) + np.sum(x ** 2)


def list_of_named_tuples(ps, x):
    return np.sum(ps[0].W @ x) * ps[1].c


def dict_of_objects(params, x):
    return np.sum(params["first"](x) * params["p"].W[0]) + params["p"].c


def named_tuple_made_inside(W, x):
    p = Params(W, 0.5)
    return np.sum(p.W @ x) * p.c


def fresh_dense():
    return Dense(normal(3, 2), normal(3))


def fresh_mlp():
    return MLP([fresh_dense(), Dense(normal(2, 3), normal(2))], 1.5)


CASES = {
    "method calling a method": (method_loss, lambda: (fresh_mlp(), normal(2)), 0),
    "attributes and a property": (attribute_reads, lambda: (fresh_dense(), normal(2)), 0),
    "callable instance": (callable_instance, lambda: (fresh_dense(), normal(2)), (0, 1)),
    "list of objects": (list_of_layers, lambda: (fresh_mlp().layers, normal(2)), 0),
    "objects indexed in a list": (indexed_layer, lambda: (fresh_mlp().layers, normal(2)), (0, 1)),
    "named tuple fields": (named_tuple, lambda: (Params(normal(2, 2), 1.5), normal(2)), 0),
    "frozen dataclass": (frozen_dataclass, lambda: (Frozen(normal(3)), normal(3)), 0),
    "registered class": (registered, lambda: (Pair(normal(3), 2.0, "t"), normal(3)), 0),
    "registered dataclass": (registered_dataclass, lambda: (Scaled(normal(3), 0.5), normal(3)), 0),
    "object holding an object": (nested, lambda: (Outer(fresh_mlp(), 0.3), normal(2)), 0),
    "dataclass made inside": (dataclass_made_inside, lambda: (normal(3, 2), normal(3), normal(2)), (0, 1, 2)),
    "__init__ made inside": (init_made_inside, lambda: (normal(2, 2), normal(2)), (0, 1)),
    "dataclasses.replace": (replaced_inside, lambda: (fresh_dense(), normal(2)), 0),
    "module-level model": (global_model, lambda: (normal(2),), 0),
    "dataclasses.replace of a module-level object": (replaced_global, lambda: (normal(3), normal(3)), (0, 1)),
    "list of named tuples": (list_of_named_tuples, lambda: ([Params(normal(2, 2), 0.5), Params(normal(2, 2), 2.0)],
                                                            normal(2)), 0),
    "dict of objects": (dict_of_objects, lambda: ({"first": fresh_dense(), "p": Params(normal(2, 3), 0.5)},
                                                  normal(2)), 0),
    "named tuple made inside": (named_tuple_made_inside, lambda: (normal(2, 2), normal(2)), (0, 1)),
}


# ---------------------------------------------------------------- checks

def numeric_gradient(f, args, k, step=1e-6):
    """Central differences of f in every float of args[k], in the structure of args[k]."""
    leaves, rebuild = flatten(args[k])
    out = []
    for i, leaf in enumerate(leaves):
        g = np.zeros(leaf.shape)
        for index in np.ndindex(leaf.shape):
            values = []
            for sign in (1, -1):
                moved = [np.array(v, copy=True) for v in leaves]
                moved[i][index] += sign * step
                called = list(copy.deepcopy(args))
                called[k] = rebuild(moved)
                values.append(float(f(*called)))
            g[index] = (values[0] - values[1]) / (2 * step)
        out.append(g)
    return out


def assert_same_structure(grad, arg, where="gradient"):
    """`grad` has `arg`'s structure: an instance of its class, float fields' gradients, static fields as they were."""
    if is_record(arg):
        assert type(grad) is type(arg), f"{where} is a {type(grad).__name__}, not a {type(arg).__name__}"
        for name, value in fields(arg).items():
            if is_differentiable(value):
                assert_same_structure(fields(grad)[name], value, f"{where}.{name}")
            else:
                assert fields(grad)[name] is value, f"{where}.{name}, a static field, changed"
    elif isinstance(arg, (list, tuple)):
        assert type(grad) is type(arg) and len(grad) == len(arg), where
        for i, (g, a) in enumerate(zip(grad, arg)):
            assert_same_structure(g, a, f"{where}[{i}]")
    elif isinstance(arg, dict):
        assert isinstance(grad, dict) and set(grad) == set(arg), where
        for k in arg:
            assert_same_structure(grad[k], arg[k], f"{where}[{k!r}]")
    elif isinstance(arg, np.ndarray):
        assert isinstance(grad, np.ndarray) and grad.shape == arg.shape, where
    else:
        assert np.ndim(grad) == 0, where


def snapshot(value):
    leaves, _ = flatten(value)
    return [np.array(leaf, copy=True) for leaf in leaves]


@pytest.mark.parametrize("case", list(CASES))
def test_gradient_matches_finite_differences(case):
    f, make, wrt = CASES[case]
    args = make()
    before = [snapshot(a) for a in args]
    many = isinstance(wrt, tuple)
    grads = sg.grad(f, wrt)(*args)
    for k, g in zip(wrt if many else (wrt,), grads if many else (grads,)):
        assert_same_structure(g, args[k])
        analytic = flatten(g)[0]
        for a, n in zip(analytic, numeric_gradient(f, args, k)):
            np.testing.assert_allclose(a, n, rtol=1e-5, atol=1e-7)
    for a, b in zip(args, before):
        for after, earlier in zip(snapshot(a), b):
            np.testing.assert_array_equal(after, earlier)


@pytest.mark.parametrize("case", ["method calling a method", "named tuple fields", "registered class",
                                  "dataclass made inside", "__init__ made inside", "dict of objects"])
def test_value_and_grad_vjp_and_jvp(case):
    f, make, wrt = CASES[case]
    args = make()
    k = wrt[0] if isinstance(wrt, tuple) else wrt
    g = sg.grad(f, k)(*args)
    value, g2 = sg.value_and_grad(f, k)(*args)
    assert value == pytest.approx(float(f(*args)))
    _, g3 = sg.vjp(f, k)(*args, 2.0)
    for a, b, c in zip(flatten(g)[0], flatten(g2)[0], flatten(g3)[0]):
        np.testing.assert_allclose(a, b)
        np.testing.assert_allclose(2.0 * a, c)
    direction = g                                # a tangent of the argument's structure
    value, tangent = sg.jvp(f, k)(*args, direction)
    assert tangent == pytest.approx(sum(float(np.sum(a * a)) for a in flatten(g)[0]))


def test_hvp_of_an_object_matches_differences_of_gradients():
    args = (fresh_mlp(), normal(2))
    v = sg.grad(method_loss)(*args)
    hv = sg.hvp(method_loss)(*args, v)
    assert_same_structure(hv, args[0])
    leaves, rebuild = flatten(args[0])
    eps = 1e-6
    moved = [rebuild([leaf + s * eps * d for leaf, d in zip(leaves, flatten(v)[0])]) for s in (1, -1)]
    plus, minus = (flatten(sg.grad(method_loss)(m, args[1]))[0] for m in moved)
    for h, p, m in zip(flatten(hv)[0], plus, minus):
        np.testing.assert_allclose(h, (p - m) / (2 * eps), rtol=1e-4, atol=1e-6)


def test_bound_method_wrt_its_arguments_and_the_object():
    model, x = fresh_mlp(), normal(2)
    np.testing.assert_allclose(sg.grad(model.loss)(x), sg.grad(method_loss, 1)(model, x))
    of_self = sg.grad(model.loss, wrt="self")(x)
    assert type(of_self) is MLP
    for a, b in zip(flatten(of_self)[0], flatten(sg.grad(MLP.loss)(model, x))[0]):
        np.testing.assert_allclose(a, b)
    both = sg.grad(model.loss, wrt=("self", 0))(x)
    np.testing.assert_allclose(both[1], sg.grad(model.loss)(x))
    v = normal(2)
    assert sg.jvp(model.loss)(x, v)[1] == pytest.approx(float(sg.grad(model.loss)(x) @ v))
    np.testing.assert_allclose(sg.hvp(model.loss)(x, v), sg.hvp(method_loss, 1)(model, x, v))


def test_static_fields_are_kept_and_give_no_error_in_wrt():
    model = fresh_mlp()
    g = sg.grad(method_loss)(model, normal(2))
    assert g.activation == "tanh" and g.steps == 3 and g.layers[0].name == "dense"


def test_a_generator_argument_draws_and_passes_no_gradient():
    x = normal(2)
    g = sg.grad(rng_draw)(x, np.random.default_rng(3))
    np.testing.assert_allclose(g, np.random.default_rng(3).normal(size=2) + 2 * x)


def test_check_grad_of_an_object():
    assert sg.check_grad(method_loss, fresh_mlp(), normal(2)) < 1e-6


def test_generated_code_reads_attributes():
    source = sg.source(attribute_reads, args=(fresh_dense(), normal(2)))
    assert "d.W" in source and "field_grad(" in source and "complete(dd, d)" in source


# ---------------------------------------------------------------- refused, at the user's line

def writes_argument_attribute(d, x):
    d.W = d.W * 2.0
    return np.sum(d.W @ x)


def writes_frozen(w, x):
    f = Frozen(w)
    f.w = w * 2.0
    return np.sum(f.w * x)


def calls_a_field(x, c):
    return np.sum(c.fn(x))


class WithFunction:
    def __init__(self, fn):
        self.fn = fn


def active_draw(mu, rng):
    return np.sum(rng.normal(mu, 1.0))


def reads_an_alias_after_a_write(W, x):
    a = Affine(W)
    other = a
    a.b = 2.0
    return np.sum(other.apply(x))


class Mutating:
    def __init__(self, W):
        self.W = W

    def bump(self, x):
        W = self.W
        W[0] = 0.0
        return np.sum(W @ x)

    def bump_field(self, x):
        self.W[0] = 0.0
        return np.sum(self.W @ x)


def calls_mutating_method(m, x):
    return m.bump(x)


def calls_field_writing_method(m, x):
    return m.bump_field(x)


def writes_a_field_of_an_argument(m, x):
    W = m.W
    W[0] = 0.0
    return np.sum(m.W @ x)


REFUSED = {
    "attribute write to an argument": (writes_argument_attribute, lambda: (fresh_dense(), normal(2)),
                                       "would change an object the function was given"),
    "write to a frozen dataclass": (writes_frozen, lambda: (normal(3), normal(3)), "immutable"),
    "calling a function held in a field": (calls_a_field, lambda: (normal(2), WithFunction(np.sin)),
                                           "calling the field 'fn'"),
    "a draw whose location is differentiated": (active_draw, lambda: (normal(2), np.random.default_rng(0)),
                                                "a random draw has no gradient with respect to its parameters"),
    "an alias read after an attribute write": (reads_an_alias_after_a_write, lambda: (normal(2, 2), normal(2)),
                                               "may have been changed in place"),
    "a method changing self in place": (calls_mutating_method, lambda: (Mutating(normal(2, 2)), normal(2)),
                                        "changes an object it is given in place"),
    "a method writing into a field by index": (calls_field_writing_method,
                                               lambda: (Mutating(normal(2, 2)), normal(2)),
                                               "only a local array can be written by index"),
    "a field read after a write through another name": (writes_a_field_of_an_argument,
                                                         lambda: (Mutating(normal(2, 2)), normal(2)),
                                                         "may have been changed in place"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_refused_at_the_users_line(case):
    f, make, message = REFUSED[case]
    with pytest.raises(sg.S2SGradError) as error:
        sg.grad(f)(*make())
    assert message in str(error.value)
    assert __file__.rsplit("/", 1)[-1] in str(error.value)


def zero_first_row(layer, x):
    W = layer.W
    W[0] = 0.0
    return np.sum(W @ x)


def calls_a_function_changing_an_object(d, x):
    return zero_first_row(d, x) + np.sum(d.W)


def test_a_function_given_an_object_that_changes_it_is_refused():
    with pytest.raises(sg.S2SGradError, match="changes an object it is given in place"):
        sg.grad(calls_a_function_changing_an_object)(fresh_dense(), normal(2))


def helper_reading_fields(layer, x):
    return layer(x) * layer.b


def passes_objects_to_a_function(d, x):
    return np.sum(helper_reading_fields(d, x))


def test_an_object_passed_to_a_function():
    d, x = fresh_dense(), normal(2)
    g = sg.grad(passes_objects_to_a_function)(d, x)
    assert_same_structure(g, d)
    for a, n in zip(flatten(g)[0], numeric_gradient(passes_objects_to_a_function, (d, x), 0)):
        np.testing.assert_allclose(a, n, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- lists popped (Tangent's stack functions)

def push(stack, value):
    stack.append(value)


def pop(stack):
    return stack.pop()


def pushes_and_pops(a, x):
    stack = []
    push(stack, a * x)
    push(stack, np.sin(a))
    top = pop(stack)
    pair = [a * a, x]
    first = pair.pop(0)
    return np.sum(first * top * stack[0]) + len(stack) + np.sum(pair[0])


def pops_an_argument(xs):
    last = xs.pop()
    return np.sum(last * xs[0])


@pytest.mark.parametrize("f, make", [(pushes_and_pops, lambda: (0.7, normal(3))),
                                     (pops_an_argument, lambda: ([normal(2), normal(2)],))])
def test_list_pop(f, make):
    args = make()
    g = sg.grad(f)(*args)
    numeric = numeric_gradient(f, args, 0)
    for a, n in zip(flatten(g)[0], numeric):
        np.testing.assert_allclose(a, n, rtol=1e-5, atol=1e-7)
    assert sg.jvp(f)(*args, args[0])[1] == pytest.approx(sum(float(np.sum(a * b)) for a, b in
                                                            zip(flatten(g)[0], flatten(args[0])[0])))


def pops_the_middle(xs):
    return np.sum(xs.pop(1))


def test_list_pop_of_another_index_is_refused():
    with pytest.raises(sg.UnsupportedSyntax, match="only list.pop"):
        sg.grad(pops_the_middle)([1.0, 2.0, 3.0])


class Doubler:
    def __call__(self, x):
        return 2.0 * x


def test_a_new_module_level_model_with_other_classes_is_seen():
    global MODEL
    saved, x = MODEL, normal(2)
    df = sg.grad(global_model)
    try:
        before = df(x)
        MODEL = MLP([Doubler()], 1.5)
        np.testing.assert_allclose(df(x), np.full(2, 3.0))
    finally:
        MODEL = saved
    np.testing.assert_allclose(df(x), before)


def test_hessian_of_an_object_is_in_its_structure():
    H = sg.hessian(frozen_dataclass, 1)(Frozen(normal(3)), normal(3))        # (wrt the array: a plain block)
    assert H.shape == (3, 3)
    s = Scaled(np.array([1.0, 2.0]), 2.0)
    blocks = sg.hessian(registered_dataclass)(s, np.array([1.0, 3.0]))
    assert type(blocks) is Scaled and type(blocks.w) is Scaled
    np.testing.assert_allclose(blocks.w.w, np.diag([2.0 * 2.0, 2.0 * 2.0 * 3.0]))
    np.testing.assert_allclose(blocks.w.power, [2.0, 12.0])


def test_float32_fields_get_float32_gradients():
    g = sg.grad(registered_dataclass)(Scaled(normal(3).astype(np.float32), 0.5), normal(3))
    assert g.w.dtype == np.float32


class Node:
    def __init__(self, w, parent=None):
        self.w, self.parent = w, parent


def node_loss(n):
    return np.sum(n.w * n.child.w)


def test_an_object_holding_itself_is_refused_in_wrt():
    root = Node(normal(2))
    root.child = Node(normal(2), root)
    with pytest.raises(sg.WrtError, match="a cycle"):
        sg.grad(node_loss)(root)


def test_source_of_a_bound_method():
    model = fresh_mlp()
    text = sg.source(model.loss, wrt="self", args=(normal(2),))
    assert "def dloss_dself(self, x" in text and "complete(dself, self)" in text


def test_derivatives_of_derivatives_with_an_object():
    model, x = fresh_mlp(), normal(2)
    v = sg.grad(method_loss)(model, x)
    _, forward_over_reverse = sg.jvp(sg.grad(method_loss))(model, x, v)
    for a, b in zip(flatten(forward_over_reverse)[0], flatten(sg.hvp(method_loss)(model, x, v))[0]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- aliasing of the objects given to a constructor

@dataclasses.dataclass
class Two:
    w: float
    u: float


class PlainTwo:
    def __init__(self, w, u):
        self.w, self.u = w, u


def _halved(v):
    return 0.5 * v          # a user function's result: lowering does not know it is a number


def numbers_aliased_then_updated(x, y):
    a = x * y
    b = a
    b += 0.25 * np.tanh(a)          # rebinds b (a number): a is unchanged
    m, p = Two(b, a), PlainTwo(b, a)
    return m.w * m.u + p.w - p.u + a


def aliased_in_one_branch_updated_in_the_other(x, y):
    a, b = _halved(x), _halved(y)
    if x > y:
        b = a
        m = Two(b, a)
        return m.w * m.u + b
    b += 0.25 * np.tanh(a)          # on this path b was never a: reading a is fine
    m, p = Two(b, a), PlainTwo(b, a)
    return m.w * m.u + p.w - p.u + a


@pytest.mark.parametrize("args", [(0.7, -1.3), (-0.4, 0.9)])
def test_numbers_aliased_and_updated_pass_to_constructors(args):
    assert_grad_matches_fd(numbers_aliased_then_updated, args, wrt=(0, 1))
    assert_grad_matches_fd(aliased_in_one_branch_updated_in_the_other, args, wrt=(0, 1))


def distinct_arrays_one_changed(x, y):
    m, p = Two(x, y), PlainTwo(x, y)    # the records hold x and y: x and y stay two objects
    x += 1.0
    return np.sum(y * y)


def test_constructor_arguments_stay_distinct_objects():
    assert_grad_matches_fd(distinct_arrays_one_changed, (normal(3), normal(3)), wrt=1)


def array_aliased_changed_then_constructed(x):
    z = x
    z += 1.0
    m = Two(z, x)
    return np.sum(m.w * m.u)


def array_aliased_changed_then_initialized(x):
    z = x
    z += 1.0
    p = PlainTwo(z, x)
    return np.sum(p.w * p.u)


def record_read_after_its_field_changed(x, y):
    m = Two(x, y)
    x += 1.0
    return np.sum(m.w)


def field_taken_out_and_changed(x, y):
    p = PlainTwo(x, y)
    w = p.w
    w += 1.0
    return np.sum(x)


@pytest.mark.parametrize("f", [array_aliased_changed_then_constructed, array_aliased_changed_then_initialized])
def test_an_array_changed_through_an_alias_is_refused_as_a_constructor_argument(f):
    with pytest.raises(sg.UnsupportedSyntax, match="'x' may have been changed in place through 'z'"):
        sg.grad(f)(normal(3))


@pytest.mark.parametrize("f, changed", [(record_read_after_its_field_changed, "'m' may have been changed in place"),
                                        (field_taken_out_and_changed, "'x' may have been changed in place")])
def test_a_record_and_the_objects_it_holds_change_together(f, changed):
    with pytest.raises(sg.UnsupportedSyntax, match=changed):
        sg.grad(f)(normal(3), normal(3))
