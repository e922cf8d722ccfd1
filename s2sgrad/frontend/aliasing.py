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

Names known to hold scalars are exempt: ``+=`` on a number rebinds it (`kinds`). Which calls may
return a view of an argument is one table, `views.view_of`, also used for the lowered form by `inplace`.
"""
from __future__ import annotations

import ast
import dataclasses

import gast

from .. import runtime
from ..runtime.records import is_record_class
from .kinds import Kinds
from .views import NEW_VALUE_ATTRIBUTES, VIEW_METHODS, ReadOnlyViews, is_mutable, view_of


class Aliasing:
    """Alias groups and stale names of the function being lowered, with its `kinds` (the names known to
    hold scalars or vectors) and its read-only `views`, which branches and loops save and merge with them.

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
        self.returned: set = set()                # keys of the objects the function may return
        self.kinds = Kinds(scalars, vectors, resolve)   # the names known to hold scalars, or vectors
        self.views = ReadOnlyViews(resolve)       # the names that may be read-only views
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
        self.views.forget(name)
        self.groups[name] = key
        self.kinds.forget(name)

    def parameter(self, name: str) -> None:
        """`name` is a parameter: an object of its own, of the kind the caller said it is."""
        scalar, vector = self.kinds.holds_scalar(name), self.kinds.holds_vector(name)
        self.bind(name, name)
        self.kinds.note(name, scalar, vector)

    def new_version(self, name: str, keep_vector: bool = True) -> None:
        """`name` is bound to a new version of its object (written into, appended to): still that object,
        no longer stale nor a read-only view; still a vector if it was (with `keep_vector`)."""
        self.poisoned.pop(name, None)
        self.views.forget(name)
        self.groups[name] = self.groups.get(name)
        self.kinds.forget(name, vector=not keep_vector)

    def reach(self, node) -> tuple[set, set]:
        """(keys of the objects `node` may evaluate to, a view of one included; keys of those it may hold,
        if it is a container made here), before an assignment rebinds anything: ``x = x`` keeps x's object.
        Both empty for a new object that holds nothing known, or a number."""
        if self.kinds.is_scalar(node):
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
            if key is None and node.attr not in NEW_VALUE_ATTRIBUTES:   # a field of a local object: part of it,
                return self.elements((self.reach(node.value)[0], set()))   # or one it holds if made here
            return ({key} if key is not None else set()), set()
        if isinstance(node, gast.Subscript):           # an element of a container, or a view of an array
            return self.elements(self.reach(node.value))
        if isinstance(node, (gast.List, gast.Tuple, gast.Set)):
            return set(), self._all_of(node.elts, as_items=True)
        if isinstance(node, gast.Dict):
            return set(), self._all_of(node.values, as_items=True)
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
        if not keys | held and not self.kinds.is_scalar(node) and not isinstance(node, gast.Constant):
            self.fresh += 1
            keys = {("item", self.fresh)}
        return keys, held

    def _all_of(self, nodes, as_items: bool = False) -> set:
        """Every object the `nodes` may evaluate to or hold (each put into a container, with `as_items`)."""
        found = set()
        for n in nodes:
            if n is not None:
                keys, held = (self.item if as_items else self.reach)(n.value if isinstance(n, gast.Starred) else n)
                found |= keys | held
        return found

    def _reach_call(self, node) -> tuple[set, set]:
        func = node.func
        if isinstance(func, gast.Attribute) and self.resolve(func.value) is None:    # a method of a local
            if func.attr in VIEW_METHODS:
                return self.reach(func.value)[0], set()
            if func.attr == "astype" and any(k.arg == "copy" for k in node.keywords):
                return self.reach(func.value)[0], set()
            if func.attr == "pop":                      # an item the list held
                return self.elements(self.reach(func.value))
            return set(), set()                         # the other methods lowering knows make new values
        made = self.constructed(node)
        if made is not None:                            # a new record, holding the objects of its fields
            return set(), made
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

    def constructed(self, node) -> set | None:
        """If the call `node` makes a record (a dataclass, a named tuple, a class with a Python ``__init__``,
        ``dataclasses.replace``): the objects it may hold, its arguments' (a new object, not one of them:
        its arguments are not one object because one record holds both); else None."""
        cls = self.resolve(node.func)
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if cls is dataclasses.replace and node.args:    # a copy: the fields of the record, and the changes
            base = node.args[0]
            kept = self.contents(base) or self.reach(base)[0]
            return kept | self._all_of(arguments[1:], as_items=True)
        named_tuple = isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")
        if not isinstance(cls, type) or not (is_record_class(cls) or named_tuple):
            return None
        return self._all_of(arguments, as_items=True)

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

    def holds_known_objects(self, name: str) -> bool:
        """Is `name` a container known to hold objects (a list made here)?"""
        return bool(self.held.get(self.root(name)))

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
        """Before a loop: a loop variable the body makes another name for (``y = x``, ``y, k = x, 1.0``,
        ``y = x[1:]``), or that another name is made for, may be that object on a later trip, so they share
        from the start."""
        for node in gast.walk(loop):
            if not isinstance(node, gast.Assign):
                continue
            for target, (keys, held) in _bound_objects(self, node):
                sources = {n for n, k in self.groups.items() if self.find(k) in {self.find(j) for j in keys}}
                if keys and (target in carried or sources & set(carried) - self.kinds.scalars):
                    for key in keys:
                        self.join_group(target, key)
                if held and target in carried and self.root(target) is not None:
                    self.held.setdefault(self.root(target), set()).update(held)

    def mutated(self, name: str, where):
        """`name`'s object is changed in place: the other names for it, and the containers that may hold
        it, must not be read again. Returns the module-level name the object may be, else None."""
        if self.kinds.holds_scalar(name) or self.root(name) is None:
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
            if self.find(g) in holders and other != spare \
                    and not self.kinds.holds_scalar(other):      # a number never changes
                self.poisoned[other] = stale
        return None

    def stale(self, name: str):
        """(the name changed or the call, where, the callee's name or None) if `name` may have been changed
        in place through another name or by a call."""
        return self.poisoned.get(name)

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

    # ---------------------------------------------------------------- branches and loops

    def state(self):
        return dict(self.groups), dict(self.poisoned), self.kinds.state(), self.views.state()

    def restore(self, state) -> None:
        groups, poisoned, kinds, views = state
        self.groups, self.poisoned = dict(groups), dict(poisoned)
        self.kinds.restore(kinds)
        self.views.restore(views)

    def merge(self, first, second) -> None:
        """After a branch: names may share an object if they may in either branch (their groups
        become one), are stale or read-only views if so in either, and are scalars only if scalars in both."""
        groups_a, poisoned_a, kinds_a, views_a = first
        groups_b, poisoned_b, kinds_b, views_b = second
        self.views.merge(views_a, views_b)
        groups = dict(groups_a)
        for name, group in groups_b.items():
            if name not in groups:
                groups[name] = group
            else:
                self.union(group, groups[name])
        self.groups = groups
        self.poisoned = {**poisoned_b, **poisoned_a}
        self.kinds.merge(kinds_a, kinds_b)

    def objects_of(self, names) -> tuple[dict, dict]:
        """What `names` refer to: their group keys, and the functions that made the read-only views among
        them (to keep across binding them to new versions, see `keep_objects`)."""
        makers = {n: self.views.of_name(n) for n in names}
        return {n: self.groups.get(n) for n in names}, {n: m for n, m in makers.items() if m is not None}

    def keep_objects(self, objects: tuple[dict, dict], scalars: set, vectors: set, also=None) -> None:
        """Loop variables just bound to new versions are still the objects `objects` (from `objects_of`) and,
        with `also` (the objects at the end of a trip), may be those too; `scalars` and `vectors` of them
        hold scalars and one-dimensional arrays."""
        groups, makers = objects
        self.groups.update(groups)
        for name, maker in makers.items():
            self.views.note(name, maker)
        for name, key in (also[0] if also is not None else {}).items():
            self.join_group(name, key)
        self.kinds.add(scalars, vectors)

    def stale_names(self) -> set:
        return set(self.poisoned)

    def note_returned(self, node) -> None:
        """The function may return the objects `node` evaluates to (before the return binds anything)."""
        keys, held = self.reach(node)
        self.returned |= keys | held | self.contents(node)     # a container or record made here: what it holds


def _bound_objects(aliasing: Aliasing, node: gast.Assign):
    """(name, the objects it may be bound to) for each name the assignment `node` binds to a value that
    is not a number: ``y = v``, ``a, b = u, v`` element by element, ``a, b = pair`` to its elements."""
    value = node.value
    for target in node.targets:
        if isinstance(target, gast.Name):
            if not aliasing.kinds.is_scalar(value):
                yield target.id, aliasing.reach(value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            pairwise = isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts) \
                and not any(isinstance(e, gast.Starred) for e in [*value.elts, *target.elts])
            for k, element in enumerate(target.elts):
                element = element.value if isinstance(element, gast.Starred) else element
                if not isinstance(element, gast.Name):
                    continue
                if pairwise:
                    if not aliasing.kinds.is_scalar(value.elts[k]):
                        yield element.id, aliasing.reach(value.elts[k])
                else:
                    yield element.id, aliasing.elements(aliasing.reach(value))


def read_on_entry(loop, name: str):
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


def _callee(node) -> str:
    return ast.unparse(gast.gast_to_ast(node.func))


