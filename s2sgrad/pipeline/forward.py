"""The driver of forward mode: one generated module of tangent functions (`ForwardModule`), the requested
one and one per user function it calls with tangents.
"""
from __future__ import annotations

import ast
import dataclasses
import os

from ..analysis.activity import DICT, INT, SCALAR, Fields, analyze, specialize_sequences
from ..analysis.dtypes import Dtypes
from ..analysis.invariant_reads import hoist_invariant_reads
from ..backend.forward_tidy import drop_dead_tangents, unpack_tuples
from ..errors import S2SGradError, called_from
from ..frontend.callable_values import static_parameters
from ..frontend.functions import LiftedFunction
from ..frontend.lower import Lowerer
from ..frontend.objects import ArrayDict, is_dict_kind, is_object_kind
from ..frontend.relower import is_generated, parse_generated
from ..ir.names import identifier
from ..ir.syntax import function as _function
from ..transforms.forward import Forward, TangentCode, tangent_hint
from ..transforms.rule_lookup import public_name
from .driver import (
    GRADIENT_PASSES,
    GradientModule,
    Pass,
    local_dicts,
    on_function,
    refuse_complex_calls,
)
from .kinds import structure_fields

FORWARD_PASSES: tuple[Pass, ...] = (Pass("unpack_tuples", on_function(unpack_tuples)), *GRADIENT_PASSES)
"""The passes of forward mode's generated functions: those of gradients, tuples read element by element
unpacked first."""


class ForwardModule(GradientModule):
    """A generated module of forward-mode functions: the requested one, and one per user function it
    calls with tangents (per pattern of arguments that have one). Generated gradient code is read back
    in (see `relower`), so the function transformed may itself be a generated gradient.

        >>> import numpy as np
        >>> def f(x, n):
        ...     return np.sin(x) * n
        >>> module = ForwardModule()
        >>> module.jvp(f, wrt=["x"]).name                    # def jvp_f_x(x, n, x_dot): ... return (y, y_dot)
        'jvp_f_x'
    """

    recomputes = False
    passes = FORWARD_PASSES

    def __init__(self, hint=tangent_hint):
        super().__init__()
        self.hint = hint
        self.tangent_callees: dict = {}

    def prepare(self, fn, scalars=(), vectors=(), dicts=(), fields=None, statics=None):
        if isinstance(fn, LiftedFunction) or not is_generated(fn):
            return super().prepare(fn, scalars, vectors, dicts, fields, statics)
        lowerer = Lowerer(parse_generated(fn), scalars=scalars, vectors=vectors, fields=fields, statics=statics)
        lowered = lowerer.function()
        self.collect_globals(lowered, lowerer.names)
        return lowered, lowerer.names

    def jvp(self, fn, wrt: list[str], arg_kinds=None, name: str | None = None, arg_dtypes=None) -> ast.FunctionDef:
        """``name(*params, *tangents of wrt) -> (value, tangent of value)`` for `fn`. With `arg_dtypes`, a call on
        complex values whose rule is not known to hold for them is refused (the code is not specialized on them)."""
        kinds = arg_kinds or {}
        lowered, names = self.prepare(fn, [p for p, k in kinds.items() if k in (SCALAR, INT)],
                                      [p for p, k in kinds.items() if isinstance(k, tuple) and len(k) == 1],
                                      [p for p, k in kinds.items() if is_dict_kind(k)],
                                      structure_fields(kinds), static_parameters(kinds))
        self.origin = getattr(lowered.source, "origin", "") \
            or f"{os.path.basename(lowered.source.filename)}:{lowered.name}"
        specialize_sequences(lowered, arg_kinds)
        hoist_invariant_reads(lowered, names)
        analysis = analyze(lowered, list(wrt), arg_kinds)
        if arg_dtypes is not None:
            dtypes = Dtypes({p: arg_dtypes.get(p) for p in lowered.params})
            dtypes.block(lowered.body)
            refuse_complex_calls(lowered, dataclasses.replace(analysis, dtypes=dtypes), wrt)
        self.structures.append({**local_dicts(lowered), **lowered.objects,
                                **{p: DICT if isinstance(k, ArrayDict) else k for p, k in kinds.items()
                                   if is_dict_kind(k) or isinstance(k, Fields) or is_object_kind(k)}})
        try:
            code = tidied(Forward(lowered, list(wrt), analysis, self, names, self.hint).run())
        finally:
            self.structures.pop()
        fn_name = self.names.fresh(name or identifier(f"jvp_{lowered.name}_{'_'.join(wrt)}"))
        body = [*code.body, ast.Return(ast.Tuple([code.result, code.tangent], ast.Load()))]
        node = self.tidy(_function(fn_name, list(lowered.params) + code.tangent_params, body), names)
        self.functions.append(node)
        return node

    def tangent_callee(self, fn, mask: tuple, loc, args=()) -> str | None:
        """The name of the tangent function of user function `fn` given tangents where `mask` is true:
        ``name(*args, *tangents) -> (value, tangent)``; None if its result has no tangent."""
        structures = self.structures_of(args)
        key = (id(fn), mask, structures)
        if key in self.tangent_callees:
            return self.tangent_callees[key]
        try:
            return self.build_tangent_callee(fn, mask, key, structures)
        except S2SGradError as error:
            raise called_from(error, fn.__name__, loc, public_name(fn)) from None

    def build_tangent_callee(self, fn, mask: tuple, key, structures) -> str | None:
        lowered, names = self.prepare_callee(fn, structures)
        wrt = [p for p, m in zip(lowered.params, mask) if m]
        specialize_sequences(lowered, self.callee_kinds(lowered, structures))
        hoist_invariant_reads(lowered, names)
        analysis = analyze(lowered, wrt, self.callee_kinds(lowered, structures))
        if not analysis.is_active(lowered.result):
            self.tangent_callees[key] = None
            return None
        fn_name = self.tangent_callees[key] = self.names.fresh(f"{identifier(fn.__name__)}_jvp")
        self.structures.append({**lowered.objects, **dict(zip(lowered.params, structures))})
        try:
            # a recursive call finds fn_name
            code = tidied(Forward(lowered, wrt, analysis, self, names, self.hint).run())
        finally:
            self.structures.pop()
        body = [*code.body, ast.Return(ast.Tuple([code.result, code.tangent], ast.Load()))]
        self.functions.append(self.tidy(_function(fn_name, list(lowered.params) + code.tangent_params, body), names))
        return fn_name


def tidied(code: TangentCode) -> TangentCode:
    """`code` without the tangents nothing reads (its result and the result's tangent are read)."""
    drop_dead_tangents(code.body, {n.id for n in ast.walk(ast.Tuple([code.result, code.tangent], ast.Load()))
                                   if isinstance(n, ast.Name)}, code.tangents)
    return code
