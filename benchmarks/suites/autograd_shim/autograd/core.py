"""autograd.core's `make_vjp` (of a unary function, as autograd's own operators call it)."""
from benchmarks.suites.operators import core_make_vjp as make_vjp  # noqa: F401
