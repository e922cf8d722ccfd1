"""Library callables as the Python functions a user would write around them.

s2sgrad differentiates Python source, so a test that checks the gradient of a
library function itself (``check_grads(np.max)``, ``combo_check(stats.norm.pdf)``)
is run on a one-line wrapper spelling the call the way a user would:

    >>> import numpy as np
    >>> w, args, kwargs, argnum = python_call(np.max, (np.ones(3),), {"axis": 0, "keepdims": True})
    >>> print(w.__source__)
    import numpy as np
    import scipy
    <BLANKLINE>
    def max_(a0):
        return np.max(a0, axis=0, keepdims=True)
    <BLANKLINE>

The wrappers are written to files (s2sgrad reads a function's source from
its file) in a temporary folder, one module per wrapper.
"""
from __future__ import annotations

import functools
import importlib.util
import inspect
import itertools
import keyword
import pathlib
import tempfile

import numpy as np

_FOLDER = pathlib.Path(tempfile.mkdtemp(prefix="s2sgrad-suite-wrappers-"))
_COUNTER = itertools.count()
_NAMESPACES = ("np", "np.linalg", "np.fft", "scipy.special", "scipy.linalg", "scipy.signal", "scipy.stats",
               "scipy.integrate", "scipy.misc")


def _namespace(path: str):
    import scipy.integrate
    import scipy.linalg
    import scipy.signal
    import scipy.special
    import scipy.stats
    roots = {"np": np, "scipy": scipy}
    head, *rest = path.split(".")
    value = roots[head]
    for part in rest:
        value = getattr(value, part, None)
    return value


def spelling(fun) -> str | None:
    """How a user would name `fun`: ``np.sum``, ``scipy.stats.norm.pdf``; None if it has no public name."""
    name = getattr(fun, "__name__", None)
    owner = getattr(fun, "__self__", None)
    if owner is not None and not inspect.ismodule(owner):          # a bound method: scipy.stats.norm.pdf
        stats = _namespace("scipy.stats")
        for attr in dir(stats):
            if getattr(stats, attr, None) is owner:
                return f"scipy.stats.{attr}.{name}"
        return None
    for path in _NAMESPACES:
        space = _namespace(path)
        if name and space is not None and getattr(space, name, None) is fun:
            return f"{path}.{name}"
    return None


def _literal(value) -> str | None:
    """`value` as source, if it reads back as an equal value of the same type."""
    if isinstance(value, (bool, int, float, str, type(None))) or (
            isinstance(value, (tuple, list)) and all(_literal(v) is not None for v in value)):
        text = repr(value)
        try:
            if type(eval(text, {})) is type(value) and eval(text, {}) == value:
                return text
        except Exception:
            return None
    return None


def _load(name: str, text: str, constants: dict):
    path = _FOLDER / f"wrapper_{next(_COUNTER)}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for key, value in constants.items():
        setattr(module, key, value)
    function = getattr(module, name)
    function.__source__ = text
    return function


_MADE: dict = {}          # (the callable, the wrapper's source) -> the wrapper


def _wrapper(fun, parts: list, constants: dict):
    """The Python function calling `fun` with `parts`: each a parameter name (``a0``), a literal, or a
    ``key=value`` keyword (values that are no literals are the wrapper module's globals, in `constants`)."""
    name = spelling(fun)
    if name is None:
        constants["fun"] = fun
        name = "fun"
    params = [p for p in parts if p.startswith("a") and p[1:].isdigit()]
    label = (getattr(fun, "__name__", None) or "f").strip("<>")
    label = label + "_" if keyword.iskeyword(label) or label in dir(__builtins__) or hasattr(np, label) else label
    module = ".".join(name.split(".")[:2]) if name.startswith("scipy.") else "scipy"
    source = (f"import numpy as np\nimport {module}\n\ndef {label}({', '.join(params)}):\n"
              f"    return {name}({', '.join(parts)})\n")
    key = (id(fun), source, tuple(map(id, constants.values())))
    if key not in _MADE:
        _MADE[key] = (_load(label, source, constants), fun, list(constants.values()))
    return _MADE[key][0]


def _as_source(value, constants: dict, name: str) -> str:
    text = _literal(value)
    if text is None:
        constants[name] = value
        return name
    return text


def is_python_function(fun) -> bool:
    """True for a function with Python source (also one s2sgrad made, or a `functools.partial` of one), which
    s2sgrad gets as it is."""
    if isinstance(fun, functools.partial):
        return is_python_function(fun.func)
    library = (getattr(fun, "__module__", None) or "").split(".")[0] in ("numpy", "scipy")
    return not library and (inspect.isfunction(fun) or inspect.ismethod(fun) and inspect.isfunction(fun.__func__))


def python_call(fun, args: tuple, kwargs: dict, argnum=0):
    """How to call `fun` as a Python function: ``(function, args, kwargs, argnum)``.

    A Python function is returned as it is. A library callable becomes a wrapper whose parameters are the
    arguments that are not literals (arrays, floats) or are differentiated (`argnum`); the others, and the
    keyword arguments, are written into the call as literals, as a user writes
    ``lambda x: np.einsum("ij->ji", x)``. `argnum` is renumbered to the wrapper's parameters."""
    if is_python_function(fun):
        return fun, tuple(args), kwargs, argnum
    wrt = {argnum} if isinstance(argnum, int) else set(argnum)
    constants: dict = {}
    parts, kept, renumbered = [], [], {}
    if isinstance(fun, functools.partial):
        kwargs = {**fun.keywords, **kwargs}
        parts += [_as_source(v, constants, f"arg{k}") for k, v in enumerate(fun.args)]
        fun = fun.func
    for k, value in enumerate(args):
        if k not in wrt and _literal(value) is not None:
            parts.append(_literal(value))
        else:
            renumbered[k] = len(kept)
            parts.append(f"a{len(kept)}")
            kept.append(value)
    parts += [f"{key}={_as_source(v, constants, f'kw_{key}')}" for key, v in kwargs.items()]
    new = renumbered[argnum] if isinstance(argnum, int) else type(argnum)(renumbered[k] for k in argnum)
    return _wrapper(fun, parts, constants), tuple(kept), {}, new
