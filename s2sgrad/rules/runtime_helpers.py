"""Forward-mode rules for the runtime helpers that generated gradient code calls.

With them, a generated gradient is itself a function s2sgrad can differentiate
in forward mode: this is how Hessian-vector products are made (forward over
reverse). Nearly every helper is linear in the gradient it is given and reads
its other arguments for their shapes, so its tangent is the helper applied to
the gradient's tangent:

    >>> @tangent(unbroadcast)
    ... def unbroadcast(y, g, x):
    ...     d[y] = unbroadcast(d[g], x)

These helpers have no adjoint rule: reverse mode over generated code is not supported.
"""
from .. import runtime
from ..runtime import (
    add_grads,
    broadcast_like,
    cast_tangent,
    complete,
    cumprod_grad,
    cumprod_grad_tangent_a,
    cumprod_grad_tangent_y,
    densify,
    divide_or_zero,
    einsum_grad,
    einsum_grad_tangent,
    fitted,
    full_convolution,
    grad_or_zeros,
    hfft_grad,
    ihfft_grad,
    irfft_grad,
    irfftn_grad,
    kron_grad_a,
    kron_grad_b,
    matmul_grad_a,
    matmul_grad_b,
    no_grads,
    product_of_others,
    product_of_others_tangent,
    rfft_grad,
    rfftn_grad,
    scatter,
    seq_add_at,
    seq_scatter,
    seq_unrepeat,
    seq_unwritten,
    seq_written,
    signal_full,
    sorted_like,
    stack_pop,
    stack_pop_rows,
    stack_push,
    sum_to,
    tensordot_grad_a,
    tensordot_grad_b,
    unbroadcast,
    uncast,
    unconcatenate,
    undiagonal,
    undiff,
    ungradient,
    unpad,
    unreduce,
    unrepeat,
    unselect,
    unsort,
    unstack,
    untake,
    untake_along_axis,
    untile,
    weights_like,
    written,
)
from .registry import d, nondifferentiable, tangent

# Results that carry no derivative: zeros, checks, empty stacks, what is kept of a value's shape, dtypes.
nondifferentiable(*[getattr(runtime, name) for name in ("zeros_like", "check_scalar", "output_seed", "assert_true",
                                                        "Stack", "like", "clip_choice", "linspace_fraction", "one_step",
                                                        "extremum_ties", "transform_axes", "median_weights",
                                                        "trapezoid_weights", "float_dtype")
                    if hasattr(runtime, name)])


@tangent(unbroadcast)
def unbroadcast(y, g, x):
    d[y] = unbroadcast(d[g], x)


@tangent(sum_to)
def sum_to(y, g, shape):
    d[y] = sum_to(d[g], shape)


@tangent(unreduce)
def unreduce(y, g, x, axis=None, keepdims=False):
    d[y] = unreduce(d[g], x, axis, keepdims)


@tangent(scatter)
def scatter(y, g, x, index):
    d[y] = scatter(d[g], x, index)


@tangent(seq_scatter)
def seq_scatter(y, g, x, index):
    d[y] = seq_scatter(d[g], x, index)


@tangent(seq_add_at)
def seq_add_at(y, gs, g, x, index):
    d[y] = seq_add_at(d[gs], d[g], x, index)


@tangent(no_grads)
def no_grads(y, x):
    d[y] = no_grads(x)


@tangent(densify)
def densify(y, g):
    d[y] = densify(d[g])


@tangent(add_grads)
def add_grads(y, a, b):
    d[y] = add_grads(d[a], d[b])


@tangent(grad_or_zeros)
def grad_or_zeros(y, g, x):
    d[y] = grad_or_zeros(d[g], x)


@tangent(complete)
def complete(y, g, x):
    d[y] = complete(d[g], x)


@tangent(written)
def written(y, g, index):
    d[y] = written(d[g], index)


@tangent(unstack)
def unstack(y, g, x, axis=0):
    d[y] = unstack(d[g], x, axis)


@tangent(unconcatenate)
def unconcatenate(y, g, arrays, axis=0, ndmin=1):
    d[y] = unconcatenate(d[g], arrays, axis, ndmin)


@tangent(untile)
def untile(y, g, x, reps):
    d[y] = untile(d[g], x, reps)


@tangent(unrepeat)
def unrepeat(y, g, x, repeats, axis=None):
    d[y] = unrepeat(d[g], x, repeats, axis)


@tangent(undiagonal)
def undiagonal(y, g, x, offset=0, axis1=0, axis2=1):
    d[y] = undiagonal(d[g], x, offset, axis1, axis2)


@tangent(untake)
def untake(y, g, x, indices, axis=None, mode="raise"):
    d[y] = untake(d[g], x, indices, axis, mode)


@tangent(uncast)
def uncast(y, g, x, dtype):
    d[y] = uncast(d[g], x, dtype)


@tangent(cast_tangent)
def cast_tangent(y, t, dtype):
    d[y] = cast_tangent(d[t], dtype)


@tangent(unsort)
def unsort(y, g, a, axis=-1):
    """The order is piecewise constant in `a`."""
    d[y] = unsort(d[g], a, axis)


@tangent(sorted_like)
def sorted_like(y, t, a, axis=-1):
    d[y] = sorted_like(d[t], a, axis)


@tangent(divide_or_zero)
def divide_or_zero(z, g, y):
    """0 where y is 0, as the value is."""
    d[z] = divide_or_zero(d[g], y) - divide_or_zero(z * d[y], y)


# --- what the gradients of products read, and their own tangents

@tangent(product_of_others)
def product_of_others(y, a, axis=None):
    d[y] = product_of_others_tangent(a, d[a], axis)


@tangent(cumprod_grad)
def cumprod_grad(z, g, y, a, axis=None):
    d[z] = cumprod_grad(d[g], y, a, axis) + cumprod_grad_tangent_y(g, d[y], a, axis) \
        + cumprod_grad_tangent_a(g, y, a, d[a], axis)


# --- bilinear: in the gradient and in the other factor (the first factor gives only a shape)

@tangent(matmul_grad_a)
def matmul_grad_a(y, g, a, b):
    d[y] = matmul_grad_a(d[g], a, b) + matmul_grad_a(g, a, d[b])


@tangent(matmul_grad_b)
def matmul_grad_b(y, g, a, b):
    d[y] = matmul_grad_b(d[g], a, b) + matmul_grad_b(g, d[a], b)


@tangent(fitted)
def fitted(y, g, a, axes):
    d[y] = fitted(d[g], a, axes)


@tangent(rfft_grad)
def rfft_grad(y, g, a, n=None, axis=-1, norm=None):
    d[y] = rfft_grad(d[g], a, n, axis, norm)


@tangent(irfft_grad)
def irfft_grad(y, g, a, n=None, axis=-1, norm=None):
    d[y] = irfft_grad(d[g], a, n, axis, norm)


@tangent(hfft_grad)
def hfft_grad(y, g, a, n=None, axis=-1, norm=None):
    d[y] = hfft_grad(d[g], a, n, axis, norm)


@tangent(ihfft_grad)
def ihfft_grad(y, g, a, n=None, axis=-1, norm=None):
    d[y] = ihfft_grad(d[g], a, n, axis, norm)


@tangent(rfftn_grad)
def rfftn_grad(y, g, a, s=None, axes=None, norm=None):
    d[y] = rfftn_grad(d[g], a, s, axes, norm)


@tangent(irfftn_grad)
def irfftn_grad(y, g, a, s=None, axes=None, norm=None):
    d[y] = irfftn_grad(d[g], a, s, axes, norm)


@tangent(kron_grad_a)
def kron_grad_a(y, g, a, b):
    d[y] = kron_grad_a(d[g], a, b) + kron_grad_a(g, a, d[b])


@tangent(kron_grad_b)
def kron_grad_b(y, g, a, b):
    d[y] = kron_grad_b(d[g], a, b) + kron_grad_b(g, d[a], b)


@tangent(tensordot_grad_a)
def tensordot_grad_a(y, g, a, b, axes=2):
    d[y] = tensordot_grad_a(d[g], a, b, axes) + tensordot_grad_a(g, a, d[b], axes)


@tangent(tensordot_grad_b)
def tensordot_grad_b(y, g, a, b, axes=2):
    d[y] = tensordot_grad_b(d[g], a, b, axes) + tensordot_grad_b(g, d[a], b, axes)


@tangent(einsum_grad)
def einsum_grad(y, g, subscripts, operands):
    d[y] = einsum_grad_tangent(g, d[g], subscripts, operands, d[operands])


# --- what forward-mode and re-read gradient code itself calls

@tangent(broadcast_like)
def broadcast_like(z, t, y):
    d[z] = broadcast_like(d[t], y)


@tangent(stack_push)
def stack_push(y, stack, value):
    """A stack of values carries a stack of their tangents."""
    d[y] = stack_push(d[stack], d[value])


@tangent(stack_pop)
def stack_pop(y, stack):
    d[y] = stack_pop(d[stack])


@tangent(stack_pop_rows)
def stack_pop_rows(y, stack, n):
    d[y] = stack_pop_rows(d[stack], n)


@tangent(seq_written)
def seq_written(y, g, index, value):
    d[y] = seq_written(d[g], index, value)


@tangent(seq_unwritten)
def seq_unwritten(y, g, xs, index, value):
    d[y] = seq_unwritten(d[g], xs, index, value)


@tangent(seq_unrepeat)
def seq_unrepeat(y, g, xs):
    d[y] = seq_unrepeat(d[g], xs)


# --- the transposes of NumPy's linear Python functions (runtime.transposes), and np.average's weights --------

@tangent(undiff)
def undiff(y, g, n, axis):
    d[y] = undiff(d[g], n, axis)


@tangent(ungradient)
def ungradient(y, g, f, *varargs, axis=None, edge_order=1):
    d[y] = ungradient(d[g], f, *varargs, axis=axis, edge_order=edge_order)


@tangent(unpad)
def unpad(y, g, array, pad_width, mode="constant"):
    d[y] = unpad(d[g], array, pad_width, mode)


@tangent(untake_along_axis)
def untake_along_axis(y, g, arr, indices, axis):
    d[y] = untake_along_axis(d[g], arr, indices, axis)


@tangent(full_convolution)
def full_convolution(y, g, a, v, mode="full"):
    d[y] = full_convolution(d[g], a, v, mode)


@tangent(signal_full)
def signal_full(y, g, in1, in2, mode="full"):
    d[y] = signal_full(d[g], in1, in2, mode)


@tangent(unselect)
def unselect(y, g, condlist, choicelist):
    d[y] = unselect(d[g], condlist, choicelist)


@tangent(weights_like)
def weights_like(y, weights, a, axis=None):
    d[y] = weights_like(d[weights], a, axis)


# Checks inside the helpers of decompositions, which forward mode reads as code: they pass no derivative.
nondifferentiable(runtime.linalg.check_not_hermitian, runtime.linalg.check_no_extra_vectors)
