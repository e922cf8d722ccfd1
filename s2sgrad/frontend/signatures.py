"""Part of stages 1 and 2: parameters of every kind as one positional list, and calls bound to them.

The lowered form has plain positional parameters only. ``def f(x, /, y, *xs, scale=2.0, **kw)`` takes
``(x, y, xs, scale, kw)``: ``xs`` the tuple and ``kw`` the dict Python binds them to. A call of a user
function (a module-level one or a nested def) is bound here, as Python binds it, to atoms in that order:
surplus positional arguments packed into the ``*args`` tuple, surplus keywords into the ``**kwargs``
dict, ``g(x, *rest)`` reading the parameters it fills out of ``rest``, ``g(**kw)`` out of ``kw``.

    >>> import gast
    >>> tree = gast.parse("def f(x, *xs, scale=2.0, **kw): pass").body[0]
    >>> flatten(tree).names, [a.id for a in tree.args.args]
    (['x', 'xs', 'scale', 'kw'], ['x', 'xs', 'scale', 'kw'])
"""
from __future__ import annotations

import inspect
import operator
from dataclasses import dataclass, field

import gast

from .. import runtime
from ..ir import primitives
from ..ir.nodes import Const, Global, Op, Var

P = inspect.Parameter
POSITIONAL = (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)


@dataclass
class Parameters:
    """A function's parameters in the lowered form's order, each with its kind and, where it has one, its
    default (a syntax node at a ``def``, an atom once evaluated)."""

    names: list
    kinds: list
    defaults: dict = field(default_factory=dict)

    @classmethod
    def of(cls, signature: inspect.Signature) -> "Parameters":
        params = list(signature.parameters.values())
        return cls([p.name for p in params], [p.kind for p in params],
                   {p.name: _constant(p.default) for p in params if p.default is not p.empty})

    @property
    def plain(self) -> bool:
        """Positional-or-keyword parameters only (a call binds to them as written)."""
        return all(k is P.POSITIONAL_OR_KEYWORD for k in self.kinds)

    def of_kind(self, *kinds) -> list:
        return [n for n, k in zip(self.names, self.kinds) if k in kinds]

    @property
    def vararg(self):
        return next(iter(self.of_kind(P.VAR_POSITIONAL)), None)

    @property
    def kwarg(self):
        return next(iter(self.of_kind(P.VAR_KEYWORD)), None)


def _constant(value):
    return value if isinstance(value, (Var, Const, Global)) else Const(value)


def flatten(tree: gast.FunctionDef) -> Parameters:
    """Rewrite the parameters of ``def`` `tree` into one positional list, in place; returns them, with their
    kinds and default nodes. A function of plain parameters is left as it is."""
    if hasattr(tree, "parameters"):                # flattened already
        return tree.parameters
    args = tree.args
    positional = list(args.posonlyargs) + list(args.args)
    kinds = [P.POSITIONAL_ONLY] * len(args.posonlyargs) + [P.POSITIONAL_OR_KEYWORD] * len(args.args)
    defaults = dict(zip([a.id for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    params = positional + ([args.vararg] if args.vararg else [])
    kinds += [P.VAR_POSITIONAL] if args.vararg else []
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append(arg)
        kinds.append(P.KEYWORD_ONLY)
        if default is not None:
            defaults[arg.id] = default
    if args.kwarg:
        params.append(args.kwarg)
        kinds.append(P.VAR_KEYWORD)
    parameters = Parameters([a.id for a in params], kinds, defaults)
    if not parameters.plain:
        for arg in params:
            arg.ctx = gast.Param()
        tree.args = gast.arguments(args=params, posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                                   kwarg=None, defaults=[])
    tree.parameters = parameters
    return parameters


def needs_binding(parameters: Parameters, node: gast.Call) -> bool:
    """Must `node`, a call of a function with these parameters, be bound here (rather than as written)?"""
    return not parameters.plain or any(isinstance(a, gast.Starred) for a in node.args) \
        or any(k.arg is None for k in node.keywords)


def bind(lowerer, parameters: Parameters, node: gast.Call, name: str) -> list:
    """The atoms a call `node` of function `name` passes to each of its `parameters` (defaults atoms too)."""
    def refuse(message, hint=None):
        raise lowerer.error(f"the call of '{name}' {message}", node, hint)

    positional = [(isinstance(a, gast.Starred), lowerer.atom(a.value if isinstance(a, gast.Starred) else a))
                  for a in node.args]
    keywords = [(k.arg, lowerer.atom(k.value)) for k in node.keywords]
    lowerer.node = node
    if any(starred for starred, _ in positional) and any(key is None for key, _ in keywords):
        return _bound_when_run(lowerer, parameters, positional, keywords, refuse)
    names = parameters.of_kind(*POSITIONAL)
    bound: dict = {}
    extra: list = []                   # surplus positional atoms, for *args
    for k, (starred, atom) in enumerate(positional):
        if not starred:
            if len(bound) < len(names):
                bound[names[len(bound)]] = atom
            elif parameters.vararg is not None:
                extra.append(atom)
            else:
                refuse(f"passes {len(node.args)} positional arguments, more than the {len(names)} it takes")
            continue
        if k != len(positional) - 1:
            refuse("has a starred argument before other positional ones",
                   "put the starred argument last, or pass the arguments one by one")
        given_by_name = {key for key, _ in keywords}
        wanted = [p for p in names[len(bound):] if p not in given_by_name]
        defaulted = [p for p in wanted if p in parameters.defaults]
        if parameters.vararg is None and defaulted:         # as many as the sequence has, the rest defaults
            if wanted[len(wanted) - len(defaulted):] != defaulted or given_by_name & set(names[len(bound):]):
                refuse("fills parameters from a starred argument around others given by name",
                       "pass those arguments one by one or by name")
            defaults = lowerer.bind(Op(primitives.make_tuple, [parameters.defaults[p] for p in defaulted]))
            unpacked = lowerer.bind(Op(runtime.unpack_filled, [atom, Const(len(wanted) - len(defaulted)),
                                                               defaults]), "unpacked")
        else:
            unpacked = lowerer.bind(Op(runtime.unpack_starred, [atom, Const(len(wanted)), Const(0),
                                                                Const("tuple" if parameters.vararg else None)]),
                                    "unpacked")
        taken = len(wanted)
        for i, p in enumerate(wanted):
            bound[p] = lowerer.bind(Op(primitives.seq_getitem, [unpacked, Const(i)]), p)
        if parameters.vararg is not None:
            rest = lowerer.bind(Op(primitives.seq_getitem, [unpacked, Const(taken)]), parameters.vararg)
            if extra:
                rest = lowerer.bind(Op(primitives.seq_concat, [lowerer.bind(Op(primitives.make_tuple, extra)), rest]),
                                    parameters.vararg)
            bound[parameters.vararg] = rest
    if parameters.vararg is not None and parameters.vararg not in bound:
        bound[parameters.vararg] = lowerer.bind(Op(primitives.make_tuple, extra), parameters.vararg)
    by_name = parameters.of_kind(P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)
    surplus_keys, surplus, mappings = [], [], []
    for key, atom in keywords:
        if key is None:
            mappings.append(atom)
        elif key in by_name:
            if key in bound:
                refuse(f"gives '{key}' twice")
            bound[key] = atom
        elif parameters.kwarg is not None:
            surplus_keys.append(key)
            surplus.append(atom)
        else:
            refuse(f"passes '{key}', which names no parameter it takes by name")
    if len(mappings) > 1:
        refuse("unpacks more than one dict (**)", "merge them into one dict first")
    for mapping in mappings:
        for p in by_name:
            if p not in bound:
                default = parameters.defaults.get(p)
                read = Op(runtime.dict_get, [mapping, Const(p), default]) if default is not None \
                    else Op(operator.getitem, [mapping, Const(p)])
                bound[p] = lowerer.bind(read, p)
    if parameters.kwarg is not None:
        made = lowerer.bind(Op(runtime.make_dict, [Const(tuple(surplus_keys)),
                                                   lowerer.bind(Op(primitives.make_tuple, surplus), "values")]),
                            parameters.kwarg)
        if mappings:
            if surplus:
                refuse("passes both keywords and a dict (**) on to **" + parameters.kwarg,
                       "merge them into one dict first")
            made = lowerer.bind(Op(runtime.dict_without, [mappings[0], Const(tuple(by_name))]), parameters.kwarg)
        bound[parameters.kwarg] = made
    for p in parameters.names:
        if p not in bound:
            if p not in parameters.defaults:
                refuse(f"gives no value for its parameter '{p}'")
            bound[p] = parameters.defaults[p]
    return [bound[p] for p in parameters.names]


def _bound_when_run(lowerer, parameters: Parameters, positional: list, keywords: list, refuse) -> list:
    """``f(*args, **kwargs)``: which parameter gets what is known only when it runs (`runtime.bind_call`)."""
    if len(keywords) != 1 or [starred for starred, _ in positional][:-1] != [False] * (len(positional) - 1):
        refuse("passes arguments besides one *sequence (last) and one **dict", "pass them inside those")
    *given, (_, sequence) = positional
    if given:
        head = lowerer.bind(Op(primitives.make_tuple, [atom for _, atom in given]))
        sequence = lowerer.bind(Op(primitives.seq_concat, [head, lowerer.bind(Op(tuple, [sequence]))]), "args")
    kinds = tuple((name, int(kind) + 10 * (name in parameters.defaults))
                  for name, kind in zip(parameters.names, parameters.kinds))
    defaults = lowerer.bind(Op(primitives.make_tuple, [parameters.defaults[n] for n in parameters.names
                                                       if n in parameters.defaults]), "defaults")
    bound = lowerer.bind(Op(runtime.bind_call, [Const(kinds), sequence, keywords[0][1], defaults]), "bound")
    return [lowerer.bind(Op(primitives.seq_getitem, [bound, Const(k)]), name)
            for k, name in enumerate(parameters.names)]
