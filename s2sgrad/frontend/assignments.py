"""Part of stage 2: lowering assignments: ``a = v``, ``a, b = x, y``, ``y[i] = v``, ``x += v``, ``parts.append(v)``
(and ``parts.pop()``).

Each binds a new single-assignment version of a name; a write by index (or ``+=`` on an array, or
an append) makes a new version of the same object, and the other names for that object stale:

    >>> from s2sgrad.frontend.lower import lowered_source
    >>> def f(x):
    ...     y = x * 2.0
    ...     y[0] = 1.0
    ...     a, b = y, x
    ...     a += b
    ...     return a
    >>> print(lowered_source(f), end="")
    def f(x):
        y = x * 2.0
        y_1 = setitem(y, 0, 1.0)
        a = y_1
        b = x
        a_1 = a + b
        return a_1
"""
from __future__ import annotations

import operator

import gast

from ..ir import primitives
from ..ir.nodes import Const, Op, Var


class Assignments:
    """Lowers the assignments of the function `lowerer` lowers, and keeps its `aliasing` up to date."""

    def __init__(self, lowerer):
        self.lowerer = lowerer
        self.names = lowerer.names
        self.aliasing = lowerer.aliasing
        self.kinds = lowerer.aliasing.kinds
        self.views = lowerer.aliasing.views

    def assign(self, stmt):
        """``a = b = v``, ``a, b = x, y`` (all read before any is written), ``y[i] = v``."""
        lowerer = self.lowerer
        targets = stmt.targets
        if len(targets) == 1 and isinstance(targets[0], gast.Name):
            name = targets[0].id
            scalar = self.kinds.is_scalar(stmt.value)
            vector = self.kinds.is_vector(stmt.value)
            shared = self.aliasing.reach(stmt.value)
            read_only = self.views.maker(stmt.value)
            read_only_item = self.views.item_maker(stmt.value)
            value = lowerer.value(stmt.value)
            lowerer.node = stmt.value
            lowerer.emit(lowerer.define(name), value)
            self.aliasing.share(name, shared)
            self.views.note(name, read_only, read_only_item)
            self.kinds.note(name, scalar=scalar, vector=vector and not scalar)
            return
        if len(targets) == 1 and isinstance(targets[0], (gast.Tuple, gast.List)) \
                and isinstance(stmt.value, (gast.Tuple, gast.List)) \
                and len(targets[0].elts) == len(stmt.value.elts) \
                and not any(isinstance(e, gast.Starred) for e in stmt.value.elts):
            scalars = [self.kinds.is_scalar(e) for e in stmt.value.elts]
            objects = [self.aliasing.reach(e) for e in stmt.value.elts]
            read_only = [self.views.maker(e) or self.views.item_maker(e) for e in stmt.value.elts]
            values = [lowerer.atom(e) for e in stmt.value.elts]   # all read before any is written
            for target, value, scalar, shared, maker in zip(targets[0].elts, values, scalars, objects, read_only):
                self.assign_to(target, value)
                self.share_target(target, shared, maker)
                if isinstance(target, gast.Name) and scalar:
                    self.kinds.note(target.id, scalar=True)
            return
        objects = self.aliasing.item(stmt.value) if any(isinstance(t, gast.Subscript) for t in targets) \
            else self.aliasing.reach(stmt.value)
        read_only = self.views.item_maker(stmt.value)
        value = lowerer.atom(stmt.value)
        for target in targets:
            self.assign_to(target, value)
            self.share_target(target, objects, read_only, unpacked=True)

    def share_target(self, target, objects, read_only=None, unpacked=False) -> None:
        """After assigning a value whose objects are `objects` to `target`: the names it binds are (views
        of) those objects, or of their elements; a container written by index holds the value. `read_only`:
        the function that made a read-only view the value (or, `unpacked`, the container unpacked) may be."""
        if isinstance(target, gast.Name):
            self.aliasing.share(target.id, objects)
            self.views.note(target.id, read_only)
        elif isinstance(target, (gast.Tuple, gast.List)):
            elements = self.aliasing.elements(objects)
            for element in target.elts:
                self.share_target(element, elements, read_only if unpacked else None, unpacked)
        elif isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) \
                and self.aliasing.holds_known_objects(target.value.id):
            self.aliasing.holds(target.value.id, objects)     # lst[i] = v: a list known to hold objects
        elif isinstance(target, gast.Attribute) and isinstance(target.value, gast.Name):
            self.aliasing.holds(target.value.id, objects)     # obj.w = v: the record holds v's object

    def assign_to(self, target, value):
        """Bind the atom `value` to an assignment target (name, tuple, or subscript)."""
        lowerer = self.lowerer
        if isinstance(target, gast.Name):
            lowerer.emit(lowerer.define(target.id), value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            if any(isinstance(e, gast.Starred) for e in target.elts):
                raise lowerer.error("starred assignment is not supported", target, "index the sequence instead")
            parts = []
            for k, _ in enumerate(target.elts):
                part = self.names.fresh(f"{_name_of(target.elts[k])}_value", temporary=True)
                lowerer.emit(part, Op(operator.getitem, [value, Const(k)]))
                parts.append(Var(part))
            for element, part in zip(target.elts, parts):
                self.assign_to(element, part)
        elif isinstance(target, gast.Subscript):
            array = self.array_target(target)
            index = lowerer.expressions.index(target.slice)
            written = Op(primitives.setitem, [Var(lowerer.env[array]), index, value])
            lowerer.written_in_place(array, written, target)
        elif not lowerer.objects.write_attribute(target, value, target):
            raise lowerer.error("assignment to an attribute is not supported", target,
                                "assign to a local name instead")

    def array_target(self, target) -> str:
        """The local array ``y[i] = ...`` writes into."""
        lowerer = self.lowerer
        if not isinstance(target.value, gast.Name) or not isinstance(lowerer.env.get(target.value.id), str):
            raise lowerer.error("only a local array can be written by index", target,
                                "copy the array into a local name first")
        return target.value.id

    def augmented_assign(self, stmt):
        """``x += v``: a new value of a number, or a new version of an array's object; ``y[i] += v``."""
        lowerer = self.lowerer
        fn = primitives.BINARY_OF_AST[type(stmt.op).__name__]
        target = stmt.target
        if isinstance(target, gast.Name):
            current = lowerer.expressions.name_atom(target.id, target)
            scalar = self.kinds.is_scalar(target) and self.kinds.is_scalar(stmt.value)
            operand = lowerer.atom(stmt.value)
            updated = Op(fn, [current, operand])
            vector = self.kinds.is_vector(target) and (self.kinds.is_vector(stmt.value)
                                                       or self.kinds.is_scalar(stmt.value))
            lowerer.changed_in_place(target.id, stmt)
            if scalar:
                lowerer.emit(lowerer.define(target.id), updated)
                self.kinds.note(target.id, scalar=True)
            else:                             # an array changed in place is still the object it shared
                lowerer.emit(lowerer.define_version(target.id, keep_vector=False), updated)
                self.kinds.note(target.id, vector=vector)
        elif isinstance(target, gast.Subscript):
            array = self.array_target(target)
            index = lowerer.expressions.index(target.slice)
            item = lowerer.bind(Op(operator.getitem, [Var(lowerer.env[array]), index]), "item")
            operand = lowerer.atom(stmt.value)
            updated = lowerer.bind(Op(fn, [item, operand]), "item")
            written = Op(primitives.setitem, [Var(lowerer.env[array]), index, updated], augmented=True)
            lowerer.node = target
            lowerer.written_in_place(array, written, target)
        else:
            field = self.aliasing.reach(target)[0]        # obj.w += v changes the field's object, if an array
            if not lowerer.objects.write_attribute(target, lowerer.atom(stmt.value), stmt, fn):
                raise lowerer.error("augmented assignment to an attribute is not supported", target)
            record = target.value.id
            shared = self.aliasing.changed_objects(field, (record, lowerer.parsed.location(stmt), None), spare=record)
            if shared is not None:
                raise lowerer.global_change_error(record, shared, stmt)

    def append(self, call) -> None:
        """``parts.append(v)`` of a local list: a new version of the list, still the object it was, that
        holds the item itself."""
        lowerer = self.lowerer
        if len(call.args) != 1 or call.keywords:
            raise lowerer.error("list.append takes one argument", call,
                                "append one item per call, or extend the list: xs = xs + [a, b]")
        name = call.func.value.id
        objects = self.aliasing.item(call.args[0])
        read_only = self.views.maker(call.args[0]) or self.views.item_maker(call.args[0])
        item = lowerer.atom(call.args[0])
        appended = Op(primitives.list_append, [Var(lowerer.env[name]), item])
        lowerer.changed_in_place(name, call)
        lowerer.emit(lowerer.define_version(name, keep_vector=False), appended)
        self.aliasing.holds(name, objects)
        self.views.note(name, item_maker=read_only)

    def pop(self, call):
        """``xs.pop()`` or ``xs.pop(0)`` of a local list: its last (first) item, which the list held, and a new
        version of the list without it, still the object it was."""
        lowerer = self.lowerer
        name = call.func.value.id
        index = call.args[0].value if call.args and isinstance(call.args[0], gast.Constant) else -1
        if call.keywords or len(call.args) > 1 or call.args and index not in (0, -1) or type(index) is not int:
            raise lowerer.error("only list.pop() and list.pop(0) are supported", call,
                                "index the list and slice it instead (item = xs[i]; xs = xs[:i] + xs[i + 1:])")
        current = Var(lowerer.env[name])
        item = lowerer.bind(Op(primitives.seq_getitem, [current, Const(index)]), "item")
        rest = Op(primitives.seq_getitem, [current, Const(slice(None, -1) if index == -1 else slice(1, None))])
        lowerer.changed_in_place(name, call)
        lowerer.emit(lowerer.define_version(name, keep_vector=False), rest)
        return item


def _name_of(target) -> str:
    return target.id if isinstance(target, gast.Name) else "item"
