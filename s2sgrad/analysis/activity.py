"""Stage 3: which values need an adjoint, and what kind of value each name holds.

A value is *active* if it depends on a `wrt` input through differentiable
operations (it is *varied*) and the output depends on it (it is *useful*).
Only active values get adjoint code. A name's *kind* says how its adjoints
add up: ``"tensor"`` (numbers and arrays, added with ``+``), ``"seq"`` (lists
and tuples, added elementwise), or ``"unknown"``.

    >>> import numpy as np
    >>> from s2sgrad.frontend.lower import lower_function
    >>> def f(x, w):
    ...     y = np.sin(x) * 2.0
    ...     return np.sum(y * np.cos(w))
    >>> lowered, _ = lower_function(f)
    >>> specialize_sequences(lowered)
    >>> "w" in analyze(lowered, wrt=["x"]).active, "w" in analyze(lowered, wrt=["w"]).active
    (False, True)
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np

from .. import runtime
from ..errors import UnsupportedSyntax
from ..frontend.objects import ArrayDict, is_object_kind
from ..ir import primitives
from ..ir.nodes import Assign, Const, Function, Global, If, Op, Var, While, assignments
from ..rules import is_nondifferentiable, rule_for
from ..rules.builtins import SEQUENCE_RESULTS
from ..rules.nondifferentiable import value_arguments
from ..rules.registry import complex_rule_for
from .dataflow import Forward, names
from .dtypes import Dtypes, is_real
from .shapes import Shapes

TENSOR, SEQ, UNKNOWN = "tensor", "seq", "unknown"
DICT = "dict"                     # an argument's kind: a dict (a "seq" to the analysis)


@dataclass(frozen=True)
class Fields:
    """An argument's kind: a named tuple with these fields (a "seq" to the analysis; ``p.a`` is ``p[0]``)."""
    names: tuple


SEQ_MAKERS = {primitives.make_list, primitives.make_tuple, primitives.list_append, primitives.seq_setitem,
              primitives.seq_concat, primitives.seq_repeat, runtime.make_dict, runtime.dict_without,
              runtime.dict_values, runtime.dict_items, runtime.unpack_starred, runtime.unpack_filled, runtime.bind_call,
              np.linalg.slogdet, np.linalg.eigh, np.linalg.eig,  # (rules whose result is a tuple or list)
              np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit,
              runtime.new_record, runtime.with_field, runtime.as_named} | SEQUENCE_RESULTS
SEQ_OR_TENSOR = {np.gradient}         # a tuple of arrays (several axes) or an array (one axis)
NONE_KIND = "none"


@dataclass
class Analysis:
    active: set = field(default_factory=set)
    kind: dict = field(default_factory=dict)
    shapes: "Shapes" = None
    arg_kinds: dict = field(default_factory=dict)     # what the code is specialized on, per parameter
    dtypes: "Dtypes | None" = None                    # when it is specialized on dtypes too
    real_adjoints: bool = False                       # every value and adjoint real, of at most 64 bits

    def is_active(self, atom) -> bool:
        return isinstance(atom, Var) and atom.name in self.active


def analyze(fn: Function, wrt: list[str], arg_kinds: dict[str, str] | None = None,
            activity: bool = True, arg_dtypes: dict | None = None, seed_dtype=float) -> Analysis:
    """Activity, kinds and shapes of every name in `fn`, differentiating with respect to `wrt`.

    `arg_kinds` maps parameters to "int", "scalar", "seq", "tensor" or an array's shape (default "tensor").
    `arg_dtypes`, if given, maps each parameter to its dtype descriptor (see `dtypes`), and
    `seed_dtype` is the output adjoint's.
    Without `activity` (for comparison), values computed by derivative rules from the other
    parameters (not known to be integers) count as varied too: they get adjoint code nothing reads.
    The list operations of `fn` are those `specialize_sequences` made (the caller runs it first).
    """
    analysis = Analysis(arg_kinds=dict(arg_kinds or {}))
    kinds, known_shapes, ints = _parameters(fn, arg_kinds)
    items = {p: dict(k.shapes) for p, k in analysis.arg_kinds.items() if isinstance(k, ArrayDict)}
    analysis.shapes = Shapes(known_shapes, ints=ints, item_shapes=items)
    analysis.shapes.block(fn.body)
    if arg_dtypes is not None:
        analysis.dtypes = Dtypes({p: arg_dtypes.get(p) for p in fn.params})
        analysis.dtypes.block(fn.body)
        analysis.real_adjoints = analysis.dtypes.real() and is_real(seed_dtype)
    analysis.kind = _kinds(fn.body, kinds, items)
    _refuse_augmented_list_writes(fn.body, analysis.shapes)
    integers = integer_arrays(fn, analysis.dtypes)
    varied = _varied(fn.body, set(wrt), blocked=integers)
    if not activity:
        others = {p for p in fn.params if not analysis.shapes.is_int(Var(p))}
        varied |= _varied(fn.body, others, through=_has_rule, blocked=integers)
    useful = {fn.result.name} if isinstance(fn.result, Var) else set()
    _useful(fn.body, useful)
    analysis.active = {n for n in varied & useful if analysis.kind.get(n) != NONE_KIND}
    return analysis


def specialize_sequences(fn: Function, arg_kinds: dict[str, str] | None = None) -> None:
    """Rewrite the list operations of `fn`, by the kinds of their operands, before `analyze`: indexing a list or
    tuple is ``seq_getitem``, whose adjoint is a list, not an array; writing one by index, adding two and
    repeating one are ``seq_setitem``, ``seq_concat`` and ``seq_repeat``."""
    kinds = _kinds(fn.body, _parameters(fn, arg_kinds)[0])
    for stmt in assignments(fn.body):
        if isinstance(stmt.value, Op) and stmt.value.fn is operator.getitem \
                and _atom_kind(stmt.value.args[0], kinds) == SEQ:
            stmt.value.fn = primitives.seq_getitem
        elif isinstance(stmt.value, Op) and _seq_form(stmt.value, kinds):
            stmt.value.fn, stmt.value.args = _seq_form(stmt.value, kinds)


def _refuse_augmented_list_writes(block: list, shapes: Shapes) -> None:
    for stmt in assignments(block):
        if isinstance(stmt.value, Op) and stmt.value.fn is primitives.seq_setitem and stmt.value.augmented \
                and not shapes.is_scalar(stmt.value.args[2]):
            raise UnsupportedSyntax(
                "an augmented assignment to a list element changes the element itself where it is an array "
                "(and so every name for that array), which s2sgrad does not follow", stmt.loc,
                "write it out: ys[i] = ys[i] + ... (a new value in the list)")


def _parameters(fn: Function, arg_kinds: dict | None) -> tuple[dict, dict, set]:
    """The kinds of `fn`'s parameters, the shapes known of them, and those holding integers."""
    kinds, known_shapes, ints = {}, {}, set()
    for param in fn.params:
        kind = (arg_kinds or {}).get(param, TENSOR)
        if kind in (SCALAR, INT):
            known_shapes[param] = ()
            if kind == INT:
                ints.add(param)
            kind = TENSOR
        elif kind == DICT or isinstance(kind, (Fields, ArrayDict)) or is_object_kind(kind):
            kind = SEQ
        elif isinstance(kind, tuple):           # an array of this shape
            known_shapes[param] = kind
            kind = TENSOR
        kinds[param] = kind
    return kinds, known_shapes, ints


BOOLEAN = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne, operator.is_,
           operator.is_not, operator.contains, operator.not_, primitives.not_in, primitives.both, primitives.either,
           bool, isinstance, callable, hasattr, all, any, np.all, np.any, np.isclose, np.allclose, np.array_equal,
           np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal, np.isnan, np.isinf,
           np.isfinite, np.logical_and, np.logical_or, np.logical_not, np.logical_xor, np.signbit]


def boolean_result(fn: Function, analysis: Analysis):
    """The statement computing `fn`'s result if that is a truth value (a comparison, ``bool(...)``, a logical
    function), which has no gradient; else None."""
    result = fn.result
    if isinstance(result, Const) and isinstance(result.value, (bool, np.bool_)):
        return fn
    if not isinstance(result, Var):
        return None
    for stmt in fn.body:
        if isinstance(stmt, Assign) and stmt.target == result.name:
            boolean = isinstance(stmt.value, Op) and any(stmt.value.fn is b for b in BOOLEAN)
            dtype = analysis.dtypes.of(result) if analysis.dtypes is not None else None
            return stmt if boolean or isinstance(dtype, np.dtype) and dtype.kind == "b" else None
    return None


STRUCTURAL = {primitives.make_tuple, primitives.make_list, primitives.seq_getitem}
COMPLEX_OF_REAL = {np.linalg.eig, np.linalg.eigvals}     # (complex results of real arguments, dtypes unknown)


def complex_result(fn: Function, analysis: Analysis):
    """The statement computing `fn`'s result if dtypes know it is complex (a gradient needs a real output)."""
    result = fn.result
    if analysis.dtypes is None or not isinstance(result, Var) or not analysis.dtypes.is_complex(result.name):
        return None
    return next((s for s in fn.body if isinstance(s, Assign) and s.target == result.name), fn)


def first_complex_without_rule(block: list, analysis: Analysis):
    """The first statement (in program order) that calls, on complex values where dtypes know them, a function
    whose rule is not known to hold for complex values (see `rules.registry.complex_adjoint`). Where some
    active value is known to be complex, a value of unknown dtype may be complex too."""
    dtypes = analysis.dtypes
    calls = [s for s in assignments(block) if s.target in analysis.active and isinstance(s.value, Op)
             and s.value.fn not in STRUCTURAL]
    has_complex = any(dtypes.is_complex(name) for name in analysis.active) \
        or any(s.value.fn in COMPLEX_OF_REAL for s in calls)
    for stmt in calls:
        target, value = stmt.target, stmt.value
        if (dtypes.touches_complex(target, value) or has_complex and dtypes.unknown(target, value)) \
                and complex_rule_for(value.fn) is None:
            return stmt
    return None


def differentiable(op: Op) -> bool:
    """Does `op` pass gradients from its arguments to its result?"""
    if is_nondifferentiable(op.fn) or op.fn is slice:
        return False
    return not casts_to_integers(op)


CASTS = {primitives.astype: 1, np.array: 1, np.asarray: 1}     # -> the position of the dtype argument


def casts_to_integers(op: Op) -> bool:
    """Does `op` compute in an integer or boolean dtype named by a constant: a cast (``x.astype(int)``,
    ``np.asarray(x, dtype=bool)``), or a function with a rule given ``dtype=`` (``np.sum(x, dtype=int)``
    sums truncated values)? No gradient flows through it (a dtype known only at run time: see `uncast`)."""
    dtype = _dtype_argument(op)
    if not isinstance(dtype, (Const, Global)) or dtype.value is None:
        return False
    try:
        return np.dtype(dtype.value).kind in "biu"
    except TypeError:
        return False


def _dtype_argument(op: Op):
    """The atom `op` passes as its dtype, if it takes one (by keyword, or by its place in the signature)."""
    if "dtype" in op.kwargs:
        return op.kwargs["dtype"]
    try:
        position = CASTS.get(op.fn)
    except TypeError:                            # an unhashable callable
        return None
    if position is None:
        rule = rule_for(op.fn) if callable(op.fn) else None
        params = list(rule.signature.parameters) if rule is not None else []
        position = params.index("dtype") if "dtype" in params else None
    return op.args[position] if position is not None and len(op.args) > position else None


# ---------------------------------------------------------------- kinds

def _atom_kind(atom, kinds) -> str:
    if isinstance(atom, Var):
        return kinds.get(atom.name, UNKNOWN)
    value = atom.value
    if value is None:
        return NONE_KIND
    if isinstance(value, (list, tuple)):
        return SEQ
    return TENSOR


def _join(a: str, b: str) -> str:
    if a == b or b == NONE_KIND:
        return a
    if a == NONE_KIND:
        return b
    return UNKNOWN


def _seq_form(op: Op, kinds):
    """The list operation `op` is when it writes, adds or repeats lists or tuples: (function, arguments)."""
    if op.kwargs:
        return None
    args = [_atom_kind(a, kinds) == SEQ for a in op.args]
    if op.fn is primitives.setitem and args[0]:
        return primitives.seq_setitem, op.args
    if op.fn is operator.add and len(args) == 2 and any(args):
        return primitives.seq_concat, op.args
    if op.fn is operator.mul and len(args) == 2 and any(args):
        return primitives.seq_repeat, op.args if args[0] else op.args[::-1]
    return None


def _svd_tuple(op: Op) -> bool:
    """Is `op` ``np.linalg.svd(a, ...)`` returning ``(u, s, vh)``? (With ``compute_uv=False``: `s` alone.)"""
    flag = op.kwargs.get("compute_uv", op.args[2] if len(op.args) > 2 else None)
    return op.fn is np.linalg.svd and not (isinstance(flag, Const) and not flag.value)


def _op_kind(op: Op, kinds) -> str:
    if op.fn is runtime.read_after_loop:
        return _atom_kind(op.args[0], kinds)
    if op.fn in SEQ_MAKERS or _svd_tuple(op) or _seq_form(op, kinds) is not None:
        return SEQ
    if op.fn in SEQ_OR_TENSOR:
        return UNKNOWN
    if op.fn in (operator.getitem, primitives.seq_getitem, primitives.attribute):
        return UNKNOWN if _atom_kind(op.args[0], kinds) != TENSOR else TENSOR
    if callable(op.fn) and (rule_for(op.fn) or is_nondifferentiable(op.fn)):
        return TENSOR
    return UNKNOWN


class _Kinds(Forward):
    """Each name's kind, by a forward walk (a loop's kinds settle in a couple of rounds)."""

    rounds = 3

    def __init__(self, parameters: dict, item_shapes: dict):
        super().__init__(parameters)
        self.item_shapes = item_shapes         # a parameter holding an `ArrayDict` -> its keys' shapes

    def fact(self, atom) -> str:
        return _atom_kind(atom, self.facts)

    def transfer(self, stmt: Assign) -> str:
        value = stmt.value
        if isinstance(value, Op) and value.fn is primitives.seq_getitem and isinstance(value.args[0], Var) \
                and isinstance(value.args[-1], Const) and value.args[-1].value in self.item_shapes.get(
                    value.args[0].name, ()):
            return TENSOR                      # an array (or float) of a dict of arrays, by its key
        return _op_kind(value, self.facts) if isinstance(value, Op) else _atom_kind(value, self.facts)

    def join(self, a: str, b: str) -> str:
        return _join(a, b)


def _kinds(block: list, parameters: dict, item_shapes: dict | None = None) -> dict:
    """The kind of every name of `block`, given its function's parameters' (and the keys of those holding an
    `ArrayDict`)."""
    walk = _Kinds(parameters, item_shapes or {})
    walk.block(block)
    return walk.facts


# ---------------------------------------------------------------- activity

def _has_rule(op: Op) -> bool:
    """Does a derivative rule pass gradients through `op`? (User functions and calls without a rule: no.)"""
    builds_a_sequence = op.fn in (primitives.make_tuple, primitives.make_list)
    return differentiable(op) and (rule_for(op.fn) is not None or builds_a_sequence)


def integer_arrays(fn: Function, dtypes: Dtypes | None) -> set[str]:
    """Names certainly holding arrays (or NumPy scalars) of an integer or boolean dtype: no gradient flows
    through them (``y = np.zeros(3, dtype=int); y[0] = x`` truncates x). Without the arguments' dtypes,
    those of what the function makes itself."""
    if dtypes is None:
        dtypes = Dtypes({p: None for p in fn.params})
        dtypes.block(fn.body)
    return {name for name, d in dtypes.facts.items() if isinstance(d, np.dtype) and d.kind in "biu"}


class _Varied(Forward):
    """Which names are varied (True), by a forward walk from the `seeds`: computed from a varied name by an
    operation `through` lets gradients through, and never one of the `blocked` names."""

    def __init__(self, seeds: set, through, blocked):
        super().__init__(dict.fromkeys(seeds, True))
        self.through, self.blocked = through, blocked

    def fact(self, atom) -> bool:
        return isinstance(atom, Var) and self.facts.get(atom.name, False)

    def transfer(self, stmt: Assign) -> bool:
        value = stmt.value
        if not isinstance(value, Op):
            return self.fact(value)
        values = value_arguments(value)
        if values is None:                      # else a derivative through these only: refused, having no rule
            values = [*value.args, *value.kwargs.values()] if self.through(value) else []
        return any(self.fact(a) for a in values)

    def join(self, a: bool, b: bool) -> bool:
        return a or b

    def bind(self, name: str, fact: bool) -> None:
        self.facts[name] = fact and name not in self.blocked


def _varied(block, seeds: set, through=differentiable, blocked=frozenset()) -> set:
    """The `seeds` and the names computed from them by operations `through` lets gradients through (never
    the `blocked` ones)."""
    walk = _Varied(seeds, through, blocked)
    walk.block(block)
    return {name for name, varied in walk.facts.items() if varied}


def _useful(block, useful: set) -> None:
    for stmt in reversed(block):
        if isinstance(stmt, Assign):
            if stmt.target in useful:
                value = stmt.value
                if isinstance(value, Op):
                    values = value_arguments(value)
                    if values is not None:
                        useful |= names(values)
                    elif differentiable(value):
                        useful |= names([*value.args, *value.kwargs.values()])
                elif isinstance(value, Var):
                    useful.add(value.name)
        elif isinstance(stmt, If):
            for r, a, b in zip(stmt.results, stmt.body_outs, stmt.orelse_outs):
                if r in useful:
                    useful |= names([a, b])
            _useful(stmt.body, useful)
            _useful(stmt.orelse, useful)
        elif isinstance(stmt, While):
            for r, p in zip(stmt.results, stmt.params):
                if r in useful:
                    useful.add(p)
            while True:
                size = len(useful)
                for p, out in zip(stmt.params, stmt.body_outs):
                    if p in useful and isinstance(out, Var):
                        useful.add(out.name)
                _useful(stmt.body, useful)
                if len(useful) == size:
                    break
            for p, init in zip(stmt.params, stmt.inits):
                if p in useful and isinstance(init, Var):
                    useful.add(init.name)




SCALAR = "scalar"
INT = "int"


__all__ = ["Analysis", "analyze", "specialize_sequences", "differentiable", "TENSOR", "SEQ", "DICT", "Fields",
           "UNKNOWN", "SCALAR", "INT"]
