"""Part of stage 2: which of the user's names may refer to one object, and which are stale.

Lowering gives every assignment a new single-assignment name, which is right
as long as no object changes in place. Python's ``y = x; y += 1`` changes the
array `x` refers to as well, and ``v = y[0:2]; y[0] = 5`` changes `v`.
s2sgrad writes such changes functionally (a new version of `y`), so a later
read of `x` or `v` would see the old value where Python sees the new one.
Rather than compute something else silently, lowering refuses to read a name
after an in-place change made through another name for the same object:

    >>> aliasing = Aliasing(scalars=set(), resolve=lambda node: None)
    >>> aliasing.bind("x", 1); aliasing.bind("y", 2)
    >>> aliasing.share("y", aliasing.reach(gast.Name("x", ...)))         # y = x
    >>> aliasing.mutated("y", where); aliasing.stale("x")               # doctest: +SKIP
    ('y', where, None)

Names known to hold scalars are exempt: ``+=`` on a number rebinds it. Which calls may return a
view of an argument is one table, `view_of`, also used for the lowered form by `inplace`.
"""
from __future__ import annotations

import ast
import operator
import types

import gast
import numpy as np

from .. import runtime
from ..ir import primitives
from ..markers import stop_gradient
from ..rules import is_nondifferentiable, rule_for

VIEW_METHODS = {"reshape", "transpose", "ravel", "squeeze", "swapaxes", "view", "T", "real", "imag", "diagonal"}
WHOLE_REDUCTIONS = {np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin}   # of a whole array: a number


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
    primitives.seq_getitem, primitives.setitem, primitives.list_append, iter, next, reversed}
VIEW_OF_ANY = _numpy("atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays", "einsum") | {
    list, tuple, dict, zip, enumerate, sorted, min, max, map, filter, primitives.make_tuple,
    primitives.make_list}
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


class Aliasing:
    """Alias groups, stale names and scalar names of the function being lowered.

    `resolve(node)` gives the object an expression names in the user's namespace, or None;
    `effects(call)`, for a call of a user function, the expressions of the call whose objects it may change
    in place, those its result may be or hold (each a list) and the name of a module-level object it may
    return (or None); else None.

    An object is a group key; keys that may be one object are joined (`union`, never undone: after a
    branch or a loop, what may be one object in either stays so). A container made in the function (a
    list or tuple literal, a list appended to) records the objects it may hold (`held`): a change of one
    of them changes what the container holds, a change of the container (``parts.append(v)``) changes
    none of them. Mutable module-level objects the code names get keys of their own, so a change
    through a local name for one is seen (and refused: s2sgrad does not change global objects).
    """

    def __init__(self, scalars, resolve, vectors=(), effects=None):
        self.groups: dict[str, object] = {}       # user name -> the object it may share (a group key)
        self.parent: dict = {}                    # group key -> a key it may be one object with
        self.held: dict = {}                      # root key -> keys of the objects the container may hold
        self.global_of: dict = {}                 # root key -> name of a module-level object it may be
        self.changed: set = set()                 # keys of the objects changed in place
        self.changed_through: set = set()         # (key, the name it was changed through, or None for a call)
        self.fresh = 0                            # keys made for new objects put into containers
        self.poisoned: dict[str, tuple] = {}      # user name -> (name changed, its location, call or None)
        self.read_only: dict[str, str] = {}       # user name -> the function that made it a read-only view
        self.read_only_items: dict[str, str] = {}  # name of a container that may hold one -> that function
        self.scalars: set[str] = set(scalars)     # user names known to hold scalars
        self.vectors: set[str] = set(vectors)     # user names known to hold one-dimensional arrays
        self.resolve = resolve
        self.effects = effects or (lambda call: None)

    # ---------------------------------------------------------------- objects

    def find(self, key):
        while self.parent.get(key, key) != key:
            key = self.parent[key]
        return key

    def union(self, a, b) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        self.parent[ra] = rb
        if ra in self.held:
            self.held.setdefault(rb, set()).update(self.held.pop(ra))
        if ra in self.global_of:
            self.global_of.setdefault(rb, self.global_of.pop(ra))

    def root(self, name: str):
        key = self.groups.get(name)
        return None if key is None else self.find(key)

    def bind(self, name: str, key) -> None:
        """`name` now refers to a new object."""
        self.poisoned.pop(name, None)
        self.read_only.pop(name, None)
        self.read_only_items.pop(name, None)
        self.groups[name] = key
        self.scalars.discard(name)
        self.vectors.discard(name)

    def reach(self, node) -> tuple[set, set]:
        """(keys of the objects `node` may evaluate to, a view of one included; keys of those it may hold,
        if it is a container made here), before an assignment rebinds anything: ``x = x`` keeps x's object.
        Both empty for a new object that holds nothing known, or a number."""
        if self.is_scalar(node):
            return set(), set()
        if isinstance(node, gast.Name):
            key = self.groups.get(node.id)
            if key is None:
                key = self.global_key(node)
            return ({key} if key is not None else set()), set()
        if isinstance(node, gast.Attribute):
            if node.attr in VIEW_METHODS:
                return self.reach(node.value)[0], set()
            key = self.global_key(node)
            return ({key} if key is not None else set()), set()
        if isinstance(node, gast.Subscript):           # an element of a container, or a view of an array
            return self.elements(self.reach(node.value))
        if isinstance(node, (gast.List, gast.Tuple, gast.Set)):
            return set(), self._items(node.elts)
        if isinstance(node, gast.Dict):
            return set(), self._items(node.values)
        if isinstance(node, gast.IfExp):
            (keys_a, held_a), (keys_b, held_b) = self.reach(node.body), self.reach(node.orelse)
            return keys_a | keys_b, held_a | held_b
        if isinstance(node, gast.BinOp):               # a new object; a sum of lists holds their items
            left, right = self.contents(node.left), self.contents(node.right)
            if not left | right:
                return set(), set()                     # (arithmetic, or lists not made here: not known)
            unknown = [n for n, c in ((node.left, left), (node.right, right)) if not c]
            return set(), left | right | self._all_of(unknown)   # a list not made here: its items are its own
        if isinstance(node, gast.Call):
            return self._reach_call(node)
        return set(), set()

    def contents(self, node) -> set:
        """The objects a container made here that `node` evaluates to may hold."""
        keys, held = self.reach(node)
        for key in keys:
            held |= self.held.get(self.find(key), set())
        return held

    def item(self, node) -> tuple[set, set]:
        """The objects of `node` as an item put into a container: a new object gets a key of its own, so
        that a change of it through the container is seen by the containers holding it."""
        keys, held = self.reach(node)
        if not keys | held and not self.is_scalar(node) and not isinstance(node, gast.Constant):
            self.fresh += 1
            keys = {("item", self.fresh)}
        return keys, held

    def _items(self, nodes) -> set:
        found = set()
        for n in nodes:
            if n is not None:
                keys, held = self.item(n.value if isinstance(n, gast.Starred) else n)
                found |= keys | held
        return found

    def _all_of(self, nodes) -> set:
        found = set()
        for n in nodes:
            if n is not None:
                keys, held = self.reach(n.value if isinstance(n, gast.Starred) else n)
                found |= keys | held
        return found

    def _reach_call(self, node) -> tuple[set, set]:
        func = node.func
        if isinstance(func, gast.Attribute) and self.resolve(func.value) is None:    # a method of a local
            if func.attr in VIEW_METHODS:
                return self.reach(func.value)[0], set()
            if func.attr == "astype" and any(k.arg == "copy" for k in node.keywords):
                return self.reach(func.value)[0], set()
            return set(), set()                         # the other methods lowering knows make new values
        effects = self.effects(node)
        if effects is not None:                         # a user function
            found, shared = self._all_of(effects.result), effects.result_global
            if shared is not None:                      # a module-level object of the callee's
                key = ("global", f"{_callee(node)}:{shared}")
                self.global_of.setdefault(self.find(key), shared)
                found.add(key)
            return found, set()
        kind = view_of(self.resolve(func), {k.arg for k in node.keywords})
        if kind == "first":
            return (self._all_of(node.args[:1]), set())
        if kind == "out":
            return self._all_of([k.value for k in node.keywords if k.arg == "out"]), set()
        if kind == "any":
            found = self._all_of([*node.args, *(k.value for k in node.keywords)])
            if isinstance(func, gast.Attribute):        # a method of a module-level object may return it
                key = self.global_key(func.value)
                if key is not None:
                    found.add(key)
            return found, set()
        return set(), set()

    def global_key(self, node):
        """The key of the mutable module-level object `node` names (through attributes too), or None."""
        value = self.resolve(node)
        root = node
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name) or value is None or not is_mutable(value):
            return None
        key = ("global", root.id)
        self.groups.setdefault(root.id, key)
        self.global_of.setdefault(self.find(key), root.id)
        return key

    def read_only_maker(self, node) -> str | None:
        """If `node` certainly evaluates to a read-only view (``np.broadcast_to(x, s)``, ``np.diagonal(B)``,
        a view of one): the function that made it, else None."""
        if isinstance(node, gast.Name):
            return self.read_only.get(node.id)
        if isinstance(node, gast.Subscript):
            return self.read_only_maker(node.value) or self.read_only_item(node.value)
        if isinstance(node, gast.Attribute) and node.attr in VIEW_METHODS:
            return self.read_only_maker(node.value)
        if isinstance(node, gast.Call):
            func = node.func
            if isinstance(func, gast.Attribute) and self.resolve(func.value) is None:
                if func.attr == "diagonal":
                    return "diagonal"
                return self.read_only_maker(func.value) if func.attr in VIEW_METHODS else None
            fn = self.resolve(func)
            if fn in READ_ONLY_VIEWS:
                return f"np.{fn.__name__}"
            if node.args and view_of(fn, {k.arg for k in node.keywords}) == "first" \
                    and fn not in (primitives.setitem, primitives.list_append):
                return self.read_only_maker(node.args[0])
        return None

    def read_only_item(self, node) -> str | None:
        """If the container `node` evaluates to may hold a read-only view: the function that made it."""
        if isinstance(node, gast.Name):
            return self.read_only_items.get(node.id)
        if isinstance(node, (gast.List, gast.Tuple)):
            for element in node.elts:
                maker = self.read_only_maker(element) or self.read_only_item(element)
                if maker is not None:
                    return maker
        if isinstance(node, gast.Subscript):
            return self.read_only_item(node.value)
        return None

    def share(self, name: str, objects) -> None:
        """After ``name = <node>``, `objects` being `reach(node)`: name is one of those objects (they
        become one), or the container holding those."""
        keys, held = objects
        keys = sorted(keys, key=repr)
        if keys:
            self.groups[name] = keys[0]
            for key in keys[1:]:
                self.union(keys[0], key)
        if held:
            self.held.setdefault(self.root(name), set()).update(held)

    def elements(self, objects) -> tuple[set, set]:
        """The objects the elements of a value whose objects are `objects` may be (``a, b = pair``)."""
        keys, held = objects
        found = set(held)
        for key in keys:
            found |= self.held.get(self.find(key)) or {key}
        return found, set()

    def holds(self, name: str, objects) -> None:
        """`name`'s container now holds `objects` too (``name.append(v)``)."""
        keys, held = objects
        if keys | held and self.root(name) is not None:
            self.held.setdefault(self.root(name), set()).update(keys | held)

    def join_group(self, name: str, group) -> None:
        """`name` may be the object of `group` too: the names of either group may be one object."""
        kept = self.groups.get(name)
        if kept is None or group is None:
            return
        self.union(group, kept)

    def join_loop_aliases(self, loop, carried) -> None:
        """Before a loop: a loop variable the body makes another name for (``y = x``, ``y = x[1:]``), or
        that another name is made for, may be that object on a later trip, so they share from the start."""
        for node in gast.walk(loop):
            if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) \
                    and not self.is_scalar(node.value):
                target = node.targets[0].id
                keys, held = self.reach(node.value)
                sources = {n for n, k in self.groups.items() if self.find(k) in {self.find(j) for j in keys}}
                if keys and (target in carried or sources & set(carried) - self.scalars):
                    for key in keys:
                        self.join_group(target, key)
                if held and target in carried and self.root(target) is not None:
                    self.held.setdefault(self.root(target), set()).update(held)

    def mutated(self, name: str, where):
        """`name`'s object is changed in place: the other names for it, and the containers that may hold
        it, must not be read again. Returns the module-level name the object may be, else None."""
        if name in self.scalars or self.root(name) is None:
            return None
        return self.changed_objects({self.root(name)}, (name, where, None), spare=name)

    def changed_objects(self, keys, stale: tuple, spare=None):
        """The objects of `keys` are changed in place (`stale`: what to tell a later read): every name for
        them (but `spare`) and for a container that may hold them is stale. Returns the module-level name
        one of them may be, else None."""
        roots = {self.find(k) for k in keys}
        self.changed |= roots
        self.changed_through |= {(r, spare) for r in roots}
        for key in roots:
            if key in self.global_of:
                return self.global_of[key]
        holders = set(roots)
        while True:
            more = {r for r, held in self.held.items() if r not in holders
                    and any(self.find(h) in holders for h in held)}
            if not more:
                break
            holders |= more
        for other, g in self.groups.items():
            if self.find(g) in holders and other != spare and other not in self.scalars:   # a number never changes
                self.poisoned[other] = stale
        return None

    def stale(self, name: str):
        """(the name changed or the call, where, the callee's name or None) if `name` may have been changed
        in place through another name or by a call."""
        return self.poisoned.get(name)

    # ---------------------------------------------------------------- scalars

    def is_scalar(self, node) -> bool:
        """Does `node` certainly compute a scalar (so that ``+=`` on it rebinds, never mutates)?"""
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float, complex)) and not isinstance(node.value, bool)
        if isinstance(node, gast.Name):
            return node.id in self.scalars
        if isinstance(node, gast.Subscript):      # an element of a vector
            return isinstance(node.value, gast.Name) and node.value.id in self.vectors \
                and not isinstance(node.slice, (gast.Slice, gast.Tuple)) and self.is_scalar(node.slice) \
                and _is_int_like(node.slice)
        if isinstance(node, gast.BinOp):
            return self.is_scalar(node.left) and self.is_scalar(node.right)
        if isinstance(node, gast.UnaryOp):
            return self.is_scalar(node.operand)
        if isinstance(node, gast.IfExp):
            return self.is_scalar(node.body) and self.is_scalar(node.orelse)
        if isinstance(node, gast.Call):
            callee = self.resolve(node.func)
            if callee is float or getattr(callee, "__module__", None) == "math":
                return True
            if callee in WHOLE_REDUCTIONS and len(node.args) == 1 and not node.keywords:
                return True
            return isinstance(callee, np.ufunc) and not node.keywords and all(self.is_scalar(a) for a in node.args)
        return False

    def loop_variable_kinds(self, loop, carried, assigned) -> tuple[set, set]:
        """The loop variables that hold scalars on every trip, and those that hold one-dimensional arrays:
        so on entry, and assigned only such expressions in the body (assuming the same of the others,
        scalars and vectors together). `assigned`: the names the body assigns."""
        scalars = {n for n in carried if n in self.scalars} | {n for n in assigned if n not in carried}
        vectors = {n for n in carried if n in self.vectors} | {n for n in assigned if n not in carried}
        saved = self.scalars, self.vectors
        while True:
            self.scalars, self.vectors = saved[0] | scalars, saved[1] | vectors
            not_scalars = self._breaking(loop, scalars, lambda value, augmented: self.is_scalar(value), False)
            not_vectors = self._breaking(loop, vectors, lambda value, augmented: self.is_vector(value)
                                         or augmented and self.is_scalar(value), True)
            if not not_scalars and not not_vectors:
                break
            scalars -= not_scalars
            vectors -= not_vectors
        self.scalars, self.vectors = saved
        return scalars & set(carried), vectors & set(carried)

    @staticmethod
    def _breaking(loop, candidates: set, holds, writes_keep: bool) -> set:
        """The candidates some assignment in `loop` gives a value for which `holds` fails (with
        `writes_keep`, ``y[i] = v`` keeps y a candidate)."""
        dropped = set()
        for node in gast.walk(loop):
            if isinstance(node, gast.Assign) and _pairwise(node):      # a, b = x, y
                for target, value in zip(node.targets[0].elts, node.value.elts):
                    if isinstance(target, gast.Name) and target.id in candidates and not holds(value, False):
                        dropped.add(target.id)
            elif isinstance(node, gast.Assign):
                targets = [t.id for t in node.targets if isinstance(t, gast.Name)]
                if any(t in candidates for t in targets) and (len(node.targets) != 1 or not holds(node.value, False)):
                    dropped |= set(targets) & candidates
                for t in node.targets:
                    if isinstance(t, gast.Subscript):         # y[i] = v: y is an array (of its shape still)
                        if not writes_keep:
                            dropped |= {viewed_name(t)} & candidates
                    elif not isinstance(t, gast.Name):
                        dropped |= {n.id for n in gast.walk(t) if isinstance(n, gast.Name)} & candidates
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) \
                    and node.target.id in candidates and not holds(node.value, True):
                dropped.add(node.target.id)
        return dropped

    def is_vector(self, node) -> bool:
        """Does `node` certainly compute a one-dimensional array (arithmetic and ufuncs of vectors and
        numbers, at least one of them a vector)?"""
        if isinstance(node, gast.Name):
            return node.id in self.vectors
        if isinstance(node, gast.BinOp) and not isinstance(node.op, gast.MatMult):
            parts = [node.left, node.right]
        elif isinstance(node, gast.UnaryOp):
            parts = [node.operand]
        elif isinstance(node, gast.Call) and isinstance(self.resolve(node.func), np.ufunc) and not node.keywords:
            parts = node.args
        elif isinstance(node, gast.IfExp):
            parts = [node.body, node.orelse]
        else:
            return False
        return any(self.is_vector(p) for p in parts) and all(self.is_vector(p) or self.is_scalar(p) for p in parts)

    def stale_in_loop(self, loop, names: set):
        """A read, anywhere in `loop`, of a name made stale by its body (stale on the next trip): the
        read node and what made it stale, or None."""
        shape_only = {id(arg) for node in gast.walk(loop) if isinstance(node, gast.Call)
                      and self.resolve(node.func) is runtime.like for arg in node.args}
        names = {n for n in names if not _bound_before_read(loop, n)}
        for node in gast.walk(loop):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in names \
                    and id(node) not in shape_only:
                return node, self.poisoned[node.id]
        return None

    def read_on_entry(self, loop, name: str):
        """If a trip of `loop` may read `name` before binding it: the first such read, else None. (A loop
        starting from an object changed through another name reads it stale.)"""
        if _bound_before_read(loop, name):
            return None
        for stmt in [loop.test, *loop.body]:
            for node in gast.walk(stmt):
                if isinstance(node, gast.Name) and node.id == name and isinstance(node.ctx, gast.Load):
                    return node
                if isinstance(node, gast.AugAssign) and getattr(node.target, "id", None) == name:
                    return node.target                     # x += ... reads x
        return None

    # ---------------------------------------------------------------- branches

    def state(self):
        return dict(self.groups), dict(self.poisoned), set(self.scalars), set(self.vectors), \
            (dict(self.read_only), dict(self.read_only_items))

    def restore(self, state) -> None:
        groups, poisoned, scalars, vectors, (read_only, items) = state
        self.groups, self.poisoned = dict(groups), dict(poisoned)
        self.scalars, self.vectors = set(scalars), set(vectors)
        self.read_only, self.read_only_items = dict(read_only), dict(items)

    def merge(self, first, second) -> None:
        """After a branch: names may share an object if they may in either branch (their groups
        become one), are stale or read-only views if so in either, and are scalars only if scalars in both."""
        groups_a, poisoned_a, scalars_a, vectors_a, (read_only_a, items_a) = first
        groups_b, poisoned_b, scalars_b, vectors_b, (read_only_b, items_b) = second
        self.read_only, self.read_only_items = {**read_only_b, **read_only_a}, {**items_b, **items_a}
        groups = dict(groups_a)
        for name, group in groups_b.items():
            if name not in groups:
                groups[name] = group
            else:
                self.union(group, groups[name])
        self.groups = groups
        self.poisoned = {**poisoned_b, **poisoned_a}
        self.scalars = scalars_a & scalars_b
        self.vectors = vectors_a & vectors_b


def _pairwise(node: gast.Assign) -> bool:
    """Is `node` ``a, b = x, y`` (names assigned element by element)?"""
    target, value = node.targets[0], node.value
    return len(node.targets) == 1 and isinstance(target, (gast.Tuple, gast.List)) \
        and isinstance(value, (gast.Tuple, gast.List)) and len(target.elts) == len(value.elts) \
        and all(isinstance(e, gast.Name) for e in target.elts) \
        and not any(isinstance(e, gast.Starred) for e in value.elts)


def _bound_before_read(loop, name: str) -> bool:
    """Does every trip of `loop` that reads `name` bind it afresh (``name = ...``) first? Then a read sees
    that trip's object, never one an earlier trip changed."""
    if any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(loop.test)):
        return False
    return _first_use(loop.body, name) != "read"


def _first_use(block: list, name: str) -> str | None:
    """"read" if some path through `block` may read `name` before binding it, else "bind" if every path
    binds it, else None."""
    for stmt in block:
        if isinstance(stmt, gast.If):
            if any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(stmt.test)):
                return "read"
            uses = {_first_use(stmt.body, name), _first_use(stmt.orelse, name)}
            if "read" in uses:
                return "read"
            if uses == {"bind"}:
                return "bind"
            continue
        if isinstance(stmt, gast.While):                   # its body may run or not
            if any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(stmt.test)) \
                    or _first_use(stmt.body, name) == "read":
                return "read"
            continue
        if any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load) for n in gast.walk(stmt)) \
                or isinstance(stmt, gast.AugAssign) and getattr(stmt.target, "id", None) == name:
            return "read"
        if isinstance(stmt, gast.Assign) and any(isinstance(t, gast.Name) and t.id == name for t in stmt.targets):
            return "bind"
    return None


def viewed_name(node) -> str | None:
    """The local `node` names, directly or through a view (``x``, ``x[1:]``, ``x.T``, ``x.reshape(...)``)."""
    while isinstance(node, gast.Subscript) or (
            isinstance(node, gast.Attribute) and node.attr in VIEW_METHODS) or (
            isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr in VIEW_METHODS):
        node = node.value if not isinstance(node, gast.Call) else node.func.value
    return node.id if isinstance(node, gast.Name) else None


def _is_int_like(node) -> bool:
    """Could `node` (known to be a number) be an int index? (Not a float literal.)"""
    return not (isinstance(node, gast.Constant) and not isinstance(node.value, int))


def _callee(node) -> str:
    return ast.unparse(gast.gast_to_ast(node.func))


def is_mutable(value) -> bool:
    """Can a change in place through another name change `value` (an array, a list, a dict, an object)?"""
    return not (value is None or isinstance(value, (
        bool, int, float, complex, str, bytes, frozenset, range, np.generic, np.ufunc, type, types.ModuleType,
        types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.MethodWrapperType)))
