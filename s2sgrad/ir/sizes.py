"""Symbolic array sizes: what generated code is specialized on instead of the sizes themselves.

An array argument's *shape pattern* keeps, per axis, either 1 (the axis broadcasts) or a `Size`: the class
of all the arguments' axes of one size (other than 1). Code generated for one pattern is right for every
call with that pattern, whatever the sizes are, so a new batch size or sequence length reuses it:

    >>> a, b = shape_patterns([(32, 10), (32,)])
    >>> a, b
    ((Size(0), Size(1)), (Size(0),))
    >>> shape_patterns([(7, 3), (7,)]) == shape_patterns([(32, 10), (32,)])
    True
    >>> shape_patterns([(7, 7), (7,)]) == shape_patterns([(32, 10), (32,)])     # the two sizes became equal
    False

Generated code names a size by where it first occurs among the arguments (`named_sizes`), reads it from
that argument (`size_bindings`), and writes shapes with those names (`shape_expression`):

    >>> import ast
    >>> ast.unparse(shape_expression((Size(0, name="n_x"), 1)))
    '(n_x, 1)'
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

# Stacks of arrays of at most this many elements may be popped as one array (see `backend.vectorize`): below it
# a NumPy call costs more than its arithmetic, above it the rows would add much to the stacks' memory. A shape
# with one `Size` and no other axis above 1 counts as within it (an RNN's state: its size is not known, and
# the code must not depend on it).
ROW_SIZE_LIMIT = 256

AXIS_NAMES = ("n", "d")          # the first two axes' size names: n_x, d_x; then d2_x, d3_x, ...


@dataclass(frozen=True)
class Size:
    """The size of every axis in one class of equal sizes (never 1). `name` is what generated code calls it
    (not part of its identity)."""

    index: int
    name: str | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        return f"Size({self.index})" if self.name is None else self.name


_INTERNED: dict = {}


def _size(index: int) -> Size:
    size = _INTERNED.get(index)
    if size is None:
        size = _INTERNED[index] = Size(index)
    return size


def shape_patterns(shapes) -> tuple:
    """Each shape of `shapes` (a tuple of ints, or anything else, kept as it is) as its pattern: 1s kept, every
    other size replaced by the `Size` of its class (numbered by first occurrence)."""
    classes: dict = {}
    out = []
    for shape in shapes:
        if type(shape) is tuple:
            pattern = []
            for n in shape:
                if n == 1:
                    pattern.append(1)
                    continue
                size = classes.get(n)
                if size is None:
                    size = classes[n] = _size(len(classes))
                pattern.append(size)
            shape = tuple(pattern)
        out.append(shape)
    return tuple(out)


def is_symbolic(shape) -> bool:
    """Does `shape` (a tuple) have a `Size` among its entries?"""
    return any(isinstance(n, Size) for n in shape)


def is_size(value) -> bool:
    """An int (not a bool) or a `Size`: what an axis of a shape can be."""
    return isinstance(value, Size) or isinstance(value, int) and not isinstance(value, bool)


def named_sizes(patterns: dict, fresh) -> dict:
    """`patterns` (parameter -> kind) with each `Size` given a name by `fresh` (a hint -> a free name), after the
    parameter and axis where it first occurs: ``n_x``, ``d_x``, ``d2_x``."""
    names: dict = {}
    out = {}
    for param, kind in patterns.items():
        if type(kind) is tuple:
            entries = []
            for axis, n in enumerate(kind):
                if isinstance(n, Size):
                    if n not in names:
                        hint = AXIS_NAMES[axis] if axis < len(AXIS_NAMES) else f"d{axis}"
                        names[n] = Size(n.index, fresh(f"{hint}_{param}"))
                    n = names[n]
                entries.append(n)
            kind = tuple(entries)
        out[param] = kind
    return out


def size_bindings(patterns: dict, used: set) -> list:
    """The statements binding the sizes named in `used` at the start of a function whose parameters have
    `patterns` (named by `named_sizes`): ``n_x, d_x = x.shape`` where every axis of x is read, else
    ``d_x = x.shape[1]``."""
    statements, bound = [], set()
    for param, kind in patterns.items():
        if type(kind) is not tuple:
            continue
        wanted = []
        for axis, n in enumerate(kind):
            if isinstance(n, Size) and n.name in used and n.name not in bound:
                wanted.append((axis, n.name))
                bound.add(n.name)
        if not wanted:
            continue
        shape = ast.Attribute(ast.Name(param, ast.Load()), "shape", ast.Load())
        if len(wanted) == len(kind):
            target = ast.Tuple([ast.Name(n, ast.Store()) for _, n in wanted], ast.Store()) \
                if len(wanted) > 1 else None
            if target is not None:
                statements.append(ast.Assign([target], shape))
                continue
        for axis, n in wanted:
            statements.append(ast.Assign([ast.Name(n, ast.Store())],
                                         ast.Subscript(shape, ast.Constant(axis), ast.Load())))
    return statements


def shape_expression(shape: tuple) -> ast.expr:
    """`shape` as an expression: ints as literals, each `Size` as its name."""
    return ast.Tuple([ast.Name(n.name, ast.Load()) if isinstance(n, Size) else ast.Constant(n) for n in shape],
                     ast.Load())


def printed(shape):
    """`shape` with each `Size` as its name (a str), comparable with a shape read back from generated code."""
    if shape is None:
        return None
    return tuple(n.name if isinstance(n, Size) else n for n in shape)


def example(shape: tuple) -> tuple:
    """A concrete shape standing for `shape`: each `Size` a value of its own (never 1, distinct per class), so that
    NumPy broadcasts arrays of these shapes as it does arrays of the real ones (or refuses)."""
    return tuple(n if isinstance(n, int) else 11 + n.index for n in shape)


def row_size_bound(shape: tuple) -> int:
    """The number of elements of an array of `shape`, counting a `Size` as `ROW_SIZE_LIMIT`."""
    bound = 1
    for n in shape:
        bound *= n if isinstance(n, int) else ROW_SIZE_LIMIT
    return bound


__all__ = ["ROW_SIZE_LIMIT", "Size", "shape_patterns", "is_symbolic", "is_size", "named_sizes", "size_bindings",
           "shape_expression", "printed", "example", "row_size_bound"]
