"""Stage 2: lower a parsed function into the functional control-flow form of `ir`, in A-normal form.

    def f(x, n):                       def f(x, n):
        y = x                              y = x
        i = 0                              i = 0
        while i < n:           ->          def cond_1(y_1, i_1): ...  return lt
            y = np.sin(y) * x              def body_1(y_1, i_1): ...  return (y_2, i_2)
            i += 1                         y_3, i_3 = while_loop(cond_1, body_1, (y, i))
        return y                           return y_3

Operators, subscripts, method calls and literals become `ir.Op` calls of plain
functions; every reassignment of a name gets a new version (``y``, ``y_1``, ...);
nested ``def``s are lifted, their free variables becoming extra parameters.

`Lowerer` holds the state of one function's lowering (the block being built, the
current version of each name, `aliasing`) and lowers its statements; it hands
expressions to `expressions.Expressions`, calls to `calls.Calls`, calls of user
functions to `effects.UserCalls`, lambdas, partials and functions as values to `callables.Callables`,
NumPy's in-place functions to `numpy_writes.NumpyWrites`, assignments to `assignments.Assignments`, branches and
loops to `control_flow.ControlFlow`, nested defs to `closures.lift`.
"""
from __future__ import annotations

import ast

import gast

from .. import guards, runtime
from ..errors import S2SGradError, UnsupportedSyntax
from ..ir import primitives
from ..ir.names import Names
from ..ir.nodes import Assign, Const, Function, Op, Var, assignments, to_source
from ..ir.trees import copy_tree
from .aliasing import Aliasing
from .assignments import Assignments
from .callables import Callables
from .calls import Calls
from .closures import assigned_names, lift
from .control_flow import ControlFlow
from .desugar import Desugar, always_returns
from .dicts import Mappings
from .effects import Effects, UserCalls, summarize_effects
from .expressions import Expressions, temporary_hint
from .functions import LiftedFunction
from .hints import syntax_hint, syntax_name
from .numpy_writes import NumpyWrites
from .objects import Objects
from .parse import ParsedFunction, parse_function

assert_true, raise_error = runtime.assert_true, runtime.raise_error
primitives.INTERNAL[assert_true] = "assert_true"


_ANALYSING: set = set()                          # ids of the user functions whose effects are being found
_FOUND: dict = {}                                # id -> (function, Effects, cut?), while an outermost analysis runs
_CUT = [0]                                       # counts the results that met a recursive call (found None for it)


def effects_of(fn) -> Effects | None:
    """The `Effects` of calling `fn` (a LiftedFunction or a user function), found by lowering it; None
    for a function being analysed (a recursive call, refused later) or one that cannot be lowered (its
    error comes when it is transformed). Each function is lowered once per outermost analysis, and once per
    generation (`guards.memo`) where its analysis met no recursive call."""
    if id(fn) in _ANALYSING:
        _CUT[0] += 1
        return None
    if id(fn) in _FOUND:
        _, effects, cut = _FOUND[id(fn)]
        _CUT[0] += cut
        return effects
    memo = guards.memo()
    if memo is not None and ("effects", id(fn)) in memo:
        return memo["effects", id(fn)][1]
    outermost = not _ANALYSING
    cuts = _CUT[0]
    _ANALYSING.add(id(fn))
    try:
        if isinstance(fn, LiftedFunction):
            lowerer = Lowerer(fn.parsed, functions=fn.functions, statics=fn.statics, fields=fn.fields)
            lowerer.function(list(fn.free))
        else:
            lowerer = Lowerer(parse_function(fn))
            lowerer.function()
        effects = lowerer.effects
    except S2SGradError:
        effects = None
    finally:
        _ANALYSING.discard(id(fn))
    _FOUND[id(fn)] = (fn, effects, _CUT[0] != cuts)
    if memo is not None and _CUT[0] == cuts:
        memo["effects", id(fn)] = (fn, effects)
    if outermost:
        _FOUND.clear()
    return effects


def lower(parsed: ParsedFunction, extra_params: list[str] = ()) -> Function:
    """Lower `parsed` into an `ir.Function`."""
    return Lowerer(parsed).function(list(extra_params))


def lower_function(fn, scalars=(), vectors=(), dicts=(), fields=None, statics=None) -> tuple[Function, Names]:
    """Lower a user function or a LiftedFunction; also returns the names it uses.

    `scalars` names parameters known to hold Python or NumPy scalars, `vectors` those known to hold
    one-dimensional arrays (whose elements, ``x[i]``, are scalars, never views); `statics` binds
    parameters to the callable values they are known to be (see `callables`).
    """
    if isinstance(fn, LiftedFunction):
        lowerer = Lowerer(fn.parsed, functions=fn.functions, statics=fn.statics, fields=fn.fields)
        lowerer.also_returns = list(fn.also_returns)
        return lowerer.function(list(fn.free)), lowerer.names
    lowerer = Lowerer(parse_function(fn), scalars=scalars, vectors=vectors, dicts=dicts, fields=fields,
                      statics=statics)
    return lowerer.function(), lowerer.names


def lowered_source(fn, scalars=(), vectors=()) -> str:
    """The lowered form of `fn` as runnable Python, with the nested defs it calls (lifted) first.

    `scalars` names parameters known to hold scalars (so that ``+=`` on them is no in-place change).
    """
    lowered, _ = lower_function(fn, scalars, vectors)
    parts, seen = [], set()

    def visit(function):
        for inner in (s.value.fn for s in assignments(function.body)
                      if isinstance(s.value, Op) and isinstance(s.value.fn, LiftedFunction)):
            if id(inner) not in seen:
                seen.add(id(inner))
                inner_lowered, _ = lower_function(inner)
                visit(inner_lowered)
                parts.append(to_source(inner_lowered))
    visit(lowered)
    return "\n\n".join(parts + [to_source(lowered)]) + "\n"


def _identifiers(nodes: list) -> set[str]:
    return {n.id for n in nodes if isinstance(n, gast.Name)}


class Lowerer:
    """Lowers one parsed function (`function`): the state of its lowering and its statements.

    `functions`: nested defs of an enclosing function it may call; `scalars`, `vectors`, `dicts`: its
    parameters known to hold scalars, one-dimensional arrays, dicts; `fields`: those known to hold named
    tuples, with their fields' names; `statics`: those bound to callable values (see `callables`).
    """

    def __init__(self, parsed: ParsedFunction, names: Names | None = None, functions=None, scalars=(),
                 vectors=(), dicts=(), fields=None, statics=None):
        self.parsed = parsed
        self.dicts = dicts                        # parameters known to hold dicts
        self.names = names or Names(_identifiers(parsed.nodes))
        self.env: dict[str, object] = dict(functions or {})   # user name -> SSA name or LiftedFunction
        self.aliasing = Aliasing(scalars, lambda node: self.expressions.resolve_callee(node), vectors,
                                 lambda call: self.user_calls.call_effects(call))
        self.aliasing.kinds.local_names = {n.id for n in gast.walk(parsed.tree.args) if isinstance(n, gast.Name)} \
            | set(assigned_names(parsed.tree.body))      # (never a global's, wherever they are read)
        self.also_returns: list = []              # parameters whose final versions it returns too
        self.effects: Effects | None = None       # what a call of it does to its arguments, once lowered
        self.out: list = []                       # the block being built
        self.node = parsed.tree                   # the statement being lowered, for locations
        self.loop_locals: dict[str, object] = {}  # names that exist only inside an earlier loop
        self.deleted: dict[str, object] = {}      # names deleted (``del y``), with the statement
        self.maybe_unbound: dict[str, str] = {}   # a name -> its version after a loop that may bind it on no trip
        self.global_names: dict[str, str] = {}    # the user's free name -> its name in generated code
        self.expressions = Expressions(self, fields or {})
        self.objects = Objects(self, fields or {})
        self.calls = Calls(self)
        self.mappings = Mappings(self)
        self.callables = Callables(self)
        self.statics = dict(statics or {})
        self.user_calls = UserCalls(self, effects_of)
        self.writes = NumpyWrites(self)
        self.assignments = Assignments(self)
        self.control = ControlFlow(self)
        self.statements = {
            "Assign": lambda stmt: self.callables.assign(stmt) or self.assignments.assign(stmt),
            "AugAssign": self.assignments.augmented_assign,
            "If": self.control.if_statement, "While": self.control.while_loop, "Expr": self.stmt_Expr,
            "Assert": self.stmt_Assert, "FunctionDef": self.stmt_FunctionDef, "Pass": lambda stmt: None,
            "Raise": self.stmt_Raise, "Delete": self.stmt_Delete,
        }

    # ---------------------------------------------------------------- helpers

    def error(self, message, node=None, hint=None) -> UnsupportedSyntax:
        return UnsupportedSyntax(message, self.parsed.location(node or self.node), hint)

    def define(self, user_name: str) -> str:
        name = self.names.fresh(user_name, owner=True)
        self.env[user_name] = name
        self.loop_locals.pop(user_name, None)
        self.deleted.pop(user_name, None)
        self.aliasing.bind(user_name, name)
        return name

    def define_version(self, user_name: str, keep_vector: bool = True) -> str:
        """A new single-assignment name for `user_name` bound to a new version of the same object (written
        into); still a vector if it was (with `keep_vector`)."""
        name = self.names.fresh(user_name, owner=True)
        self.env[user_name] = name
        self.loop_locals.pop(user_name, None)
        self.aliasing.new_version(user_name, keep_vector)
        return name

    def stale_error(self, name, stale, node, scope=""):
        changer, where, callee = stale
        verb = "may be changed" if scope else "may have been changed"
        if callee is not None:
            return self.error(
                f"'{name}' {verb} in place by the call of '{callee}'{scope} (see line {where.line}), which "
                f"changes its argument '{changer}' or an object it holds", node,
                f"make '{callee}' return the new value instead of changing its argument, or pass it a copy "
                f"({callee}(....copy()))")
        return self.error(
            f"'{name}' {verb} in place through '{changer}'{scope} (they can be the same object; "
            f"see line {where.line})", node,
            f"take a copy where the second name is made (... = ....copy()), or update "
            f"'{changer}' out of place ({changer} = {changer} + ...)")

    def changed_in_place(self, name: str, where) -> None:
        """`name`'s object is changed in place at `where` (a node): the other names for it become stale."""
        maker = self.aliasing.views.of_name(name)
        if maker is not None:
            raise self.error(f"'{name}' may be a read-only view made by {maker}: NumPy refuses to write into it",
                             where, f"take a copy to write into ({name} = np.copy(...))")
        shared = self.aliasing.mutated(name, self.parsed.location(where))
        if shared is not None:
            raise self.global_change_error(name, shared, where)

    def written_in_place(self, array: str, written: Op, where) -> None:
        """``array[i] = v``: a new version of `array`, still the object (and of the shape) it was."""
        self.changed_in_place(array, where)
        self.emit(self.define_version(array), written)

    def global_change_error(self, name, shared, where):
        return self.error(
            f"'{name}' may be the module-level object '{shared}', which would be changed in place here; "
            "s2sgrad does not change objects outside the differentiated function", where,
            f"take a copy first ({name} = np.copy(...)), or pass the object as an argument and return the "
            "new value")

    def emit(self, target, value) -> None:
        self.out.append(Assign(target, value, self.parsed.location(self.node)))
        self.objects.assigned(target, value)

    def bind(self, value, hint: str = "t"):
        """An atom for `value`: Ops get a temporary name."""
        if not isinstance(value, Op):
            return value
        name = self.names.fresh(hint, temporary=True)
        self.emit(name, value)
        return Var(name)

    def atom(self, node):
        value = self.value(node)
        if hasattr(node, "lineno"):
            self.node = node                   # the operation's own location, not its last operand's
        return self.bind(value, temporary_hint(node))

    def value(self, node):
        """Lower an expression to an Op or an atom."""
        return self.expressions.value(node)

    def sub_block(self, stmts, env):
        """Lower `stmts` as a nested block starting from `env`; returns (block, env after, result)."""
        saved_out, saved_env = self.out, self.env
        self.out, self.env = [], dict(env)
        result = self.block(stmts)
        block, env_after = self.out, self.env
        self.out, self.env = saved_out, saved_env
        return block, env_after, result

    # ---------------------------------------------------------------- function and statements

    def function(self, extra_params=()) -> Function:
        tree = self.parsed.tree
        args = tree.args                      # one positional list (see signatures.flatten)
        params = []
        for arg in list(args.args):
            if arg.id in self.names.own:
                raise self.error(f"a parameter named '{arg.id}' would hide generated code's own '{arg.id}'", arg,
                                 f"rename the parameter '{arg.id}'")
            params.append(self.names.take(arg.id))
            self.env[arg.id] = arg.id
            self.aliasing.parameter(arg.id)
        for name in extra_params:
            params.append(self.names.take(name))
            self.env[name] = name
            self.aliasing.bind(name, name)
        self.env.update(self.statics)
        body = Desugar(self.parsed, self.names, self.dicts).function(copy_tree(tree.body))
        result = self.block(body)
        self.effects = summarize_effects(self.aliasing, self.parsed.nodes,
                                         [a.id for a in args.args] + list(extra_params))
        function = Function(tree.name, params, self.out, result, self.parsed.location(tree), self.parsed)
        function.defaults = [ast.unparse(gast.gast_to_ast(d)) for d in tree.args.defaults]
        function.free_names = {generated: user for user, generated in self.global_names.items()}
        function.objects = dict(self.objects.kinds)
        return function

    def block(self, stmts):
        """Lower statements into self.out; returns the returned atom if the block returns."""
        for stmt in stmts:
            self.node = stmt
            if isinstance(stmt, gast.Return):
                if stmt.value is None:
                    result = Const(None)
                else:
                    self.aliasing.note_returned(stmt.value)
                    result = self.atom(stmt.value)
                if self.also_returns:
                    changed = [Var(self.env[p]) for p in self.also_returns]
                    return self.bind(Op(primitives.make_tuple, [result, *changed]), "returned")
                return result
            if isinstance(stmt, gast.If) and _ends_in_returns(stmt):
                return self.control.returning_if(stmt)
            self.statement(stmt)
        return None

    def statement(self, stmt):
        method = self.statements.get(type(stmt).__name__)
        if method is None:
            raise self.unsupported_statement(stmt)
        method(stmt)

    def unsupported_statement(self, stmt):
        kind = type(stmt).__name__
        return self.error(f"{syntax_name(kind)} is not supported in a differentiated function", stmt,
                          syntax_hint(kind))

    def stmt_Expr(self, stmt):
        value = stmt.value
        if isinstance(value, gast.Constant):
            return                                    # a docstring or a bare literal
        if isinstance(value, (gast.Yield, gast.YieldFrom, gast.Await)):
            raise self.error("generators and coroutines are not supported", value,
                             "return a list or an array instead")
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
                and value.func.attr == "append" and isinstance(value.func.value, gast.Name) \
                and isinstance(self.env.get(value.func.value.id), str):
            self.assignments.append(value)
            return
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
                and isinstance(value.func.value, gast.Name) and isinstance(self.env.get(value.func.value.id), str):
            raise self.error(f"the method '{value.func.attr}' changes its object in place, which is not supported",
                             value, "assign the result of a function that returns a new value instead")
        result = self.value(value)
        if isinstance(result, Op) and result is not self.user_calls.rebinding_result:   # (a call's own result, read by
            self.emit(None, result)                 # nothing; a write lowered from an in-place call leaves an atom)

    def stmt_Assert(self, stmt):
        args = [self.atom(stmt.test)]
        if isinstance(stmt.msg, gast.Constant):
            args.append(Const(stmt.msg.value))
        self.emit(None, Op(assert_true, args))

    def stmt_Raise(self, stmt):
        if stmt.exc is None:
            raise self.error("a bare 'raise' outside an except block is not supported", stmt,
                             "raise the exception by name")
        args = [self.atom(stmt.exc)] + ([self.atom(stmt.cause)] if stmt.cause is not None else [])
        self.node = stmt
        self.emit(None, Op(raise_error, args))

    def stmt_Delete(self, stmt):
        """``del name``: reading the name again is an error, as in Python."""
        for target in stmt.targets:
            if not isinstance(target, gast.Name) or not isinstance(self.env.get(target.id), str):
                raise self.error("'del' is supported of a local name only", target,
                                 "leave the object as it is, or make a new one without the part")
            del self.env[target.id]
            self.deleted[target.id] = stmt

    def stmt_FunctionDef(self, stmt):
        self.env[stmt.name] = lift(self, stmt)


def _ends_in_returns(stmt) -> bool:
    return always_returns(stmt.body) and always_returns(stmt.orelse)


__all__ = ["lower", "lower_function", "lowered_source", "Lowerer", "LiftedFunction"]
