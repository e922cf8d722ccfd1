"""Copies of syntax trees (`ast` and gast alike), as `copy.deepcopy` makes them, several times faster.

    >>> import ast
    >>> tree = ast.parse("y = np.sin(x) * 2").body[0]
    >>> copied = copy_tree(tree)
    >>> ast.unparse(copied), copied is tree, copied.value is tree.value
    ('y = np.sin(x) * 2', False, False)

Every attribute is copied: a node's fields, its positions, and what a stage pinned on it (`ir.syntax`'s
annotations), the last by `copy.deepcopy` itself. A node or list that appears twice in the tree is copied once
and appears twice in the copy, as with `copy.deepcopy`.
"""
from __future__ import annotations

import ast
import copy

_ATOMIC = frozenset({str, int, float, bool, complex, bytes, type(None), type(...)})


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
