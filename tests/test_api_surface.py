"""The NumPy API surface s2sgrad claims, through the whole pipeline.

For every primitive with a derivative rule, user functions calling it (written as a user writes them:
``np.vstack([a, b])``, ``x.astype(int)``, ``np.add.at(y, i, v)``, ``y[i] = v``) are generated from the
rule cases of test_rules.py: one per primitive, and every case that probes a known trap (1-D/2-D mixes
for stacking, zeros for products, reversed bounds for clip, integer casts, repeated indices).
`grad` and `jvp` of each are checked against central finite differences along random directions.
The registry is enumerated, so a rule added without a case here fails `test_every_rule_is_swept`.
Functions with no rule, called on an active value, are refused at the user's line.
"""
from __future__ import annotations

import builtins
import copy
import importlib.util
import math
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest
from library_rule_cases import NAMES as LIBRARY_NAMES
from test_rules import CASES

import s2sgrad as sg
from s2sgrad import runtime
from s2sgrad.ir import primitives
from s2sgrad.rules.registry import _RULES
from s2sgrad.rules.registry import key as rule_key
from s2sgrad.runtime import records

STEP = 1e-4
RTOL = 1e-6
ATOL = 1e-8

# Names in case names that mark a trap worth a pipeline run of its own.
TRAPS = ("zeros", "reversed", "mixed", "int", "bool", "1d", "three", "scalars", "0d", "repeats", "pairs", "one",
         "negative", "float32", "lower", "upper", "keywords", "arrays", "list", "row", "stop", "start", "none")

# How the user writes a call of a primitive that is not a plain function of NumPy, math or the builtins.
STATEMENTS = {
    primitives.astype: "out = {0}.astype({1})",
    primitives.setitem: "{0}[{1}] = {2}\n    out = {0}",
    primitives.seq_getitem: "out = {0}[{1}]",
    primitives.list_append: "xs = [v for v in {0}]\n    xs.append({1})\n    out = xs",
    primitives.seq_setitem: "xs = [v for v in {0}]\n    xs[{1}] = {2}\n    out = xs",
    primitives.seq_concat: "out = [v for v in {0}] + [v for v in {1}]",
    primitives.seq_repeat: "out = [v for v in {0}] * {1}",
    runtime.add_at: "np.add.at({0}, {1}, {2})\n    out = {0}",
    runtime.subtract_at: "np.subtract.at({0}, {1}, {2})\n    out = {0}",
    runtime.maximum_at: "np.maximum.at({0}, {1}, {2})\n    out = {0}",
    runtime.minimum_at: "np.minimum.at({0}, {1}, {2})\n    out = {0}",
    runtime.as_column: "out = np.c_[{0}]",
    runtime.keyed_extremum: "def key(v):\n        return -v * v\n    out = {0}({1}, key=key)",
    runtime.sorted_by_keys: "def key(v):\n        return -v * v\n    out = sorted({0}, key=key, reverse={2})",
    runtime.first_item: "def first(a, b):\n        return a\n    out = functools.reduce(first, {0})",
    runtime.dict_get: "out = {0}.get({1}, {2})",
    runtime.dict_values: "out = list({0}.values())",
    runtime.dict_items: "out = list({0}.items())",
    runtime.read_after_loop: "for _ in range(2):\n        v = {0}\n    out = v",
}
# ... and of those whose source depends on the values of the arguments (`sources`: how the call passes them)


def _made_dict(sources, values):
    keys, _ = values
    return "out = {" + ", ".join(f"{k!r}: {sources[1]}[{i}]" for i, k in enumerate(keys)) + "}"


def _unpacked(sources, values):
    _, before, after, rest = values
    names = [f"a{i}" for i in range(before)]
    if rest == "list":
        targets = [*names, "*rest", *(f"b{i}" for i in range(after))]
        return f"{', '.join(targets)} = {sources[0]}\n    out = ({', '.join(t.lstrip('*') for t in targets)},)"
    names += ["*rest"] if rest == "tuple" else []
    return f"def g({', '.join(names)}):\n        return ({', '.join(n.lstrip('*') for n in names)},)\n" \
           f"    out = g(*{sources[0]})"


def _filled(sources, values):
    _, required, defaults = values
    names = [f"a{i}" for i in range(required)] + [f"b{i}={sources[2]}[{i}]" for i in range(len(defaults))]
    return f"def g({', '.join(names)}):\n        return ({', '.join(n.split('=')[0] for n in names)},)\n" \
           f"    out = g(*{sources[0]})"


def _bound(sources, values):
    parameters = values[0]
    kinds = {1: "{}", 2: "*{}", 3: "{}", 4: "**{}"}
    names, defaults, keyword_only = [], 0, False
    for name, kind in parameters:
        if kind % 10 == 3 and not keyword_only:
            names.append("*")
        keyword_only = keyword_only or kind % 10 in (2, 3)
        names.append(kinds[kind % 10].format(name) + (f"={sources[3]}[{defaults}]" if kind >= 10 else ""))
        defaults += kind >= 10
    returned = ", ".join(name for name, _ in parameters)
    return f"def g({', '.join(names)}):\n        return ({returned},)\n    out = g(*{sources[1]}, **{sources[2]})"


STATEMENTS.update({
    runtime.make_dict: _made_dict,
    runtime.dict_without: lambda sources, values: f"def g({', '.join(values[1])}, **rest):\n        return rest\n"
                                                  f"    out = g(**{sources[0]})",
    runtime.unpack_starred: _unpacked,
    runtime.unpack_filled: _filled,
    runtime.bind_call: _bound,
    primitives.attribute: lambda sources, values: f"out = {sources[0]}.{values[1]}",
    runtime.as_named: lambda sources, values: f"out = {sources[0]}(" + ", ".join(f"{sources[1]}[{i}]" for i in
                                                                               range(len(values[1]))) + ")",
    runtime.with_field: lambda sources, values: f"out = dataclasses.replace({sources[0]}, {values[1]}={sources[2]})",
})
# Rules swept by other means, with the reason.
NOT_SWEPT = {
    id(np.float16): "rounds too coarsely for finite differences (test_rules.test_float16_cast)",
}


def _name(fn) -> str:
    name = LIBRARY_NAMES.get(rule_key(fn)) or primitives.python_name(fn)
    assert name is not None, fn
    return name


def _literal(value) -> str | None:
    """Python source for a constant argument, or None if it must be passed as a global."""
    if value is None or isinstance(value, (bool, int, str)) and not isinstance(value, np.generic):
        return repr(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    if isinstance(value, float):
        return f"float({str(value)!r})"
    if isinstance(value, tuple) and all(_literal(v) is not None for v in value):
        return "(" + "".join(_literal(v) + ", " for v in value) + ")"
    if isinstance(value, slice):
        return f"slice({_literal(value.start)}, {_literal(value.stop)}, {_literal(value.step)})"
    if isinstance(value, type) and getattr(builtins, value.__name__, None) is value:
        return value.__name__
    if isinstance(value, type):                      # (a class of the user's: passed as a global)
        return LIBRARY_NAMES.get(rule_key(value)) or primitives.python_name(value)
    return None


class Sweep:
    """One generated user function ``f(p0, p1, ...)`` (the case's `wrt` arguments as parameters) returning
    a weighted sum of the primitive's result; `params` are the arguments it is called with."""

    def __init__(self, case, seed=0):
        rng = np.random.default_rng(seed)
        args, kwargs = case.values(rng)
        self.case = case
        self.globals = {}
        self.params, names, call_args, call_kwargs = [], [], [], {}
        for key, value in [*enumerate(args), *kwargs.items()]:
            if key in case.wrt:
                source = f"p{len(self.params)}"
                self.params.append(value)
                names.append(source)
            else:
                source = _literal(value)
                if source is None:
                    source = f"C{len(self.globals)}"
                    self.globals[source] = value
            if isinstance(key, int):
                call_args.append(source)
            else:
                call_kwargs[key] = source
        result = case.primitive(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        self.globals.update(self.weights(result, rng))
        if case.primitive in STATEMENTS:
            assert not call_kwargs, case.name
            statement = STATEMENTS[case.primitive]
            body = statement(call_args, args) if callable(statement) else statement.format(*call_args)
        else:
            call = ", ".join([*call_args, *(f"{k}={v}" for k, v in call_kwargs.items())])
            body = f"out = {_name(case.primitive)}({call})"
        self.source = f"def f({', '.join(names)}):\n    {body}\n    return {self.reduction(result)}\n"

    def weights(self, result, rng) -> dict:
        leaves = [leaf for _, leaf in _leaves(result)]
        weights = {f"W{k}": rng.standard_normal(np.shape(leaf)) for k, leaf in enumerate(leaves)}
        weights.update({f"V{k}": rng.standard_normal(np.shape(leaf)) for k, leaf in enumerate(leaves)
                        if np.iscomplexobj(leaf)})
        return weights

    def reduction(self, result) -> str:
        """A weighted sum of the result's elements; of a complex result's real and imaginary parts."""
        names, leaves = zip(*_leaves(result))
        return " + ".join(f"np.sum(W{k} * np.real({name})) + np.sum(V{k} * np.imag({name}))"
                          if np.iscomplexobj(leaf) else f"np.sum(W{k} * {name})"
                          for k, (leaf, name) in enumerate(zip(leaves, names)))

    def function(self, directory: Path):
        path = directory / f"sweep_{abs(hash(self.case.name))}_{len(list(directory.iterdir()))}.py"
        libraries = "import scipy.signal\nimport scipy.special\nimport scipy.stats\n" if "scipy." in self.source else ""
        path.write_text("import dataclasses\nimport functools\nimport math\nimport operator\n\nimport numpy as np\n" + libraries + "\n\n"
                        + self.source)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        module.__dict__.update(self.globals)
        spec.loader.exec_module(module)
        return module.f


def _is_structure(value) -> bool:
    return isinstance(value, dict) or records.is_record(value)


def _leaves(result, source="out", top=True) -> list:
    """(source, value) of the numbers and arrays in a result: the items of a list or tuple, and within them
    those of dicts, records (their fields holding floats) and ragged lists; a dict's keys are no leaves."""
    if isinstance(result, str) or result is None:
        return []
    if isinstance(result, dict) or records.is_record(result):
        fields = result if isinstance(result, dict) else {k: v for k, v in records.fields(result).items()
                                                          if records.is_differentiable(v)}
        path = (lambda k: f"{source}[{k!r}]") if isinstance(result, dict) else (lambda k: f"{source}.{k}")
        return [leaf for k, v in fields.items() for leaf in _leaves(v, path(k), False)]
    if isinstance(result, (list, tuple)) and (top or not _regular(result)):
        return [leaf for k, v in enumerate(result) for leaf in _leaves(v, f"{source}[{k}]", False)]
    return [(source, result)]


def _regular(value) -> bool:
    """Is a list an array of numbers (no strings, dicts, records, ragged rows)?"""
    try:
        return np.asarray(value).dtype.kind in "biufc"
    except ValueError:
        return False


def _directions(rng, value):
    if isinstance(value, dict):
        return {k: _directions(rng, v) for k, v in value.items()}
    if records.is_record(value):
        return records.record_complete({}, value, lambda g, x: _directions(rng, x))
    if isinstance(value, (list, tuple)):
        return type(value)(_directions(rng, v) for v in value)
    if isinstance(value, np.ndarray):
        return rng.standard_normal(value.shape)
    return float(rng.standard_normal())


def _axpy(x, t, v):
    if isinstance(x, (list, tuple)):
        return type(x)(_axpy(a, t, b) for a, b in zip(x, v))
    if isinstance(x, dict):
        return {k: _axpy(a, t, v[k]) for k, a in x.items()}
    if records.is_record(x):
        parts = records.fields(v)
        return records.record_complete({}, x, lambda g, a: _axpy(a, t, parts[_key(x, a)]))
    return x + t * v


def _key(record, field):
    return next(k for k, v in records.fields(record).items() if v is field)


def _inner(g, v) -> float:
    if isinstance(v, (list, tuple)):
        return sum(_inner(a, b) for a, b in zip(g, v))
    if _is_structure(v):
        g, v = _parts(g), _parts(v)
        return sum(_inner(g[k], b) for k, b in v.items() if k in g)
    return float(np.sum(np.asarray(g, dtype=float) * v))


def _parts(value) -> dict:
    """A dict, or a record's fields holding floats."""
    if isinstance(value, dict):
        return value
    return {k: v for k, v in records.fields(value).items() if records.is_differentiable(v)}


def _assert_shaped_like(g, x, where):
    if _is_structure(x):
        assert type(g) is type(x), f"{where}: gradient {type(g).__name__} for {type(x).__name__}"
        g, x = _parts(g), _parts(x)
        assert g.keys() == x.keys(), f"{where}: gradient of keys {list(g)} for {list(x)}"
        for k in x:
            _assert_shaped_like(g[k], x[k], where)
    elif isinstance(x, (list, tuple)):
        assert len(g) == len(x), where
        for a, b in zip(g, x):
            _assert_shaped_like(a, b, where)
    else:
        assert np.shape(g) == np.shape(x), f"{where}: gradient of shape {np.shape(g)} for {np.shape(x)}"


def directional_fd(f, params, directions) -> float:
    def at(t):
        return float(f(*[_axpy(p, t, v) for p, v in zip(copy.deepcopy(params), directions)]))
    h = STEP
    return (-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h)


def _selected():
    """The sweep's cases: the first of each primitive, and every trap."""
    seen, out = set(), []
    for case in CASES:
        if id(case.primitive) in NOT_SWEPT:
            continue
        trap = any(part.startswith(tag) for part in case.name.split("-")[1:] for tag in TRAPS)
        if id(case.primitive) not in seen or trap:
            seen.add(id(case.primitive))
            out.append(case)
    return out


SWEPT = _selected()


@pytest.fixture(scope="module")
def directory():
    with tempfile.TemporaryDirectory(prefix="s2sgrad_sweep_") as name:
        yield Path(name)


@pytest.fixture(scope="module")
def swept_function(directory):
    """The user function of a case's sweep, written and imported once for the module's tests: the grad and
    jvp test and the hvp test differentiate the same function (its generated gradient is made once)."""
    functions = {}

    def function(sweep: Sweep):
        if sweep.case.name not in functions:
            functions[sweep.case.name] = sweep.function(directory)
        return functions[sweep.case.name]
    return function


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in SWEPT])
def test_grad_and_jvp_match_finite_differences(case, swept_function):
    sweep = Sweep(case)
    f = swept_function(sweep)
    wrt = tuple(range(len(sweep.params)))
    rng = np.random.default_rng(1)
    directions = [_directions(rng, p) for p in sweep.params]
    numeric = directional_fd(f, sweep.params, directions)
    scale = RTOL * max(1.0, abs(numeric)) + ATOL

    before = copy.deepcopy(sweep.params)
    grads = sg.grad(f, wrt=wrt)(*sweep.params)
    for g, p, b in zip(grads, sweep.params, before):
        _assert_shaped_like(g, p, case.name)
        assert all(np.array_equal(q, r, equal_nan=True) for q, r in zip(_flat(p), _flat(b))), "an argument was changed"
    analytic = sum(_inner(g, v) for g, v in zip(grads, directions))
    assert abs(analytic - numeric) <= scale, f"grad: <g, v> = {analytic!r}, finite differences {numeric!r}\n" \
                                             + sweep.source

    _, tangent = sg.jvp(f, wrt=wrt)(*sweep.params, tuple(directions))
    assert abs(float(tangent) - numeric) <= scale, f"jvp: {float(tangent)!r}, finite differences {numeric!r}\n" \
                                                   + sweep.source


def test_every_rule_is_swept():
    swept = {id(c.primitive) for c in SWEPT} | set(NOT_SWEPT)
    missing = [r.primitive for r in _RULES.values() if id(r.primitive) not in swept]
    assert not missing, f"rules without a sweep case (add one to test_rules.CASES): {missing}"


def test_the_sweep_covers_the_traps():
    """A guard on the selection itself: the cases the sweep exists for are in it."""
    names = {c.name for c in SWEPT}
    for name in ["vstack-1d", "vstack-three-1d", "vstack-mixed", "dstack-mixed", "column_stack-mixed",
                 "prod-zeros1-(6,)-None-False", "prod-zeros2-(2, 3)-1-True", "cumprod-zeros3-(2, 3)-0",
                 "clip-reversed", "astype-int", "astype-bool", "asarray-int", "array-int32", "add_at-repeats",
                 "maximum_at-repeats", "full", "linspace", "arange"]:
        assert name in names, name
    assert len({id(c.primitive) for c in SWEPT}) >= 175


# --- what has no rule is refused where it is active, never a zero gradient ----------------------------------

NO_RULE = [
    ("np.linalg.qr(np.outer(x, x))[0]", "np.linalg.qr"), ("np.quantile(x, 0.5)", "np.quantile"), ("np.unique(x)", "np.unique"),
    ("np.histogram(x, bins=3, weights=x)[0]", "np.histogram"),
    ("np.interp(0.5, x, [1.0, 2.0, 3.0])", "np.interp"),     # a rule, with no derivative in the knots
    ("np.nanstd(x)", "np.nanstd"), ("np.nanvar(x)", "np.nanvar"), ("np.nanmedian(x)", "np.nanmedian"),
    ("np.percentile(x, 50.0)", "np.percentile"), ("np.polyfit(x, x, 1)", "np.polyfit"), ("np.corrcoef(x, x)", "np.corrcoef"),
    ("np.trim_zeros(x)", "np.trim_zeros"), ("np.nancumsum(x)", "np.nancumsum"), ("np.cov(x)", "np.cov"),
    ("np.ldexp(x, 2)", "np.ldexp"), ("np.random.normal(x, 1.0)", "np.random.normal"),
    ("np.linalg.cond(np.outer(x, x) + np.eye(3))", "np.linalg.cond"),
    ("np.trapezoid(x, x)" if hasattr(np, "trapezoid") else "np.trapz(x, x)",     # a rule, not in x
     "np.trapezoid" if hasattr(np, "trapezoid") else "np.trapz"),
]


def _module(directory: Path, source: str, name: str):
    path = directory / f"{name}.py"
    path.write_text("import numpy as np\n\n\n" + textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


@pytest.mark.parametrize("expression, label", NO_RULE, ids=[label for _, label in NO_RULE])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_no_rule_is_refused_at_the_users_line(expression, label, mode, directory):
    module, path = _module(directory, f"""
        def f(x):
            y = x * 2.0
            z = {expression}
            return np.sum(z)
    """, f"norule_{mode}_{abs(hash(expression))}")
    x = np.array([0.3, 0.9, 0.5])
    with pytest.raises(sg.NoDerivativeRule) as caught:
        if mode == "grad":
            sg.grad(module.f)(x)
        else:
            sg.jvp(module.f)(x, np.ones(3))
    assert caught.value.location.filename == str(path) and caught.value.location.line == 7, str(caught.value)
    assert label in caught.value.message


def test_no_rule_on_an_inactive_value_runs(directory):
    module, _ = _module(directory, """
        def f(x, c):
            return np.sum(x * np.unique(c)) + np.median(c)
    """, "norule_inactive")
    g = sg.grad(module.f)(np.array([1.0, 2.0]), np.array([3.0, 1.0]))
    assert g.tolist() == [1.0, 3.0]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in SWEPT])
def test_hvp_matches_differences_of_the_gradient(case, swept_function):
    """Forward over reverse through each primitive: shaped like the arguments, and equal to central
    differences of the gradient along the same direction (or a refusal: the second derivative of np.cumprod
    at a zero entry is refused when it is met)."""
    sweep = Sweep(case)
    f = swept_function(sweep)
    wrt = tuple(range(len(sweep.params)))
    directions = [_directions(np.random.default_rng(2), p) for p in sweep.params]
    try:
        products = sg.hvp(f, wrt=wrt)(*copy.deepcopy(sweep.params), tuple(directions))
    except sg.S2SGradError:
        return
    for product, p in zip(products, sweep.params):
        _assert_shaped_like(product, p, case.name)
    gradient = sg.grad(f, wrt=wrt)
    h = STEP

    def along(t):
        return gradient(*[_axpy(p, t, v) for p, v in zip(copy.deepcopy(sweep.params), directions)])
    plus, minus = along(h), along(-h)
    for k, product in enumerate(products):
        numeric = _axpy(plus[k], -1.0, minus[k])
        for got, want in zip(_flat(product), _flat(numeric)):
            want = np.asarray(want) / (2 * h)
            assert np.allclose(got, want, rtol=1e-4, atol=1e-4 * (1 + np.max(np.abs(want), initial=0))), \
                f"hvp of {case.name}, argument {k}: {got!r}, differences {want!r}\n" + sweep.source


def _flat(value):
    if _is_structure(value):
        return [leaf for v in _parts(value).values() for leaf in _flat(v)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _flat(v)]
    return [np.asarray(runtime.densify(value), dtype=float)]


W34 = np.arange(12.0).reshape(3, 4)


def linear_einsum(x):
    return np.sum(np.einsum("ij->ji", x) * W34.T)


def linear_einsum_product(x):
    return np.einsum("ij,ij->", x, W34)


def linear_tensordot(x):
    return np.sum(np.tensordot(x, W34.T, axes=1))


def linear_transpose(x):
    return np.sum(np.transpose(x) * W34.T)


@pytest.mark.parametrize("f", [linear_einsum, linear_einsum_product, linear_tensordot, linear_transpose])
def test_hvp_of_a_linear_function_is_zeros_of_the_argument_shape(f):
    x = np.ones((3, 4))
    product = sg.hvp(f)(x, x)
    assert isinstance(product, np.ndarray) and product.shape == (3, 4) and not product.any()
