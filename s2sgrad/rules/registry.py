"""The table of derivative rules: one template per primitive, read and inlined by `reverse`.

A rule is a Python function whose first parameter names the primitive's result
and whose other parameters mirror the primitive's own signature. ``d[v]`` in
its body is the adjoint of `v`; ``d[x] = expr`` contributes `expr` to the
adjoint of argument `x` (the first contribution assigns, later ones add).
The body is never run: it is parsed and inlined into the generated code.
A forward-mode twin, registered with `tangent`, sets the tangent of the result
from the tangents of the arguments instead.

    >>> import numpy as np
    >>> def softplus(x):
    ...     return np.log1p(np.exp(x))
    >>> @adjoint(softplus)
    ... def softplus_adjoint(y, x):
    ...     d[x] = d[y] / (1.0 + np.exp(-x))
    >>> @tangent(softplus)
    ... def softplus_tangent(y, x):
    ...     d[y] = d[x] / (1.0 + np.exp(-x))
    >>> rule_for(softplus).output, tangent_rule_for(softplus).output
    ('y', 'y')
"""
from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import importlib
import inspect
import linecache
import sys
import textwrap
import types
from dataclasses import dataclass, field
from typing import Callable

from .. import guards
from ..errors import Location, NoDerivativeRule, S2SGradError
from ..ir.names import TEMPLATE_BUILTINS
from ..ir.trees import walk
from .checks import check_template


class RuleTemplateError(S2SGradError):
    """A derivative rule template the engine cannot inline; the location is the template's own line."""


@dataclass(frozen=True)
class TemplateSource:
    """Where a template is written: its file, the file's line and column of the template's line 1, column 0,
    and the template's line of its ``def`` (or ``lambda``)."""

    filename: str
    first_line: int
    indent: int = 0
    head: int = 1

    def location(self, node: ast.AST | None = None) -> Location:
        """The place of `node` (a node of the template's body; None: its ``def`` or ``lambda``)."""
        line = self.first_line + (getattr(node, "lineno", self.head) - 1)
        col = self.indent + getattr(node, "col_offset", 0)
        return Location(self.filename, line, col, linecache.getline(self.filename, line).rstrip("\n"))


class _Adjoints:
    """The ``d`` of rule templates. Rules are parsed, never run, so this only has to exist."""

    def __getitem__(self, name):
        raise RuntimeError("derivative rules are templates and are not meant to be called")

    __setitem__ = __getitem__


d = _Adjoints()


def no_derivative(reason: str, *tangents) -> None:
    """A template's mark of an argument the primitive has no derivative in: ``d[a] = no_derivative("...")`` in
    an adjoint, a term ``no_derivative("...", d[a])`` in a tangent. Where a derivative flows into `a`, the
    call is refused at the user's line with `reason` (never a zero derivative). Templates are never run."""
    raise RuntimeError("derivative rules are templates and are not meant to be called")


def refusal(expr: ast.expr) -> NoDerivativeRule | None:
    """The error a ``no_derivative("...", ...)`` call in template expression `expr` stands for, else None."""
    for node in walk(expr):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "no_derivative" \
                and node.args and isinstance(node.args[0], ast.Constant):
            return NoDerivativeRule(node.args[0].value, None, "wrap the argument in sg.stop_gradient(...) if "
                                                              "no derivative should flow through it")
    return None


@dataclass
class Rule:
    """A parsed derivative rule: `body` is the template's statements, `signature` its primal parameters."""

    primitive: object
    template: Callable
    output: str
    signature: inspect.Signature
    body: list[ast.stmt] = field(repr=False)
    tangent: "Rule | None" = field(default=None, repr=False)     # the forward-mode twin, if registered
    source: TemplateSource | None = field(default=None, repr=False)

    def error(self, message: str, node: ast.AST | None = None) -> RuleTemplateError:
        """The error to raise about `node` of this rule's template."""
        return RuleTemplateError(message, self.source.location(node) if self.source else None)

    @property
    def reads_output(self) -> bool:
        return any(isinstance(n, ast.Name) and n.id == self.output for stmt in self.body
                   for n in walk(stmt))


class Opaque:
    """A callable of the user's that cannot be hashed (an instance defining ``__eq__`` and ``__call__``), held
    by identity so that tables of functions can be asked about it; rules registered for it still apply.

        >>> class Scale(list):
        ...     def __call__(self, x):
        ...         return x
        >>> Opaque(Scale()) in {len}
        False
    """

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return repr(self.fn)


def hashable(fn):
    """`fn`, or `fn` held as `Opaque` if it cannot be hashed."""
    try:
        hash(fn)
    except TypeError:
        return Opaque(fn)
    return fn


def key(primitive) -> object:
    """What the rule table knows `primitive` by: its identity; a bound method's, that of its object and function
    (``scipy.stats.norm.logpdf`` is a new method object at each attribute read).

        >>> class Law:
        ...     def logpdf(self, x):
        ...         return -x * x / 2
        >>> law = Law()
        >>> law.logpdf is law.logpdf, key(law.logpdf) == key(law.logpdf)
        (False, True)
    """
    primitive = primitive.fn if isinstance(primitive, Opaque) else primitive
    if isinstance(primitive, types.MethodType):
        return id(primitive.__self__), id(primitive.__func__)
    return id(primitive)


_RULES: dict[object, Rule] = {}
_TANGENT_ONLY: dict[object, Rule] = {}        # forward-mode rules of primitives that have no adjoint
_NONDIFFERENTIABLE: dict[object, object] = {}
_COMPLEX_ADJOINTS: dict[object, Rule] = {}   # rules for calls on complex values, where the real rule is not one
_SAME_FOR_COMPLEX: set[object] = set()       # primitives whose rule holds for complex values as written
_KEEPALIVE: list[object] = []
# Rule modules of optional libraries, loaded when their library is first seen imported: (library, rule module).
_OPTIONAL = [("scipy.special", "s2sgrad.rules.scipy_special"), ("scipy.stats", "s2sgrad.rules.scipy_stats"),
             ("scipy.signal", "s2sgrad.rules.scipy_signal")]


def load_optional_rules() -> None:
    """Register the rules of each optional library the program has imported (`scipy.special`, `scipy.stats`,
    `scipy.signal`):
    ``import s2sgrad`` never imports them itself."""
    for library, module in [entry for entry in _OPTIONAL if entry[0] in sys.modules]:
        _OPTIONAL.remove((library, module))
        if module in sys.modules:        # imported by hand, and its rules since taken out of the table: again
            importlib.reload(sys.modules[module])
        else:
            importlib.import_module(module)


def parse_template(template: Callable) -> Rule:
    """The rule (of no primitive yet) a template function's source describes."""
    filename = inspect.getsourcefile(template) or "<unknown>"
    tree = _definitions("".join(linecache.getlines(filename))).get(template.__code__.co_firstlineno)
    if tree is not None and tree.name == template.__name__:    # its file's own tree (never changed: rules
        source = TemplateSource(filename, 1)                     # are copied where they are inlined)
    else:                                # a template whose file does not hold it as written (an exec'd string)
        lines, first_line = inspect.getsourcelines(template)
        source = TemplateSource(filename, first_line, len(lines[0]) - len(lines[0].lstrip()))
        tree = ast.parse(textwrap.dedent("".join(lines))).body[0]
    if not isinstance(tree, ast.FunctionDef):
        raise RuleTemplateError("a rule template is a function defined with def", source.location())
    signature = inspect.signature(template)
    params = list(signature.parameters.values())
    if not params or params[0].kind not in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        raise RuleTemplateError(f"the template {template.__name__} takes the primitive's result first, then "
                                f"the primitive's arguments", dataclasses.replace(source, head=tree.lineno).location())
    body = [s for s in tree.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    source = dataclasses.replace(source, head=tree.lineno)
    return Rule(None, template, params[0].name, signature.replace(parameters=params[1:]), body, source=source)


@functools.lru_cache(maxsize=16)
def _definitions(text: str) -> dict[int, ast.FunctionDef]:
    """The functions a source file's `text` defines, by the line their code starts on (the first decorator's
    line): one parse per file of templates, where each template parsed alone would tokenize its file again."""
    try:
        tree = parsed_file(text)
    except SyntaxError:
        return {}
    return {(node.decorator_list[0].lineno if node.decorator_list else node.lineno): node
            for node in walk(tree) if isinstance(node, ast.FunctionDef)}


@functools.lru_cache(maxsize=16)
def parsed_file(text: str) -> ast.Module:
    """The tree of a file of rules (its `text`), parsed once for its templates and its partials' lambdas; never
    changed (what is inlined is copied)."""
    return ast.parse(text)


def _checked(rule: Rule, primitives: tuple, mode: str) -> Rule:
    check_template(rule, primitives, mode)
    TEMPLATE_BUILTINS.update(n.id for stmt in rule.body for n in walk(stmt) if isinstance(n, ast.Name)
                             and n.id not in rule.signature.parameters and hasattr(builtins, n.id))
    return rule


def register_adjoint(primitives: tuple, rule: Rule) -> None:
    """Make `rule` (parsed, of no primitive yet) the derivative rule of each of `primitives`."""
    _checked(rule, primitives, "adjoint")
    for primitive in primitives:
        _KEEPALIVE.append(primitive)
        _RULES[key(primitive)] = dataclasses.replace(rule, primitive=primitive)
        _NONDIFFERENTIABLE.pop(key(primitive), None)
    guards.invalidate_all()


def register_tangent(primitives: tuple, rule: Rule) -> None:
    """Make `rule` (parsed, of no primitive yet) the forward-mode rule of each of `primitives`."""
    _checked(rule, primitives, "tangent")
    for primitive in primitives:
        own = dataclasses.replace(rule, primitive=primitive)
        _KEEPALIVE.append(primitive)
        if key(primitive) in _RULES:
            _RULES[key(primitive)].tangent = own
        else:
            _TANGENT_ONLY[key(primitive)] = own
    guards.invalidate_all()


def adjoint(*primitives: object) -> Callable[[Callable], Callable]:
    """Register the decorated template as the derivative rule of each of `primitives`.

        >>> import s2sgrad as sg
        >>> def softplus(x):
        ...     return np.log1p(np.exp(x))
        >>> @sg.adjoint(softplus)
        ... def softplus_rule(y, x):
        ...     d[x] = d[y] / (1 + np.exp(-x))
    """
    def register(template: Callable) -> Callable:
        register_adjoint(primitives, parse_template(template))
        return template
    return register


def tangent(*primitives: object) -> Callable[[Callable], Callable]:
    """Register the decorated template as the forward-mode (tangent) rule of each of `primitives`.

    ``d[x]`` reads the tangent of `x`; ``d[y] = expr`` sets the tangent of the result.
    The template's parameters mirror the primitive's signature, as an adjoint's do:

        >>> import numpy as np
        >>> def cube(x):
        ...     return x ** 3
        >>> @tangent(cube)
        ... def cube_tangent(y, x):
        ...     d[y] = 3.0 * x ** 2 * d[x]

    A primitive without an adjoint rule (a helper that only generated code calls)
    gets a forward-mode rule only; reverse mode still reports it as having no rule.
    """
    def register(template: Callable) -> Callable:
        register_tangent(primitives, parse_template(template))
        return template
    return register


def complex_adjoint(*primitives: object) -> Callable[[Callable], Callable]:
    """Register the decorated template as the derivative rule of `primitives` where a call of one has complex
    arguments or a complex result, or arguments of unknown dtypes (so it must hold for real ones too). A complex
    value's adjoint is ``dL/dRe(z) - 1j * dL/dIm(z)`` (autograd's convention): a holomorphic function's rule
    is its real rule, so only the others need one of these."""
    def register(template: Callable) -> Callable:
        rule = _checked(parse_template(template), primitives, "adjoint")
        for primitive in primitives:
            _KEEPALIVE.append(primitive)
            _COMPLEX_ADJOINTS[key(primitive)] = dataclasses.replace(rule, primitive=primitive)
        guards.invalidate_all()
        return template
    return register


def same_for_complex(*primitives: object) -> None:
    """Declare that the rules of `primitives` hold for complex values as written (holomorphic functions, and
    linear maps with real coefficients: sums, reshapes, indexing)."""
    for primitive in primitives:
        _KEEPALIVE.append(primitive)
        _SAME_FOR_COMPLEX.add(key(primitive))
    guards.invalidate_all()


def complex_rule_for(primitive: object) -> Rule | None:
    """The derivative rule of a call of `primitive` on complex values, or None if none is known to hold."""
    if key(primitive) in _SAME_FOR_COMPLEX:
        return rule_for(primitive)
    return _COMPLEX_ADJOINTS.get(key(primitive))


def nondifferentiable(*primitives: object) -> None:
    """Declare that `primitives` have no gradient (integer or boolean results, shapes, constructors)."""
    for primitive in primitives:
        _KEEPALIVE.append(primitive)
        _NONDIFFERENTIABLE[key(primitive)] = primitive
    guards.invalidate_all()


def rule_for(primitive: object) -> Rule | None:
    """The derivative rule of `primitive`, or None."""
    if _OPTIONAL:
        load_optional_rules()
    return _RULES.get(key(primitive))


def tangent_rule_for(primitive: object) -> Rule | None:
    """The forward-mode rule of `primitive` (a `Rule` whose body sets ``d[y]``), or None."""
    if _OPTIONAL:
        load_optional_rules()
    owner = _RULES.get(key(primitive))
    if owner is not None and owner.tangent is not None:
        return owner.tangent
    return _TANGENT_ONLY.get(key(primitive))


def is_nondifferentiable(primitive: object) -> bool:
    if _OPTIONAL:
        load_optional_rules()
    return key(primitive) in _NONDIFFERENTIABLE
