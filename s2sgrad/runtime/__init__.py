"""What generated gradient code needs at run time, and nothing else.

Every generated module starts with ``from s2sgrad.runtime import *``; `__all__` is what it gets. Each module
of the package does one job: the stack of primal values (`stacks`), gradients of any structure
(`gradients`, `sparse`), broadcasting undone (`arrays`), reads and writes by index (`indexing`, `writes`,
`sequences`), the lowered form's control flow (`control`), checkpointed loops (`checkpoints`) and random
states (`random_states`), calls of s2sgrad's own derivatives (`derivatives`), and the helpers of the
derivative rules (`contractions`, `shapes`, `reductions`, `elementwise`).

    >>> import numpy as np
    >>> s = Stack()
    >>> s.push(1.0); s.push(2.0)
    >>> s.pop()
    2.0
    >>> unbroadcast(np.ones((3, 4)), np.ones(4)).tolist()
    [3.0, 3.0, 3.0, 3.0]
    >>> is_runtime_function(unbroadcast), is_runtime_function(np.sum)
    (True, False)
"""
from __future__ import annotations

from .arrays import broadcast_like, sum_to, unbroadcast, unreduce
from .checkpoints import Checkpoints, Work, copy_state
from .contractions import (
    einsum_grad,
    einsum_grad_tangent,
    einsum_tangent,
    matmul_grad_a,
    matmul_grad_b,
    tensordot_grad_a,
    tensordot_grad_b,
)
from .control import assert_true, check_scalar, dict_keys, format_string, if_else, output_seed, while_loop
from .derivatives import derivative_jvp, derivative_vjp
from .elementwise import cast_tangent, clip_choice, uncast
from .gradients import Like, add_grads, complete, grad_or_zeros, like, zeros_like
from .gradients import rebuilt as rebuilt  # (not in __all__, as RandomStates: for s2sgrad's own modules)
from .indexing import scatter, seq_scatter
from .random_states import RandomStates as RandomStates
from .random_states import random_state, replay, swap_random_state
from .reductions import (
    cumprod_grad,
    cumprod_grad_tangent_a,
    cumprod_grad_tangent_y,
    cumprod_tangent,
    divide_or_zero,
    norm_grad,
    product_of_others,
    product_of_others_tangent,
)
from .sequences import (
    list_append,
    seq_concat,
    seq_repeat,
    seq_setitem,
    seq_unrepeat,
    seq_unwritten,
    seq_written,
    unstack,
)
from .shapes import (
    as_column,
    linspace_fraction,
    one_step,
    sorted_like,
    unconcatenate,
    undiagonal,
    unrepeat,
    unsort,
    untake,
    untile,
)
from .sparse import SparseGrad, densify
from .stacks import Stack, stack_pop, stack_pop_rows, stack_push
from .writes import add_at, at_copy, extremum_ties, maximum_at, minimum_at, setitem, subtract_at, written, written_copy

__all__ = [
    "Stack", "SparseGrad", "Like", "like", "sum_to", "unbroadcast", "unreduce", "zeros_like", "complete",
    "scatter", "seq_scatter", "add_grads", "densify", "while_loop", "if_else",
    "setitem", "list_append", "seq_setitem", "seq_written", "seq_unwritten", "seq_concat", "seq_repeat",
    "seq_unrepeat", "dict_keys", "format_string", "check_scalar", "output_seed", "assert_true", "written",
    "Checkpoints", "Work",
    "copy_state", "random_state", "replay", "swap_random_state", "derivative_vjp", "derivative_jvp", "unstack",
    "grad_or_zeros", "matmul_grad_a", "matmul_grad_b",
    "tensordot_grad_a", "tensordot_grad_b", "one_step", "einsum_grad", "unconcatenate", "untile", "unrepeat",
    "undiagonal", "untake", "norm_grad", "divide_or_zero", "uncast", "cast_tangent", "clip_choice",
    "product_of_others", "product_of_others_tangent", "cumprod_grad", "cumprod_grad_tangent_y",
    "cumprod_grad_tangent_a", "cumprod_tangent",
    "linspace_fraction", "add_at", "subtract_at", "maximum_at", "minimum_at", "extremum_ties", "at_copy",
    "written_copy", "as_column", "unsort", "sorted_like",
    # forward mode and higher order
    "broadcast_like", "stack_push", "stack_pop", "stack_pop_rows", "einsum_tangent", "einsum_grad_tangent",
]


def is_runtime_function(fn) -> bool:
    """Whether `fn` is defined in this package (its functions make new objects: none aliases an argument)."""
    module = getattr(fn, "__module__", None) or ""
    return module == __name__ or module.startswith(__name__ + ".")
