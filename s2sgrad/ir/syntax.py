"""Small constructors of Python syntax for generated code, shared by the stages that emit it, and the
annotations a stage leaves on a node for a later one.

    >>> import ast
    >>> ast.unparse(np_call("sum", call("zeros_like", name("x"))))
    'np.sum(zeros_like(x))'
    >>> statement = noted(assign("y_stack", call("Stack")), "for dx")
    >>> note_of(statement), origin_of(statement)
    ('for dx', None)

The annotations: every attribute a stage pins on a node for another to read. The first four cross stages
and have their accessors here; the last four stay within the stage (or the frontend) that uses them:

- ``origin`` on a generated statement: the user line it comes from (`origin`, `origin_of`, `keep_origin`).
  Set by every stage that emits code; `codegen` prints it as ``# file.py:line``, passes keep it on what
  replaces the statement.
- ``note`` on a generated statement (`noted`, `note_of`): `reverse` says on a stack's declaration which
  adjoint reads it; `codegen` prints it as ``# note`` instead of the origin.
- ``shape`` on a name a rule's expansion put in (`with_shape`, `shape_of`): `inline` records the value's
  concrete shape, `codegen.drop_broadcasts` reads it.
- ``plumbing`` on a generated statement (`plumbing`, `is_plumbing`): `reverse` marks the statement that
  hands a checkpointing driver the current state, which `inplace` does not count as a read of an earlier
  version.
- ``rule`` on a generated statement: the rule that wrote it, for `reverse`'s own error messages.
- ``carries_tangent`` and ``narrow`` on a tangent expression, within `tangent_inline`.
- ``checkpoint`` and ``trips`` on a gast ``While``: the loop's schedule and trip count, from `desugar`
  to `lower`.
- ``random_states`` on an IR ``Op`` (not syntax): the generators' states `randomness` saves before a
  recomputed call, which `reverse` replays.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .trees import walk

if TYPE_CHECKING:
    from ..errors import Location


def name(id_: str) -> ast.Name:
    return ast.Name(id_, ast.Load())


def store(id_: str) -> ast.Name:
    return ast.Name(id_, ast.Store())


def call(fn: str, *args) -> ast.Call:
    return ast.Call(name(fn), list(args), [])


def is_call(node: ast.AST, fn: str) -> bool:
    """Is `node` a call of the plain name `fn`?"""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == fn


def is_slice(node: ast.AST) -> bool:
    """Is `node` ``g[a:b]`` (or ``g[:, a:b]``): a part of an array, never a missing gradient?"""
    index = getattr(node, "slice", None)
    return isinstance(node, ast.Subscript) and all(isinstance(p, ast.Slice) for p in getattr(index, "elts", [index]))


def names_read(*code) -> set[str]:
    """Every name the syntax `code` reads (each part a node or a list of nodes).

        >>> sorted(names_read(ast.parse("a = b + c")))
        ['b', 'c']
        >>> sorted(names_read([ast.parse("x = y")], ast.Name("z", ast.Load())))
        ['y', 'z']
    """
    found = set()
    for part in code:
        for node in part if isinstance(part, list) else [part]:
            found.update(n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
    return found


def assigned_name(stmt: ast.AST) -> str | None:
    """The name a simple assignment ``t = v`` or ``t op= v`` binds, else None.

        >>> assigned_name(ast.parse("t += 1").body[0]), assigned_name(ast.parse("a, b = c").body[0])
        ('t', None)
    """
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    return None


def attr(obj: str, attribute: str) -> ast.Attribute:
    return ast.Attribute(name(obj), attribute, ast.Load())


def np_call(fn: str, *args) -> ast.Call:
    """``np.fn(*args)``."""
    return ast.Call(ast.Attribute(name("np"), fn, ast.Load()), list(args), [])


def origin(node, location: Location | None):
    """Remember which user line a generated statement comes from (printed as a comment); returns `node`."""
    if location is not None:
        node.origin = location
    return node


def origin_of(node: ast.AST) -> Location | None:
    """The user line `node` comes from, if one was recorded (see `origin`)."""
    return getattr(node, "origin", None)


def keep_origin(into: ast.AST, source: ast.AST) -> ast.AST:
    """Give `into` the origin of `source` (the statement it replaces or absorbs) if it has none itself."""
    if origin_of(into) is None:
        origin(into, origin_of(source))
    return into


def noted(statement: ast.stmt, note: str | None) -> ast.stmt:
    """`statement`, printed with ``# note`` after it (instead of its origin)."""
    statement.note = note
    return statement


def note_of(statement: ast.AST) -> str | None:
    return getattr(statement, "note", None)


def with_shape(expr: ast.expr, shape: tuple | None) -> ast.expr:
    """`expr`, known to have `shape` (None: not known); returns `expr`."""
    expr.shape = shape
    return expr


def shape_of(expr: ast.AST) -> tuple | None:
    """The shape `with_shape` recorded for `expr`, or None."""
    return getattr(expr, "shape", None)


def plumbing(statement: ast.stmt) -> ast.stmt:
    """`statement`, marked as handing the current state on (not a read of an earlier version of a value)."""
    statement.plumbing = True
    return statement


def is_plumbing(statement: ast.AST) -> bool:
    return getattr(statement, "plumbing", False)


def assign(target, value: ast.expr, location=None) -> ast.Assign:
    """``target = value``; `target` is a name or a target expression."""
    target = store(target) if isinstance(target, str) else target
    return origin(ast.Assign([target], value), location)


def function(fn_name: str, params: list[str], body: list, defaults=()) -> ast.FunctionDef:
    """``def fn_name(params): body`` (the last parameters taking `defaults`)."""
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=list(defaults))
    node = ast.FunctionDef(name=fn_name, args=args, body=body, decorator_list=[], returns=None, type_comment=None)
    if hasattr(ast, "TypeAlias"):          # Python 3.12+
        node.type_params = []
    return node
