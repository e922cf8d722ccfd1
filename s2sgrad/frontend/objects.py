"""Part of stage 2: objects in lowering: the kinds of records (`ObjectKind`, `ItemsKind`), attribute reads,
method calls, callable instances, dataclass constructors and random draws from a generator argument.

A record is an object whose fields are differentiated (`runtime.records`: a dataclass instance, a registered
class's instance, any user class's instance). Generated code is specialized on its class and the kinds of its
fields, so a method's function is known when the code is generated: ``model.forward(x)`` is a call of the user
function ``Model.forward`` with the object first, ``layer(x)`` one of ``Dense.__call__``, and ``p.W`` the
primitive `attribute`, whose adjoint is a record gradient. A record made in the function by a dataclass
constructor is a new record written field by field (`with_field`):

    >>> import dataclasses
    >>> from s2sgrad.frontend.lower import lowered_source
    >>> @dataclasses.dataclass
    ... class Affine:
    ...     W: np.ndarray
    ...     b: float = 0.0
    ...     def apply(self, x):
    ...         return self.W @ x + self.b
    >>> def f(W, x):
    ...     return Affine(W).apply(x)
    >>> print(lowered_source(f), end="")
    def f(W, x):
        Affine_1 = new_record(Affine)
        Affine_2 = with_field(Affine_1, 'W', W)
        Affine_3 = with_field(Affine_2, 'b', 0.0)
        apply = Affine.apply(Affine_3, x)
        return apply
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import operator
from dataclasses import dataclass

import gast
import numpy as np

from .. import guards, runtime
from ..errors import S2SGradError
from ..ir import primitives
from ..ir.nodes import Const, Global, Op, Var
from ..runtime.records import fields as record_fields
from ..runtime.records import is_differentiable, is_record, is_record_class
from .functions import LiftedFunction
from .hints import CALLEE_HINT
from .parse import parse_function
from .relower import GeneratedFunction
from .views import NEW_VALUE_ATTRIBUTES, VIEW_METHODS

primitives.INTERNAL.update({runtime.random_draw: "random_draw", runtime.new_record: "new_record",
                            runtime.with_field: "with_field", runtime.as_named: "as_named"})
GENERATORS = (np.random.Generator, np.random.RandomState)
guards.DESCRIBERS.append(lambda value: ("object", kind_of_object(value))
                         if is_record(value) and not callable(value) else None)    # (its classes: its methods')
_ANALYSING: set = set()         # ids of the methods whose effects are being found
STATIC = "static"               # the kind of a field holding no floats (an int, a string, a flag, a callable)


@dataclass(frozen=True)
class ObjectKind:
    """What generated code is specialized on for a record: its class, and per field the kind of a record (or
    of a list of records) it holds, else None. `named`: a named tuple (whose fields are read by index)."""

    cls: type
    fields: tuple = ()                  # ((name, ObjectKind | ItemsKind | STATIC | None), ...)
    named: bool = False

    @property
    def names(self) -> tuple:
        return tuple(name for name, _ in self.fields)

    def field(self, name):
        return dict(self.fields).get(name)


@dataclass(frozen=True)
class ItemsKind:
    """A list, tuple or dict holding records: the kind of each item (None for an item that is none), and for a
    dict its keys."""

    items: tuple
    keys: tuple | None = None

    def item(self, index):
        """The kind of ``items[index]``: by a constant index (or key), or the one kind all items share."""
        if isinstance(index, Const) and self.keys is not None and index.value in self.keys:
            return self.items[self.keys.index(index.value)]
        if isinstance(index, Const) and self.keys is None and isinstance(index.value, int) \
                and -len(self.items) <= index.value < len(self.items):
            return self.items[index.value]
        return self.items[0] if self.items and len(set(self.items)) == 1 else None


@dataclass(frozen=True)
class ArrayDict:
    """A dict whose values are all arrays or floats: what generated code is specialized on for it, the shape
    of the value at each key (so that ``p["W"]`` has a known shape)."""

    shapes: tuple                       # ((key, shape), ...)

    def shape(self, key):
        return dict(self.shapes).get(key)


def array_dict(value) -> ArrayDict | None:
    """The `ArrayDict` of `value`, or None if it is not a non-empty dict of arrays and floats by str or int keys."""
    if not isinstance(value, dict) or not value or not all(
            type(k) in (str, int) and (isinstance(v, np.ndarray) and v.dtype.kind == "f" or type(v) is float)
            for k, v in value.items()):
        return None
    return ArrayDict(tuple((k, np.shape(v)) for k, v in value.items()))


@dataclass(frozen=True)
class GeneratorKind:
    """A random number generator passed as an argument: its methods draw (no gradient through its state)."""

    cls: type


def kind_of_object(value, nested: bool = False, inside: frozenset = frozenset()):
    """The `ObjectKind`, `ItemsKind` or `GeneratorKind` of `value`, or None for anything else (a named tuple
    holding no record is one only inside another value: as an argument its kind is the pipeline's `Fields`; an
    object holding one it is inside of has no kind there)."""
    if isinstance(value, (float, int, np.ndarray, np.generic, str)) or id(value) in inside:
        return None
    if isinstance(value, GENERATORS):
        return GeneratorKind(type(value))
    inside = inside | {id(value)}
    if isinstance(value, (list, tuple, dict)) and not hasattr(type(value), "_fields"):
        items = tuple(kind_of_object(v, True, inside) for v in (value.values() if isinstance(value, dict) else value))
        keys = tuple(value) if isinstance(value, dict) else None
        return ItemsKind(items, keys) if any(isinstance(i, (ObjectKind, ItemsKind)) for i in items) else None
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        kinds = tuple((n, kind_of_object(v, True, inside)) for n, v in zip(type(value)._fields, value))
        return ObjectKind(type(value), kinds, named=True) if nested or any(k for _, k in kinds) else None
    if not is_record(value):
        return None
    attributes = dict(vars(value)) if hasattr(value, "__dict__") else {}
    attributes.update({k: v for k, v in record_fields(value).items() if isinstance(k, str)})
    return ObjectKind(type(value), tuple((name, kind_of_object(v, True, inside)
                                          or (None if is_differentiable(v, inside) else STATIC))
                                         for name, v in attributes.items()))


def is_object_kind(kind) -> bool:
    return isinstance(kind, (ObjectKind, ItemsKind, GeneratorKind))


def is_dict_kind(kind) -> bool:
    """Is `kind` that of a dict (the pipeline's "dict", an `ArrayDict`, or a dict holding records)?"""
    return kind == "dict" or isinstance(kind, ArrayDict) or isinstance(kind, ItemsKind) and kind.keys is not None


class Objects:
    """Lowers what the function `lowerer` lowers does with records: each name known to hold one has its kind in
    `kinds` (by single-assignment name: parameters, fields read, items taken out of a list, constructors' results,
    and names assigned from those)."""

    def __init__(self, lowerer, parameter_kinds: dict):
        self.lowerer = lowerer
        self.kinds = {p: k for p, k in parameter_kinds.items() if is_object_kind(k)}
        self.owned: set = set()                     # the records made here, which writes may change
        self.made_by: dict = {}                     # name -> the function whose result it holds, or its Const

    def kind(self, atom):
        if isinstance(atom, Var):
            return self.kinds.get(atom.name)
        if isinstance(atom, Global):
            return kind_of_object(atom.value)
        return None

    def assigned(self, target: str, value) -> None:
        """`target` is bound to `value` (an atom or an Op): it holds a record if `value` does."""
        if isinstance(value, Op) and value.fn is runtime.new_record and isinstance(value.args[0], Global):
            kind = ObjectKind(value.args[0].value)
            self.owned.add(target)
        elif isinstance(value, Op) and value.fn in (primitives.seq_getitem, operator.getitem) and len(value.args) == 2:
            items = self.kind(value.args[0])
            kind = items.item(value.args[1]) if isinstance(items, ItemsKind) else None
        elif isinstance(value, Op):
            kind = None
            self.made_by[target] = value.fn
        else:
            if isinstance(value, Var) and value.name in self.made_by or isinstance(value, Const):
                self.made_by[target] = self.made_by[value.name] if isinstance(value, Var) else value
            kind = self.kind(value)
            if isinstance(value, Var) and value.name in self.owned:
                self.owned.add(target)
        if kind is not None:
            self.kinds[target] = kind

    def attribute(self, base, node):
        """``base.attr`` where `base` holds a record: its field (an `attribute` read, or the index of a named
        tuple's field), a property (a call of its getter), a class-level value; None where `base` is no record."""
        kind = self.kind(base)
        lowerer, attr = self.lowerer, node.attr
        if kind is None and isinstance(lowerer.parsed, GeneratedFunction) and isinstance(base, Var) \
                and attr not in NEW_VALUE_ATTRIBUTES | VIEW_METHODS:
            return Op(primitives.attribute, [base, Const(attr)])    # (generated code reads only records' fields)
        if not isinstance(kind, ObjectKind):
            return None
        if kind.named and attr in kind.names:
            read = lowerer.bind(Op(primitives.seq_getitem, [base, Const(kind.names.index(attr))]), attr)
            if isinstance(kind.field(attr), (ObjectKind, ItemsKind)):
                self.kinds[read.name] = kind.field(attr)
            return read
        static = inspect.getattr_static(kind.cls, attr, None)
        if isinstance(static, property) and attr not in kind.names:
            return self.user_call(static.fget, [base], {}, node, f"{kind.cls.__name__}.{attr}")
        if attr not in kind.names and (inspect.isfunction(static) or isinstance(static, (staticmethod,
                                                                                         classmethod))):
            raise lowerer.error(f"the method '{attr}' of a {kind.cls.__name__} is only supported when called", node,
                                f"call it ({ast_text(node)}(...)) instead of passing it around")
        if attr not in kind.names and not hasattr(kind.cls, attr):
            raise lowerer.error(f"'{kind.cls.__name__}' object has no attribute '{attr}'", node)
        no_floats = kind.field(attr) == STATIC
        read = lowerer.bind(Op(primitives.static_attribute if no_floats else primitives.attribute,
                               [base, Const(attr)]), attr)
        if kind.field(attr) is not None and not no_floats:
            self.kinds[read.name] = kind.field(attr)
        return read

    def method_call(self, base, node):
        """``base.name(...)`` where `base` holds a record or a generator: the class's function called with the
        object first (a generator's method: a draw); None where `base` is neither."""
        kind = self.kind(base)
        attr = node.func.attr
        if isinstance(kind, GeneratorKind):
            args, kwargs = self.arguments(node)
            return Op(runtime.random_draw, [base, Const(attr), *args], kwargs)
        if not isinstance(kind, ObjectKind):
            return None
        return self.call_of(kind, base, attr, node)

    def instance_call(self, node):
        """``layer(x)``, ``layers[0](x)``, ``Dense(W, b)(x)`` of a record: its class's ``__call__``; else None."""
        func = node.func
        if isinstance(func, gast.Name):
            version = self.lowerer.env.get(func.id)
            base = Var(version) if isinstance(version, str) else None
        else:
            base = self.lowerer.atom(func) if isinstance(func, (gast.Call, gast.Subscript)) else None
        kind = self.kind(base)
        if not isinstance(kind, ObjectKind):
            if base is not None and not isinstance(func, gast.Name):
                raise self.lowerer.error("only named functions and objects of a known class can be called: this "
                                         "calls a value computed when the code runs", node, CALLEE_HINT)
            return None
        return self.call_of(kind, base, "__call__", node)

    def bound_method_call(self, callee: Global, node):
        """A call of a method of a module-level record (``model.forward(x)``): its function, with the object
        as a global atom first; None for any other callee."""
        method = callee.value
        owner = getattr(method, "__self__", None)
        if not inspect.ismethod(method) or isinstance(owner, type) or not is_record(owner) \
                or not inspect.isfunction(method.__func__):
            return None
        args, kwargs = self.arguments(node)
        obj = Global(callee.name.rsplit(".", 1)[0], owner)
        return self.user_call(method.__func__, [obj, *args], kwargs, node, callee.name)

    def call_of(self, kind: ObjectKind, base, attr: str, node):
        lowerer = self.lowerer
        if isinstance(kind.field(attr), ObjectKind):         # a callable record held in a field: its __call__
            return self.call_of(kind.field(attr), self.attribute(base, node.func), "__call__", node)
        static = inspect.getattr_static(kind.cls, attr, None)
        args, kwargs = self.arguments(node)
        if attr in kind.names or static is None:
            raise lowerer.error(f"calling the field '{attr}' of a {kind.cls.__name__} is not supported: only its "
                                "class's methods are known where the code is generated", node,
                                "call a module-level function, or a method of the class that calls it")
        if isinstance(static, staticmethod):
            return self.user_call(static.__func__, args, kwargs, node, f"{kind.cls.__name__}.{attr}")
        if not inspect.isfunction(static):
            raise lowerer.error(f"'{kind.cls.__name__}.{attr}' is not a method defined in Python "
                                "(a class method, or a builtin's)", node, "call a plain method or a function")
        return self.user_call(static, [base, *args], kwargs, node, f"{kind.cls.__name__}.{attr}")

    def user_call(self, fn, args, kwargs, node, name: str):
        """A call of user function `fn`, refused where it changes an object it is given in place."""
        self.refuse_changes(fn, args, node, name)
        return Op(fn, args, kwargs, name=name)

    def refuse_changes(self, fn, args, node, name: str) -> None:
        """Refuse a call of user function `fn` that is given a record (or several) and changes an object it is
        given in place (the record's fields included)."""
        if not inspect.isfunction(fn) or not any(self.kind(a) is not None for a in args):
            return
        effects = self.effects(fn, args)
        if effects is not None and effects.written:
            raise self.lowerer.error(f"'{name}' changes an object it is given in place, which s2sgrad does not "
                                     "follow through a call given an object", node,
                                     "make it return the new value instead of changing its argument")

    def effects(self, fn, args):
        """The `Effects` of calling `fn` with `args`, found by lowering it knowing which of them hold records;
        None for a function being analysed (a recursive call) or one that cannot be lowered (its error comes
        when it is transformed)."""
        if id(fn) in _ANALYSING:
            return None
        params = list(inspect.signature(fn).parameters)
        kinds = {p: self.kind(a) for p, a in zip(params, args) if self.kind(a) is not None}
        _ANALYSING.add(id(fn))
        try:
            lowerer = type(self.lowerer)(parse_function(fn), fields=kinds)
            lowerer.function()
            return lowerer.effects
        except S2SGradError:
            return None
        finally:
            _ANALYSING.discard(id(fn))

    def arguments(self, node):
        lowerer = self.lowerer
        return [lowerer.atom(a) for a in node.args], {k.arg: lowerer.atom(k.value) for k in node.keywords}

    def construct(self, callee: Global, node):
        """``cls(...)`` of a dataclass (a new record written field by field, defaults filled in), of a named
        tuple, or of a class whose ``__init__`` is Python (`initialized`); ``dataclasses.replace(obj, **changes)``;
        None for any other callee."""
        cls = callee.value
        if cls is dataclasses.replace:
            return self.replaced(node)
        if isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields"):
            return self.named_tuple(callee, node)
        if not isinstance(cls, type) or not (dataclasses.is_dataclass(cls) or is_record_class(cls)):
            return None
        if not dataclasses.is_dataclass(cls):
            return self.initialized(callee, node)
        lowerer = self.lowerer
        if hasattr(cls, "__post_init__") or any(not f.init for f in dataclasses.fields(cls)):
            raise lowerer.error(f"constructing the dataclass {cls.__name__}, whose fields are not all set by "
                                "its __init__ (__post_init__, init=False), is not supported", node,
                                "construct it outside the function and pass it in")
        args, kwargs = self.arguments(node)
        try:
            bound = inspect.signature(cls).bind(*args, **kwargs)
        except TypeError as error:
            raise lowerer.error(f"cannot construct {cls.__name__}: {error}", node) from None
        record = self.new(callee)
        for f in dataclasses.fields(cls):
            if f.name in bound.arguments:
                value = bound.arguments[f.name]
            elif f.default is not dataclasses.MISSING and isinstance(f.default, (int, float, bool, str,
                                                                                 type(None))):
                value = Const(f.default)
            else:
                raise lowerer.error(f"the field '{f.name}' of {cls.__name__} has a default s2sgrad cannot "
                                    "evaluate here", node, f"pass {f.name}= explicitly")
            record = self.with_field(record, f.name, value)
        return record

    def named_tuple(self, callee: Global, node):
        """``P(a, b)`` of a named tuple class: the tuple of its fields (defaults filled in), as a ``P``."""
        lowerer, cls = self.lowerer, callee.value
        args, kwargs = self.arguments(node)
        try:
            bound = inspect.signature(cls).bind(*args, **kwargs)
        except TypeError as error:
            raise lowerer.error(f"cannot construct {cls.__name__}: {error}", node) from None
        bound.apply_defaults()
        items = [v if isinstance(v, (Var, Const, Global)) else Const(v) for v in bound.arguments.values()]
        if not all(isinstance(i, (Var, Global)) or isinstance(i.value, (int, float, bool, str, type(None)))
                   for i in items):
            raise lowerer.error(f"a default of {cls.__name__} is no plain constant", node, "pass every field")
        made = lowerer.bind(Op(runtime.as_named, [callee, lowerer.bind(Op(primitives.make_tuple, items), "fields")]),
                            cls.__name__)
        self.kinds[made.name] = ObjectKind(cls, tuple((n, self.kind(i)) for n, i in zip(cls._fields, items)), True)
        return made

    def new(self, callee: Global) -> Var:
        return self.lowerer.bind(Op(runtime.new_record, [callee]), callee.value.__name__)

    def with_field(self, record, name: str, value, version: str | None = None) -> Var:
        """`record` with its field `name` set to `value` (bound to `version`, or a temporary)."""
        kind = self.kind(record)
        op = Op(runtime.with_field, [record, Const(name), value])
        if version is None:
            written = self.lowerer.bind(op, kind.cls.__name__)
        else:
            self.lowerer.emit(version, op)
            written = Var(version)
        fields = tuple((n, k) for n, k in kind.fields if n != name) + ((name, self.kind(value)),)
        self.kinds[written.name] = dataclasses.replace(kind, fields=fields)
        self.owned.add(written.name)
        return written

    def replaced(self, node):
        """``dataclasses.replace(obj, W=...)``: a copy of record `obj` with those fields written."""
        lowerer = self.lowerer
        if len(node.args) != 1:
            raise lowerer.error("dataclasses.replace takes the object and the changes by keyword", node)
        record = lowerer.atom(node.args[0])
        if not isinstance(self.kind(record), ObjectKind) or self.kind(record).named:
            raise lowerer.error("dataclasses.replace of an object whose class is not known here", node,
                                "pass the object in as an argument, or construct it in the function")
        for keyword in node.keywords:
            record = self.with_field(record, keyword.arg, lowerer.atom(keyword.value))
        return record

    def initialized(self, callee: Global, node):
        """``Dense(W, b)`` of a class with a Python ``__init__``: a call of ``__init__`` lowered as a function
        that makes a new record, writes it (its attribute writes functional) and returns it."""
        lowerer, cls = self.lowerer, callee.value
        init = inspect.getattr_static(cls, "__init__", None)
        if init is object.__init__:
            return self.new(callee)
        if not inspect.isfunction(init):
            raise lowerer.error(f"the __init__ of {cls.__name__} is not a Python function", node,
                                "construct the object outside the function and pass it in")
        args, kwargs = self.arguments(node)
        builder = self.builder(init, cls, node)
        try:
            bound = inspect.signature(init).bind(None, *args, **kwargs)
        except TypeError as error:
            raise lowerer.error(f"cannot construct {cls.__name__}: {error}", node) from None
        bound.apply_defaults()
        atoms = [v if isinstance(v, (Var, Const, Global)) else Const(v) for v in list(bound.arguments.values())[1:]]
        params = list(bound.arguments)[1:]
        builder.fields = {p: self.kind(a) for p, a in zip(params, atoms) if self.kind(a) is not None}
        built = type(lowerer)(builder.parsed, fields=builder.fields).function()
        result = lowerer.bind(Op(builder, atoms, {}, name=callee.name), cls.__name__)
        self.kinds[result.name] = built.objects.get(getattr(built.result, "name", None), ObjectKind(cls))
        self.owned.add(result.name)
        return result

    def builder(self, init, cls, node) -> LiftedFunction:
        """``cls.__init__`` as a function of its parameters after ``self`` that starts with
        ``self = new_record(cls)`` and ends with ``return self``."""
        parsed = copy.copy(parse_function(init))
        tree = copy.deepcopy(parsed.tree)
        if any(isinstance(n, gast.Return) for n in gast.walk(tree)):
            raise self.lowerer.error(f"the __init__ of {cls.__name__} returns early, which is not supported", node,
                                     "write it without return statements")
        me = tree.args.args.pop(0).id
        maker, made = gast.Name("new_record", gast.Load(), None, None), gast.Name(cls.__name__, gast.Load(), None, None)
        maker.resolved, made.resolved = runtime.new_record, cls
        tree.body = [gast.Assign([gast.Name(me, gast.Store(), None, None)], gast.Call(maker, [made], []), None),
                     *tree.body, gast.Return(gast.Name(me, gast.Load(), None, None))]
        parsed.tree = tree
        return LiftedFunction(parsed)

    def write_attribute(self, target, value, node, operator_fn=None) -> bool:
        """``obj.attr = value`` (``obj.attr += value`` with `operator_fn`) where `obj` names a record made in the
        function: a new version of the record, other names for it stale; False where `obj` holds no record."""
        lowerer = self.lowerer
        base = target.value
        version = lowerer.env.get(base.id) if isinstance(base, gast.Name) else None
        kind = self.kinds.get(version) if isinstance(version, str) else None
        if not isinstance(kind, ObjectKind):
            return False
        if version not in self.owned:
            raise lowerer.error(f"assigning to an attribute of '{base.id}' would change an object the function "
                                "was given (or a module-level one), which s2sgrad does not do", node,
                                f"make a new object instead (dataclasses.replace({base.id}, {target.attr}=...)), "
                                "or return the new value")
        if kind.named or getattr(getattr(kind.cls, "__dataclass_params__", None), "frozen", False):
            raise lowerer.error(f"'{kind.cls.__name__}' objects are immutable", node)
        if operator_fn is not None:
            current = self.attribute(Var(version), target)
            value = lowerer.bind(Op(operator_fn, [current, value]), target.attr)
        lowerer.changed_in_place(base.id, node)
        self.with_field(Var(version), target.attr, value, lowerer.define_version(base.id))
        return True


def ast_text(node) -> str:
    return ast.unparse(gast.gast_to_ast(node))
