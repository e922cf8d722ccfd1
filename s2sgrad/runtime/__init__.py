"""What generated gradient code needs at run time, and nothing else.

Every generated module starts with ``from s2sgrad.runtime import *``; `__all__` is what it gets. Each module
of the package does one job: the stack of primal values (`stacks`), gradients of any structure
(`gradients`, `sparse`) and the dtype they are computed in (`dtypes`), broadcasting undone (`arrays`), reads
and writes by index (`indexing`, `writes`, `sequences`, `dicts`), objects as records (`records`), the lowered
form's control flow (`control`), checkpointed loops (`checkpoints`) and random states (`random_states`), calls
of s2sgrad's own derivatives (`derivatives`), and the helpers of the derivative rules (`contractions`,
`shapes`, `reductions`, `elementwise`, `transposes`, `selections` for Python's builtins, and `libraries`:
optional libraries such as SciPy, imported when first used).

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
from .checkpoints import Checkpoints, RowBatches, Work, copy_state
from .contractions import (
    einsum_grad,
    einsum_grad_tangent,
    einsum_tangent,
    matmul_grad_a,
    matmul_grad_b,
    tensordot_grad_a,
    tensordot_grad_b,
)
from .control import (
    UNBOUND,
    assert_true,
    check_scalar,
    dict_keys,
    exception_of,
    format_string,
    if_else,
    output_seed,
    raise_error,
    read_after_loop,
    while_loop,
)
from .derivatives import derivative_jvp, derivative_vjp
from .dicts import (
    dict_get,
    dict_got,
    dict_items,
    dict_items_tangent,
    dict_of_values,
    dict_unmade,
    dict_values,
    dict_without,
    make_dict,
)
from .dtypes import float_dtype
from .elementwise import cast_tangent, clip_choice, uncast
from .fft import fitted, hfft_grad, ihfft_grad, irfft_grad, irfftn_grad, rfft_grad, rfftn_grad, transform_axes
from .gradients import Like, add_grads, complete, grad_or_zeros, like, zeros_like
from .gradients import rebuilt as rebuilt  # (not in __all__, as RandomStates: for s2sgrad's own modules)
from .indexing import no_grads, scatter, seq_add_at, seq_scatter
from .libraries import scipy_signal, scipy_special
from .linalg import (
    cholesky_grad,
    cholesky_tangent,
    cross_grad,
    eig_grad,
    eig_tangent,
    eigh_grad,
    eigh_tangent,
    eigvals_grad,
    eigvals_tangent,
    kron_grad_a,
    kron_grad_b,
    matrix_power_grad,
    matrix_power_tangent,
    multi_dot_grad,
    multi_dot_tangent,
    pinv_grad,
    pinv_tangent,
    svd_grad,
    svd_tangent,
    tensorinv_grad,
    tensorinv_tangent,
    tensorsolve_grad_a,
    tensorsolve_grad_b,
    tensorsolve_tangent,
)
from .random_states import RandomStates as RandomStates
from .random_states import random_state, replay, swap_random_state
from .records import (
    as_named,
    field_grad,
    field_tangent,
    new_record,
    random_draw,
    with_field,
    without_field,
    written_field,
)
from .reductions import (
    cumprod_grad,
    cumprod_grad_tangent_a,
    cumprod_grad_tangent_y,
    cumprod_tangent,
    divide_or_zero,
    median_weights,
    norm_grad,
    product_of_others,
    product_of_others_tangent,
    trapezoid_weights,
    vector_norm_grad,
    weights_like,
)
from .selections import (
    default_grad,
    extremum_grads,
    extremum_shares,
    extremum_tangent,
    first_item,
    keyed_extremum,
    keyed_index,
    listed_grads,
    picked_grads,
    product_grads,
    product_grads_tangent,
    product_tangent,
    sort_order,
    sorted_by_keys,
    sorted_tangent,
    unsorted_grads,
)
from .sequences import (
    bind_call,
    bound_grad,
    filled_grad,
    list_append,
    seq_concat,
    seq_repeat,
    seq_setitem,
    seq_unrepeat,
    seq_unwritten,
    seq_written,
    unpack_filled,
    unpack_starred,
    unpacked_grad,
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
from .transposes import (
    full_convolution,
    signal_full,
    undiff,
    ungradient,
    unpad,
    unselect,
    untake_along_axis,
)
from .writes import add_at, at_copy, extremum_ties, maximum_at, minimum_at, setitem, subtract_at, written, written_copy

__all__ = [
    "Stack", "SparseGrad", "Like", "like", "sum_to", "unbroadcast", "unreduce", "zeros_like", "complete",
    "scatter", "seq_scatter", "seq_add_at", "no_grads", "add_grads", "densify", "while_loop", "if_else",
    "setitem", "list_append", "seq_setitem", "seq_written", "seq_unwritten", "seq_concat", "seq_repeat",
    "seq_unrepeat", "dict_keys", "format_string", "check_scalar", "output_seed", "assert_true", "written",
    "Checkpoints", "RowBatches", "Work",
    "copy_state", "random_state", "replay", "swap_random_state", "derivative_vjp", "derivative_jvp", "unstack",
    "grad_or_zeros", "float_dtype", "matmul_grad_a", "matmul_grad_b",
    "tensordot_grad_a", "tensordot_grad_b", "one_step", "einsum_grad", "unconcatenate", "untile", "unrepeat",
    "undiagonal", "untake", "norm_grad", "vector_norm_grad", "divide_or_zero", "uncast", "cast_tangent", "clip_choice",
    "product_of_others", "product_of_others_tangent", "cumprod_grad", "cumprod_grad_tangent_y",
    "cumprod_grad_tangent_a", "cumprod_tangent",
    "linspace_fraction", "add_at", "subtract_at", "maximum_at", "minimum_at", "extremum_ties", "at_copy",
    "written_copy", "as_column", "unsort", "sorted_like",
    "make_dict", "dict_unmade", "dict_get", "dict_got", "dict_without", "dict_values", "dict_items",
    "dict_items_tangent", "dict_of_values", "unpack_starred", "unpacked_grad", "unpack_filled", "filled_grad",
    "bind_call", "bound_grad",
    "raise_error", "exception_of", "read_after_loop", "UNBOUND",
    "as_named", "field_grad", "field_tangent", "new_record", "with_field", "without_field", "written_field",
    "random_draw",
    # Python's builtins that pick, order or regroup values
    "extremum_shares", "extremum_grads", "extremum_tangent", "default_grad", "keyed_index", "keyed_extremum",
    "picked_grads", "sort_order", "sorted_by_keys", "unsorted_grads", "sorted_tangent", "listed_grads", "first_item",
    "product_grads", "product_grads_tangent", "product_tangent",
    "eigh_grad", "eigh_tangent", "eig_grad", "eig_tangent", "eigvals_grad", "eigvals_tangent", "cholesky_grad",
    "cholesky_tangent", "svd_grad", "svd_tangent", "pinv_grad", "pinv_tangent", "matrix_power_grad",
    "matrix_power_tangent", "tensorinv_grad", "tensorinv_tangent", "tensorsolve_grad_a", "tensorsolve_grad_b",
    "tensorsolve_tangent", "fitted", "transform_axes", "rfft_grad", "irfft_grad", "rfftn_grad", "irfftn_grad",
    "hfft_grad", "ihfft_grad", "multi_dot_grad", "multi_dot_tangent", "kron_grad_a", "kron_grad_b", "cross_grad",
    "written_copy", "as_column", "unsort", "sorted_like", "scipy_special", "scipy_signal",
    "median_weights", "weights_like", "trapezoid_weights", "undiff", "ungradient", "unpad", "untake_along_axis",
    "full_convolution", "unselect", "signal_full",
    # forward mode and higher order
    "broadcast_like", "stack_push", "stack_pop", "stack_pop_rows", "einsum_tangent", "einsum_grad_tangent",
]


def is_runtime_function(fn) -> bool:
    """Whether `fn` is defined in this package (its functions make new objects: none aliases an argument)."""
    module = getattr(fn, "__module__", None) or ""
    return module == __name__ or module.startswith(__name__ + ".")
