"""The backend matrix of `test_backends` on CuPy arrays (issue 16): the same cases by the same code path, where
CuPy and a GPU are present; skipped elsewhere."""
from __future__ import annotations

import numpy as np
import pytest

import s2sgrad as sg
from tests.test_backends import CASES, DATA

cupy = pytest.importorskip("cupy")
try:
    cupy.cuda.runtime.getDeviceCount()
except Exception:                                   # (no GPU, or no driver)
    pytest.skip("no GPU for CuPy", allow_module_level=True)


@pytest.mark.parametrize("case", list(CASES))
def test_grad_on_cupy_equals_numpys(case):
    f, data, wrt = CASES[case]
    args = DATA[data]
    want = sg.grad(f, wrt=wrt)(*args)
    got = sg.grad(f, wrt=wrt)(*map(cupy.asarray, args))
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert isinstance(g, cupy.ndarray)
        np.testing.assert_allclose(cupy.asnumpy(g), w, rtol=1e-10, atol=1e-10)
