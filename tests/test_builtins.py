"""Every builtin that maps a float to a number is differentiated right or refused, never given a wrong
(say zero) gradient: ``float(str(x))`` is refused, ``float(int(x))`` has gradient zero, ``abs`` its rule."""
import builtins
import importlib.util

import pytest

import s2sgrad as sg

# Builtins that read input, print, stop, or open files or help: not called here.
INTERACTIVE = {"input", "breakpoint", "help", "exit", "quit", "open", "print", "license", "copyright",
               "credits", "__import__", "__build_class__", "aiter", "anext"}
NAMES = sorted(n for n in dir(builtins) if callable(getattr(builtins, n)) and not n.startswith("_")
               and n not in INTERACTIVE and not (isinstance(getattr(builtins, n), type)
                                                 and issubclass(getattr(builtins, n), BaseException)))
CALLS = ["{name}(x)", "{name}(x, 0.5)", "{name}(x, 2)"]
X = 0.7


def program(name: str) -> str:
    lines = ["import numpy as np", ""]
    for k, call in enumerate(CALLS):
        lines += ["", f"def f{k}(x):", f"    y = {call.format(name=name)}", "    return float(y) * x + x", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    return tmp_path_factory.mktemp("builtins")


@pytest.mark.parametrize("name", NAMES)
def test_a_builtin_is_differentiated_right_or_refused(name, directory):
    path = directory / f"calls_{name}.py"
    path.write_text(program(name))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for k in range(len(CALLS)):
        f = getattr(module, f"f{k}")
        try:
            values = [f(X + step) for step in (-1e-6, 0.0, 1e-6)]
        except Exception:
            continue                                   # not a function of a float with a number for result
        numeric = (values[2] - values[0]) / 2e-6
        for transform in ("grad", "jvp"):
            try:
                derivative = sg.grad(f)(X) if transform == "grad" else sg.jvp(f)(X, 1.0)[1]
            except sg.S2SGradError as error:
                assert error.location is not None and error.location.filename == str(path), error
                continue
            assert derivative == pytest.approx(numeric, rel=1e-5, abs=1e-6), (name, CALLS[k], transform)


def test_the_sweep_reaches_the_builtins_that_matter():
    assert {"str", "repr", "format", "hash", "id", "int", "float", "bool", "round", "abs", "pow", "ascii"} <= set(NAMES)
