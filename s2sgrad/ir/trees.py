"""Walks and copies of syntax trees (`ast` and gast alike): `walk` is `ast.walk` and `copy_tree` is
`copy.deepcopy`, each several times faster (the stages walk and copy generated code a great deal).

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
"""
from __future__ import annotations

import ast
import copy
from collections import deque

_ATOMIC = frozenset({str, int, float, bool, complex, bytes, type(None), type(...)})


def walk(tree):
    """Every node of `tree`, `tree` first, as `ast.walk` yields them."""
    pending = deque([tree])
    take, put = pending.popleft, pending.append
    node_type = ast.AST
    while pending:
        node = take()
        for name in node._fields:
            try:
                value = getattr(node, name)
            except AttributeError:
                continue
            if isinstance(value, node_type):
                put(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, node_type):
                        put(item)
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
