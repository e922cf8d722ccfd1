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
import operator
from dataclasses import dataclass, field

import gast
import numpy as np

from . import primitives, runtime
from .aliasing import Aliasing
from .desugar import Desugar
from .errors import UnsupportedSyntax
from .ir import Assign, Const, Function, Global, If, Op, Var, While
from .names import Names
from .parse import MISSING, ParsedFunction

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
VIEW_METHODS = {"reshape", "transpose", "ravel", "squeeze", "swapaxes", "view", "T", "real", "imag"}          # x.reshape(2, 3) means np.reshape(x, (2, 3))
ATTRIBUTES = {"T": np.transpose, "shape": np.shape, "ndim": np.ndim, "size": np.size,
              "real": np.real, "imag": np.imag}


assert_true = runtime.assert_true
primitives.INTERNAL[assert_true] = "assert_true"


@dataclass(eq=False)
class LiftedFunction:
    """A nested ``def`` (or lambda) lifted out of its enclosing function: its free locals become parameters."""

    parsed: ParsedFunction
    free: list = field(default_factory=list)
    recompute: bool = False                  # decorated with s2sgrad.recompute
    functions: dict = field(default_factory=dict)   # the nested defs it can call
    defaults: list = field(default_factory=list)    # atoms of its parameters' defaults, as at its def

    @property
    def __name__(self):
        return self.parsed.tree.name


def lower(parsed: ParsedFunction, extra_params: list[str] = ()) -> Function:
    """Lower `parsed` into an `ir.Function`."""
    return Lowerer(parsed).function(list(extra_params))


def lower_function(fn, scalars=(), vectors=()) -> tuple[Function, Names]:
    """Lower a user function or a LiftedFunction; also returns the names it uses.

    `scalars` names parameters known to hold Python or NumPy scalars, `vectors` those known to hold
    one-dimensional arrays (whose elements, ``x[i]``, are scalars, never views).
    """
    from .parse import parse_function
    if isinstance(fn, LiftedFunction):
        lowerer = Lowerer(fn.parsed, functions=fn.functions)
        return lowerer.function(list(fn.free)), lowerer.names
    lowerer = Lowerer(parse_function(fn), scalars=scalars, vectors=vectors)
    return lowerer.function(), lowerer.names


def lowered_source(fn, scalars=(), vectors=()) -> str:
    """The lowered form of `fn` as runnable Python, with the nested defs it calls (lifted) first.

    `scalars` names parameters known to hold scalars (so that ``+=`` on them is no in-place change).
    """
    from .ir import If, While, to_source
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
    return seen


class Lowerer:
    def __init__(self, parsed: ParsedFunction, names: Names | None = None, functions=None, scalars=(),
                 vectors=()):
        self.parsed = parsed
        self.names = names or Names(_identifiers(parsed.tree))
        self.env: dict[str, object] = dict(functions or {})   # user name -> SSA name or LiftedFunction
        self.aliasing = Aliasing(scalars, self.resolve_callee, vectors)
        self.out: list = []                       # the block being built
        self.node = parsed.tree                   # the statement being lowered, for locations
        self.loop_locals: dict[str, object] = {}  # names that exist only inside an earlier loop

    # ---------------------------------------------------------------- helpers

    def error(self, message, node=None, hint=None) -> UnsupportedSyntax:
        return UnsupportedSyntax(message, self.parsed.location(node or self.node), hint)

    def define(self, user_name: str) -> str:
        name = self.names.fresh(user_name, owner=True)
        self.env[user_name] = name
        self.loop_locals.pop(user_name, None)
        self.aliasing.bind(user_name, name)
        return name

    def stale_error(self, name, changer, where, node, scope=""):
        verb = "may be changed" if scope else "may have been changed"
        return self.error(
            f"'{name}' {verb} in place through '{changer}'{scope} (they can be the same object; "
            f"see line {where.line})", node,
            f"take a copy where the second name is made (... = ....copy()), or update "
            f"'{changer}' out of place ({changer} = {changer} + ...)")

    def resolve_callee(self, node):
        """The object a call's function expression names in the user's namespace, or None."""
        callee = self.value_kind(node)
        return callee.value if isinstance(callee, Global) else None

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
        body = Desugar(self.parsed, self.names).function(copy.deepcopy(tree.body))
        result = self.block(body)
        function = Function(tree.name, params, self.out, result, self.parsed.location(tree), self.parsed)
        function.defaults = [ast.unparse(gast.gast_to_ast(d)) for d in tree.args.defaults]
        return function

    def block(self, stmts):
        """Lower statements into self.out; returns the returned atom if the block returns."""
        for stmt in stmts:
            self.node = stmt
            if isinstance(stmt, gast.Return):
                return self.atom(stmt.value) if stmt.value is not None else Const(None)
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
            item = self.atom(value.args[0])
            appended = Op(primitives.list_append, [Var(self.lookup_local(name)), item])
            self.aliasing.mutated(name, self.parsed.location(value))
            group = self.aliasing.groups.get(name)
            self.emit(self.define(name), appended)
            self.aliasing.groups[name] = group
            return
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
                and isinstance(value.func.value, gast.Name) and isinstance(self.env.get(value.func.value.id), str):
            raise self.error(f"the method '{value.func.attr}' changes its object in place, which is not supported",
                             value, "assign the result of a function that returns a new value instead")
        self.emit(None, self.value(value))

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
            shared = self.aliasing.object_of(stmt.value)
            value = self.value(stmt.value)
            self.node = stmt.value
            self.emit(self.define(targets[0].id), value)
            self.aliasing.share(targets[0].id, shared)
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
            objects = [self.aliasing.object_of(e) for e in stmt.value.elts]
            values = [self.atom(e) for e in stmt.value.elts]   # all read before any is written
            for target, value, scalar, shared in zip(targets[0].elts, values, scalars, objects):
                self.assign_to(target, value)
                if isinstance(target, gast.Name):
                    self.aliasing.share(target.id, shared)
                    if scalar:
                        self.aliasing.scalars.add(target.id)
            return
        value = self.atom(stmt.value)
        for target in targets:
            self.assign_to(target, value)

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
        self.aliasing.mutated(array, self.parsed.location(where))
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
            self.aliasing.mutated(target.id, self.parsed.location(stmt))
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
            written = Op(primitives.setitem, [Var(self.lookup_local(array)), index, updated])
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
                                self.parsed.col_offset, self.parsed.globals, self.parsed.closure)
        from .api import recompute
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
        from .schedules import Schedule
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
        aliasing = self.aliasing
        for n in carried:                     # the loop starts from n's object: one changed through another name
            stale = aliasing.stale(n)
            read = aliasing.read_on_entry(stmt, n) if stale is not None else None
            if read is not None:
                raise self.stale_error(n, *stale, read)
        inits = [Var(before[n]) for n in carried]
        scalars, vectors = aliasing.loop_variable_kinds(stmt, carried, _stored_names(stmt.body))
        aliasing.join_loop_aliases(stmt, set(carried) - scalars)
        groups = {n: aliasing.groups.get(n) for n in carried}
        params = [self.define(n) for n in carried]
        aliasing.groups.update(groups)        # a loop variable is its initial object, at first
        aliasing.scalars |= scalars
        aliasing.vectors |= vectors
        stale_before = set(aliasing.poisoned)
        inner = dict(self.env)
        saved_out = self.out
        self.out = []
        self.env = inner
        self.node = stmt
        test = self.atom(stmt.test)
        cond = self.out
        self.out = saved_out
        body, env_after, _ = self.sub_block(stmt.body, self.env)
        self.env = before
        stale_read = aliasing.stale_in_loop(stmt, set(aliasing.poisoned) - stale_before)
        if stale_read is not None:
            node, (changer, where) = stale_read
            raise self.stale_error(node.id, changer, where, node, " in this loop")
        body_outs = [Var(env_after[n]) for n in carried]
        at_end = {n: aliasing.groups.get(n) for n in carried}
        results = [self.define(n) for n in carried]
        aliasing.groups.update(groups)
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
        stale = self.aliasing.stale(name)
        if stale is not None:
            raise self.stale_error(name, *stale, node)
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
        second = self.atom(rest)
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
        then = self.atom(node.body)
        then_block = self.out
        self.out = []
        orelse = self.atom(node.orelse)
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
        value = self.atom(node.value)
        return Op(operator.getitem, [value, self.index(node.slice)])

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
            try:
                value = getattr(base.value, node.attr)
            except AttributeError:
                raise self.error(f"'{base.name}' has no attribute '{node.attr}'", node) from None
            return Global(f"{base.name}.{node.attr}", value)
        if node.attr in ATTRIBUTES:
            return Op(ATTRIBUTES[node.attr], [self.bind(base, "t")])
        raise self.error(f"the attribute '{node.attr}' of a local value is not supported", node,
                         "use the NumPy function instead (np.shape(x), np.transpose(x), ...)")

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
            kwargs = {k.arg: self.atom(k.value) for k in node.keywords}
            return Op(method, [obj, *args], kwargs)
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
            return Op(lifted, [bound[p] for p in params] + free, {}, name=func.id)
        if isinstance(func, gast.Lambda):
            raise self.error("calling a lambda in place is not supported", node, "use a def")
        callee = self.value(func)
        if not isinstance(callee, Global) or not callable(callee.value):
            raise self.error("only named functions can be called", node)
        if callee.value in SHAPE_READERS:             # generated code's like(x): a write keeps x's shape
            args = [Var(self.env[a.id]) if isinstance(a, gast.Name) and isinstance(self.env.get(a.id), str)
                    else self.atom(a) for a in node.args]
            return Op(callee.value, args, {}, name=callee.name)
        args = [self.atom(a) for a in node.args]
        kwargs = {k.arg: self.atom(k.value) for k in node.keywords}
        name = None if primitives.python_name(callee.value) else callee.name
        return Op(callee.value, args, kwargs, name=name)

    def value_kind(self, node):
        """Without emitting code: a Global if `node` names a module-level object, else None."""
        if isinstance(node, gast.Name):
            if node.id in self.env or node.id in self.loop_locals:
                return None
            value = self.parsed.resolve(node.id)
            return Global(node.id, value) if value is not MISSING else None
        if isinstance(node, gast.Attribute):
            base = self.value_kind(node.value)
            if isinstance(base, Global) and hasattr(base.value, node.attr):
                return Global(f"{base.name}.{node.attr}", getattr(base.value, node.attr))
        return None

    def expr_Lambda(self, node):
        raise self.error("a lambda inside a differentiated function is not supported", node,
                         "define it with def inside the function")

    def expr_JoinedStr(self, node):
        return Const("<f-string>")

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
    from .desugar import always_returns
    return always_returns(stmt.body) and always_returns(stmt.orelse)


__all__ = ["lower", "lower_function", "lowered_source", "Lowerer", "LiftedFunction", "METHODS", "ATTRIBUTES"]

