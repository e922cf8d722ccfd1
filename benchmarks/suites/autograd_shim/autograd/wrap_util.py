"""`unary_to_nary` under its autograd.wrap_util name."""
from benchmarks.suites.operators import unary_to_nary  # noqa: F401
