"""The template engine both modes inline derivative rules with.

`bind` maps a template's parameters to a call's atoms; `Substitute` copies a template
expression with its parameters replaced by those atoms (a parameter the call left at
the template's default by a `Default` constant), its result by the result's name and
its temporaries by fresh names; `Simplify` folds what substitution left constant and
leaves out of calls the arguments that equal the callee's own default; `materialize`
writes the remaining `Default` constants as plain ones; `drop_dead` removes the
temporaries nothing reads. `adjoint_templates` and `tangent_templates` say what
``d[...]`` means in each mode.

    >>> import numpy as np
    >>> from s2sgrad.ir import Op, Var
    >>> from s2sgrad.rules import rule_for
    >>> binding = bind(rule_for(np.sum), Op(np.sum, [Var("hit")]))
    >>> call = ast.parse("np.sum(hit, axis, keepdims=keepdims)", mode="eval").body
    >>> ast.unparse(Simplify().visit(Substitute(binding, "y", ast.Name("y", ast.Load()), {}).visit(call)))
    'np.sum(hit)'
"""
from __future__ import annotations

import ast
import builtins
import inspect
import math
import warnings
from dataclasses import dataclass

import numpy as np

from .. import runtime
from ..errors import S2SGradError
from ..ir import primitives
from ..ir.nodes import Const, Op, Var, atom_expr
from ..ir.syntax import names_read
from ..ir.trees import Transformer, copy_tree, walk
from ..rules.registry import Rule


@dataclass(frozen=True)
class Binding:
    """A template's parameters bound at one call: each to an atom (a tuple of atoms for ``*items``);
    `defaulted` are those the call left at the template's default."""
    atoms: dict
    defaulted: frozenset[str]


def bind(rule: Rule, op: Op) -> Binding:
    """Bind `rule`'s parameters to the arguments of `op`, and the rest to the template's defaults."""
    try:
        bound = rule.signature.bind(*op.args, **op.kwargs)
    except TypeError as error:
        name = getattr(op.fn, "__name__", op.fn)
        raise S2SGradError(f"the call does not match the derivative rule of {name}: {error}", None,
                           _keyword_hint(error, primitives.label(op.fn, op.args, op.name), rule)) from None
    passed = set(bound.arguments)
    bound.apply_defaults()
    atoms = {}
    for name, value in bound.arguments.items():
        if rule.signature.parameters[name].kind == inspect.Parameter.VAR_POSITIONAL:
            atoms[name] = tuple(value)
        elif isinstance(value, (Var, Const)) or hasattr(value, "name") and hasattr(value, "value"):
            atoms[name] = value
        else:
            atoms[name] = Const(value)
    defaulted = frozenset(name for name in atoms if name not in passed and not isinstance(atoms[name], tuple))
    return Binding(atoms, defaulted)


_KEYWORD_HINTS = {
    "where": "mask the values instead: np.where(mask, x, 0.0) before a sum (np.sum(np.where(mask, x, 0.0)) for "
             "np.sum(x, where=mask)), or np.where(mask, np.f(x), other) for a ufunc",
    "initial": "combine the start value outside the call: np.sum(x) + initial, np.prod(x) * initial, "
               "np.maximum(np.max(x), initial)",
    "out": "assign the result instead (y = np.f(...), or y[...] = np.f(...) to write into y)",
}


def _keyword_hint(error: TypeError, name: str, rule: Rule) -> str:
    """What to write instead of a call that passes what `rule`'s template does not take."""
    keyword = next((k for k in _KEYWORD_HINTS if f"'{k}'" in str(error)), None)
    takes = f"the rule takes {name}{rule.signature}"     # (`name` as the user wrote it: np.add)
    return f"{_KEYWORD_HINTS[keyword]}; {takes}" if keyword else \
        f"{takes}; pass only those, or register a rule of your own for this call with @sg.adjoint({name})"


class Default(ast.Constant):
    """The constant a parameter the call left at its default stands for; `materialize` writes it plainly."""


def materialize(node):
    """`node` with its `Default` constants written as plain expressions."""
    class Plain(Transformer):
        def visit_Default(self, default):
            return primitives.constant(default.value)
    return Plain().visit(node)


class Substitute(Transformer):
    """Put a call's atoms, the result's name and the temporaries' names into a copy of a template expression.

    `temps` maps a template temporary to the expression standing for it. ``d[...]`` is the mode's
    business: a subclass says what it means in `derivative`."""

    def __init__(self, binding: Binding, output: str, result: ast.expr, temps: dict):
        self.binding = binding
        self.output = output
        self.result = result
        self.temps = temps

    def derivative(self, node: ast.Subscript) -> ast.expr:
        raise NotImplementedError

    def visit_Subscript(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == "d":
            return self.derivative(node)
        self.generic_visit(node)
        return node

    def visit_Name(self, node):
        if node.id == self.output:
            return copy_tree(self.result)
        if node.id in self.binding.defaulted:
            return Default(self.binding.atoms[node.id].value)
        if node.id in self.binding.atoms:
            bound = self.binding.atoms[node.id]
            if isinstance(bound, tuple):
                return ast.Tuple([atom_expr(a) for a in bound], ast.Load())
            return atom_expr(bound)
        if node.id in self.temps:
            expr = copy_tree(self.temps[node.id])
            if isinstance(expr, ast.Name):
                expr.ctx = node.ctx
            return expr
        return node

    def visit_Call(self, node):
        """``f(*items)`` for a ``*items`` parameter: the items, one argument each (generated code has no ``*``)."""
        self.generic_visit(node)
        node.args = [item for arg in node.args for item in
                     (arg.value.elts if isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Tuple) else [arg])]
        return node


def is_number(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


_FOLDABLE = (ast.Constant, ast.Tuple, ast.List, ast.BinOp, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.operator,
             ast.cmpop, ast.boolop, ast.unaryop, ast.expr_context)


def fold(node: ast.expr) -> ast.expr:
    """An operation on constants as its value (``None in (None, 'fro')`` -> ``True``), else `node`."""
    if not all(isinstance(n, _FOLDABLE) for n in walk(node)):
        return node
    try:
        with warnings.catch_warnings():               # ("2.0 is not None" is a test on constants too)
            warnings.simplefilter("ignore", SyntaxWarning)
            code = compile(ast.Expression(ast.fix_missing_locations(materialize(copy_tree(node)))),
                           "<rule>", "eval")
            return ast.Constant(eval(code, {"__builtins__": {}}))
    except Exception:
        return node


def dotted(node) -> str | None:
    """``np.linalg.norm`` for the expression naming it, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def callee(name: str | None):
    """The function a dotted name in a template means (``np.sum``, ``math.log``, a runtime helper), or None."""
    if not name:
        return None
    head, *rest = name.split(".")
    value = {"np": np, "math": math}.get(head, getattr(runtime, head, getattr(builtins, head, None)))
    for part in rest:
        value = getattr(value, part, None)
    return value


def _same_default(declared, value) -> bool:
    if declared is getattr(np, "_NoValue", object()):        # NumPy's "not given"
        return value is None or value is False
    return type(declared) is type(value) and declared == value


_PARAMETERS: dict = {}            # a callee of rule templates -> its parameters (None: its signature is unknown)


def _parameters(fn) -> list | None:
    """The parameters of `fn` (a function a template calls: NumPy's, `math`'s, a runtime helper), or None."""
    try:
        return _PARAMETERS[fn]
    except KeyError:
        pass
    except TypeError:                 # (unhashable)
        return _signature_parameters(fn)
    found = _PARAMETERS[fn] = _signature_parameters(fn)
    return found


def _signature_parameters(fn) -> list | None:
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None


def leave_out_defaults(call: ast.Call, trusted: bool) -> None:
    """Drop the arguments of `call` that the rule's call left at their defaults, where the callee's
    default is the same (or, if the callee's signature is unknown, where the call is `trusted`)."""
    parameters = _parameters(callee(dotted(call.func)))

    def omissible(parameter, default) -> bool:
        if parameters is None:
            return trusted
        return parameter is not None and parameter.default is not inspect.Parameter.empty \
            and _same_default(parameter.default, default.value)

    by_name = {p.name: p for p in parameters or []}
    call.keywords = [k for k in call.keywords
                     if not (isinstance(k.value, Default) and omissible(by_name.get(k.arg), k.value))]
    positional = [p for p in parameters or [] if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    while call.args and isinstance(call.args[-1], Default):
        index = len(call.args) - 1
        if not omissible(positional[index] if index < len(positional) else None, call.args[-1]):
            break
        call.args.pop()


class Simplify(Transformer):
    """Fold what substitution left constant, bottom up: tests on constants pick their branch
    (``a if None is None else b`` -> ``a``, ``np.where(True, a, b)`` -> ``a``), ``x * 1``, ``x ** 1``,
    ``x / 1``, ``x + 0`` and ``x - 0`` are `x`, a `math` function of constants is its value, and
    arguments left at a default the callee shares are left out (``np.sum(g)``)."""

    def trusted(self, call: ast.Call) -> bool:
        """May `call` leave out defaulted arguments though the callee's signature is unknown?"""
        return False

    def visit_BinOp(self, node):
        self.generic_visit(node)
        return self.binop(node)

    def binop(self, node: ast.BinOp) -> ast.expr:
        """`node`, whose operands are simplified already, simplified."""
        node = fold(node)
        if not isinstance(node, ast.BinOp):
            return node
        left, right, op = node.left, node.right, node.op
        one = lambda n: is_number(n) and n.value == 1  # noqa: E731
        zero = lambda n: is_number(n) and n.value == 0  # noqa: E731
        if isinstance(op, (ast.Add, ast.Sub)) and zero(right) or isinstance(op, ast.Add) and zero(left):
            return left if zero(right) else right          # x - 0, x + 0 (a parameter's default of 0)
        if isinstance(op, (ast.Pow, ast.Mult, ast.Div)) and one(right):
            return left                                     # x ** 1, x * 1, x / 1
        if isinstance(op, ast.Mult) and one(left):
            return right
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        return fold(node)

    visit_Compare = visit_BoolOp = visit_UnaryOp

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return self.ifexp(node)

    def ifexp(self, node: ast.IfExp) -> ast.expr:
        """`node`, whose parts are simplified already, simplified."""
        if isinstance(node.test, ast.Constant):
            return node.body if node.test.value else node.orelse
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        return self.call(node)

    def call(self, node: ast.Call) -> ast.expr:
        """`node`, whose arguments are simplified already, simplified."""
        picked = picked_branch(node)
        if picked is not None:
            return picked
        leave_out_defaults(node, self.trusted(node))
        name = dotted(node.func)
        if name and name.startswith("math.") and not node.keywords \
                and all(isinstance(a, ast.Constant) for a in node.args):
            try:
                return ast.Constant(callee(name)(*(a.value for a in node.args)))
            except (TypeError, ValueError, ArithmeticError):
                return node
        return node


def picked_branch(node: ast.Call) -> ast.expr | None:
    """The branch ``np.where(test, a, b)`` picks where `test` is a constant bool (``x ** np.where(2 == 0, 1, 2 - 1)``
    is ``x ** 1``, then ``x``), else None."""
    if dotted(node.func) == "np.where" and len(node.args) == 3 and not node.keywords \
            and isinstance(node.args[0], ast.Constant) and type(node.args[0].value) is bool:
        return node.args[1] if node.args[0].value else node.args[2]
    return None


def drop_dead(statements: list, roots: list) -> list:
    """`statements` without the assignments of temporaries that neither `roots` (expressions) nor a kept
    statement read; statements that assign no temporary, and `roots` among `statements`, are kept."""
    needed = names_read(*roots)
    kept = []
    for stmt in reversed(statements):
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets) \
                and not any(t.id in needed for t in stmt.targets):
            continue
        kept.append(stmt)
        needed |= names_read(stmt)
    return kept[::-1]


__all__ = ["Binding", "Default", "Simplify", "Substitute", "bind", "callee", "dotted", "drop_dead", "fold",
           "is_number", "leave_out_defaults", "materialize", "picked_branch"]
