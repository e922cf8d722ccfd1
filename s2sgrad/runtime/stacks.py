"""The stack of primal values the forward sweep pushes and the backward sweep pops, and its pushes and pops as
functions of the stack (how gradient code is read back to be differentiated).

    >>> s = Stack()
    >>> s.push(1.0); s.push(2.0)
    >>> s.pop()
    2.0
"""
from __future__ import annotations

import numpy as np


class Stack(list):
    """A last-in first-out store of primal values for the backward sweep.

    It holds references, not copies: s2sgrad pushes only values that nothing
    mutates afterwards.
    """

    push = list.append

    def pop_rows(self, n: int) -> np.ndarray:
        """Pop the last `n` values at once, as the rows of one array (the last pushed first).

        They are arrays of one shape. Rows of different numeric dtypes are widened to one floating
        dtype (an integer first trip among floating ones, float32 among float64: one array cannot keep
        them apart); booleans among other dtypes, or integers of different widths alone, raise.

            >>> s = Stack([np.zeros(2), np.ones(2)])
            >>> s.pop_rows(2).tolist(), s
            ([[1.0, 1.0], [0.0, 0.0]], [])
        """
        start = len(self) - n
        rows = self[start:]
        del self[start:]
        rows.reverse()
        stacked = np.array(rows)
        dtypes = {row.dtype for row in rows}
        if len(dtypes) > 1 and (stacked.dtype.kind not in "fc" or any(d.kind == "b" for d in dtypes)):
            raise TypeError(f"values pushed on one stack changed dtype from trip to trip "
                            f"({', '.join(sorted(map(str, dtypes)))}); "
                            "turn off the optimization that pops them as rows: "
                            "optimize=set(s2sgrad.OPTIMIZATIONS) - {'vectorize'}")
        return stacked

    def pop_floats(self, n: int) -> np.ndarray:
        """Pop the last `n` values at once, numbers, as one float64 array (the last pushed first).

            >>> s = Stack([1.0, np.float64(2.0), 3])
            >>> s.pop_floats(2).tolist(), s
            ([3.0, 2.0], [1.0])
        """
        start = len(self) - n
        values = self[start:]
        del self[start:]
        values.reverse()
        return np.array(values, dtype=np.float64)


def stack_push(stack, value):
    """``stack.push(value)`` as a function of the stack (how gradient code is read back to be differentiated).

        >>> stack_push(Stack(), 1.0)
        [1.0]
    """
    stack.append(value)
    return stack


def stack_pop(stack):
    """``value = stack.pop()`` as a function of the stack: returns ``(stack, value)``.

        >>> stack_pop(Stack([1.0, 2.0]))
        ([1.0], 2.0)
    """
    return stack, stack.pop()


def stack_pop_rows(stack, n):
    """``rows = stack.pop_rows(n)`` as a function of the stack: returns ``(stack, rows)``.

        >>> stack_pop_rows(Stack([np.zeros(1), np.ones(1)]), 2)
        ([], array([[1.],
               [0.]]))
    """
    return stack, Stack.pop_rows(stack, n)
