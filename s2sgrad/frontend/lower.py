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
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import operator
from dataclasses import dataclass, field

import gast
import numpy as np

from .. import runtime
from ..errors import S2SGradError, UnsupportedSyntax
from ..ir import primitives
from ..ir.names import Names, generated_names, meaning
from ..ir.nodes import Assign, Const, Function, Global, If, Op, Var, While, to_source
from ..markers import recompute
from ..rules.registry import hashable
from ..schedules import Schedule
from .aliasing import Aliasing, is_mutable
from .desugar import Desugar, always_returns
from .functions import LiftedFunction, is_recomputed, is_user_function
from .parse import MISSING, ParsedFunction, parse_function

# Methods and attributes of arrays, written as the NumPy functions they mean.
METHODS = {
    "sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
    "std": np.std, "var": np.var, "cumsum": np.cumsum, "dot": np.dot, "ravel": np.ravel,
    "flatten": np.ravel, "squeeze": np.squeeze, "copy": np.copy, "clip": np.clip,
    "argmax": np.argmax, "argmin": np.argmin, "swapaxes": np.swapaxes, "round": np.round,
    "astype": primitives.astype, "reshape": np.reshape, "transpose": np.transpose,
    "trace": np.trace, "diagonal": np.diagonal, "any": np.any, "all": np.all,
    "conj": np.conj, "repeat": np.repeat, "nonzero": np.nonzero,
}
VARARG_METHODS = {"reshape", "transpose"}
SHAPE_READERS = {runtime.like}              # read only the shape of their argument, which writes keep
ATTRIBUTES = {"T": np.transpose, "shape": np.shape, "ndim": np.ndim, "size": np.size, "dtype": np.result_type,
              "real": np.real, "imag": np.imag}


assert_true = runtime.assert_true
primitives.INTERNAL[assert_true] = "assert_true"

# NumPy functions that write into their first argument. Each is lowered as a functional write of a new
# version of that (local) array, as ``y[i] = v`` is: `np.copyto` as a write of the whole array,
# ``ufunc.at`` as `runtime.add_at` and its kin (with rules for add, subtract, maximum, minimum),
# the rest as `runtime.written_copy`, which has no derivative rule (so it is refused where active).
WRITE_INTO_FIRST = {np.copyto, np.put, np.place, np.putmask, np.fill_diagonal, np.put_along_axis,
                    *[getattr(np.ndarray, m) for m in ("fill", "sort", "partition", "put", "resize", "itemset",
                                                       "setfield", "byteswap") if hasattr(np.ndarray, m)]}
MUTATING_METHODS = {"fill", "sort", "partition", "put", "resize", "itemset", "setfield", "byteswap", "shuffle"}
AT_RULES = {np.add: runtime.add_at, np.subtract: runtime.subtract_at, np.maximum: runtime.maximum_at,
            np.minimum: runtime.minimum_at}


def writes_into_first_argument(fn) -> bool:
    """Does calling `fn` change its first argument in place (np.put, np.add.at, rng.shuffle, ...)?"""
    owner = getattr(fn, "__self__", None)
    name = getattr(fn, "__name__", None)
    if name == "at" and isinstance(owner, np.ufunc):
        return True
    if name == "shuffle" and isinstance(owner, (np.random.Generator, np.random.RandomState)):
        return True
    try:
        return fn in WRITE_INTO_FIRST
    except TypeError:                       # unhashable
        return False


@dataclass
class Effects:
    """What a call of a user function does to the objects it is given (parameters by position; the free
    variables of a lifted function follow its own parameters): those it may change in place (`written`),
    those its result may be or hold (`result`), and a module-level object its result may be."""

    written: set
    result: set
    result_global: str | None = None
    rebindable: set = field(default_factory=set)   # of `written`: the parameter itself, never rebound, is
    #                                                 the only name changing its object (the caller can
    #                                                 rebind its variable to the parameter's final version)


@dataclass
class CallEffects:
    """`Effects` at one call: argument expressions for positions, and those whose variable can be rebound."""

    written: list                  # (position, argument expression) whose objects the call may change
    result: list                   # argument expressions the result may be or hold
    result_global: str | None      # a module-level object of the callee's the result may be
    rebindable: set                # positions of `written` the call can return the final version of


_ANALYSING: set = set()                          # ids of the user functions whose effects are being found
_FOUND: dict = {}                                # id -> (function, Effects), while an outermost analysis runs


def effects_of(fn) -> Effects | None:
    """The `Effects` of calling `fn` (a LiftedFunction or a user function), found by lowering it; None
    for a function being analysed (a recursive call, refused later) or one that cannot be lowered (its
    error comes when it is transformed). Each function is lowered once per outermost analysis."""
    if id(fn) in _ANALYSING:
        return None
    if id(fn) in _FOUND:
        return _FOUND[id(fn)][1]
    outermost = not _ANALYSING
    _ANALYSING.add(id(fn))
    try:
        if isinstance(fn, LiftedFunction):
            lowerer = Lowerer(fn.parsed, functions=fn.functions)
            lowerer.function(list(fn.free))
        else:
            lowerer = Lowerer(parse_function(fn))
            lowerer.function()
        effects = lowerer.effects
    except S2SGradError:
        effects = None
    finally:
        _ANALYSING.discard(id(fn))
    _FOUND[id(fn)] = (fn, effects)
    if outermost:
        _FOUND.clear()
    return effects


def _callee_name(node) -> str:
    return ast.unparse(gast.gast_to_ast(node.func))    # as the user wrote it


def lower(parsed: ParsedFunction, extra_params: list[str] = ()) -> Function:
    """Lower `parsed` into an `ir.Function`."""
    return Lowerer(parsed).function(list(extra_params))


def lower_function(fn, scalars=(), vectors=(), dicts=(), fields=None) -> tuple[Function, Names]:
    """Lower a user function or a LiftedFunction; also returns the names it uses.

    `scalars` names parameters known to hold Python or NumPy scalars, `vectors` those known to hold
    one-dimensional arrays (whose elements, ``x[i]``, are scalars, never views).
    """
    if isinstance(fn, LiftedFunction):
        lowerer = Lowerer(fn.parsed, functions=fn.functions)
        lowerer.also_returns = list(fn.also_returns)
        return lowerer.function(list(fn.free)), lowerer.names
    lowerer = Lowerer(parse_function(fn), scalars=scalars, vectors=vectors, dicts=dicts, fields=fields)
    return lowerer.function(), lowerer.names


def lowered_source(fn, scalars=(), vectors=()) -> str:
    """The lowered form of `fn` as runnable Python, with the nested defs it calls (lifted) first.

    `scalars` names parameters known to hold scalars (so that ``+=`` on them is no in-place change).
    """
    lowered, _ = lower_function(fn, scalars, vectors)
    parts, seen = [], set()

    def lifted_in(block):
        for stmt in block:
            if isinstance(stmt, Assign) and isinstance(stmt.value, Op) and isinstance(stmt.value.fn, LiftedFunction):
                yield stmt.value.fn
            elif isinstance(stmt, If):
                yield from lifted_in(stmt.body)
                yield from lifted_in(stmt.orelse)
            elif isinstance(stmt, While):
                yield from lifted_in(stmt.cond)
                yield from lifted_in(stmt.body)

    def visit(function):
        for inner in lifted_in(function.body):
            if id(inner) not in seen:
                seen.add(id(inner))
                inner_lowered, _ = lower_function(inner)
                visit(inner_lowered)
                parts.append(to_source(inner_lowered))
    visit(lowered)
    return "\n\n".join(parts + [to_source(lowered)]) + "\n"


def _identifiers(tree) -> set[str]:
    return {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}


def _stored_names(stmts) -> list[str]:
    """Names assigned anywhere in `stmts` (nested blocks included), in order of appearance."""
    seen = []
    for stmt in stmts:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and node.id not in seen:
                seen.append(node.id)
            elif isinstance(node, gast.FunctionDef) and node.name not in seen:
                seen.append(node.name)
            elif isinstance(node, (gast.Expr,)) and isinstance(node.value, gast.Call) \
                    and isinstance(node.value.func, gast.Attribute) \
                    and isinstance(node.value.func.value, gast.Name) and node.value.func.attr == "append" \
                    and node.value.func.value.id not in seen:
                seen.append(node.value.func.value.id)
            elif isinstance(node, (gast.Subscript,)) and isinstance(node.ctx, gast.Store) \
                    and isinstance(node.value, gast.Name) and node.value.id not in seen:
                seen.append(node.value.id)
            elif isinstance(node, gast.AugAssign):
                target = node.target.value if isinstance(node.target, gast.Subscript) else node.target
                if isinstance(target, gast.Name) and target.id not in seen:
                    seen.append(target.id)
            elif isinstance(node, gast.Call):
                seen.extend(name for name in _written_by_call(node) if name not in seen)
    return seen


def _of_numpy(fn) -> bool:
    """A function (or a method of a ufunc, or of a random Generator) of NumPy's own: its ``out=`` writes."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, (np.ufunc, np.ndarray, np.random.Generator, np.random.RandomState)):
        return True
    return (getattr(fn, "__module__", None) or "").split(".")[0] == "numpy"


WRITER_NAMES = {"at", "copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis", *MUTATING_METHODS}


def _written_by_call(call) -> list[str]:
    """The names a call may write into, by how it is spelled (``np.add.at(y, ...)``, ``f(..., out=y)``)."""
    names = []
    func = call.func
    spelled = func.attr if isinstance(func, gast.Attribute) else func.id if isinstance(func, gast.Name) else None
    if spelled in WRITER_NAMES and call.args and isinstance(call.args[0], gast.Name):
        names.append(call.args[0].id)
    for keyword in call.keywords:
        if keyword.arg == "out":
            targets = keyword.value.elts if isinstance(keyword.value, gast.Tuple) else [keyword.value]
            names.extend(t.id for t in targets if isinstance(t, gast.Name))
    return names


class Lowerer:
    def __init__(self, parsed: ParsedFunction, names: Names | None = None, functions=None, scalars=(),
                 vectors=(), dicts=(), fields=None):
        self.parsed = parsed
        self.dicts = dicts                        # parameters known to hold dicts
        self.fields = fields or {}                # parameters known to hold named tuples -> their fields
        self.names = names or Names(_identifiers(parsed.tree))
        self.env: dict[str, object] = dict(functions or {})   # user name -> SSA name or LiftedFunction
        self.aliasing = Aliasing(scalars, self.resolve_callee, vectors, self.call_effects)
        self.returned: set = set()                # the objects the function may return (group keys)
        self.also_returns: list = []              # parameters whose final versions it returns too
        self.variants: dict = {}                  # (function tree, also_returns) -> the LiftedFunction called
        self.lifted: dict = {}                    # id of a module-level function -> it as a LiftedFunction
        self.rebinding_result = None              # the value of the last call that rebinds variables
        self.rebind_scopes: list = []             # per loop being lowered: (names bound before it, its loop
        #                                           variables); None in a condition or a branch of an expression
        self.effects_of: dict = {}                # id of a called user function -> its Effects
        self.out: list = []                       # the block being built
        self.node = parsed.tree                   # the statement being lowered, for locations
        self.loop_locals: dict[str, object] = {}  # names that exist only inside an earlier loop
        self.global_names: dict[str, str] = {}    # the user's free name -> its name in generated code

    # ---------------------------------------------------------------- helpers

    def error(self, message, node=None, hint=None) -> UnsupportedSyntax:
        return UnsupportedSyntax(message, self.parsed.location(node or self.node), hint)

    def define(self, user_name: str) -> str:
        name = self.names.fresh(user_name, owner=True)
        self.env[user_name] = name
        self.loop_locals.pop(user_name, None)
        self.aliasing.bind(user_name, name)
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
        maker = self.aliasing.read_only.get(name)
        if maker is not None:
            raise self.error(f"'{name}' may be a read-only view made by {maker}: NumPy refuses to write into it",
                             where, f"take a copy to write into ({name} = np.copy(...))")
        shared = self.aliasing.mutated(name, self.parsed.location(where))
        if shared is not None:
            raise self.global_change_error(name, shared, where)

    def global_change_error(self, name, shared, where):
        return self.error(
            f"'{name}' may be the module-level object '{shared}', which would be changed in place here; "
            "s2sgrad does not change objects outside the differentiated function", where,
            f"take a copy first ({name} = np.copy(...)), or pass the object as an argument and return the "
            "new value")

    # ---------------------------------------------------------------- calls of user functions

    def callee_of(self, node):
        """The user function a call calls (a LiftedFunction or a transformed function), or None."""
        func = node.func
        if isinstance(func, gast.Name) and isinstance(self.env.get(func.id), LiftedFunction):
            return self.env[func.id]
        callee = self.resolve_callee(func)
        if callee is None or not is_user_function(callee) or runtime.is_runtime_function(callee):
            return None                           # (s2sgrad's runtime functions make new objects: see aliasing)
        return callee

    def call_effects(self, node):
        """For a call of a user function, its `CallEffects`, else None."""
        fn = self.callee_of(node)
        if fn is None:
            return None
        key = id(fn)
        if key not in self.effects_of:
            self.effects_of[key] = effects_of(fn)
        effects = self.effects_of[key]
        if isinstance(fn, LiftedFunction):
            params = [a.id for a in fn.parsed.tree.args.args]
            free = [gast.Name(n, gast.Load(), None, None) for n in fn.free]
        else:
            try:
                params = list(inspect.signature(fn).parameters)
            except (TypeError, ValueError):
                return CallEffects([], [*node.args, *(k.value for k in node.keywords)], None, set())
            free = []
        given = dict(zip(params, node.args))
        given.update({k.arg: k.value for k in node.keywords if k.arg in params})
        arguments = [given.get(p) for p in params] + free
        if effects is None:                       # not analysed (recursive, or refused when it is lowered)
            return CallEffects([], [a for a in arguments if a is not None], None, set())
        defaults = {} if isinstance(fn, LiftedFunction) else \
            {i: p.default for i, p in enumerate(inspect.signature(fn).parameters.values())}
        unchanged = {i for i in effects.written if i < len(arguments) and arguments[i] is None
                     and i in defaults and not is_mutable(defaults[i])}   # ``b *= 2`` on a number rebinds it
        for i in effects.written - unchanged:
            if i < len(arguments) and arguments[i] is None:
                raise self.error(f"the call of '{_callee_name(node)}' changes the default value of its "
                                 f"parameter '{params[i]}' in place, which would persist across calls", node,
                                 f"pass '{params[i]}' explicitly, or make the function copy it first")
        written = [(i, arguments[i]) for i in sorted(effects.written - unchanged) if i < len(arguments)]
        result = [arguments[i] for i in sorted(effects.result) if i < len(arguments) and arguments[i] is not None]
        return CallEffects(written, result, effects.result_global, effects.rebindable & set(range(len(params))))

    def apply_call_effects(self, node, rebind: bool) -> list:
        """After a call of a user function that changes objects it is given: a variable passed as the
        parameter that changes its object (and is never rebound in the callee) is rebound to the
        parameter's final version, which the call returns too (with `rebind`) — the (position, variable)
        pairs; every
        other name for a changed object, and for a container holding one, is stale (Python's caller
        would see the change; ours would not)."""
        effects = self.call_effects(node)
        if effects is None:
            return []
        callee = _callee_name(node)
        rebound = []
        names = [a.id for _, a in effects.written if isinstance(a, gast.Name)]
        for position, argument in effects.written:
            if rebind and position in effects.rebindable and isinstance(argument, gast.Name) \
                    and isinstance(self.env.get(argument.id), str) and names.count(argument.id) == 1 \
                    and not self.aliasing.is_scalar(argument) and self.may_rebind(argument.id):
                self.changed_in_place(argument.id, node)
                rebound.append((position, argument.id))
                continue
            keys, held = self.aliasing.reach(argument)
            if not keys | held:
                continue
            changer = ast.unparse(gast.gast_to_ast(argument)) if isinstance(argument, gast.AST) else str(argument)
            shared = self.aliasing.changed_objects(keys | held, (changer, self.parsed.location(node), callee))
            if shared is not None:
                raise self.global_change_error(changer, shared, node)
        return rebound

    def rebound_in(self, loop) -> list:
        """The variables calls in `loop` rebind to a changed parameter's final version (so loop variables)."""
        found = []
        for node in gast.walk(loop):
            if isinstance(node, gast.Call) and self.callee_of(node) is not None:
                effects = self.call_effects(node)
                found += [a.id for i, a in effects.written if i in effects.rebindable and isinstance(a, gast.Name)]
        return found

    def may_rebind(self, name: str) -> bool:
        """Can a call here rebind `name`? Not in a loop's condition or an expression's branch (whose new
        versions go nowhere), nor in a loop that does not carry it."""
        for scope in self.rebind_scopes:
            if scope is None or name in scope[0] and name not in scope[1]:
                return False
        return True

    def rebinding_call(self, fn, args: list, rebound: list, name: str):
        """The call of `fn` (bound atoms `args`) that also returns the final versions of the parameters at
        the `rebound` positions: the caller's variables are rebound to them; the value is the result."""
        params = [a.id for a in fn.parsed.tree.args.args]
        also_returns = tuple(params[i] for i, _ in rebound)
        key = (fn.parsed.tree, also_returns)              # one generated function for all calls alike
        if key not in self.variants:
            self.variants[key] = dataclasses.replace(fn, also_returns=also_returns)
        returned = self.bind(Op(self.variants[key], args, {}, name=name), "returned")
        for k, (_, variable) in enumerate(rebound, 1):
            group, vector = self.aliasing.groups.get(variable), variable in self.aliasing.vectors
            self.emit(self.define(variable), Op(operator.getitem, [returned, Const(k)]))
            self.aliasing.groups[variable] = group        # still the object it was
            if vector:
                self.aliasing.vectors.add(variable)
        self.rebinding_result = Op(operator.getitem, [returned, Const(0)])
        return self.rebinding_result

    def as_lifted(self, fn, args: list, kwargs: dict):
        """A module-level user function as a LiftedFunction and its call's atoms, bound to its parameters
        (defaults as constants), or None where a default is not a plain constant."""
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError:
            return None
        bound.apply_defaults()
        atoms = []
        for value in bound.arguments.values():
            if not isinstance(value, (Var, Const, Global)):
                if not isinstance(value, (int, float, bool, str, type(None))):
                    return None
                value = Const(value)
            atoms.append(value)
        if id(fn) not in self.lifted:
            self.lifted[id(fn)] = LiftedFunction(parse_function(fn), [], is_recomputed(fn))
        return self.lifted[id(fn)], atoms

    def effects_summary(self, params) -> Effects:
        """What a call of this function does to its arguments' objects (see `Effects`)."""
        find = self.aliasing.find
        changed = {find(k) for k in self.aliasing.changed}
        returned = {find(k) for k in self.returned}
        written = {i for i, p in enumerate(params) if find(p) in changed}
        result = {i for i, p in enumerate(params) if find(p) in returned}
        shared = [self.aliasing.global_of[k] for k in returned if k in self.aliasing.global_of]
        stored = {n.id for n in gast.walk(self.parsed.tree) if isinstance(n, gast.Name)
                  and isinstance(n.ctx, (gast.Store, gast.Del))}
        through: dict = {}
        for key, name in self.aliasing.changed_through:
            through.setdefault(find(key), set()).add(name)
        returns = sum(isinstance(n, gast.Return) for n in gast.walk(self.parsed.tree))
        rebindable = {i for i in written if params[i] not in stored and through.get(find(params[i])) == {params[i]}
                      and returns <= 1}    # (a version returned from inside a branch would be recorded
        #                                             where the backward function cannot read it)
        return Effects(written, result, shared[0] if shared else None, rebindable)

    def resolve_callee(self, node):
        """The object a call's function expression names in the user's namespace, or None."""
        callee = self.value_kind(node)
        return hashable(callee.value) if isinstance(callee, Global) else None

    def emit(self, target, value) -> None:
        self.out.append(Assign(target, value, self.parsed.location(self.node)))

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
        return self.bind(value, _hint(self.value_hint(node)))

    def value_hint(self, node) -> str:
        if isinstance(node, gast.Call):
            func = node.func
            return func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", "t")
        if isinstance(node, gast.BinOp):
            return type(node.op).__name__.lower()
        if isinstance(node, gast.Subscript):
            return "item"
        if isinstance(node, (gast.Compare, gast.BoolOp)) or \
                isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
            return "test"
        return "t"

    def sub_block(self, stmts, env):
        """Lower `stmts` as a nested block starting from `env`; returns (block, env after, result)."""
        saved_out, saved_env = self.out, self.env
        self.out, self.env = [], dict(env)
        result = self.block(stmts)
        block, env_after = self.out, self.env
        self.out, self.env = saved_out, saved_env
        return block, env_after, result

    # ---------------------------------------------------------------- function

    def function(self, extra_params=()) -> Function:
        tree = self.parsed.tree
        args = tree.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.error("*args, **kwargs and keyword-only or positional-only parameters are not supported",
                             tree, "give the function plain positional parameters")
        params = []
        for arg in list(args.args):
            if arg.id in self.names.own:
                raise self.error(f"a parameter named '{arg.id}' would hide generated code's own '{arg.id}'", arg,
                                 f"rename the parameter '{arg.id}'")
            params.append(self.names.take(arg.id))
            self.env[arg.id] = arg.id
            scalar, vector = arg.id in self.aliasing.scalars, arg.id in self.aliasing.vectors
            self.aliasing.bind(arg.id, arg.id)
            if scalar:
                self.aliasing.scalars.add(arg.id)
            if vector:
                self.aliasing.vectors.add(arg.id)
        for name in extra_params:
            params.append(self.names.take(name))
            self.env[name] = name
            self.aliasing.bind(name, name)
        body = Desugar(self.parsed, self.names, self.dicts).function(copy.deepcopy(tree.body))
        result = self.block(body)
        self.effects = self.effects_summary([a.id for a in args.args] + list(extra_params))
        function = Function(tree.name, params, self.out, result, self.parsed.location(tree), self.parsed)
        function.defaults = [ast.unparse(gast.gast_to_ast(d)) for d in tree.args.defaults]
        function.free_names = {generated: user for user, generated in self.global_names.items()}
        return function

    def block(self, stmts):
        """Lower statements into self.out; returns the returned atom if the block returns."""
        for stmt in stmts:
            self.node = stmt
            if isinstance(stmt, gast.Return):
                if stmt.value is None:
                    result = Const(None)
                else:
                    keys, held = self.aliasing.reach(stmt.value)
                    self.returned |= keys | held
                    result = self.atom(stmt.value)
                if self.also_returns:
                    changed = [Var(self.env[p]) for p in self.also_returns]
                    return self.bind(Op(primitives.make_tuple, [result, *changed]), "returned")
                return result
            if isinstance(stmt, gast.If) and _ends_in_returns(stmt):
                return self.returning_if(stmt)
            self.statement(stmt)
        return None

    # ---------------------------------------------------------------- statements

    def statement(self, stmt):
        method = getattr(self, "stmt_" + type(stmt).__name__, None)
        if method is None:
            raise self.unsupported_statement(stmt)
        method(stmt)

    def unsupported_statement(self, stmt):
        what = {
            "Try": ("'try'", "move the try block out of the differentiated function"),
            "With": ("'with'", "move the with block out of the differentiated function"),
            "Raise": ("'raise'", "check inputs before calling the differentiated function"),
            "Global": ("'global'", "pass the value as an argument and return the new one"),
            "Nonlocal": ("'nonlocal'", "pass the value as an argument and return the new one"),
            "ClassDef": ("a class definition", "define the class outside the differentiated function"),
            "Delete": ("'del'", "leave the name bound"),
            "Import": ("'import'", "import at module level"),
            "ImportFrom": ("'import'", "import at module level"),
            "AsyncFunctionDef": ("'async def'", None),
            "AsyncFor": ("'async for'", None),
            "AsyncWith": ("'async with'", None),
            "Match": ("'match'", "use if/elif"),
            "AnnAssign": ("an annotated assignment", "drop the annotation"),
        }.get(type(stmt).__name__, (type(stmt).__name__, None))
        return self.error(f"{what[0]} is not supported in a differentiated function", stmt, what[1])

    def stmt_Pass(self, stmt):
        pass

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
            if len(value.args) != 1 or value.keywords:
                raise self.error("list.append takes one argument", value)
            name = value.func.value.id
            objects = self.aliasing.item(value.args[0])
            read_only = self.aliasing.read_only_maker(value.args[0]) or self.aliasing.read_only_item(value.args[0])
            item = self.atom(value.args[0])
            appended = Op(primitives.list_append, [Var(self.lookup_local(name)), item])
            self.changed_in_place(name, value)
            group = self.aliasing.groups.get(name)
            self.emit(self.define(name), appended)
            self.aliasing.groups[name] = group
            self.aliasing.holds(name, objects)       # the list holds the item itself
            if read_only is not None:
                self.aliasing.read_only_items.setdefault(name, read_only)
            return
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
                and isinstance(value.func.value, gast.Name) and isinstance(self.env.get(value.func.value.id), str):
            raise self.error(f"the method '{value.func.attr}' changes its object in place, which is not supported",
                             value, "assign the result of a function that returns a new value instead")
        result = self.value(value)
        if isinstance(result, Op) and result is not self.rebinding_result:   # (a call's own result, read by
            self.emit(None, result)                 # nothing; a write lowered from an in-place call leaves an atom)

    def stmt_Assert(self, stmt):
        args = [self.atom(stmt.test)]
        if isinstance(stmt.msg, gast.Constant):
            args.append(Const(stmt.msg.value))
        self.emit(None, Op(assert_true, args))

    def stmt_Assign(self, stmt):
        targets = stmt.targets
        if len(targets) == 1 and isinstance(targets[0], gast.Name):
            scalar = self.aliasing.is_scalar(stmt.value)
            vector = self.aliasing.is_vector(stmt.value)
            shared = self.aliasing.reach(stmt.value)
            read_only = self.aliasing.read_only_maker(stmt.value)
            read_only_item = self.aliasing.read_only_item(stmt.value)
            value = self.value(stmt.value)
            self.node = stmt.value
            self.emit(self.define(targets[0].id), value)
            self.aliasing.share(targets[0].id, shared)
            if read_only is not None:
                self.aliasing.read_only[targets[0].id] = read_only
            if read_only_item is not None:
                self.aliasing.read_only_items[targets[0].id] = read_only_item
            if scalar:
                self.aliasing.scalars.add(targets[0].id)
            elif vector:
                self.aliasing.vectors.add(targets[0].id)
            return
        if len(targets) == 1 and isinstance(targets[0], (gast.Tuple, gast.List)) \
                and isinstance(stmt.value, (gast.Tuple, gast.List)) \
                and len(targets[0].elts) == len(stmt.value.elts) \
                and not any(isinstance(e, gast.Starred) for e in stmt.value.elts):
            scalars = [self.aliasing.is_scalar(e) for e in stmt.value.elts]
            objects = [self.aliasing.reach(e) for e in stmt.value.elts]
            read_only = [self.aliasing.read_only_maker(e) or self.aliasing.read_only_item(e)
                         for e in stmt.value.elts]
            values = [self.atom(e) for e in stmt.value.elts]   # all read before any is written
            for target, value, scalar, shared, maker in zip(targets[0].elts, values, scalars, objects, read_only):
                self.assign_to(target, value)
                self.share_target(target, shared, maker)
                if isinstance(target, gast.Name) and scalar:
                    self.aliasing.scalars.add(target.id)
            return
        objects = self.aliasing.item(stmt.value) if any(isinstance(t, gast.Subscript) for t in targets) \
            else self.aliasing.reach(stmt.value)
        read_only = self.aliasing.read_only_item(stmt.value)
        value = self.atom(stmt.value)
        for target in targets:
            self.assign_to(target, value)
            self.share_target(target, objects, read_only, unpacked=True)

    def share_target(self, target, objects, read_only=None, unpacked=False) -> None:
        """After assigning a value whose objects are `objects` to `target`: the names it binds are (views
        of) those objects, or of their elements; a container written by index holds the value. `read_only`:
        the function that made a read-only view the value (or, `unpacked`, the container unpacked) may be."""
        if isinstance(target, gast.Name):
            self.aliasing.share(target.id, objects)
            if read_only is not None:
                self.aliasing.read_only[target.id] = read_only
        elif isinstance(target, (gast.Tuple, gast.List)):
            elements = self.aliasing.elements(objects)
            for element in target.elts:
                self.share_target(element, elements, read_only if unpacked else None, unpacked)
        elif isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) \
                and self.aliasing.held.get(self.aliasing.root(target.value.id)):
            self.aliasing.holds(target.value.id, objects)     # lst[i] = v: a list known to hold objects

    def assign_to(self, target, value):
        """Bind the atom `value` to an assignment target (name, tuple, or subscript)."""
        if isinstance(target, gast.Name):
            self.emit(self.define(target.id), value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            if any(isinstance(e, gast.Starred) for e in target.elts):
                raise self.error("starred assignment is not supported", target, "index the sequence instead")
            parts = []
            for k, _ in enumerate(target.elts):
                part = self.names.fresh(f"{_name_of(target.elts[k])}_value", temporary=True)
                self.emit(part, Op(operator.getitem, [value, Const(k)]))
                parts.append(Var(part))
            for element, part in zip(target.elts, parts):
                self.assign_to(element, part)
        elif isinstance(target, gast.Subscript):
            array = self.array_target(target)
            index = self.index(target.slice)
            written = Op(primitives.setitem, [Var(self.lookup_local(array)), index, value])
            self.written_in_place(array, written, target)
        else:
            raise self.error("assignment to an attribute is not supported", target,
                             "assign to a local name instead")

    def written_in_place(self, array: str, written: Op, where) -> None:
        """``array[i] = v``: a new version of `array`, still the object (and of the shape) it was."""
        self.changed_in_place(array, where)
        group, vector = self.aliasing.groups.get(array), array in self.aliasing.vectors
        self.emit(self.define(array), written)
        self.aliasing.groups[array] = group
        if vector:
            self.aliasing.vectors.add(array)

    def array_target(self, target) -> str:
        if not isinstance(target.value, gast.Name) or not isinstance(self.env.get(target.value.id), str):
            raise self.error("only a local array can be written by index", target,
                             "copy the array into a local name first")
        return target.value.id

    def stmt_AugAssign(self, stmt):
        fn = primitives.BINARY_OF_AST[type(stmt.op).__name__]
        target = stmt.target
        if isinstance(target, gast.Name):
            current = self.name_atom(target.id, target)
            scalar = self.aliasing.is_scalar(target) and self.aliasing.is_scalar(stmt.value)
            operand = self.atom(stmt.value)
            updated = Op(fn, [current, operand])
            vector = self.aliasing.is_vector(target) and (self.aliasing.is_vector(stmt.value)
                                                           or self.aliasing.is_scalar(stmt.value))
            self.changed_in_place(target.id, stmt)
            group = self.aliasing.groups.get(target.id)
            self.emit(self.define(target.id), updated)
            if scalar:
                self.aliasing.scalars.add(target.id)
            else:                             # an array changed in place is still the object it shared
                self.aliasing.groups[target.id] = group
                if vector:
                    self.aliasing.vectors.add(target.id)
        elif isinstance(target, gast.Subscript):
            array = self.array_target(target)
            index = self.index(target.slice)
            item = self.bind(Op(operator.getitem, [Var(self.lookup_local(array)), index]), "item")
            operand = self.atom(stmt.value)
            updated = self.bind(Op(fn, [item, operand]), "item")
            written = Op(primitives.setitem, [Var(self.lookup_local(array)), index, updated], augmented=True)
            self.node = target
            self.written_in_place(array, written, target)
        else:
            raise self.error("augmented assignment to an attribute is not supported", target)

    def stmt_FunctionDef(self, stmt):
        self.env[stmt.name] = self.lift(stmt)

    def lift(self, tree) -> LiftedFunction:
        inner_params = {a.id for a in tree.args.args}
        assigned = set(_stored_names(tree.body)) | inner_params
        recursive = tree.name not in assigned and any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                                                      and n.id == tree.name for n in gast.walk(tree))
        read = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                and n.id not in assigned and n.id in self.env and not (recursive and n.id == tree.name)}
        functions = {n: self.env[n] for n in read if isinstance(self.env[n], LiftedFunction)}
        free = {n for n in read if isinstance(self.env[n], str)}
        for function in functions.values():
            free |= set(function.free)
        free = sorted(free)
        defaults = [self.atom(d) for d in tree.args.defaults]
        parsed = ParsedFunction(None, tree, self.parsed.filename, self.parsed.line_offset,
                                self.parsed.col_offset, self.parsed.globals, self.parsed.closure,
                                cells=self.parsed.cells)
        marked = False
        for decorator in tree.decorator_list:
            target = self.value_kind(decorator)
            if isinstance(target, Global) and target.value is recompute:
                marked = True
            else:
                raise self.error("only @s2sgrad.recompute can decorate a function defined inside a differentiated one",
                                 decorator, "apply other decorators outside")
        lifted = LiftedFunction(parsed, free, marked, functions, defaults)
        if recursive:
            functions[tree.name] = lifted       # it calls itself
        return lifted

    def stmt_If(self, stmt):
        test = self.atom(stmt.test)
        before = dict(self.env)
        entry = self.aliasing.state()
        body, env_body, _ = self.sub_block(stmt.body, before)
        after_body = self.aliasing.state()
        self.aliasing.restore(entry)
        orelse, env_else, _ = self.sub_block(stmt.orelse, before)
        after_else = self.aliasing.state()
        outputs = [n for n in _union_keys(env_body, env_else)
                   if n in env_body and n in env_else and isinstance(env_body[n], str)
                   and (env_body[n] != before.get(n) or env_else[n] != before.get(n))]
        for n in set(env_body) ^ set(env_else):
            if n not in before:
                self.loop_locals[n] = stmt
        body_outs = [Var(env_body[n]) for n in outputs]
        orelse_outs = [Var(env_else[n]) for n in outputs]
        results = [self.define(n) for n in outputs]
        self.aliasing.merge(after_body, after_else)
        self.out.append(If(test, body, body_outs, orelse, orelse_outs, results, self.parsed.location(stmt)))


    def returning_if(self, stmt):
        """An ``if`` whose branches both end in ``return``: its result is the function's."""
        self.node = stmt
        test = self.atom(stmt.test)
        before = dict(self.env)
        body, _, body_result = self.sub_block(stmt.body, before)
        orelse, _, orelse_result = self.sub_block(stmt.orelse, before)
        result = self.names.fresh("result")
        self.out.append(If(test, body, [body_result], orelse, [orelse_result], [result],
                           self.parsed.location(stmt)))
        return Var(result)

    def schedule(self, stmt):
        """The checkpointing schedule a loop header names, evaluated in the user's namespace."""
        expr = getattr(stmt, "checkpoint", None)
        if expr is None:
            return None
        tree = gast.gast_to_ast(gast.Expression(body=expr))
        namespace = {**self.parsed.globals, **self.parsed.closure}
        try:
            schedule = eval(compile(ast.fix_missing_locations(tree), self.parsed.filename, "eval"), namespace)
        except Exception as error:
            raise self.error(f"the checkpointing schedule could not be evaluated ({error})", expr,
                             "write it with module-level names and constants, e.g. s2sgrad.Revolve(snapshots=10)")
        if not isinstance(schedule, Schedule):
            raise self.error(f"{schedule!r} is not a checkpointing schedule", expr,
                             "use s2sgrad.Periodic, s2sgrad.Revolve or s2sgrad.Online")
        return schedule

    def stmt_While(self, stmt):
        schedule = self.schedule(stmt)
        trips_node = getattr(stmt, "trips", None)
        trips = self.atom(trips_node) if trips_node is not None else None
        before = dict(self.env)
        carried = [n for n in _stored_names(stmt.body) if isinstance(before.get(n), str)]
        carried += [n for n in self.rebound_in(stmt) if n not in carried and isinstance(before.get(n), str)]
        aliasing = self.aliasing
        for n in carried:                     # the loop starts from n's object: one changed through another name
            stale = aliasing.stale(n)
            read = aliasing.read_on_entry(stmt, n) if stale is not None else None
            if read is not None:
                raise self.stale_error(n, stale, read)
        inits = [Var(before[n]) for n in carried]
        scalars, vectors = aliasing.loop_variable_kinds(stmt, carried, _stored_names(stmt.body))
        aliasing.join_loop_aliases(stmt, set(carried) - scalars)
        groups = {n: aliasing.groups.get(n) for n in carried}
        read_only = {n: aliasing.read_only[n] for n in carried if n in aliasing.read_only}
        params = [self.define(n) for n in carried]
        aliasing.groups.update(groups)        # a loop variable is its initial object, at first
        aliasing.read_only.update(read_only)
        aliasing.scalars |= scalars
        aliasing.vectors |= vectors
        stale_before = set(aliasing.poisoned)
        inner = dict(self.env)
        saved_out = self.out
        self.out = []
        self.env = inner
        self.node = stmt
        self.rebind_scopes.append(None)
        test = self.atom(stmt.test)
        self.rebind_scopes[-1] = (set(before), set(carried))
        cond = self.out
        self.out = saved_out
        body, env_after, _ = self.sub_block(stmt.body, self.env)
        self.rebind_scopes.pop()
        self.env = before
        stale_read = aliasing.stale_in_loop(stmt, set(aliasing.poisoned) - stale_before)
        if stale_read is not None:
            node, stale = stale_read
            raise self.stale_error(node.id, stale, node, " in this loop")
        body_outs = [Var(env_after[n]) for n in carried]
        at_end = {n: aliasing.groups.get(n) for n in carried}
        read_only.update({n: aliasing.read_only[n] for n in carried if n in aliasing.read_only})
        results = [self.define(n) for n in carried]
        aliasing.groups.update(groups)
        aliasing.read_only.update(read_only)
        for n in carried:                     # after the loop, n is its first object or a trip's last one
            aliasing.join_group(n, at_end[n])
        aliasing.scalars |= scalars
        aliasing.vectors |= vectors
        for n in env_after:
            if n not in before:
                self.loop_locals[n] = stmt
        self.out.append(While(params, inits, cond, test, body, body_outs, results, self.parsed.location(stmt),
                              schedule, trips))

    # ---------------------------------------------------------------- expressions

    def lookup_local(self, name: str) -> str:
        return self.env[name]

    def name_atom(self, name: str, node):
        if hasattr(node, "resolved"):             # a builtin or runtime function desugaring calls
            return Global(name, node.resolved)
        stale = self.aliasing.stale(name)
        if stale is not None:
            raise self.stale_error(name, stale, node)
        if name in self.env:
            local = self.env[name]
            if isinstance(local, LiftedFunction):
                raise self.error(f"the local function '{name}' can only be called", node,
                                 "call it directly instead of passing it around")
            return Var(local)
        if name in self.loop_locals:
            raise self.error(f"'{name}' is assigned inside a loop or branch but not before it", node,
                             f"assign an initial value to '{name}' before the loop or branch")
        value = self.parsed.resolve(name)
        if value is MISSING:
            raise self.error(f"name '{name}' is not defined", node)
        if value is None or isinstance(value, (bool, str)):
            return Const(value)
        return self.global_atom(name, value)

    def global_atom(self, name: str, value) -> Global:
        """The user's free name `name`, renamed where generated code means something else by it
        (a global ``like = 0.5`` is ``like_1`` in generated code, which calls runtime's ``like``)."""
        if name in generated_names() and value is not meaning(name):
            if name not in self.global_names:
                self.global_names[name] = self.names.fresh(name)
            name = self.global_names[name]
        return Global(name, value)

    def value(self, node):
        """Lower an expression to an Op or an atom."""
        self.node = node if hasattr(node, "lineno") else self.node
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"the expression {type(node).__name__} is not supported", node)
        return method(node)

    def expr_Constant(self, node):
        return Const(node.value)

    def expr_Name(self, node):
        return self.name_atom(node.id, node)

    def expr_BinOp(self, node):
        left, right = self.atom(node.left), self.atom(node.right)
        return Op(primitives.BINARY_OF_AST[type(node.op).__name__], [left, right])

    def expr_UnaryOp(self, node):
        operand = self.atom(node.operand)
        if isinstance(operand, Const) and isinstance(node.op, gast.USub):
            return Const(-operand.value)
        return Op(primitives.UNARY_OF_AST[type(node.op).__name__], [operand])

    def expr_Compare(self, node):
        if len(node.ops) == 1:
            left, right = self.atom(node.left), self.atom(node.comparators[0])
            fn = primitives.COMPARE_OF_AST.get(type(node.ops[0]).__name__)
            if fn is operator.contains or isinstance(node.ops[0], gast.In):
                return Op(operator.contains, [right, left])
            if isinstance(node.ops[0], gast.NotIn):
                return Op(primitives.not_in, [right, left])
            return Op(fn, [left, right])
        pairs = []
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            pairs.append(gast.Compare(left=left, ops=[op], comparators=[right]))
            left = right
        return self.value(gast.BoolOp(op=gast.And(), values=pairs))

    def expr_BoolOp(self, node):
        """``a and b`` evaluates b only if a is true: a branch, as Python runs it.

        Conditions that cannot fail or change anything (comparisons of names and
        constants) are combined directly instead.
        """
        if all(_is_plain_condition(v) for v in node.values):
            combine = primitives.both if isinstance(node.op, gast.And) else primitives.either
            atoms = [self.atom(v) for v in node.values]
            result = atoms[0]
            for atom in atoms[1:]:
                result = self.bind(Op(combine, [result, atom]), "test")
            return result
        first = self.atom(node.values[0])
        if len(node.values) == 1:
            return first
        rest = gast.BoolOp(op=node.op, values=node.values[1:]) if len(node.values) > 2 else node.values[1]
        before = dict(self.env)
        body, _, _ = self.sub_block([], before)
        saved_out = self.out
        self.out = []
        self.rebind_scopes.append(None)
        second = self.atom(rest)
        self.rebind_scopes.pop()
        branch = self.out
        self.out = saved_out
        result = self.names.fresh("either" if isinstance(node.op, gast.Or) else "both", temporary=True)
        if isinstance(node.op, gast.And):
            stmt = If(first, branch, [second], [], [first], [result], self.parsed.location(node))
        else:
            stmt = If(first, [], [first], branch, [second], [result], self.parsed.location(node))
        self.out.append(stmt)
        return Var(result)

    def expr_IfExp(self, node):
        test = self.atom(node.test)
        saved_out = self.out
        self.out = []
        self.rebind_scopes.append(None)
        then = self.atom(node.body)
        then_block = self.out
        self.out = []
        orelse = self.atom(node.orelse)
        self.rebind_scopes.pop()
        else_block = self.out
        self.out = saved_out
        result = self.names.fresh("chosen", temporary=True)
        self.out.append(If(test, then_block, [then], else_block, [orelse], [result],
                           self.parsed.location(node)))
        return Var(result)

    def expr_Tuple(self, node):
        items = [self.atom(e) for e in node.elts]
        if all(isinstance(i, Const) for i in items):
            return Const(tuple(i.value for i in items))
        return Op(primitives.make_tuple, items)

    def expr_List(self, node):
        return Op(primitives.make_list, [self.atom(e) for e in node.elts])

    def expr_Subscript(self, node):
        known = self.value_kind(node.value)
        if isinstance(known, Global) and any(known.value is maker for maker in (np.r_, np.c_)):
            return self.index_concatenation(known, node)
        value = self.atom(node.value)
        return Op(operator.getitem, [value, self.index(node.slice)])

    def index_concatenation(self, maker: Global, node):
        """``np.r_[a, b]`` is ``np.concatenate([np.atleast_1d(a), np.atleast_1d(b)])``, ``np.c_[a, b]`` joins
        `as_column` pieces along the last axis; with slices or directives, only constants."""
        items = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        if any(isinstance(i, gast.Slice) or isinstance(i, gast.Constant) and isinstance(i.value, str) for i in items):
            if all(isinstance(n, (gast.Constant, gast.Slice, gast.Tuple, gast.UnaryOp, gast.expr_context, gast.unaryop))
                   for i in items for n in gast.walk(i)):
                return Op(operator.getitem, [self.atom(node.value), self.index(node.slice)])
            raise self.error(f"{maker.name}[...] with slices or directives is only supported on constants", node,
                             "use np.concatenate, np.arange or np.column_stack")
        piece = np.atleast_1d if maker.value is np.r_ else runtime.as_column
        pieces = [self.bind(Op(piece, [self.atom(i)]), "piece") for i in items]
        joined = self.bind(Op(primitives.make_list, pieces), "pieces")
        return Op(np.concatenate, [joined], {} if maker.value is np.r_ else {"axis": Const(-1)})

    def index(self, node):
        """An index expression (ints, slices, None, ..., arrays, tuples of them) as one atom."""
        if isinstance(node, gast.Slice):
            parts = [self.atom(p) if p is not None else Const(None) for p in (node.lower, node.upper, node.step)]
            if all(isinstance(p, Const) for p in parts):
                return Const(slice(*(p.value for p in parts)))
            return self.bind(Op(slice, parts), "index")
        if isinstance(node, gast.Tuple):
            items = [self.index(e) for e in node.elts]
            if all(isinstance(i, Const) for i in items):
                return Const(tuple(i.value for i in items))
            return self.bind(Op(primitives.make_tuple, items), "index")
        return self.atom(node)

    def expr_Attribute(self, node):
        base = self.value(node.value)
        if isinstance(base, Global):
            value = self.parsed.attribute(base.name, base.value, node.attr)
            if value is MISSING:
                raise self.error(f"'{base.name}' has no attribute '{node.attr}'", node)
            return Global(f"{base.name}.{node.attr}", value)
        if isinstance(node.value, gast.Name) and node.attr in self.fields.get(node.value.id, ()) \
                and isinstance(base, Var) and base.name == node.value.id:      # a named tuple argument's field
            return Op(operator.getitem, [base, Const(self.fields[node.value.id].index(node.attr))])
        if node.attr in ATTRIBUTES:
            return Op(ATTRIBUTES[node.attr], [self.bind(base, "t")])
        raise self.error(f"the attribute '{node.attr}' of a local value is not supported", node,
                         "use the NumPy function instead (np.shape(x), np.transpose(x), ...); "
                         "a named tuple's fields are known only for an argument: unpack it (a, b = p) or "
                         "index it (p[0]) elsewhere")

    def expr_Call(self, node):
        func = node.func
        if any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise self.error("*args and **kwargs in a call are not supported", node,
                             "pass the arguments one by one")
        if isinstance(func, gast.Attribute) and not isinstance(self.value_kind(func.value), Global):
            obj = self.atom(func.value)
            method = METHODS.get(func.attr)
            if method is None:
                raise self.error(f"the method '{func.attr}' is not supported on a local value", node,
                                 "call the NumPy function instead (np.f(x) for x.f())")
            args = [self.atom(a) for a in node.args]
            if func.attr in VARARG_METHODS and len(args) > 1:
                args = [self.bind(Op(primitives.make_tuple, args), "shape")]
            kwargs, out = self.call_keywords(node)
            return self.written_to_out(Op(method, [obj, *args], kwargs), out, node)
        if isinstance(func, gast.Name) and isinstance(self.env.get(func.id), LiftedFunction):
            lifted = self.env[func.id]
            params = [a.id for a in lifted.parsed.tree.args.args]
            bound = dict(zip(params, (self.atom(a) for a in node.args)))
            if len(node.args) > len(params):
                raise self.error(f"'{func.id}' takes {len(params)} argument(s)", node)
            for keyword in node.keywords:
                if keyword.arg not in params or keyword.arg in bound:
                    raise self.error(f"'{func.id}' got an unexpected or repeated argument '{keyword.arg}'", node)
                bound[keyword.arg] = self.atom(keyword.value)
            for param, default in zip(params[len(params) - len(lifted.defaults):], lifted.defaults):
                bound.setdefault(param, default)
            missing = [p for p in params if p not in bound]
            if missing:
                raise self.error(f"call of '{func.id}' gives no value for {', '.join(missing)}", node)
            free = [self.name_atom(n, node) for n in lifted.free]
            rebound = self.apply_call_effects(node, rebind=True)
            if rebound:
                return self.rebinding_call(lifted, [bound[p] for p in params] + free, rebound, func.id)
            return Op(lifted, [bound[p] for p in params] + free, {}, name=func.id)
        if isinstance(func, gast.Lambda):
            raise self.error("calling a lambda in place is not supported", node, "use a def")
        callee = self.value(func)
        if not isinstance(callee, Global) or not callable(callee.value):
            raise self.error("only named functions can be called", node)
        callee = Global(callee.name, hashable(callee.value))
        if any(callee.value is f for f in (eval, exec, compile, locals, globals, vars)):
            raise self.error(f"{callee.name}() runs or reads code that s2sgrad cannot see", node,
                             "write the computation out in the function")
        if callee.value in SHAPE_READERS:             # generated code's like(x): a write keeps x's shape
            args = [Var(self.env[a.id]) if isinstance(a, gast.Name) and isinstance(self.env.get(a.id), str)
                    else self.atom(a) for a in node.args]
            return Op(callee.value, args, {}, name=callee.name)
        if writes_into_first_argument(callee.value):
            return self.in_place_call(callee, node)
        if callee.value is np.einsum and node.args and not (isinstance(node.args[0], gast.Constant)
                                                            and isinstance(node.args[0].value, str)):
            node = self.einsum_subscripts(node)
        owner = getattr(callee.value, "__self__", None)
        if isinstance(owner, np.ndarray) and getattr(callee.value, "__name__", None) in MUTATING_METHODS:
            raise self.error(f"'{callee.name}' changes a global array in place, which is not supported", node,
                             "work on a local copy (np.copy) of the array")
        args = [self.atom(a) for a in node.args]
        if _of_numpy(callee.value):
            kwargs, out = self.call_keywords(node)
        else:                                       # a user function's own out= is an argument like another
            kwargs, out = {k.arg: self.atom(k.value) for k in node.keywords}, None
        effects = self.call_effects(node)
        lifted = None
        if effects is not None and effects.rebindable & {i for i, _ in effects.written}:
            lifted = self.as_lifted(callee.value, args, kwargs)
        rebound = self.apply_call_effects(node, rebind=lifted is not None)
        if rebound:
            return self.rebinding_call(*lifted, rebound, callee.name)
        name = None if primitives.python_name(callee.value) else callee.name
        return self.written_to_out(Op(callee.value, args, kwargs, name=name), out, node)

    def einsum_subscripts(self, node):
        """``np.einsum(a, [0, 1], b, [1, 2], [0, 2])`` (the sublist form) as ``np.einsum("ab,bc->ac", a, b)``."""
        def axis(e):
            if isinstance(e, gast.Name) and e.id == "Ellipsis":
                return Ellipsis
            return e.value if isinstance(e, gast.Constant) else None

        def letters(sublist):
            if not isinstance(sublist, (gast.List, gast.Tuple)) or not all(
                    axis(e) is Ellipsis or type(axis(e)) is int and 0 <= axis(e) < 52 for e in sublist.elts):
                raise self.error("np.einsum in the sublist form needs literal lists of axis numbers", sublist,
                                 "write the subscripts as a string: np.einsum('ij,jk->ik', a, b)")
            letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
            return "".join("..." if axis(e) is Ellipsis else letters[axis(e)]
                           for e in sublist.elts)
        operands, sublists = node.args[0::2], node.args[1::2]
        output = None
        if len(node.args) % 2:                       # an output sublist last
            operands, output = operands[:-1], node.args[-1]
        subscripts = ",".join(letters(s) for s in sublists) + ("" if output is None else "->" + letters(output))
        rewritten = copy.copy(node)
        rewritten.args = [gast.Constant(subscripts, None), *operands]
        return rewritten

    def call_keywords(self, node):
        """A call's keyword arguments as atoms, less ``out=``: returns them and the local array named by
        `out` (``out=y`` or ``out=(y,)``), or None."""
        kwargs, out = {}, None
        for keyword in node.keywords:
            if keyword.arg != "out":
                kwargs[keyword.arg] = self.atom(keyword.value)
                continue
            target = keyword.value
            if isinstance(target, gast.Tuple) and len(target.elts) == 1:
                target = target.elts[0]
            if isinstance(target, gast.Constant) and target.value is None:
                continue
            if not (isinstance(target, gast.Name) and isinstance(self.env.get(target.id), str)):
                raise self.error("out= must name a local array (one, for a function of one result)", keyword.value,
                                 "assign the result instead: y = f(...)")
            out = target.id
        return kwargs, out

    def written_to_out(self, op: Op, out: str | None, node):
        """``f(..., out=y)``: the result computed, then written into all of y (``y[...] = f(...)``, which
        casts to y's dtype); the call's value is y. With ``where=m`` too, y keeps its values where m is False."""
        if out is None:
            return op
        current = self.name_atom(out, node)
        where = op.kwargs.pop("where", None)
        value = self.bind(op, "t")
        if where is not None:
            value = self.bind(Op(np.where, [where, value, current]), "t")
        self.written_in_place(out, Op(primitives.setitem, [current, Const(Ellipsis), value]), node)
        return Var(self.env[out])

    def in_place_call(self, callee: Global, node):
        """``np.add.at(y, i, v)``, ``np.copyto(y, v)``, ``np.put(y, i, v)``, ...: a new version of the local
        array y, as ``y[i] = v`` makes one. The call's value is None."""
        fn = callee.value
        target = node.args[0] if node.args else None
        if not (isinstance(target, gast.Name) and isinstance(self.env.get(target.id), str)):
            raise self.error(f"'{callee.name}' writes into its first argument, which must be a local array here",
                             node, "copy the array into a local name first (y = np.copy(...))")
        current = self.name_atom(target.id, target)
        args = [self.atom(a) for a in node.args[1:]]
        kwargs, out = self.call_keywords(node)
        if out is not None:
            raise self.error(f"out= is not supported with '{callee.name}'", node)
        if fn is np.copyto:
            if len(args) > 2 or any(k not in ("casting", "where") for k in kwargs):
                raise self.error("np.copyto takes (dst, src, casting=..., where=...)", node)
            value = args[0]
            where = kwargs.get("where", args[2] if len(args) > 2 else None)
            if where is not None:
                value = self.bind(Op(np.where, [where, value, current]), "t")
            written = Op(primitives.setitem, [current, Const(Ellipsis), value])
        elif getattr(fn, "__name__", None) == "at" and isinstance(fn.__self__, np.ufunc):
            ufunc = fn.__self__
            if ufunc in AT_RULES and len(args) == 2 and not kwargs:
                written = Op(AT_RULES[ufunc], [current, *args])
            else:
                written = Op(runtime.at_copy, [Global(callee.name[:-len(".at")], ufunc), current, *args], kwargs)
        else:
            written = Op(runtime.written_copy, [callee, current, *args], kwargs)
        self.written_in_place(target.id, written, node)
        return Const(None)

    def value_kind(self, node):
        """Without emitting code: a Global if `node` names a module-level object, else None."""
        if isinstance(node, gast.Name):
            if hasattr(node, "resolved"):
                return Global(node.id, node.resolved)
            if node.id in self.env or node.id in self.loop_locals:
                return None
            value = self.parsed.resolve(node.id)
            return self.global_atom(node.id, value) if value is not MISSING else None
        if isinstance(node, gast.Attribute):
            base = self.value_kind(node.value)
            value = self.parsed.attribute(base.name, base.value, node.attr) if isinstance(base, Global) else MISSING
            if value is not MISSING:
                return Global(f"{base.name}.{node.attr}", value)
        return None

    def expr_Lambda(self, node):
        raise self.error("a lambda inside a differentiated function is not supported", node,
                         "define it with def inside the function")

    def expr_JoinedStr(self, node):
        values = []

        def template(joined) -> str:
            text = ""
            for part in joined.values:
                if isinstance(part, gast.Constant):
                    text += str(part.value).replace("{", "{{").replace("}", "}}")
                    continue
                values.append(self.atom(part.value))
                index = str(len(values) - 1)
                conversion = "" if part.conversion in (-1, None) else "!" + chr(part.conversion)
                spec = ":" + template(part.format_spec) if part.format_spec is not None else ""
                text += "{" + index + conversion + spec + "}"
            return text
        text = template(node)
        if not values:
            return Const(text)
        return Op(runtime.format_string, [Const(text), *values])

    def expr_Starred(self, node):
        raise self.error("starred expressions are not supported", node)


def _is_plain_condition(node) -> bool:
    """A comparison or negation of names, constants and attributes: evaluating it cannot fail."""
    def simple(n):
        return isinstance(n, (gast.Name, gast.Constant)) or \
            (isinstance(n, gast.Attribute) and simple(n.value))
    if isinstance(node, gast.Compare):
        return simple(node.left) and all(simple(c) for c in node.comparators) \
            and not any(isinstance(op, (gast.In, gast.NotIn)) for op in node.ops)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
        return simple(node.operand) or _is_plain_condition(node.operand)
    if isinstance(node, gast.BoolOp):
        return all(_is_plain_condition(v) for v in node.values)
    return isinstance(node, gast.Constant)


def _hint(name: str) -> str:
    return {"add": "sum", "sub": "diff", "mult": "prod", "div": "quot", "matmult": "matmul",
            "pow": "power"}.get(name, name)


def _name_of(target) -> str:
    return target.id if isinstance(target, gast.Name) else "item"


def _union_keys(a: dict, b: dict) -> list:
    return list(a) + [k for k in b if k not in a]


def _ends_in_returns(stmt) -> bool:
    return always_returns(stmt.body) and always_returns(stmt.orelse)


__all__ = ["lower", "lower_function", "lowered_source", "Lowerer", "LiftedFunction", "METHODS", "ATTRIBUTES"]

