"""Part of stage 2: lowering a call: of a method of a local value, of a nested def, or of a named function.

A method of an array is the NumPy function it means (`METHODS`); a nested def (lifted, see `closures`)
gets its free variables as extra arguments; a NumPy function writing into an argument is a functional
write (`numpy_writes`); what a call of a user function does to its arguments is `effects`' job:

    >>> from s2sgrad.frontend.lower import lowered_source
    >>> import numpy as np
    >>> def f(x):
    ...     def scale(v, k=2.0):
    ...         return v * k
    ...     return scale(x.sum(axis=0)) + np.einsum(x, [0, 1], [1])
    >>> print(lowered_source(f), end="")
    def scale(v, k=2.0):
        prod = v * k
        return prod
    <BLANKLINE>
    def f(x):
        sum_1 = np.sum(x, axis=0)
        scale_1 = scale(sum_1, 2.0)
        einsum = np.einsum('ab->b', x)
        sum_2 = scale_1 + einsum
        return sum_2
"""
from __future__ import annotations

import copy

import gast
import numpy as np

from .. import runtime
from ..ir import primitives
from ..ir.nodes import Global, Op, Var
from ..rules.registry import hashable
from .functions import LiftedFunction, is_user_function
from .hints import CALLEE_HINT, local_method
from .numpy_writes import MUTATING_METHODS, of_numpy, writes_into_first_argument
from .parse import call_signature
from .signatures import Parameters, bind, needs_binding

# Methods of arrays, written as the NumPy functions they mean.
METHODS = {
    "sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
    "std": np.std, "var": np.var, "cumsum": np.cumsum, "dot": np.dot, "ravel": np.ravel,
    "flatten": np.ravel, "squeeze": np.squeeze, "copy": np.copy, "clip": np.clip,
    "argmax": np.argmax, "argmin": np.argmin, "swapaxes": np.swapaxes, "round": np.round,
    "astype": primitives.astype, "reshape": np.reshape, "transpose": np.transpose,
    "trace": np.trace, "diagonal": np.diagonal, "any": np.any, "all": np.all,
    "conj": np.conj, "repeat": np.repeat, "nonzero": np.nonzero,
}
DICT_METHODS = {"keys", "values", "items", "get"}     # of a local dict (see `dicts`)
VARARG_METHODS = {"reshape", "transpose"}
SHAPE_READERS = {runtime.like}              # read only the shape of their argument, which writes keep
HIDDEN_CODE = (eval, exec, compile, locals, globals, vars)


class Calls:
    """Lowers the calls in the function `lowerer` lowers."""

    def __init__(self, lowerer):
        self.lowerer = lowerer

    def call(self, node):
        lowerer, func = self.lowerer, node.func
        spread = any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        through_value = lowerer.callables.call(node)      # a lambda, a partial, a function passed or given
        if through_value is not None:
            return through_value
        if isinstance(func, gast.Attribute) and not isinstance(lowerer.expressions.value_kind(func.value), Global):
            if spread:
                raise self.spread_error(node)
            return self.method_call(node)
        if isinstance(func, gast.Name) and isinstance(lowerer.env.get(func.id), LiftedFunction):
            return self.lifted_call(node, lowerer.env[func.id])
        instance = lowerer.objects.instance_call(node)
        if instance is not None:
            return instance
        callee = lowerer.value(func)
        if not isinstance(callee, Global) or not callable(callee.value):
            raise lowerer.error("this calls a value computed when the code runs; s2sgrad must know which function "
                                "each call calls", node, CALLEE_HINT)
        if callee.value is dict:
            return lowerer.mappings.call(node)
        if spread and not is_user_function(callee.value):
            raise self.spread_error(node)
        return self.function_call(Global(callee.name, hashable(callee.value)), node)

    def spread_error(self, node):
        return self.lowerer.error("*args and **kwargs in a call of a library function or method are not supported",
                                  node, "pass the arguments one by one")

    def method_call(self, node):
        """``x.f(...)`` of a local value: the NumPy function `METHODS` says it means."""
        lowerer, func = self.lowerer, node.func
        if func.attr == "pop" and isinstance(func.value, gast.Name) and isinstance(lowerer.env.get(func.value.id), str):
            return lowerer.assignments.pop(node)
        obj = lowerer.atom(func.value)
        if func.attr in DICT_METHODS:
            return lowerer.mappings.method(node, obj)
        of_object = lowerer.objects.method_call(obj, node)
        if of_object is not None:
            return of_object
        method = METHODS.get(func.attr)
        if method is None:
            message, hint = local_method(func.attr, obj, lowerer.objects.made_by,
                                         {a.id for a in lowerer.parsed.tree.args.args})
            raise lowerer.error(message, node, hint)
        args = [lowerer.atom(a) for a in node.args]
        if func.attr in VARARG_METHODS and len(args) > 1:
            args = [lowerer.bind(Op(primitives.make_tuple, args), "shape")]
        kwargs, out = lowerer.writes.call_keywords(node)
        return lowerer.writes.written_to_out(Op(method, [obj, *args], kwargs), out, node)

    def lifted_call(self, node, lifted: LiftedFunction):
        """A call of a nested def: its arguments bound to its parameters, its free variables passed after."""
        lowerer, name = self.lowerer, node.func.id
        args = bind(lowerer, lifted.parameters, node, name)
        free = [lowerer.expressions.name_atom(n, node) for n in lifted.free]
        rebound = lowerer.user_calls.apply_call_effects(node, rebind=lifted.parameters.plain)
        if rebound:
            return lowerer.user_calls.rebinding_call(lifted, args + free, rebound, name)
        return Op(lifted, args + free, {}, name=name)

    def function_call(self, callee: Global, node):
        """A call of a module-level function (NumPy's, a builtin, a user function)."""
        lowerer = self.lowerer
        of_object = lowerer.objects.bound_method_call(callee, node) or lowerer.objects.construct(callee, node)
        if of_object is not None:
            return of_object
        if any(callee.value is f for f in HIDDEN_CODE):
            raise lowerer.error(f"{callee.name}() runs or reads code that s2sgrad cannot see", node,
                                "write the computation out in the function")
        if callee.value in SHAPE_READERS:             # generated code's like(x): a write keeps x's shape
            args = [Var(lowerer.env[a.id]) if isinstance(a, gast.Name) and isinstance(lowerer.env.get(a.id), str)
                    else lowerer.atom(a) for a in node.args]
            return Op(callee.value, args, {}, name=callee.name)
        if writes_into_first_argument(callee.value):
            return lowerer.writes.in_place_call(callee, node)
        if callee.value is np.einsum and node.args and not (isinstance(node.args[0], gast.Constant)
                                                            and isinstance(node.args[0].value, str)):
            node = self.einsum_subscripts(node)
        owner = getattr(callee.value, "__self__", None)
        if isinstance(owner, np.ndarray) and getattr(callee.value, "__name__", None) in MUTATING_METHODS:
            raise lowerer.error(f"'{callee.name}' changes a global array in place, which is not supported", node,
                                "work on a local copy (np.copy) of the array")
        if is_user_function(callee.value) and not runtime.is_runtime_function(callee.value):
            # (the runtime's functions, which generated code calls, keep their arguments as written: the code
            # written back calls them so, see `primitives.expression`)
            parameters = Parameters.of(call_signature(callee.value))
            if needs_binding(parameters, node):
                args = bind(lowerer, parameters, node, callee.name)
                lowerer.user_calls.apply_call_effects(node, rebind=False)
                return Op(callee.value, args, {}, name=callee.name)
        args = [lowerer.atom(a) for a in node.args]
        if of_numpy(callee.value):
            kwargs, out = lowerer.writes.call_keywords(node)
        else:                                       # a user function's own out= is an argument like another
            kwargs, out = {k.arg: lowerer.atom(k.value) for k in node.keywords}, None
        lowerer.objects.refuse_changes(callee.value, args, node, callee.name)
        user_calls = lowerer.user_calls
        effects = user_calls.call_effects(node)
        lifted = None
        if effects is not None and effects.rebindable & {i for i, _ in effects.written}:
            lifted = user_calls.as_lifted(callee.value, args, kwargs)
        rebound = user_calls.apply_call_effects(node, rebind=lifted is not None)
        if rebound:
            return user_calls.rebinding_call(*lifted, rebound, callee.name)
        name = None if primitives.python_name(callee.value) else callee.name
        return lowerer.writes.written_to_out(Op(callee.value, args, kwargs, name=name), out, node)

    def einsum_subscripts(self, node):
        """``np.einsum(a, [0, 1], b, [1, 2], [0, 2])`` (the sublist form) as ``np.einsum("ab,bc->ac", a, b)``."""
        def axis(e):
            if isinstance(e, gast.Name) and e.id == "Ellipsis":
                return Ellipsis
            return e.value if isinstance(e, gast.Constant) else None

        def letters(sublist):
            if not isinstance(sublist, (gast.List, gast.Tuple)) or not all(
                    axis(e) is Ellipsis or type(axis(e)) is int and 0 <= axis(e) < 52 for e in sublist.elts):
                raise self.lowerer.error("np.einsum in the sublist form needs literal lists of axis numbers", sublist,
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

