"""Generated names never collide with the names generated code uses itself, nor with the user's.

For every keyword, every name the runtime exports, every schedule, `np`, `math` and every builtin
that generated code calls, a program uses that name where it can (a local variable, a variable whose
adjoint or tangent would get that name, a global of the user's read in a helper and at the top level),
and its gradient, vector-Jacobian product, Jacobian-vector product and Hessian-vector product are
checked against finite differences. Each program uses several names at once (`batches`).
"""
import ast
import builtins
import glob
import importlib.util
import inspect
import keyword
import os
import re

import gradcheck
import numpy as np
import pytest

import s2sgrad as sg
from s2sgrad import runtime, schedules
from s2sgrad.api import forward
from s2sgrad.ir import names
from s2sgrad.rules import registry

# Builtins the code around derivative rules calls (found in the emitters' source below).
EMITTED_BUILTINS = ["float", "len", "list", "min", "range", "slice", "sum", "tuple", "zip"]
COLLIDING = sorted({*keyword.kwlist, *keyword.softkwlist, *runtime.__all__, "np", "math", "operator",
                    "builtins", "Online", "Periodic", "Revolve", *EMITTED_BUILTINS,
                    *registry.TEMPLATE_BUILTINS})


def usable(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def roles(name: str, i: int) -> tuple[str, str]:
    """The local variable that takes `name` (or stands in for a name no variable can take) and the variable
    whose adjoint or tangent would be called `name`."""
    local = name if usable(name) else f"a{i}"
    prefixed = name[1:] if name.startswith("d") and usable(name[1:]) else f"b{i}"
    return local, prefixed


def program(batch: tuple[str, ...]) -> str:
    """A module whose functions use each name of `batch` every way a user can."""
    usable_names = [n for n in batch if usable(n)]
    lines = ["import numpy", ""]
    if usable_names:
        lines += [f"{n} = 0.7" for n in usable_names]
        mean = " + ".join(usable_names)
        lines += ["", "", "def helper(x):", f"    return x * ({mean}) / {len(usable_names)} + x", "", ""]
        lines += ["def reads_global(x):", f"    y = numpy.sin(x) * ({mean})", "    return numpy.sum(y * x)", "", ""]
    lines += ["def f(x):"]
    locals_, factors = [], []
    for i, name in enumerate(batch):
        local, prefixed = roles(name, i)
        lines += [f"    {local} = numpy.sin(x) * 1.5"]
        if prefixed != local:
            lines += [f"    {prefixed} = numpy.cos(x) * {local}"]
        locals_.append(local)
        factors.append(prefixed)
    k = len(batch)
    lines += ["    s = x * 0.5", "    i = 0", "    while i < 2:",
              f"        s = s * ({' + '.join(factors)}) / {k} + numpy.tanh(s) * ({' + '.join(locals_)}) / {k}",
              "        i = i + 1"]
    if usable_names:
        lines += ["    s = helper(s)"]
    lines += [f"    return numpy.sum(s * ({' + '.join(locals_)}))", ""]
    return "\n".join(lines)


def batches(names_: list[str], size: int = 8) -> list[tuple[str, ...]]:
    """`names_` in groups of at most `size`, no group holding two names whose variables would be one variable
    (`dx` and `x`), nor one that the program's own variables take. Names no variable can take (keywords) make
    one program between them: it is the same for each."""
    taken_by_program = {"x", "y", "s", "i", "f", "helper", "reads_global", "numpy"}
    groups: list[list[str]] = []
    for name in (n for n in names_ if usable(n)):
        variables = set(roles(name, 0)) - {"a0", "b0"}
        assert not variables & taken_by_program, name
        for group in groups:
            used = set().union(*(set(roles(n, 0)) for n in group)) - {"a0", "b0"}
            if len(group) < size and not variables & used:
                group.append(name)
                break
        else:
            groups.append([name])
    groups.append([n for n in names_ if not usable(n)][:1])
    return [tuple(g) for g in groups if g]


def load(batch: tuple[str, ...], directory):
    stem = re.sub(r"[^a-zA-Z0-9]", "x", "_".join(batch))[:60]
    path = directory / f"uses_{stem}_{abs(hash(batch)) % 10 ** 6}.py"
    path.write_text(program(batch))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    return tmp_path_factory.mktemp("names")


X = np.array([0.3, -0.4, 0.8])
V = np.array([0.5, 1.0, -0.7])


def fd_directional(fn, x, v, step=1e-5):
    return (fn(x + step * v) - fn(x - step * v)) / (2 * step)


@pytest.mark.parametrize("batch", batches(COLLIDING), ids=lambda batch: ",".join(batch))
def test_a_name_generated_code_uses_is_never_taken_from_it(batch, directory):
    module = load(batch, directory)
    functions = [module.f] + ([module.reads_global] if hasattr(module, "reads_global") else [])
    for f in functions:
        gradcheck.assert_grad_matches_fd(f, (X,), rtol=1e-5, atol=1e-7)
        grad = sg.grad(f)(X)
        value, vjp = sg.vjp(f)(X, 2.0)
        assert value == pytest.approx(f(X), rel=1e-12)
        np.testing.assert_allclose(vjp, 2.0 * grad, rtol=1e-12)
        value, tangent = sg.jvp(f)(X, V)
        assert value == pytest.approx(f(X), rel=1e-12)
        assert tangent == pytest.approx(fd_directional(f, X, V), rel=1e-5, abs=1e-7)
        np.testing.assert_allclose(sg.hvp(f)(X, V), fd_directional(sg.grad(f), X, V), rtol=1e-5, atol=1e-7)
        own = set(batch) & (names.own_names() - {"_"})      # no variable in generated code takes these names
        if own:
            for source in (sg.source(f), sg.source(f, mode="vjp"), forward.source(f)):
                stored = {n.id for n in ast.walk(ast.parse(source))
                          if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                assert not own & stored, source


@pytest.mark.parametrize("name", sorted(n for n in names.own_names() if usable(n)))
def test_a_parameter_with_a_name_generated_code_uses_is_refused(name, directory):
    path = directory / f"param_{name}.py"
    path.write_text(f"def f(x, {name}):\n    return x * x\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(sg.UnsupportedSyntax, match=f"parameter named '{name}'") as info:
        sg.grad(module.f)(0.5, 1.0)
    assert info.value.location.line == 1 and info.value.location.filename == str(path)


def test_global_numpy_under_another_name_and_np_bound_to_something_else(directory):
    path = directory / "np_other.py"
    path.write_text("import numpy\nimport math as np\n\n\ndef f(x):\n    return numpy.sum(numpy.sin(x) * np.pi)\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    np.testing.assert_allclose(sg.grad(module.f)(X), np.cos(X) * np.pi, rtol=1e-12)
    assert "np_1.pi" in sg.source(module.f)


def test_the_generated_builtins_are_all_known():
    """Every builtin generated code calls is in `names.GENERATED` or a rule template's."""
    called = set()
    for path in glob.glob(os.path.join(os.path.dirname(names.__file__), "*.py")):
        text = open(path).read()
        called |= set(re.findall(r'_(?:call|name)\("([A-Za-z_]\w*)"', text))
    called = {n for n in called if hasattr(builtins, n)}
    assert called <= names.GENERATED, called - names.GENERATED
    assert set(EMITTED_BUILTINS) == {n for n in names.GENERATED if hasattr(builtins, n)}
    assert "isinstance" in registry.TEMPLATE_BUILTINS          # read from the templates themselves


def test_meaning_is_what_the_generated_module_binds():
    for name in names.generated_names():
        expected = {"np": np}.get(name) or getattr(runtime, name, None) or getattr(schedules, name, None) \
            or getattr(builtins, name, None) or __import__(name)
        assert names.meaning(name) is expected, name
    assert inspect.ismodule(names.meaning("math"))


GENERATED_FUNCTION_NAMES = '''import numpy as np


def helper(x):
    return np.sin(x) * x


helper_forward = 0.5
helper_jvp = 0.25
df_dx = 2.0


def reads_globals(x):
    return helper(x) * helper_forward * df_dx * helper_jvp


def has_locals(x):
    helper_forward = x * 3.0
    helper_backward = x + 1.0
    return helper(x) * helper_forward * helper_backward
'''


def test_globals_and_locals_named_like_generated_functions(directory):
    path = directory / "generated_function_names.py"
    path.write_text(GENERATED_FUNCTION_NAMES)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for f in (module.reads_globals, module.has_locals):
        x = 0.3
        gradcheck.assert_grad_matches_fd(f, (x,), rtol=1e-6)
        assert sg.jvp(f)(x, 1.0)[1] == pytest.approx(sg.grad(f)(x), rel=1e-12)
        assert sg.hvp(f)(x, 1.0) == pytest.approx(fd_directional(sg.grad(f), np.array(x), 1.0), rel=1e-6)
