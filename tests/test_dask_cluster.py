"""A real distributed run (issue 16): `examples/dask_cluster.py` starts a `LocalCluster` of two worker processes,
draws a dataset of 100 chunks with `dask.array.random`, and computes the gradients of a logistic-regression loss
and of a small MLP over all of it; they equal the NumPy gradients of the same data to rounding."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("dask.distributed")
pytest.importorskip("array_api_compat")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "dask_cluster.py"


def _example():
    spec = importlib.util.spec_from_file_location("dask_cluster", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gradients_over_a_cluster_equal_numpys():
    figures = _example().run(chunks=100, rows=100, features=4, hidden=6)
    assert figures["workers"] == 2
    assert figures["max_error"] < 1e-12
    dw, dW1, dW2 = figures["gradients"]
    assert dw.shape == (4,) and dW1.shape == (4, 6) and dW2.shape == (6, 1)
