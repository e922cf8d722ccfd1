"""What generated code is specialized on, read off the values of a call: each argument's kind (`kind_of`), with
arrays' shapes as their patterns (`kinds_of`), and what a called function is told of the constants it is passed
(`constant_kind`).

    >>> import numpy as np
    >>> kind_of(0.5), kind_of(3), kind_of(np.ones((2, 3))), kind_of([1.0, 2.0])
    ('scalar', 'int', (2, 3), 'seq')
    >>> kinds_of([np.ones((7, 3)), np.ones(7)])
    ((Size(0), Size(1)), (Size(0),))
"""
from __future__ import annotations

import numpy as np

from ..analysis.activity import DICT, INT, SCALAR, SEQ, TENSOR, Fields
from ..errors import S2SGradError
from ..frontend.callable_values import Static, is_static
from ..frontend.objects import array_dict, is_object_kind, kind_of_object
from ..guards import global_kind
from ..ir.nodes import Const, Global
from ..ir.sizes import shape_patterns

_PLAIN_KINDS = {float: SCALAR, int: INT, complex: SCALAR, np.float64: SCALAR, np.float32: SCALAR}


def kind_of(value):
    """What generated code is specialized on: "int", "scalar", "seq" (a list or tuple), "dict" (an `ArrayDict`
    where its values are arrays and floats: their shapes), a named
    tuple's `Fields`, a record's `ObjectKind` (and `ItemsKind`, `GeneratorKind`), an array's shape, a function's or
    module's identity (`Static`), or "tensor" (anything else)."""
    plain = _PLAIN_KINDS.get(type(value))      # (it runs on every call: the common kinds first)
    if plain is not None:
        return plain
    if type(value) is np.ndarray:
        return value.shape if value.ndim else TENSOR
    if _is_foreign_array(value):
        if any(not isinstance(n, int) or n != n for n in value.shape):
            raise S2SGradError(f"an argument's shape {value.shape} is not known (a Dask array with unknown chunk "
                               "sizes): generated code is specialized on shapes",
                               hint="call x.compute_chunk_sizes() (Dask) before differentiating")
        return tuple(value.shape) if value.ndim else TENSOR
    described = kind_of_object(value)           # a record, a container of records, a generator
    if described is not None:
        return described
    if is_static(value):
        return Static(value)
    if isinstance(value, dict):
        return array_dict(value) or DICT
    if isinstance(value, tuple) and isinstance(getattr(type(value), "_fields", None), tuple):
        return Fields(type(value)._fields)
    if isinstance(value, (list, tuple)):
        return SEQ
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return INT
    if isinstance(value, (float, int, complex, np.number)):
        return SCALAR
    if isinstance(value, np.ndarray) and value.ndim:
        return value.shape
    return TENSOR


_FOREIGN_MODULES = frozenset({"dask", "torch", "jax", "jaxlib", "cupy", "array_api_strict"})


def _is_foreign_array(value) -> bool:
    """An array of another namespace than NumPy's (Dask, PyTorch, JAX, CuPy, any with ``__array_namespace__``)?"""
    cls = type(value)
    return (cls.__module__.partition(".")[0] in _FOREIGN_MODULES or hasattr(cls, "__array_namespace__")) \
        and not isinstance(value, (np.ndarray, np.generic)) and hasattr(value, "shape") and hasattr(value, "ndim")


def array_namespace_of(values) -> str | None:
    """The module name of the array namespace of the arrays among `values` that are not NumPy's (looked into lists,
    tuples and dicts; through `array_api_compat`), None where all are NumPy's: generated code is specialized on it.

        >>> import numpy as np
        >>> array_namespace_of([np.ones(2), 1.0]) is None
        True
    """
    for value in values:                        # (it runs on every call: NumPy's arguments first)
        if type(value) is not np.ndarray and type(value) not in _PLAIN_KINDS:
            break
    else:
        return None
    foreign = []
    pending = list(values)
    while pending:
        value = pending.pop()
        if type(value) is np.ndarray or type(value) in _PLAIN_KINDS:
            continue
        if isinstance(value, (list, tuple)):
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
        elif _is_foreign_array(value):
            foreign.append(value)
    if not foreign:
        return None
    import array_api_compat
    return array_api_compat.array_namespace(*foreign).__name__


def kinds_of(values, with_values: bool = False) -> tuple:
    """The `kind_of` each of `values`, arrays' shapes as their patterns (`ir.sizes.shape_patterns`: ranks, the
    axes of size 1, which sizes are equal), so that code generated for them holds for every size; `with_values`:
    to generate code, each `Size` knowing its value (the same kinds)."""
    return shape_patterns([kind_of(v) for v in values], with_values)


def constant_kind(atom):
    """What a called function is specialized on about a constant or global it is passed: a record's or
    container's kind (of a global), "int" or "scalar" (a number), an array's shape (of a global, whose guard
    covers its shape: `guards.describe`); None for anything else."""
    if isinstance(atom, Global) and kind_of_object(atom.value) is not None:
        return kind_of_object(atom.value)
    if isinstance(atom, Const) and isinstance(atom.value, np.ndarray):    # (a default array: no guard on it)
        return None
    kind = global_kind(atom.value)
    return INT if kind == "int" else SCALAR if kind == "scalar" else kind


def structure_fields(kinds: dict) -> dict:
    """What lowering is told of the parameters holding named tuples (their fields' names) and records (their
    kinds)."""
    return {p: k.names if isinstance(k, Fields) else k for p, k in kinds.items()
            if isinstance(k, Fields) or is_object_kind(k)}


__all__ = ["kind_of", "kinds_of", "array_namespace_of", "constant_kind", "structure_fields"]
