"""What generated code assumed about the user's world, checked before each call of it.

Generation reads the user's namespaces: the object each free name of the differentiated function
(and of every function it calls) names, the attributes it reads from them (``cfg.lam``, ``np.sin``),
and each transformed function's code and defaults. While code is generated, `recording` collects
every such read; the `Guard` built from them says whether the world still looks that way:

- a function, module, class or other callable is transformed or looked up in the rule table,
  so the code assumes that very object (and, for a function, its ``__code__``, ``__defaults__``
  and ``__kwdefaults__``): another one invalidates the code;
- a number, array, container or other plain object is read by the generated code itself, from its
  own namespace; generation used only its description (`describe`: its type, an array's dtype and
  kind (`global_kind`: its shape), and the value of None, booleans and strings, which are folded in
  as constants). A new value with the same description is put into that namespace (or read through
  the live object, for ``cfg.lam``); any other, and an array whose shape or dtype is changed in
  place, invalidates the code.

Registering a derivative rule invalidates all generated code (`invalidate_all`).

    >>> with recording() as reads:                # doctest: +SKIP
    ...     namespace = generate_and_compile()    # parse, lower, analyze, emit: every read is noted
    >>> guard = Guard(reads, namespace)           # doctest: +SKIP
    >>> guard.holds()                             # before each call   # doctest: +SKIP
    True
"""
from __future__ import annotations

import inspect
import linecache
import types
import weakref
from contextlib import contextmanager
from operator import attrgetter

import numpy as np

MISSING = object()           # a name that is not bound (or an empty cell, or a missing attribute)
_RECORDERS: list = []        # the recordings in progress
_VERSION = [0]               # counts registrations of derivative rules: generated code is valid for one version


def invalidate_all() -> None:
    """Make all generated code stale: a derivative rule was registered (see `s2sgrad.rules.registry`)."""
    _VERSION[0] += 1


class _Reads:
    """The reads of one generation: places (a name in a dict or a cell, then attributes) and functions."""

    def __init__(self):
        # (id(container), name, attributes) -> [container, cell?, name, attributes, value]
        self.places: dict = {}
        self.functions: dict = {}        # id(function) -> (function, its state)
        self.memo: dict = {}             # what the generation computed once from that world (see `memo`)


@contextmanager
def recording():
    """Collect the reads of the user's world made while the block runs."""
    reads = _Reads()
    _RECORDERS.append(reads)
    try:
        yield reads
    finally:
        _RECORDERS.remove(reads)
        reads.memo.clear()


def memo() -> dict | None:
    """A dict living as long as the innermost recording in progress (None outside one), for what a stage computes
    from the user's world alone: that world is the one the recording sees throughout."""
    return _RECORDERS[-1].memo if _RECORDERS else None


def note(container, name: str, value, attributes: str = "") -> None:
    """Generation read `value` as `name` in `container` (a dict, or the cell holding it), then through the dotted
    `attributes`."""
    for reads in _RECORDERS:
        reads.places.setdefault((id(container), name, attributes),
                                [container, not isinstance(container, dict), name, attributes, value])


def note_function(fn) -> None:
    """Generation transformed `fn` (read its code, defaults and signature)."""
    for reads in _RECORDERS:
        reads.functions.setdefault(id(fn), (fn, function_state(fn)))


def function_state(fn) -> tuple:
    """What a function's transformation depends on besides its globals: its code and defaults, and for a
    wrapper passing ``*args, **kwargs`` on, the function whose signature it claims (``__wrapped__``)."""
    state = (getattr(fn, "__code__", None), getattr(fn, "__defaults__", None), getattr(fn, "__kwdefaults__", None))
    wrapped = getattr(fn, "__wrapped__", None) if passes_arguments_on(fn) else None
    if wrapped is not None:
        state += (wrapped, *function_state(wrapped))
    return state


def passes_arguments_on(fn) -> bool:
    """Does `fn` take ``*args`` or ``**kwargs``?"""
    code = getattr(fn, "__code__", None)
    return code is not None and bool(code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))


def same(a: tuple, b: tuple) -> bool:
    """Are two states the same objects, element by element?"""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


DESCRIBERS: list = []       # functions giving a value's description where a later stage knows more (objects)


def global_kind(value):
    """What the analysis of generated code may use about a number or array it reads from the user's namespace,
    as of an argument: "int", "scalar" (another number), an array's shape; None for any other value (a
    bool, a container, an object, a 0-d array, an instance of a subclass of int, float or ndarray).

    >>> global_kind(0.5), global_kind(np.int64(3)), global_kind(np.ones((2, 3)))
    ('scalar', 'int', (2, 3))
    """
    if type(value) is int or isinstance(value, np.integer):
        return "int"
    if type(value) in (float, complex) or isinstance(value, (np.number, np.bool_)):
        return "scalar"
    if type(value) is np.ndarray and value.ndim:       # (as of an argument: not a 0-d array, not a subclass)
        return value.shape
    return None


def describe(value):
    """What generation may have used about a value that generated code reads itself; None for a value whose
    identity it used (functions and other callables, modules, classes)."""
    for describer in DESCRIBERS:
        described = describer(value)
        if described is not None:
            return described
    if isinstance(value, (str, bool)) or value is None or value is MISSING:
        return type(value), value
    if isinstance(value, (np.ndarray, np.generic)):
        return type(value), value.dtype, global_kind(value)
    if isinstance(value, tuple):
        return tuple, all(type(v) is int for v in value)
    owner = getattr(value, "__self__", None)
    if callable(value) and owner is not None and not isinstance(owner, (types.ModuleType, type)):
        # a method of an object (a new object each time it is read): the function it runs, on an object of a type
        return "method", type(owner), getattr(value, "__func__", None) or getattr(value, "__name__", None)
    if callable(value) or isinstance(value, types.ModuleType):
        return None
    return type(value)


def current(container, in_cell: bool, name: str, attributes: str):
    """The value found now where `note` recorded one."""
    try:
        value = container.cell_contents if in_cell else container.get(name, MISSING)
        return attrgetter(attributes)(value) if attributes and value is not MISSING else value
    except (AttributeError, ValueError):          # a missing attribute, an empty cell
        return MISSING


class Guard:
    """Whether generated code still fits the world, given the reads of its generation and the namespace it
    runs in (whose user names it refreshes, under the names generated code gives them: `renamed`)."""

    def __init__(self, reads: _Reads, namespace: dict, renamed: dict | None = None):
        self.version = _VERSION[0]
        self.namespace = namespace
        # functions are held weakly: a cache keyed on the function differentiated must not keep it alive
        self.functions = [(_reference(fn), *state[:3], state if len(state) > 3 else None)
                          for fn, state in reads.functions.values()]
        self.places = list(reads.places.values())
        self.descriptions = [describe(place[4]) for place in self.places]    # what generation used of each
        self.check = self._compiled_check()
        # the places whose value the namespace holds under the same name, or the name generated code gives it
        # (`renamed`: generated name -> the user's), which the generated code reads
        names = {}
        for generated, user in (renamed or {}).items():
            names.setdefault(user, []).append(generated)
        self.slots = [(k, name) for k, place in enumerate(self.places) if not place[3] and place[4] is not MISSING
                      for name in [place[2], *names.get(place[2], ())] if namespace.get(name) is place[4]]

    def holds(self) -> bool:
        """Does the world still look as it did? Plain values of the same description are taken in."""
        return self.check() or self.take_in()

    def _compiled_check(self):
        """One expression comparing everything with what generation saw: it runs before every call, so it is
        compiled rather than interpreted from the lists."""
        namespace = {"VERSION": _VERSION, "version": self.version, "MISSING": MISSING, "same": same,
                     "function_state": function_state}
        tests = ["VERSION[0] == version"]
        for k, place in enumerate(self.places):
            container, in_cell, name, attributes, _ = place
            namespace[f"container{k}"], namespace[f"place{k}"] = container, place
            read = f"container{k}.cell_contents" if in_cell else \
                f"container{k}[{name!r}].{attributes}" if attributes else f"container{k}.get({name!r}, MISSING)"
            tests.append(f"{read} is place{k}[4]")
            if isinstance(place[4], np.ndarray):       # (an array's shape and dtype can be changed in place)
                namespace[f"shape{k}"], namespace[f"dtype{k}"] = place[4].shape, place[4].dtype
                tests[-1] += f" and place{k}[4].shape == shape{k} and place{k}[4].dtype == dtype{k}"
        for k, (reference, code, defaults, kwdefaults, state) in enumerate(self.functions):
            namespace.update({f"reference{k}": reference, f"code{k}": code, f"defaults{k}": defaults,
                              f"kwdefaults{k}": kwdefaults, f"state{k}": state})
            tests.append(f"(fn{k} := reference{k}()) is not None and fn{k}.__code__ is code{k} and "
                         f"fn{k}.__defaults__ is defaults{k} and fn{k}.__kwdefaults__ is kwdefaults{k}"
                         + (f" and same(function_state(fn{k}), state{k})" if state is not None else ""))
        source = "def check():\n    try:\n        return " + " and ".join(tests) + \
            "\n    except (KeyError, AttributeError, ValueError):\n        return False\n"
        exec(compile(source, "<s2sgrad guard>", "exec"), namespace)
        return namespace["check"]

    def functions_hold(self) -> bool:
        for reference, code, defaults, kwdefaults, state in self.functions:
            fn = reference()
            if fn is None or fn.__code__ is not code or fn.__defaults__ is not defaults \
                    or fn.__kwdefaults__ is not kwdefaults or state is not None and not same(function_state(fn), state):
                return False
        return True

    def take_in(self) -> bool:
        """Some value changed: if every change keeps its description, refresh the namespace and the values."""
        if self.version != _VERSION[0]:
            return False
        values = [current(*place[:4]) for place in self.places]
        for place, description, new in zip(self.places, self.descriptions, values):
            if new is place[4] and not isinstance(new, np.ndarray):
                continue
            if description is None and new is not place[4] or description != describe(new):
                return False
        filled: dict = {}
        for k, name in self.slots:
            new = values[k]
            if filled.setdefault(name, new) is not new:
                return False                      # two functions' names for one slot now differ
        if not self.functions_hold():
            return False
        for place, new in zip(self.places, values):
            place[4] = new
        self.namespace.update(filled)
        return True


class Table:
    """Generated code of one function by key, at most `limit` entries (the oldest goes first), each
    ``(guard, generated function)`` and valid while its guard holds."""

    def __init__(self, limit: int = 32):
        self.limit = limit
        self.entries: dict = {}

    def get(self, fn, key):
        entry = self.entries.get(key)
        return entry if entry is not None and entry[0].holds() else None

    def put(self, fn, key, entry) -> None:
        self.entries.pop(key, None)
        self.entries[key] = entry
        while len(self.entries) > self.limit:
            del self.entries[next(iter(self.entries))]

    def __len__(self) -> int:
        return len(self.entries)


class Cache:
    """A `Table` per function, weak on the function: the code of a function no longer used goes with it."""

    def __init__(self, limit: int = 32):
        self.limit = limit
        self.tables = weakref.WeakKeyDictionary()          # function -> Table

    def get(self, fn, key):
        try:
            table = self.tables.get(fn)
        except TypeError:                                  # cannot be referenced weakly: never cached
            return None
        return table.get(fn, key) if table is not None else None

    def put(self, fn, key, entry) -> None:
        try:
            table = self.tables.get(fn)
            if table is None:
                table = self.tables[fn] = Table(self.limit)
        except TypeError:
            return
        table.put(fn, key, entry)

    def __len__(self) -> int:
        return sum(len(table) for table in list(self.tables.values()))


_GONE: list[str] = []       # file names of generated modules whose function is gone, still in linecache
_LIVE: dict[str, int] = {}  # file name -> functions alive that were compiled under it (equal texts share a file)


def forget_lines_with(fn, filename: str) -> None:
    """Take the generated module's text out of linecache once the last function compiled under its file name
    is gone: the next time code is generated, not when the function is collected (a collection may run while
    linecache iterates over its entries, as `linecache.checkcache` does when a traceback is printed, which
    then fails)."""
    while _GONE:
        gone = _GONE.pop()
        _LIVE[gone] -= 1
        if not _LIVE[gone]:
            del _LIVE[gone]
            linecache.cache.pop(gone, None)
    _LIVE[filename] = _LIVE.get(filename, 0) + 1
    weakref.finalize(fn, _GONE.append, filename)


def _reference(fn):
    try:
        return weakref.ref(fn)
    except TypeError:
        return lambda: fn


__all__ = ["recording", "note", "note_function", "function_state", "passes_arguments_on", "same", "global_kind",
           "describe", "Guard", "Table", "Cache", "forget_lines_with", "MISSING"]
