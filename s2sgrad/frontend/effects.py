"""Part of stage 2: what a called user function does to the objects it is given, and its calls' rebinding.

Lowering a user function finds its `Effects`: which of its parameters' objects it may change in
place, which its result may be or hold. At a call, `UserCalls` makes every other name for a changed
object stale (Python's caller would see the change; the functional form would not), or, where the
parameter itself is the only name changing its object, rebinds the caller's variable to the
parameter's final version, which the call then returns too:

    >>> from s2sgrad.frontend.lower import lowered_source
    >>> def clear(v):
    ...     v[0] = 0.0
    >>> def f(x):
    ...     y = x + 1.0
    ...     clear(y)
    ...     return y
    >>> print(lowered_source(f), end="")
    def clear(v):
        v_1 = setitem(v, 0, 0.0)
        returned = (None, v_1)
        return returned
    <BLANKLINE>
    def f(x):
        y = x + 1.0
        returned = clear(y)
        y_1 = returned[1]
        return y_1
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import operator
from contextlib import contextmanager
from dataclasses import dataclass, field

import gast

from .. import runtime
from ..ir.nodes import Const, Global, Op, Var
from ..ir.trees import walk
from .functions import LiftedFunction, is_recomputed, is_user_function
from .parse import parse_function
from .views import is_mutable


@dataclass
class Effects:
    """What a call of a user function does to the objects it is given (parameters by position; the free
    variables of a lifted function follow its own parameters): those it may change in place (`written`),
    those its result may be or hold (`result`), and a module-level object its result may be."""

    written: set
    result: set
    result_global: str | None = None
    rebindable: set = field(default_factory=set)   # of `written`: the parameter itself, never rebound, is


@dataclass
class CallEffects:
    """`Effects` at one call: argument expressions for positions, and those whose variable can be rebound."""

    written: list                  # (position, argument expression) whose objects the call may change
    result: list                   # argument expressions the result may be or hold
    result_global: str | None      # a module-level object of the callee's the result may be
    rebindable: set                # positions of `written` the call can return the final version of


def summarize_effects(aliasing, nodes: list, params: list) -> Effects:
    """What a call of the function lowered from a tree (`nodes`: every node of it) does to its arguments'
    objects (see `Effects`), as `aliasing` found while lowering it; `params`: its parameters, then its free
    variables."""
    written, result, result_global, only_own = parameter_effects(aliasing, params)
    stored = {n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del))}
    returns = sum(isinstance(n, gast.Return) for n in nodes)
    rebindable = {i for i in only_own if params[i] not in stored
                  and returns <= 1}    # (a version returned from inside a branch would be recorded
    #                                    where the backward function cannot read it)
    return Effects(written, result, result_global, rebindable)


def parameter_effects(aliasing, params: list) -> tuple[set, set, str | None, set]:
    """What the function `aliasing` followed did to the objects of its parameters `params` (names, in order):
    the positions of those changed in place, of those its result may be or hold, the module-level object its
    result may be (or None), and the positions of the changed ones changed through the parameter's name only."""
    find = aliasing.find
    changed = {find(k) for k in aliasing.changed}
    returned = {find(k) for k in aliasing.returned}
    written = {i for i, p in enumerate(params) if find(p) in changed}
    result = {i for i, p in enumerate(params) if find(p) in returned}
    shared = [aliasing.global_of[k] for k in returned if k in aliasing.global_of]
    through: dict = {}
    for key, name in aliasing.changed_through:
        through.setdefault(find(key), set()).add(name)
    only_through_own = {i for i in written if through.get(find(params[i])) == {params[i]}}
    return written, result, shared[0] if shared else None, only_through_own


class UserCalls:
    """The calls of user functions in the function `lowerer` lowers: their `CallEffects`, the staleness
    they cause, and the calls that rebind the caller's variables. `find_effects(fn)` gives the `Effects`
    of a user function, or None."""

    def __init__(self, lowerer, find_effects):
        self.lowerer = lowerer
        self.parsed = lowerer.parsed
        self.aliasing = lowerer.aliasing
        self.find_effects = find_effects
        self.found: dict = {}                     # id of a called user function -> its Effects
        self.variants: dict = {}                  # (function tree, also_returns) -> the LiftedFunction called
        self.lifted: dict = {}                    # id of a module-level function -> it as a LiftedFunction
        self.rebinding_result = None              # the value of the last call that rebinds variables
        self.rebind_scopes: list = []             # per loop being lowered: (names bound before it, its loop
        #                                           variables); None in a condition or a branch of an expression

    def callee_of(self, node):
        """The user function a call calls (a LiftedFunction or a transformed function), or None."""
        lowerer = self.lowerer
        func = node.func
        if getattr(func, "lifted", None) is not None:     # a call of a lambda or partial (see `callables`)
            return func.lifted
        if isinstance(func, gast.Name) and isinstance(lowerer.env.get(func.id), LiftedFunction):
            return lowerer.env[func.id]
        callee = lowerer.expressions.resolve_callee(func)
        if callee is None or not is_user_function(callee) or runtime.is_runtime_function(callee):
            return None                           # (s2sgrad's runtime functions make new objects: see aliasing)
        return callee

    def call_effects(self, node):
        """For a call of a user function, its `CallEffects`, else None."""
        lowerer = self.lowerer
        fn = self.callee_of(node)
        if fn is None:
            return None
        key = id(fn)
        if key not in self.found:
            self.found[key] = self.find_effects(fn)
        effects = self.found[key]
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
                raise lowerer.error(f"the call of '{_callee_name(node)}' changes the default value of its "
                                    f"parameter '{params[i]}' in place, which would persist across calls", node,
                                    f"pass '{params[i]}' explicitly, or make the function copy it first")
        written = [(i, arguments[i]) for i in sorted(effects.written - unchanged) if i < len(arguments)]
        result = [arguments[i] for i in sorted(effects.result) if i < len(arguments) and arguments[i] is not None]
        return CallEffects(written, result, effects.result_global, effects.rebindable & set(range(len(params))))

    def apply_call_effects(self, node, rebind: bool) -> list:
        """After a call of a user function that changes objects it is given: a variable passed as the
        parameter that changes its object (and is never rebound in the callee) is rebound to the
        parameter's final version, which the call returns too (with `rebind`) — the (position, variable)
        pairs; every other name for a changed object, and for a container holding one, is stale (Python's caller
        would see the change; ours would not)."""
        lowerer = self.lowerer
        effects = self.call_effects(node)
        if effects is None:
            return []
        callee = _callee_name(node)
        rebound = []
        names = [a.id for _, a in effects.written if isinstance(a, gast.Name)]
        for position, argument in effects.written:
            if rebind and position in effects.rebindable and isinstance(argument, gast.Name) \
                    and isinstance(lowerer.env.get(argument.id), str) and names.count(argument.id) == 1 \
                    and not self.aliasing.kinds.is_scalar(argument) and self.may_rebind(argument.id):
                lowerer.changed_in_place(argument.id, node)
                rebound.append((position, argument.id))
                continue
            keys, held = self.aliasing.reach(argument)
            if not keys | held:
                continue
            changer = ast.unparse(gast.gast_to_ast(argument)) if isinstance(argument, gast.AST) else str(argument)
            shared = self.aliasing.changed_objects(keys | held, (changer, self.parsed.location(node), callee))
            if shared is not None:
                raise lowerer.global_change_error(changer, shared, node)
        return rebound

    def rebound_in(self, loop) -> list:
        """The variables calls in `loop` rebind to a changed parameter's final version (so loop variables)."""
        found = []
        for node in walk(loop):
            if isinstance(node, gast.Call) and self.callee_of(node) is not None:
                effects = self.call_effects(node)
                found += [a.id for i, a in effects.written if i in effects.rebindable and isinstance(a, gast.Name)]
        return found

    @contextmanager
    def rebinding_scope(self, scope):
        """Lowering inside a loop whose scope is `scope` (the names bound before it, its loop variables),
        or, with None, inside a loop's condition or an expression's branch: see `may_rebind`."""
        self.rebind_scopes.append(scope)
        try:
            yield
        finally:
            self.rebind_scopes.pop()

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
        lowerer = self.lowerer
        params = [a.id for a in fn.parsed.tree.args.args]
        also_returns = tuple(params[i] for i, _ in rebound)
        key = (fn.parsed.tree, also_returns)              # one generated function for all calls alike
        if key not in self.variants:
            self.variants[key] = dataclasses.replace(fn, also_returns=also_returns)
        returned = lowerer.bind(Op(self.variants[key], args, {}, name=name), "returned")
        for k, (_, variable) in enumerate(rebound, 1):     # each still the object it was
            lowerer.emit(lowerer.define_version(variable), Op(operator.getitem, [returned, Const(k)]))
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


def _callee_name(node) -> str:
    return ast.unparse(gast.gast_to_ast(node.func))    # as the user wrote it
