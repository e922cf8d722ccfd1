"""The command line: ``python -m s2sgrad show FILE.py:function [--wrt 0,1] [--args EXPR] [--stage lowered]
[--backend numba]``.

Prints the generated gradient source of a function defined in a file; with ``--args``, example
arguments (a Python expression, NumPy as ``np``), the code specialized on their shapes and dtypes,
which is what runs for such arguments:

    python -m s2sgrad show rnn.py:loss --wrt 0,1 --args "np.ones((32, 32)), np.ones((200, 32))"
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np

from .api.reverse import source
from .errors import S2SGradError


def _load(target: str):
    path, _, name = target.rpartition(":")
    if not path or not name:
        raise SystemExit(f"s2sgrad: expected FILE.py:function, got {target!r}")
    file = Path(path)
    if not file.is_file():
        raise SystemExit(f"s2sgrad: no such file: {path}")
    spec = importlib.util.spec_from_file_location(file.stem, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(file.stem, module)
    sys.path.insert(0, str(file.parent.resolve()))
    spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if fn is None:
        raise SystemExit(f"s2sgrad: {path} defines no {name!r}")
    derivative = getattr(fn, "s2sgrad_derivative", None)       # @sg.grad def f: show the gradient of f
    return derivative.f if derivative is not None else getattr(fn, "__wrapped__", fn)


def _wrt(text: str):
    items = [int(t) if t.strip().lstrip("-").isdigit() else t.strip() for t in text.split(",")]
    return items[0] if len(items) == 1 else tuple(items)


def _example_arguments(text: str) -> tuple:
    try:
        value = eval(text, {"np": np, "__builtins__": {}})          # the user's own command line
    except Exception as error:                                   # noqa: BLE001 - any mistake in it
        raise SystemExit(f"s2sgrad: --args {text!r} does not evaluate: {error}") from None
    return value if isinstance(value, tuple) else (value,)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m s2sgrad",
                                     description="Print the gradient s2sgrad generates for a function.")
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("show", help="print the generated source of FILE.py:function")
    show.add_argument("target", help="FILE.py:function")
    show.add_argument("--wrt", default="0", help="argument indices or names, comma-separated (default 0)")
    show.add_argument("--mode", default="grad", choices=["grad", "value_and_grad", "vjp", "forward", "hvp"])
    show.add_argument("--stage", default="gradient", choices=["gradient", "lowered"],
                      help="'lowered' prints the functional control-flow form")
    show.add_argument("--args", default=None, metavar="EXPR",
                      help="example arguments, a Python expression with NumPy as np, e.g. "
                           "\"np.ones((32, 32)), 3\": show the code specialized on them")
    show.add_argument("--backend", default="numpy", choices=["numpy", "numba"],
                      help="'numba' prints the gradient as the numba backend compiles it")
    args = parser.parse_args(argv)
    fn = _load(args.target)
    example = _example_arguments(args.args) if args.args is not None else None
    try:
        options = {"backend": args.backend} if args.backend != "numpy" else {}
        print(source(fn, wrt=_wrt(args.wrt), mode=args.mode, stage=args.stage, args=example, **options), end="")
    except S2SGradError as error:
        print(f"s2sgrad: {error}", file=sys.stderr)
        return 1
    return 0
