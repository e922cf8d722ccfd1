"""Walks, copies and rewrites of syntax trees (`ast` and gast alike): `walk` is `ast.walk`, `copy_tree` is
`copy.deepcopy` and `Transformer` is `ast.NodeTransformer`, each several times faster (the stages walk, copy
and rewrite generated code a great deal).

    >>> import ast
    >>> tree = ast.parse("y = np.sin(x) * 2").body[0]
    >>> [type(node).__name__ for node in walk(tree)][:4]
    ['Assign', 'Name', 'BinOp', 'Store']
    >>> copied = copy_tree(tree)
    >>> ast.unparse(copied), copied is tree, copied.value is tree.value
    ('y = np.sin(x) * 2', False, False)

`walk` yields the nodes `ast.walk` yields, in its order (breadth first, a node's children taken before the node
is yielded). In a copy, every attribute is copied: a node's fields, its positions, and what a stage pinned on
it (`ir.syntax`'s annotations), the last by `copy.deepcopy` itself. A node or list that appears twice in the
tree is copied once and appears twice in the copy, as with `copy.deepcopy`.

`dumps` gives what `ast.dump` prints of each node of a tree, all at once (each node's text made from its
children's):

    >>> tree = ast.parse("y = np.sin(x) * 2").body[0]
    >>> all(text == ast.dump(node) for node, text in ((n, dumps(tree)[id(n)]) for n in walk(tree)))
    True

A `Transformer` visits and replaces nodes as `ast.NodeTransformer` does (the same ``visit_<Class>`` methods, the
same ``generic_visit``: a visit returning None removes the node, a list replaces it by several), its methods
found once per class of node:

    >>> class Doubled(Transformer):
    ...     def visit_Constant(self, node):
    ...         return ast.Constant(node.value * 2)
    >>> ast.unparse(Doubled().visit(ast.parse("y = f(x, 1) + 2")))
    'y = f(x, 2) + 4'
"""
from __future__ import annotations

import ast
import copy

_ATOMIC = frozenset({str, int, float, bool, complex, bytes, type(None), type(...)})


def walk(tree):
    """Every node of `tree`, `tree` first, as `ast.walk` yields them."""
    pending = [tree]
    put = pending.append
    node_type = ast.AST
    index = 0
    while index < len(pending):
        node = pending[index]
        index += 1
        fields = node._fields
        if fields:
            state = node.__dict__
            for name in fields:
                value = state.get(name)
                if value is None:
                    continue
                if type(value) is list:
                    for item in value:
                        if isinstance(item, node_type):
                            put(item)
                elif isinstance(value, node_type):
                    put(value)
        yield node


def copy_tree(tree):
    """A deep copy of `tree`: a syntax node, a list of them, or any value holding them."""
    memo: dict = {}

    def copied(value):
        kind = type(value)
        if kind in _ATOMIC:
            return value
        if isinstance(value, ast.AST):
            done = memo.get(id(value))
            if done is None:
                done = memo[id(value)] = kind.__new__(kind)
                state = done.__dict__
                for key, item in value.__dict__.items():
                    state[key] = copied(item)
            return done
        if kind is list:
            done = memo.get(id(value))
            if done is None:
                done = memo[id(value)] = []
                done.extend(copied(item) for item in value)
            return done
        return copy.deepcopy(value, memo)
    return copied(tree)


def dumps(tree) -> dict:
    """``ast.dump(node)`` (its default form) of every node of `tree`, by ``id(node)``."""
    out: dict = {}
    node_type = ast.AST

    def text(value):
        if isinstance(value, node_type):
            done = out.get(id(value))
            if done is None:
                kind = type(value)
                parts = []
                for name in value._fields:
                    try:
                        field = getattr(value, name)
                    except AttributeError:
                        continue
                    if field is None and getattr(kind, name, ...) is None:
                        continue
                    parts.append(f"{name}={text(field)}")
                done = out[id(value)] = f"{kind.__name__}({', '.join(parts)})"
            return done
        if isinstance(value, list):
            return f"[{', '.join(text(item) for item in value)}]"
        return repr(value)
    text(tree)
    return out


# `ast.NodeVisitor.visit_Constant` looks for these (deprecated) methods, else visits generically
_CONSTANT_VISITORS = ("visit_Num", "visit_Str", "visit_Bytes", "visit_NameConstant", "visit_Ellipsis")


class Transformer(ast.NodeTransformer):
    """`ast.NodeTransformer` with the same results: each class of node's visitor found once, fields read
    without `ast.iter_fields`, the nodes without fields (contexts, operators) left as they are unless a
    method visits them."""

    _visitors: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._visitors = {}

    def visit(self, node):
        kind = type(node)
        method = self._visitors.get(kind)
        if method is None:
            method = self._visitors[kind] = _visitor(type(self), kind)
        return method(self, node)

    def generic_visit(self, node):
        node_type = ast.AST
        visitors = self._visitors
        direct = type(self).visit is Transformer.visit      # (else each child goes through the class's visit)
        state = node.__dict__
        for name in node._fields:
            old = state.get(name)
            if old is None:
                continue
            if type(old) is list:
                values = []
                for value in old:
                    if isinstance(value, node_type):
                        if direct:
                            kind = type(value)
                            method = visitors.get(kind)
                            if method is None:
                                method = visitors[kind] = _visitor(type(self), kind)
                            if method is not _unchanged:
                                value = method(self, value)
                        else:
                            value = self.visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, node_type):
                            values.extend(value)
                            continue
                    values.append(value)
                old[:] = values
            elif isinstance(old, node_type):
                if direct:
                    kind = type(old)
                    method = visitors.get(kind)
                    if method is None:
                        method = visitors[kind] = _visitor(type(self), kind)
                    if method is _unchanged:
                        continue
                    new = method(self, old)
                else:
                    new = self.visit(old)
                if new is None:
                    delattr(node, name)
                elif new is not old:
                    setattr(node, name, new)
        return node


def _unchanged(self, node):
    return node


def _visitor(cls, kind):
    """The function `cls` visits nodes of class `kind` with, as `ast.NodeVisitor.visit` finds it."""
    method = getattr(cls, "visit_" + kind.__name__, None)
    if method is ast.NodeVisitor.visit_Constant and not any(hasattr(cls, name) for name in _CONSTANT_VISITORS):
        method = None
    if method is None:
        method = cls.generic_visit
        if method is Transformer.generic_visit and not kind._fields:
            return _unchanged
    return method
