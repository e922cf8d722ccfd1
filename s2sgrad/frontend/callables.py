"""Part of stage 2: functions as values: lambdas, ``functools.partial``, functions passed as arguments,
picked from a dict or a list, and modules passed as arguments (``xp.sum(x)``).

Lowering knows which function each callable value is, so a call of one is lowered as a call of that
function (a lambda is lifted like a nested def; a partial's bound arguments go before the call's); a
user function given a callable value is lowered once for that value (`variant`). An argument of the
differentiated function that is a function or a module has the kind `Static`: generated code is
specialized on that very object, and made again for another.

    >>> import functools
    >>> import numpy as np
    >>> from s2sgrad.frontend.lower import lowered_source
    >>> def f(x, w):
    ...     sq = lambda t: t * w
    ...     total = functools.partial(np.sum, axis=0)
    ...     return total(sq(x))
    >>> print(lowered_source(f), end="")
    def sq(t, w):
        prod = t * w
        return prod
    <BLANKLINE>
    def f(x, w):
        sq_1 = sq(x, w)
        total_1 = np.sum(sq_1, axis=0)
        return total_1
"""
from __future__ import annotations

import dataclasses
import functools
import inspect

import gast

from .. import guards
from ..ir.nodes import Const, Global, Op, Var
from ..ir.primitives import python_name
from .callable_values import Partial, Table, free_names, is_callable_value, is_static
from .closures import assigned_names, lift
from .functions import LiftedFunction, is_recomputed, is_user_function
from .parse import parse_function


class Lowered(gast.expr):
    """An argument already lowered to an atom (a partial's bound argument), in a call `Callables` rebuilds."""

    _fields = ()

    def __init__(self, atom, where):
        super().__init__()
        self.atom = atom
        gast.copy_location(self, where)


class Callables:
    """Lowers what the function `lowerer` lowers does with callable values."""

    def __init__(self, lowerer):
        self.lowerer = lowerer
        self.variants: dict = {}           # (id of a user function, its callable arguments) -> LiftedFunction

    # ---------------------------------------------------------------- which function an expression is

    def value_of(self, node, called: bool = False):
        """The callable value `node` denotes, or None (emitting the code of a partial's bound arguments)."""
        lowerer = self.lowerer
        if isinstance(node, Lowered):
            return node.atom if is_callable_value(node.atom) else None
        if hasattr(node, "resolved") or hasattr(node, "lifted"):
            return None                             # a call `call_value` made: its function is known
        if isinstance(node, gast.Lambda):
            return self.lambda_function(node, getattr(node, "bound_name", None))
        if isinstance(node, gast.Name) and node.id in lowerer.env:
            local = lowerer.env[node.id]
            return local if is_callable_value(local) else None
        if isinstance(node, gast.Call) and self.is_partial_maker(node.func):
            return self.partial(node)
        if isinstance(node, gast.Subscript):
            return self.pick(node)
        if isinstance(node, (gast.Dict, gast.List, gast.Tuple)) and not called:
            return self.table(node)
        known = lowerer.expressions.value_kind(node)
        if isinstance(known, Global) and isinstance(known.value, functools.partial):
            return self.global_partial(known, node)
        if not called and isinstance(known, Global) and is_static(known.value):
            return known
        return None

    def is_partial_maker(self, func) -> bool:
        known = self.lowerer.expressions.value_kind(func)
        return isinstance(known, Global) and known.value is functools.partial

    def lambda_function(self, node, name=None) -> LiftedFunction:
        """A lambda, lifted as ``def name(params): return body`` would be."""
        body = gast.copy_location(gast.Return(value=node.body), node.body)
        tree = gast.FunctionDef(name=name or "anonymous", args=node.args, body=[body], decorator_list=[],
                                returns=None, type_comment=None, type_params=[])
        return lift(self.lowerer, gast.copy_location(tree, node))

    def partial(self, node) -> Partial:
        """``functools.partial(f, *args, **keywords)``: its arguments evaluated now, as Python does."""
        lowerer = self.lowerer
        if not node.args:
            raise lowerer.error("functools.partial needs the function it binds arguments of", node)
        target = self.target(node.args[0])
        args = [self.target(a) if self.names_function(a) else lowerer.atom(a) for a in node.args[1:]]
        keywords = {k.arg: self.target(k.value) if self.names_function(k.value) else lowerer.atom(k.value)
                    for k in node.keywords}
        for atom in [*args, *keywords.values()]:
            if isinstance(atom, Var):
                lowerer.env.setdefault(atom.name, atom.name)      # read where the partial is called
        return Partial(target, args, keywords)

    def global_partial(self, known: Global, node) -> Partial:
        """A partial object made outside (a module-level name or an argument): its bound arguments are constants."""
        value = known.value
        bound = [*value.args, *value.keywords.values()]
        if not all(v is None or isinstance(v, (bool, int, float, complex, str)) for v in bound):
            raise self.lowerer.error(
                f"the partial '{known.name}' binds an array or another object, which generated code cannot "
                "hold as a constant", node,
                "pass that value as an argument of the differentiated function, or make the partial inside it")
        target = Global(f"{known.name}.func", value.func)
        if isinstance(value.func, functools.partial):
            target = self.global_partial(target, node)
        return Partial(target, [Const(v) for v in value.args], {k: Const(v) for k, v in value.keywords.items()})

    def table(self, node):
        """A dict or list display all of whose items are callable values, as a `Table` (else None)."""
        if isinstance(node, gast.Dict):
            if not node.keys or not all(isinstance(k, gast.Constant) for k in node.keys):
                return None
            keys, values = [k.value for k in node.keys], node.values
        else:
            keys, values = list(range(len(node.elts))), node.elts
        if not values or not all(self.names_function(v) for v in values):
            return None
        return Table({k: self.target(v) for k, v in zip(keys, values)})

    def names_function(self, node) -> bool:
        """Does `node` (an item of a display) denote a callable value, as far as can be told without lowering it?"""
        if isinstance(node, gast.Lambda) or isinstance(node, gast.Call) and self.is_partial_maker(node.func):
            return True
        if isinstance(node, Lowered):
            return is_callable_value(node.atom)
        if isinstance(node, gast.Subscript):
            return self.is_table(node.value)
        if isinstance(node, gast.Name) and node.id in self.lowerer.env:
            return is_callable_value(self.lowerer.env[node.id])
        known = self.lowerer.expressions.value_kind(node)
        return isinstance(known, Global) and is_static(known.value)

    def pick(self, node):
        """``acts["tanh"]``, ``ACTS[k]`` with a constant key: the function at that key; None if `node` is no pick."""
        lowerer = self.lowerer
        if not self.is_table(node.value):
            return None
        table = self.value_of(node.value) if isinstance(node.value, gast.Name) else None
        known = lowerer.expressions.value_kind(node.value)
        key = lowerer.atom(node.slice)
        if not isinstance(key, Const):
            what = ast_text(node)
            raise lowerer.error(f"which function '{what}' is depends on a value known only when the code runs",
                                node, f"pick the function outside and pass it as an argument (f(x, {what}))")
        if isinstance(table, Table):
            if key.value not in table.items:
                raise lowerer.error(f"'{ast_text(node.value)}' has no function at {key.value!r}", node)
            return table.items[key.value]
        try:
            value = known.value[key.value]
        except (KeyError, IndexError, TypeError):
            raise lowerer.error(f"'{known.name}' has no item {key.value!r}", node) from None
        guards.note(known.value, key.value, value) if isinstance(known.value, dict) else None
        if not is_static(value):
            raise lowerer.error(f"'{ast_text(node)}' is not a function", node)
        named = Global(python_name(value) or f"{known.name}[{key.value!r}]", value)
        return self.global_partial(named, node) if isinstance(value, functools.partial) else named

    def is_table(self, node) -> bool:
        """Does `node` denote a dict or list of functions (made in the function, or a module-level one)?"""
        if isinstance(node, gast.Name) and node.id in self.lowerer.env:
            return isinstance(self.lowerer.env[node.id], Table)
        known = self.lowerer.expressions.value_kind(node)
        return isinstance(known, Global) and isinstance(known.value, (dict, list, tuple)) \
            and any(is_static(v) for v in _items(known.value))

    def target(self, node):
        """The callable value `node` denotes; an error if it is none."""
        value = self.value_of(node)
        if value is None:
            raise self.lowerer.error(f"'{ast_text(node)}' is not a function s2sgrad knows here", node,
                                     "name the function, or pass it as an argument of the differentiated function")
        return value

    # ---------------------------------------------------------------- statements

    def assign(self, stmt) -> bool:
        """``name = <a callable value>``: the name is bound to that function (no code). False for other statements."""
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], gast.Name):
            return False
        if isinstance(stmt.value, gast.Lambda):
            stmt.value.bound_name = stmt.targets[0].id
        elif not (isinstance(stmt.value, (gast.Dict, gast.List, gast.Tuple, gast.Subscript))
                  or isinstance(stmt.value, gast.Call) and self.is_partial_maker(stmt.value.func)
                  or isinstance(stmt.value, (gast.Name, gast.Attribute)) and self.names_function(stmt.value)):
            return False
        value = self.value_of(stmt.value)
        if value is None:
            return False
        self.lowerer.env[stmt.targets[0].id] = value
        self.lowerer.loop_locals.pop(stmt.targets[0].id, None)
        return True

    def check_branches(self, before: dict, *after: dict, where) -> None:
        """A branch or a loop that rebinds a name to another function: which one it names would be known only
        when the code runs (refused)."""
        for env in after:
            for name, value in env.items():
                if name not in before:
                    continue                        # (read after the branch, it is refused as a name bound there)
                old = before[name]
                if (is_callable_value(value) or is_callable_value(old)) and value is not old \
                        and not (isinstance(value, Global) and isinstance(old, Global) and value.value is old.value):
                    raise self.lowerer.error(
                        f"'{name}' is bound to a function inside a branch or a loop, so which function it is "
                        "would be known only when the code runs", where,
                        f"bind '{name}' once before the branch, or call each function in its own branch")

    # ---------------------------------------------------------------- calls

    def call(self, node):
        """The lowered call `node` if it calls a callable value or passes one to a user function, else None."""
        lowerer = self.lowerer
        func = node.func
        if hasattr(func, "resolved") or hasattr(func, "lifted"):
            return None                             # a call `call_value` made
        value = self.value_of(func, called=True)
        if value is None and isinstance(func, gast.Name) and isinstance(lowerer.env.get(func.id), Global):
            value = lowerer.env[func.id]
        if value is None and not any(self.names_function(a) for a in [*node.args, *(k.value for k in node.keywords)]):
            return None
        if value is None:
            value = lowerer.expressions.value_kind(func)
            if not isinstance(value, Global) or not is_user_function(value.value):
                return None                         # a library function given a function (np.vectorize, ...)
        return self.call_value(value, [], {}, node)

    def call_with(self, value, args: list, keywords: dict, node):
        """The call of callable value `value` (from `target`) with atoms `args` and `keywords` only, made for
        `node` (a builtin calling a function it is given: ``map(f, xs)``, ``sorted(xs, key=f)``)."""
        bare = gast.copy_location(gast.Call(func=node.func, args=[], keywords=[]), node)
        return self.call_value(value, list(args), dict(keywords), bare)

    def call_value(self, value, args: list, keywords: dict, node):
        """The call `node` of callable value `value`, with atoms `args` and `keywords` bound before its own."""
        lowerer = self.lowerer
        if isinstance(value, Partial):
            return self.call_value(value.target, [*value.args, *args], {**value.keywords, **keywords}, node)
        if isinstance(value, Table):
            raise lowerer.error(f"'{ast_text(node.func)}' is a dict or list of functions, not a function", node)
        if isinstance(value, Global) and isinstance(value.value, functools.partial):
            return self.call_value(self.global_partial(value, node), args, keywords, node)
        call = gast.copy_location(gast.Call(
            func=gast.copy_location(gast.Name(value.__name__ if isinstance(value, LiftedFunction) else value.name,
                                              gast.Load(), None, None), node.func),
            args=[Lowered(a, node) for a in args] + list(node.args),
            keywords=[gast.keyword(k, Lowered(a, node)) for k, a in keywords.items()] + list(node.keywords)), node)
        callee = value.value if isinstance(value, Global) else value
        if (isinstance(value, LiftedFunction) or is_user_function(callee)) \
                and any(self.names_function(a) for a in [*call.args, *(k.value for k in call.keywords)]):
            return self.variant_call(callee, call)
        if isinstance(value, LiftedFunction):
            call.func.lifted = value
            return lowerer.calls.lifted_call(call, value)
        call.func.resolved = value.value
        return lowerer.calls.call(call)

    def variant_call(self, fn, node):
        """A call of user function `fn` given callable values: a version of `fn` in which those parameters are
        the functions given (their free variables passed after its own), called with the others."""
        lowerer = self.lowerer
        parsed = fn.parsed if isinstance(fn, LiftedFunction) else parse_function(fn)
        params = [a.id for a in parsed.tree.args.args]
        if any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise lowerer.error(f"'{parsed.tree.name}' is given a function and arguments unpacked with * or **",
                                node, "pass the arguments one by one")
        given = dict(zip(params, node.args))
        if len(node.args) > len(params) or any(k.arg not in params or k.arg in given for k in node.keywords):
            raise lowerer.error(f"this call does not match the parameters of '{parsed.tree.name}' "
                                f"({', '.join(params)})", node)
        given.update({k.arg: k.value for k in node.keywords})
        statics = {p: self.target(a) for p, a in given.items() if self.names_function(a)}
        extra = [n for v in statics.values() for n in free_names(v)]
        own = set(params) | set(assigned_names(parsed.tree.body)) | {
            n.id for n in gast.walk(parsed.tree) if isinstance(n, gast.Name)}
        clash = sorted(set(extra) & own)
        if clash:
            raise lowerer.error(f"the function passed to '{parsed.tree.name}' reads '{clash[0]}', a name "
                                f"'{parsed.tree.name}' uses itself", node,
                                f"rename '{clash[0]}' in one of them, or pass its value as an argument")
        key = (id(fn), tuple((p, id(v)) for p, v in statics.items()))
        if key not in self.variants:
            base = fn if isinstance(fn, LiftedFunction) else LiftedFunction(parsed, [], is_recomputed(fn))
            free = list(dict.fromkeys([*base.free, *extra]))
            self.variants[key] = dataclasses.replace(base, free=free, statics={**base.statics, **{
                p: Global(p, v.value) if isinstance(v, Global) else v for p, v in statics.items()}})
        variant = self.variants[key]
        defaults = variant.parameters.defaults if variant.parameters is not None else self.constant_defaults(fn, node)
        effects = lowerer.user_calls.find_effects(variant)
        if effects is not None and effects.written:
            raise lowerer.error(f"'{parsed.tree.name}', given a function, changes an argument in place, which is "
                                "not supported", node, "make it return the new value instead")
        bound = {p: (lowerer.atom(a) if isinstance(statics.get(p), Global) or p not in statics else Const(None))
                 for p, a in given.items()}
        for param, default in defaults.items():
            bound.setdefault(param, default)
        missing = [p for p in params if p not in bound]
        if missing:
            raise lowerer.error(f"call of '{parsed.tree.name}' gives no value for {', '.join(missing)}", node)
        free = [lowerer.expressions.name_atom(n, node) for n in variant.free]
        return Op(variant, [bound[p] for p in params] + free, {}, name=parsed.tree.name)

    def constant_defaults(self, fn, node) -> dict:
        defaults = {p.name: p.default for p in inspect.signature(fn).parameters.values() if p.default is not p.empty}
        if not all(v is None or isinstance(v, (bool, int, float, complex, str)) for v in defaults.values()):
            raise self.lowerer.error(f"'{fn.__name__}', given a function, has a default value that is not a number "
                                     "or a string", node, "pass that argument explicitly")
        return {name: Const(v) for name, v in defaults.items()}


def _items(container):
    return container.values() if isinstance(container, dict) else container


def ast_text(node) -> str:
    """`node` as the user wrote it."""
    import ast
    return ast.unparse(gast.gast_to_ast(node))


__all__ = ["Callables", "Lowered"]
