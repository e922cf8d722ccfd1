"""The optimizations of reverse mode, by name: each one a pass that ``optimize=`` can switch off.

    >>> resolve(True) == frozenset(OPTIMIZATIONS), resolve(False)
    (True, frozenset())
    >>> sorted(resolve(["reuse", "shapes", "dot"]))
    ['dot', 'reuse', 'shapes']

`OPTIMIZATIONS` is the documentation: each name with what it does. Without any of them
(``optimize=False``) the generated gradient is the naive scheme, for comparison.
Forward mode (``jvp``, ``hvp``) always runs with all of them.
"""
from __future__ import annotations

import difflib
from collections.abc import Iterable
from types import MappingProxyType
from typing import Union

from .errors import S2SGradError

OPTIMIZATIONS = MappingProxyType({
    "activity": "adjoint code only for values that depend on a wrt argument; without it, also for values "
                "derivative rules compute from the other arguments (dead adjoint code)",
    "symbolic_zeros": "an adjoint with no contribution yet is a zero that costs nothing; without it, each "
                      "adjoint starts from zeros_like(x) and its first contribution is added to it",
    "to_be_recorded": "a loop body or branch pushes only the values its backward code reads; without it, "
                      "every value it defines",
    "shape_only_pushes": "a value the backward sweep reads only for its shape is pushed as like(x) (shape "
                         "and dtype), so the array itself can be freed",
    "carried_pushes": "a value one loop trip ends with and the next starts with as a loop variable is pushed "
                      "once: the loop variable's stack holds it",
    "recompute_cheap": "a value a loop trip's backward code reads that is elementwise arithmetic (+ - * /, "
                       "** 2) of values it has anyway, or an item of a list or tuple (item = params[k], "
                       "W = item[0]), is computed again there, not pushed and popped",
    "reuse": "backward code reads the forward sweep's value of an expression it needs (np.cos(x) -> cos) "
             "instead of computing it again",
    "merge_twins": "two equal contributions to one adjoint (the two of x * x) become one, doubled",
    "constant_folding": "tests on constants and x ** 1-style arithmetic left in an inlined rule are folded",
    "shapes": "where shapes are known: no unbroadcast where they are equal, np.sum or sum_to where they differ, "
              "unreduce as np.broadcast_to, matmul gradients as np.outer(g, h) or W.T @ g, a concatenation's "
              "gradient as slices g[:4], g[4:]",
    "dot": "the sum of a vector adjoint times a vector of its shape is a dot product, dy @ b (needs shapes)",
    "drop_broadcasts": "no np.broadcast_to(e, s) in a product with a value of shape s, nor a name for it every "
                       "read of which is such a factor (needs shapes)",
    "simplify_arithmetic": "exact rewrites that save an array operation: g += -(a * b) -> g -= a * b, powers "
                           "of two in one product combine",
    "float_math": "in backward code, np.sin and np.cos of a value known to be a scalar are math.sin and "
                  "math.cos: the same results without NumPy's per-call cost",
    "scalar_expressions": "arithmetic on numbers (never arrays) is written as one expression, bit for bit the "
                          "same: consecutive contributions to a number's adjoint merge (dy = dy * 0.5 + dprod * c), "
                          "a temporary read once is written where it is read, a copy of a number is the number",
    "coefficient_arrays": "a backward loop over trips whose work is arithmetic on numbers, linear in the adjoints "
                          "it carries (dy = dy * 0.5 + dy * x * math.cos(y)), forms each adjoint's coefficients "
                          "(0.5 + x * np.cos(y_rows), like terms collected) for all trips in one NumPy operation on "
                          "the popped floats before the loop, which is left with dy = dy * dy_factor; equal to "
                          "rounding, not bit for bit",
    "dead_primal_code": "grad's forward sweep leaves out NumPy arithmetic on arrays of known shapes and dtypes "
                        "whose value nothing reads but the output, which it does not return (nor check, when "
                        "it is known to be a real scalar)",
    "in_place_accumulation": "a later contribution to an adjoint buffer the gradient made itself is added "
                             "with += (never into the seed, an input or a primal value); the gradient of x[i] "
                             "with an index of ints and slices, where it lands: dx[i] += g; the adjoint of "
                             "y[i] = v zeroes dy[i] in place",
    "in_place_writes": "y[i] = v and hs.append(h) run in place where nothing can see the difference; "
                       "without it, every such write copies",
    "batched_accumulation": "in a backward loop, the outer products and bias terms added to a weight every trip "
                            "are collected and summed once after the loop (needs shapes)",
    "vectorize": "a backward loop's arithmetic on popped small arrays alone (1.0 - h * h) is done for all trips "
                 "at once, on the stack popped as rows; rows that were A[j] in trip j of a loop over an argument "
                 "A are read from A itself (xs[:trips][::-1]), not pushed",
    "rows_in_place": "where the dtypes show the result keeps the rows' float64 dtype: the terms are computed "
                     "in place, a trip's product of an adjoint and its row of terms is written into that row, "
                     "and a weight gradient's collected rows are the terms array itself (needs vectorize)",
})

# name -> the optimization it builds on: without that one it would find nothing to do.
NEEDS = MappingProxyType({"dot": "shapes", "drop_broadcasts": "shapes", "batched_accumulation": "shapes",
                         "rows_in_place": "vectorize"})

ALL = frozenset(OPTIMIZATIONS)

Optimize = Union[bool, Iterable[str]]


def resolve(optimize: Optimize) -> frozenset[str]:
    """The names of the optimizations `optimize` switches on: all for True, none for False,
    exactly those named for an iterable of names.

    An unknown name, or a name without the optimization it needs, is an error:

        >>> resolve({"dot"})
        Traceback (most recent call last):
        ...
        s2sgrad.errors.S2SGradError: optimization 'dot' needs 'shapes'
        hint: add 'shapes', or leave out 'dot'
    """
    if optimize is True:
        return ALL
    if optimize is False:
        return frozenset()
    if isinstance(optimize, (str, bytes)) or not isinstance(optimize, Iterable):
        raise S2SGradError(f"optimize must be True, False or a collection of optimization names, not {optimize!r}",
                           hint=f"for example optimize={{{next(iter(OPTIMIZATIONS))!r}}}; "
                                f"the names are in s2sgrad.OPTIMIZATIONS")
    names = frozenset(optimize)
    unknown = sorted((n for n in names if n not in OPTIMIZATIONS), key=repr)
    if unknown:
        guesses = [g for n in unknown if isinstance(n, str) for g in difflib.get_close_matches(n, OPTIMIZATIONS, 1)]
        guess = f"did you mean {', '.join(map(repr, guesses))}? " if guesses else ""
        raise S2SGradError(f"unknown optimization(s): {', '.join(map(repr, unknown))}",
                           hint=f"{guess}the optimizations are {', '.join(OPTIMIZATIONS)}")
    for name in OPTIMIZATIONS:
        if name in names and NEEDS.get(name, name) not in names:
            dependents = [n for n in OPTIMIZATIONS if NEEDS.get(n) == NEEDS[name] and n in names]
            raise S2SGradError(f"optimization {name!r} needs {NEEDS[name]!r}",
                               hint=f"add {NEEDS[name]!r}, or leave out {' and '.join(map(repr, dependents))}")
    return names


def needing(name: str) -> frozenset[str]:
    """The optimizations that need `name` (switching `name` off switches these off too, or is an error)."""
    return frozenset(n for n, needed in NEEDS.items() if needed == name)


__all__ = ["OPTIMIZATIONS", "NEEDS", "ALL", "Optimize", "resolve", "needing"]
