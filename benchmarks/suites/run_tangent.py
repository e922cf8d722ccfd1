"""Differentiate Google Tangent's test functions (its ``tests/functions.py``) with s2sgrad.

    python -m benchmarks.suites.run_tangent PATH/TO/TANGENT [--json out.json]

Every function plain NumPy can run (the TensorFlow ones are left out) is called the way Tangent's
``test_reverse_mode.py`` calls it: by its parameter names, ``a``, ``b``, ``c`` are scalars, ``n`` a small
integer, ``x`` a vector, ``sqm`` a square matrix, and the functions with other parameters get the
arguments their own test gives them. The reverse mode (``s2sgrad.vjp`` with respect to the argument(s)
Tangent differentiates) and the forward mode (``s2sgrad.jvp``) are compared with central finite
differences at each combination of arguments (`checks`), and so are the second derivatives (forward
over reverse mode); a function's status is the worst over them.
``import tangent`` inside functions.py gets a stand-in with Tangent's runtime helpers (a stack, push and
pop, ``insert_grad_of``, ``trace``), so the module imports without Tangent.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import inspect
import itertools
import json
import pathlib
import sys
import types

import numpy as np

from .checks import Outcome, check_jvp, check_second_order, check_vjp, worst

SCALARS = (-2.0, -1.5, -1.0, -0.5, -0.1, 0.1, 0.5, 1.0, 1.5, 2.0)
FEW_SCALARS = (-1.5, -0.1, 0.5, 2.0)          # for functions of three scalars: 4 ** 3 combinations


def _stand_in() -> types.ModuleType:
    """What functions.py imports from Tangent: its stack and its gradient-inserting context manager."""
    module = types.ModuleType("tangent")

    class Stack(list):
        """Tangent's stack of saved values."""

    def push(stack, value, op_id):
        stack.append(value)

    def pop(stack, op_id):
        return stack.pop()

    @contextlib.contextmanager
    def insert_grad_of(value):
        yield 0.0

    def trace(function):
        return function

    module.Stack, module.push, module.pop, module.insert_grad_of = Stack, push, pop, insert_grad_of
    module.trace = trace            # used only on TensorFlow functions
    return module


def load(checkout: pathlib.Path) -> types.ModuleType:
    path = checkout / "tests" / "functions.py"
    if not path.is_file():
        raise SystemExit(f"{path} is missing: give the path of a Tangent checkout")
    saved = sys.modules.get("tangent")
    sys.modules["tangent"] = _stand_in()
    try:
        spec = importlib.util.spec_from_file_location("tangent_test_functions", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            del sys.modules["tangent"]
        else:
            sys.modules["tangent"] = saved
    return module


def _special(rng) -> dict:
    """Arguments and `wrt` of the functions whose own tests in test_reverse_mode.py give them."""
    a, b, c = 0.5, -1.5, 2.0
    label = np.zeros(5)
    label[1] = 1.0
    return {
        "logistic_regression": ([(rng.random(3), label, rng.standard_normal((3, 5)), rng.standard_normal(5))],
                                (2, 3)),
        "rnn": ([(rng.standard_normal((3, 2)), rng.standard_normal((2, 3)))], (0, 1)),
        "bilinear": ([tuple(rng.standard_normal(s) for s in ((1, 3), (1, 3), (3, 3), (3, 3), (1, 3)))], 0),
        "dict_saxpy": ([(dict(a=a, b=b, c=c),)], 0),
        "unpacking_args_saxpy": ([((a, b, c),)], 0),
        "dict_wrapper": ([((a, b, c),)], 0),
        "passthru_unpack": ([((a, b, c),)], 0),
        "passthru_pack": ([(a, b, c, i) for i in range(3)], 0),
        "nested_dict": ([(dict(i=dict(j=3.0, k=4.0)),)], 0),
        "listcomp": ([(rng.standard_normal(k),) for k in (3, 5)], 0),     # iterates over its argument
    }


def arguments(function, rng) -> tuple[list, object] | None:
    """The argument tuples to check `function` at, and `wrt`; None if plain NumPy cannot run it."""
    special = _special(rng)
    if function.__name__ in special:
        return special[function.__name__]
    names = list(inspect.signature(function).parameters)
    scalars = FEW_SCALARS if len(names) >= 3 else SCALARS
    kinds = {"a": scalars, "b": scalars, "c": scalars, "n": (1, 2, 3),
             "x": tuple(rng.standard_normal(k) for k in (3, 5, 10)),
             "sqm": tuple(rng.standard_normal(s) for s in ((1, 1), (5, 5)))}
    if not names or any(name not in kinds for name in names):
        return None
    return list(itertools.product(*(kinds[name] for name in names))), 0


def numpy_functions(module) -> list:
    """The functions of functions.py that need no TensorFlow."""
    found = []
    for name, value in vars(module).items():
        if inspect.isfunction(value) and value.__module__ == module.__name__:
            if "tf." not in inspect.getsource(value):
                found.append(value)
    return found


def run(checkout: pathlib.Path, seed: int = 0) -> dict:
    """function name -> {"rev": outcome, "fwd": outcome, "rev2": outcome (second derivatives)}, each the
    worst over the argument combinations."""
    module = load(checkout)
    rng = np.random.default_rng(seed)
    results = {}
    for function in numpy_functions(module):
        called = arguments(function, rng)
        if called is None:
            results[function.__name__] = {mode: Outcome(mode, "no-numpy", "arguments of unknown kinds")
                                          for mode in ("rev", "fwd", "rev2")}
            continue
        combos, wrt = called
        results[function.__name__] = {
            "rev": worst([check_vjp(function, args, {}, wrt, seed=k) for k, args in enumerate(combos)]),
            "fwd": worst([check_jvp(function, args, {}, wrt, seed=k) for k, args in enumerate(combos)]),
            "rev2": worst([check_second_order(function, args, {}, wrt, seed=k) for k, args in enumerate(combos)]),
        }
    return results


def main(argv=None) -> None:
    from collections import Counter

    from .summary import table
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=pathlib.Path)
    parser.add_argument("--json", type=pathlib.Path, help="where the outcomes go")
    args = parser.parse_args(argv)
    results = run(args.checkout.resolve())
    print(table([("reverse mode (vjp)", Counter(r["rev"].status for r in results.values())),
                 ("forward mode (jvp)", Counter(r["fwd"].status for r in results.values())),
                 ("second order (hvp, jvp of vjp)", Counter(r["rev2"].status for r in results.values()))]))
    print(f"\nfunctions: {len(results)}\n")
    for name, r in results.items():
        for mode in ("rev", "fwd", "rev2"):
            if r[mode].status not in ("passed",):
                print(f"{name}\t{mode} {r[mode].status}\t{r[mode].message}")
    if args.json:
        args.json.write_text(json.dumps({k: {m: o.as_dict() for m, o in v.items()} for k, v in results.items()},
                                        indent=1))


if __name__ == "__main__":
    main()
