"""Part of stage 2: what the result of a call may share memory with, and which names may be read-only views.

One table, `view_of`, says what a call's result may be a view of; both the names of the user's code
(`aliasing`) and the lowered form (`analysis.inplace`) consult it:

    >>> import numpy as np
    >>> view_of(np.reshape), view_of(np.add), view_of(np.add, {"out"}), view_of(sorted)
    ('first', None, 'out', 'any')

`ReadOnlyViews` follows the names that may be views NumPy refuses to write into (and their views):

    >>> views = ReadOnlyViews(resolve=lambda node: None)
    >>> views.note("d", maker="np.diagonal")
    >>> views.maker(gast.parse("d[0]").body[0].value), views.maker(gast.parse("e").body[0].value)
    ('np.diagonal', None)
"""
from __future__ import annotations

import operator
import types

import gast
import numpy as np

from .. import runtime
from ..ir import primitives
from ..markers import stop_gradient
from ..rules import is_nondifferentiable, rule_for

VIEW_METHODS = {"reshape", "transpose", "ravel", "squeeze", "swapaxes", "view", "T", "real", "imag", "diagonal"}
NEW_VALUE_ATTRIBUTES = {"shape", "ndim", "size", "dtype"}     # attributes of a local value that are new values


def _numpy(*names) -> set:
    return {getattr(np, n) for n in names if hasattr(np, n)}


# What the result of a call may share memory with: the one table that both the names of the user's
# code (`Aliasing`) and the lowered form (`inplace`) consult, through `view_of`. A function in none of
# these sets, with no derivative rule, not declared nondifferentiable and no ufunc, may return an
# argument or a view of one ("any"). s2sgrad's own runtime functions count as making new objects: the
# generated code that calls them (read back for forward mode) writes in place only into objects nothing
# else reads.
VIEW_OF_FIRST = _numpy(
    "reshape", "transpose", "matrix_transpose", "permute_dims", "ravel", "squeeze", "expand_dims",
    "swapaxes", "moveaxis", "rollaxis", "broadcast_to", "diagonal", "diag", "flip", "fliplr", "flipud",
    "rot90", "real", "imag", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "asmatrix",
    "require", "split", "array_split", "hsplit", "vsplit", "dsplit", "unstack", "trim_zeros",
    "real_if_close") | {
    np.lib.stride_tricks.as_strided, np.lib.stride_tricks.sliding_window_view, operator.getitem,
    primitives.seq_getitem, primitives.setitem, primitives.list_append, iter, next, reversed,
    primitives.attribute}                                    # (an object's field is part of it)
VIEW_OF_ANY = _numpy("atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays", "einsum") | {
    list, tuple, dict, zip, enumerate, sorted, min, max, map, filter, primitives.make_tuple,
    primitives.make_list, runtime.with_field, runtime.keyed_extremum, runtime.sorted_by_keys, runtime.first_item,
    runtime.make_dict, runtime.dict_get, runtime.dict_values, runtime.dict_items,
    runtime.dict_without, runtime.unpack_starred, runtime.unpack_filled, runtime.bind_call,
    runtime.read_after_loop}     # (dicts, unpacking and binding hold their arguments' objects)
READ_ONLY_VIEWS = _numpy("diagonal", "broadcast_to") | {np.lib.stride_tricks.sliding_window_view}
VIEW_WITH_COPY_KEYWORD = _numpy("array", "meshgrid")     # copy=False (or None): may be views of the arguments


def view_of(fn, keywords=()) -> str | None:
    """What the result of ``fn(..., **keywords)`` may be a view of (or hold views of): "first" (its first
    argument), "any" (any argument), "out" (its `out` argument), or None (it is a new object)."""
    if "out" in keywords:
        return "out"
    if fn in VIEW_OF_FIRST or fn is stop_gradient:
        return "first"
    if fn in VIEW_OF_ANY:
        return "any"
    if fn in VIEW_WITH_COPY_KEYWORD:
        return "any" if "copy" in keywords else None
    if isinstance(fn, np.ufunc) or getattr(fn, "__module__", None) == "math" or runtime.is_runtime_function(fn) \
            or rule_for(fn) is not None or is_nondifferentiable(fn):
        return None
    return "any"


class ReadOnlyViews:
    """The user's names that may be read-only views (``np.broadcast_to(x, s)``, ``np.diagonal(B)``, a view
    of one), and the containers that may hold one, each with the function that made the view.

    `resolve(node)` gives the object an expression names in the user's namespace, or None.
    """

    def __init__(self, resolve):
        self.resolve = resolve
        self.names: dict[str, str] = {}           # user name -> the function that made it a read-only view
        self.containers: dict[str, str] = {}      # name of a container that may hold one -> that function

    def maker(self, node) -> str | None:
        """If `node` certainly evaluates to a read-only view (``np.broadcast_to(x, s)``, ``np.diagonal(B)``,
        a view of one): the function that made it, else None."""
        if isinstance(node, gast.Name):
            return self.names.get(node.id)
        if isinstance(node, gast.Subscript):
            return self.maker(node.value) or self.item_maker(node.value)
        if isinstance(node, gast.Attribute) and node.attr in VIEW_METHODS:
            return self.maker(node.value)
        if isinstance(node, gast.Call):
            func = node.func
            if isinstance(func, gast.Attribute) and self.resolve(func.value) is None:
                if func.attr == "diagonal":
                    return "diagonal"
                return self.maker(func.value) if func.attr in VIEW_METHODS else None
            fn = self.resolve(func)
            if fn in READ_ONLY_VIEWS:
                return f"np.{fn.__name__}"
            if node.args and view_of(fn, {k.arg for k in node.keywords}) == "first" \
                    and fn not in (primitives.setitem, primitives.list_append):
                return self.maker(node.args[0])
        return None

    def item_maker(self, node) -> str | None:
        """If the container `node` evaluates to may hold a read-only view: the function that made it."""
        if isinstance(node, gast.Name):
            return self.containers.get(node.id)
        if isinstance(node, (gast.List, gast.Tuple)):
            for element in node.elts:
                maker = self.maker(element) or self.item_maker(element)
                if maker is not None:
                    return maker
        if isinstance(node, gast.Subscript):
            return self.item_maker(node.value)
        return None

    def of_name(self, name: str) -> str | None:
        """The function that made `name` a read-only view, if it may be one."""
        return self.names.get(name)

    def note(self, name: str, maker: str | None = None, item_maker: str | None = None) -> None:
        """`name` may be a read-only view made by `maker`, or a container holding one made by `item_maker`."""
        if maker is not None:
            self.names[name] = maker
        if item_maker is not None:
            self.containers[name] = item_maker

    def forget(self, name: str) -> None:
        """`name` now refers to a new object."""
        self.names.pop(name, None)
        self.containers.pop(name, None)

    def state(self):
        return dict(self.names), dict(self.containers)

    def restore(self, state) -> None:
        self.names, self.containers = dict(state[0]), dict(state[1])

    def merge(self, first, second) -> None:
        """After a branch: a read-only view, or a container holding one, if so in either branch."""
        self.names, self.containers = {**second[0], **first[0]}, {**second[1], **first[1]}


def viewed_name(node) -> str | None:
    """The local `node` names, directly or through a view (``x``, ``x[1:]``, ``x.T``, ``x.reshape(...)``)."""
    while isinstance(node, gast.Subscript) or (
            isinstance(node, gast.Attribute) and node.attr in VIEW_METHODS) or (
            isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr in VIEW_METHODS):
        node = node.value if not isinstance(node, gast.Call) else node.func.value
    return node.id if isinstance(node, gast.Name) else None


def is_mutable(value) -> bool:
    """Can a change in place through another name change `value` (an array, a list, a dict, an object)?"""
    return not (value is None or isinstance(value, (
        bool, int, float, complex, str, bytes, frozenset, range, np.generic, np.ufunc, type, types.ModuleType,
        types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.MethodWrapperType)))
