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
# a NumPy call costs more than its arithmetic, above it the rows would add much to the stacks' memory. For a
# `Size`, the choice is made by its value at the call that generates the code (`Size.value`): the code is right
# for every size either way.
ROW_SIZE_LIMIT = 256

AXIS_NAMES = ("n", "d")          # the first two axes' size names: n_x, d_x; then d2_x, d3_x, ...


@dataclass(frozen=True)
class Size:
    """The size of every axis in one class of equal sizes (never 1). Not part of its identity: `name`, what
    generated code calls it, and `value`, its value at the call that generates the code (for choices that do not
    change results: which stacks are popped as rows)."""

    index: int
    name: str | None = field(default=None, compare=False)
    value: int | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        return f"Size({self.index})" if self.name is None else self.name


@dataclass(frozen=True)
class SizeSum:
    """A sum of `Size`s (each as often as it is added, by index) and an int: the length of a concatenation along
    symbolic axes. Unlike a `Size`, it may be 1."""

    sizes: tuple
    constant: int = 0

    def __repr__(self) -> str:
        return " + ".join([*map(repr, self.sizes), *([str(self.constant)] if self.constant else [])])


def size_sum(lengths):
    """The sum of `lengths` (ints, `Size`s, `SizeSum`s): an int, a `Size` or a `SizeSum`.

    >>> size_sum([Size(1), 2, Size(0)])
    Size(0) + Size(1) + 2
    """
    sizes, constant = [], 0
    for n in lengths:
        if isinstance(n, SizeSum):
            sizes += n.sizes
            constant += n.constant
        elif isinstance(n, Size):
            sizes.append(n)
        else:
            constant += n
    if not sizes:
        return constant
    if len(sizes) == 1 and constant == 0:
        return sizes[0]
    return SizeSum(tuple(sorted(sizes, key=lambda size: size.index)), constant)


_INTERNED: dict = {}


def _size(index: int) -> Size:
    size = _INTERNED.get(index)
    if size is None:
        size = _INTERNED[index] = Size(index)
    return size


def shape_patterns(shapes, with_values: bool = False) -> tuple:
    """Each shape of `shapes` (a tuple of ints, or anything else, kept as it is) as its pattern: 1s kept, every
    other size replaced by the `Size` of its class (numbered by first occurrence); `with_values`: each `Size`
    knows its value (to generate code; equal to the one without)."""
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
                    size = classes[n] = Size(len(classes), value=n) if with_values else _size(len(classes))
                pattern.append(size)
            shape = tuple(pattern)
        out.append(shape)
    return tuple(out)


def is_symbolic(shape) -> bool:
    """Does `shape` (a tuple) have a `Size` or `SizeSum` among its entries?"""
    return any(isinstance(n, (Size, SizeSum)) for n in shape)


def is_size(value) -> bool:
    """An int (not a bool), a `Size` or a `SizeSum`: what an axis of a shape can be."""
    return isinstance(value, (Size, SizeSum)) or isinstance(value, int) and not isinstance(value, bool)


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
                        names[n] = Size(n.index, fresh(f"{hint}_{param}"), n.value)
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


def size_expression(n) -> ast.expr:
    """An axis's size as an expression: an int as a literal, a `Size` as its name, a `SizeSum` as a sum."""
    if isinstance(n, Size):
        return ast.Name(n.name, ast.Load())
    if isinstance(n, SizeSum):
        terms = [ast.Name(size.name, ast.Load()) for size in n.sizes] + ([ast.Constant(n.constant)] if n.constant
                                                                         else [])
        expr = terms[0]
        for term in terms[1:]:
            expr = ast.BinOp(expr, ast.Add(), term)
        return expr
    return ast.Constant(n)


def shape_expression(shape: tuple) -> ast.expr:
    """`shape` as an expression: ints as literals, each `Size` as its name."""
    return ast.Tuple([size_expression(n) for n in shape], ast.Load())


def printed(shape):
    """`shape` with each `Size` as its name (a str; a `SizeSum` as its sum, which is no name), comparable with a
    shape read back from generated code."""
    if shape is None:
        return None
    return tuple(n if type(n) is int else ast.unparse(size_expression(n)) for n in shape)


def example(shape: tuple) -> tuple:
    """A concrete shape standing for `shape`: each `Size` a value of its own (never 1, distinct per class), so that
    NumPy broadcasts arrays of these shapes as it does arrays of the real ones (or refuses)."""
    return tuple(n if type(n) is int else _example(n) for n in shape)


def _example(n) -> int:
    if isinstance(n, SizeSum):
        return sum(map(_example, n.sizes)) + n.constant
    return 101 + n.index


def row_size_bound(shape: tuple) -> float:
    """The number of elements of an array of `shape` at the call that generates the code (infinite where a
    `Size`'s value is not known)."""
    bound = 1.0
    for n in shape:
        bound *= n if type(n) is int else _value(n)
    return bound


def _value(n) -> float:
    if isinstance(n, SizeSum):
        return sum(map(_value, n.sizes)) + n.constant
    return n.value if n.value is not None else float("inf")


__all__ = ["ROW_SIZE_LIMIT", "Size", "SizeSum", "size_sum", "size_expression", "shape_patterns", "is_symbolic",
           "is_size", "named_sizes", "size_bindings", "shape_expression", "printed", "example", "row_size_bound"]
