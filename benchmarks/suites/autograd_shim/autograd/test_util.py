"""autograd.test_util's `check_grads` and `combo_check`, checking s2sgrad's derivatives against finite
differences and recording each outcome (see `benchmarks.suites.grad_checks`)."""
from benchmarks.suites.grad_checks import check_equivalent, check_grads, combo_check, scalar_close  # noqa: F401
