"""Part of stage 2: dicts as values: displays ``{"a": x}``, ``dict(a=x)``, and a local dict's ``keys()``,
``values()``, ``items()`` and ``get(k, default)``, as calls of `runtime`'s dict functions (whose rules are
`rules.dicts`); ``d[k]`` and ``d[k] = v`` are the list operations (`seq_getitem`, `seq_setitem`).

    >>> from s2sgrad.frontend.lower import lowered_source
    >>> def f(x):
    ...     d = {"a": x, "b": 2.0 * x}
    ...     return d.get("a", 0.0) * len(d)
    >>> print(lowered_source(f), end="")
    def f(x):
        prod = 2.0 * x
        values = (x, prod)
        d = make_dict(('a', 'b'), values)
        get = dict_get(d, 'a', 0.0)
        len_1 = len(d)
        prod_1 = get * len_1
        return prod_1
"""
from __future__ import annotations

import gast

from .. import runtime
from ..ir import primitives
from ..ir.nodes import Const, Op

METHODS = {"keys": runtime.dict_keys, "values": runtime.dict_values, "items": runtime.dict_items,
           "get": runtime.dict_get}


class Mappings:
    """Lowers the dict displays, ``dict(...)`` calls and dict methods of the function `lowerer` lowers."""

    def __init__(self, lowerer):
        self.lowerer = lowerer

    def made(self, keys: list, values: list) -> Op:
        lowerer = self.lowerer
        key_atoms = [lowerer.atom(k) if not isinstance(k, str) else Const(k) for k in keys]
        value_atoms = [lowerer.atom(v) for v in values]
        if all(isinstance(k, Const) for k in key_atoms):
            key_tuple = Const(tuple(k.value for k in key_atoms))
        else:
            key_tuple = lowerer.bind(Op(primitives.make_tuple, key_atoms), "keys")
        return Op(runtime.make_dict, [key_tuple, lowerer.bind(Op(primitives.make_tuple, value_atoms), "values")])

    def display(self, node: gast.Dict) -> Op:
        """``{k: v, ...}``."""
        if any(k is None for k in node.keys):
            raise self.lowerer.error("unpacking a dict into a dict display ({**d, ...}) is not supported", node,
                                     "copy it with dict(d) and set the other keys with d[k] = v")
        return self.made(node.keys, node.values)

    def call(self, node: gast.Call) -> Op:
        """``dict()``, ``dict(a=x, b=y)``, ``dict([("a", x)], b=y)`` (a list or tuple of pairs written out), or
        ``dict(d, b=y)``: a copy of a dict, keywords set in it."""
        lowerer = self.lowerer
        keywords = node.keywords
        if len(node.args) > 1 or any(k.arg is None for k in keywords) \
                or node.args and isinstance(node.args[0], gast.Starred):
            raise lowerer.error("dict() is supported with keyword arguments (dict(a=x)), pairs written out "
                                "(dict([('a', x)])) or one dict to copy", node,
                                "write a dict display {'a': x} or build the dict with d[k] = v")
        first = node.args[0] if node.args else None
        pairs = [] if first is None else _pairs(first)
        if pairs is not None:
            return self.made([k for k, _ in pairs] + [k.arg for k in keywords],
                             [v for _, v in pairs] + [k.value for k in keywords])
        made = Op(runtime.dict_without, [lowerer.atom(first), Const(())])
        for keyword in keywords:
            made = Op(primitives.seq_setitem, [lowerer.bind(made, "mapping"), Const(keyword.arg),
                                               lowerer.atom(keyword.value)])
        return made

    def method(self, node: gast.Call, mapping) -> Op:
        """``d.keys()``, ``d.values()``, ``d.items()``, ``d.get(k)``, ``d.get(k, default)`` of a local dict."""
        lowerer, attr = self.lowerer, node.func.attr
        args = [lowerer.atom(a) for a in node.args]
        expected = (1, 2) if attr == "get" else (0,)
        if node.keywords or len(args) not in expected:
            raise lowerer.error(f"'.{attr}()' takes {' or '.join(map(str, expected))} positional argument(s)", node,
                                "d.get(key) or d.get(key, default); d.keys(), d.values(), d.items() take none")
        return Op(METHODS[attr], [mapping, *args])


def _pairs(node):
    """The (key, value) nodes of a dict display or of a list or tuple of pairs written out, else None."""
    if isinstance(node, gast.Dict) and all(k is not None for k in node.keys):
        return list(zip(node.keys, node.values))
    if isinstance(node, (gast.List, gast.Tuple)) and all(isinstance(e, (gast.List, gast.Tuple)) and len(e.elts) == 2
                                                         for e in node.elts):
        return [tuple(e.elts) for e in node.elts]
    return None
