"""Gradients over a dataset spread across a Dask cluster: the same generated gradient as for NumPy arrays, run on
a chunked Dask array, computed by two worker processes.

    python examples/dask_cluster.py            # 200 chunks of 5,000 rows

`sg.grad` of a loss written with ``np.*`` calls, given Dask arrays, generates code that calls the array API of
Dask (``xp.exp``, ``xp.matmul``, ...): the gradient is a lazy Dask array with the parameters' chunks, and
``.compute()`` runs it on the cluster, chunk by chunk.
"""
from __future__ import annotations

import sys
import time

import numpy as np

import s2sgrad as sg


def logistic_loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def mlp_loss(W1, W2, X, y):
    h = np.tanh(X @ W1)
    out = h @ W2
    return np.mean((out[:, 0] - y) ** 2)


def dataset(chunks: int, rows: int, features: int, seed: int = 0):
    """A chunked Dask dataset drawn chunk by chunk on the workers: `chunks` blocks of `rows` rows."""
    import dask.array as da
    rng = da.random.default_rng(seed)
    X = rng.normal(size=(chunks * rows, features), chunks=(rows, features))
    y = (rng.random(chunks * rows, chunks=rows) < 1.0 / (1.0 + da.exp(-X[:, 0]))).astype(float)
    return X, y


def run(chunks: int = 200, rows: int = 5_000, features: int = 8, hidden: int = 16, check: bool = True) -> dict:
    """Start a `LocalCluster` of two worker processes, compute both losses' gradients over the whole dataset, and
    (`check`) compare them with the NumPy gradients of the same data; returns the figures."""
    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    figures: dict = {"chunks": chunks, "rows": chunks * rows, "features": features}
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        X, y = dataset(chunks, rows, features)
        X, y = client.persist([X, y])          # the data lives on the workers, in chunks
        rng = np.random.default_rng(1)
        w = da.from_array(rng.normal(size=features) * 0.1)
        W1 = da.from_array(rng.normal(size=(features, hidden)) * 0.3)
        W2 = da.from_array(rng.normal(size=(hidden, 1)) * 0.3)

        start = time.perf_counter()
        dw = sg.grad(logistic_loss)(w, X, y)
        dW1, dW2 = sg.grad(mlp_loss, wrt=(0, 1))(W1, W2, X, y)
        assert isinstance(dw, da.Array) and dw.chunks == w.chunks
        dw, dW1, dW2 = dask.compute(dw, dW1, dW2)
        figures["seconds"] = time.perf_counter() - start
        figures["workers"] = len(client.scheduler_info()["workers"])
        if check:
            Xn, yn = dask.compute(X, y)
            want_w = sg.grad(logistic_loss)(w.compute(), Xn, yn)
            want_1, want_2 = sg.grad(mlp_loss, wrt=(0, 1))(W1.compute(), W2.compute(), Xn, yn)
            figures["max_error"] = max(float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))
                                       for a, b in ((dw, want_w), (dW1, want_1), (dW2, want_2)))
        figures["gradients"] = dw, dW1, dW2
    return figures


if __name__ == "__main__":
    result = run(*(int(a) for a in sys.argv[1:3]))
    print(f"{result['rows']:,} rows in {result['chunks']} chunks on {result['workers']} workers: "
          f"{result['seconds']:.2f} s, largest relative difference from NumPy {result['max_error']:.1e}")
