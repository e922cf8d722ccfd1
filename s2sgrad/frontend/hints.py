"""Part of stage 2: what a refusal of lowering says, in the user's words: Python syntax by what it is written
as (never by its AST class), and for a method or attribute of a local value, what works instead.

    >>> syntax_name("NamedExpr")
    ':= (an assignment expression)'
    >>> print(local_method("tolist", None, {})[1])
    list(x) gives the list of x's rows (or elements), each differentiated; or index x directly (x[i])
"""
from __future__ import annotations

import numpy as np

from ..ir.nodes import Const
from ..rules import is_nondifferentiable, rule_for

# AST class -> how Python code writes it, and what to write instead (None: nothing to say beyond the message)
SYNTAX = {
    "Set": ("{a, b} (a set display)", "use a list [a, b] or a tuple (a, b), or set([a, b])"),
    "Dict": ("{k: v} (a dict display)", "build the dict with dict(k=v)"),
    "DictComp": ("{k: v for ...} (a dict comprehension)", "build the dict in a for loop (d[k] = v)"),
    "SetComp": ("{v for ...} (a set comprehension)", "build a list with [v for ...] instead"),
    "ListComp": ("[v for ...] (a list comprehension)", "build the list in a for loop (xs.append(v))"),
    "GeneratorExp": ("(v for ...) (a generator expression)", "use a list comprehension [v for ...]"),
    "NamedExpr": (":= (an assignment expression)", "assign the value in a statement of its own (y = ...)"),
    "Lambda": ("lambda", "define the function with def"),
    "JoinedStr": ("f'...' (an f-string)", "format the text outside the differentiated function"),
    "FormattedValue": ("{...} in an f-string", "format the text outside the differentiated function"),
    "TemplateStr": ("t'...' (a template string)", "build the text outside the differentiated function"),
    "Interpolation": ("{...} in a template string", "build the text outside the differentiated function"),
    "Await": ("await", "call the function synchronously"),
    "Yield": ("yield", "return a list or an array of the values instead"),
    "YieldFrom": ("yield from", "return a list or an array of the values instead"),
    "Starred": ("*xs (unpacking)", "pass or assign the items one by one"),
    "Slice": ("a:b (a slice)", "use a slice only inside an index, x[a:b]"),
    "ClassDef": ("a class definition", "define the class outside the differentiated function"),
    "AsyncFunctionDef": ("'async def'", "define a plain function with def"),
    "AsyncFor": ("'async for'", "use a plain for loop"),
    "AsyncWith": ("'async with'", "use a plain with statement"),
    "Match": ("'match'", "use if/elif"),
    "TryStar": ("'try ... except*' (exception groups)", "catch the exceptions with a plain except clause"),
    "TypeAlias": ("'type X = ...' (a type alias)", "define the alias outside the differentiated function"),
    "AnnAssign": ("an annotated assignment", "drop the annotation"),
}


def syntax_name(ast_class: str) -> str:
    """How Python code writes the construct whose AST class is `ast_class`."""
    return SYNTAX.get(ast_class, (ast_class, None))[0]


def syntax_hint(ast_class: str) -> str | None:
    """What to write instead of the construct whose AST class is `ast_class`."""
    return SYNTAX.get(ast_class, (ast_class, None))[1]


CALLEE_HINT = ("call a function by its name, a lambda or partial bound in the function, a function passed as an "
               "argument, or one picked from a list or dict by a constant index (fs[0](x)); s2sgrad must know "
               "which function each call calls when it generates the code")
ARRAY_ATTRIBUTES = "x.T, x.shape, x.ndim, x.size, x.dtype, x.real and x.imag"
KNOWN_CLASSES = ("an object's methods and attributes are followed where its class is known when the code is "
                 "generated: an argument, a module-level object, an object made here by its class (Model(...)), "
                 "and the fields and items of those")
LIBRARY_OBJECT = ("for a library object's method (a scipy.stats frozen distribution, say), call the library function "
                  "that has a rule (scipy.stats.norm.logpdf(x, loc, scale)), or make the object at module level "
                  "(N = ...) and register a rule for its method with @sg.adjoint(N.{attr})")
_GENERATOR_METHODS = {name for name in dir(np.random.Generator) if not name.startswith("_")}
_ARRAY_METHODS = {name for name in dir(np.ndarray) if not name.startswith("_")}
_INSTEAD = {
    "item": "float(x) for a single number (x[0] or x[i, j] for one element of an array): both keep the gradient",
    "tolist": "list(x) gives the list of x's rows (or elements), each differentiated; or index x directly (x[i])",
    "view": "use x itself (or np.asarray(x)); a view with another dtype has no derivative",
    "conjugate": "call np.conj(x)",
    "flat": "use np.ravel(x)",
    "mT": "use np.swapaxes(x, -1, -2)",
}


def _origin(atom, made_by: dict):
    """The function whose result the local value `atom` holds, or the constant it is (None if not known)."""
    return made_by.get(getattr(atom, "name", None), atom if isinstance(atom, Const) else None)


def _made_by(origin) -> str:
    """`` (made by make(...))`` for the result of a call of a named function."""
    name = getattr(origin, "__qualname__", None) or getattr(origin, "__name__", None)
    return f" (made by {name}(...))" if isinstance(name, str) and name.isidentifier() else ""


def _is_array(origin) -> bool:
    """Is a value made by `origin` an array (or number): the result of NumPy's functions or operators?"""
    module = getattr(origin, "__module__", None) or type(origin).__module__
    return module.split(".")[0] in ("numpy", "operator", "_operator", "s2sgrad", "math", "builtins")


def local_method(attr: str, atom, made_by: dict, arguments=()) -> tuple[str, str]:
    """The message and hint refusing ``x.attr(...)`` of the local value `atom` (a Var or Const), whose class is
    not known when the code is generated; `made_by`: names -> the function whose result each holds;
    `arguments`: the differentiated function's parameters."""
    origin = _origin(atom, made_by)
    if isinstance(origin, Const):
        return (f"the method '{attr}' of the constant {origin.value!r} is not supported",
                "compute it outside the differentiated function (a module-level constant)")
    if attr in _GENERATOR_METHODS and attr not in _ARRAY_METHODS:
        return (f"the method '{attr}' is called on a local value{_made_by(origin)}: random draws are followed "
                f"only from a generator passed as an argument or a module-level one",
                f"pass the generator in (def f(x, rng): ... rng.{attr}(...), called with "
                f"np.random.default_rng(seed)), make it at module level, or draw from NumPy's global state "
                f"(np.random.{attr}(...)); no gradient flows through a draw's randomness")
    if attr in _INSTEAD:
        return f"the method '{attr}' of an array is not supported", _INSTEAD[attr]
    if attr in _ARRAY_METHODS:
        function = getattr(np, attr, None)
        if callable(function) and (rule_for(function) is not None or is_nondifferentiable(function)):
            return (f"the method '{attr}' of an array is not supported",
                    f"call the NumPy function np.{attr}(x, ...) instead of x.{attr}(...)")
        return (f"the method '{attr}' of an array has no derivative rule",
                "compute the value another way, or call it on sg.stop_gradient(x) if no gradient should flow "
                "through it")
    if origin is not None and _is_array(origin):
        return (f"an array has no method '{attr}'",
                f"call a NumPy function on it (np.sum(x), np.reshape(x, s), ...); of an array, s2sgrad reads "
                f"{ARRAY_ATTRIBUTES}")
    if origin is None and getattr(atom, "name", None) in arguments:
        return (f"the method '{attr}' is called on the argument '{atom.name}', which is not an object s2sgrad "
                f"follows (an instance of your own class, a dataclass, a named tuple, a registered pytree)",
                LIBRARY_OBJECT.format(attr=attr))
    return (f"the method '{attr}' is called on a local value{_made_by(origin)} whose class is not known when the "
            f"code is generated", f"{KNOWN_CLASSES}: pass the object in as an argument, or make it here")


def local_attribute(attr: str, atom, made_by: dict) -> tuple[str, str]:
    """The message and hint refusing ``x.attr`` of a local value (see `local_method`)."""
    origin = _origin(atom, made_by)
    if attr in _INSTEAD:
        return f"the attribute '{attr}' of an array is not supported", _INSTEAD[attr]
    if attr in _ARRAY_METHODS:
        if callable(getattr(np.ndarray, attr)):
            return (f"the method '{attr}' of a local value is supported only when called",
                    f"call it (x.{attr}(...)), or pass the NumPy function np.{attr} around instead")
        return (f"the attribute '{attr}' of an array is not supported",
                f"of an array, s2sgrad reads {ARRAY_ATTRIBUTES}; compute '{attr}' from those")
    if origin is not None and _is_array(origin):
        return (f"an array has no attribute '{attr}'",
                f"of an array, s2sgrad reads {ARRAY_ATTRIBUTES}")
    return (f"the attribute '{attr}' of a local value{_made_by(origin)} is not known: its class is not known when "
            f"the code is generated", f"{KNOWN_CLASSES}: pass the object in as an argument, or make it here")
