"""The gradient of a logistic-regression loss over a dataset too large for one NumPy array here, on a Dask
`LocalCluster` of two worker processes: the data is drawn chunk by chunk on the workers with `dask.array.random`
(never held whole), and the generated gradient (a lazy Dask array) is computed over it. For each size: the
time of the gradient (the data drawn inside it), and each worker's peak resident memory.

    python benchmarks/out_of_core.py 0.25 1 4     # dataset sizes in GiB; writes benchmarks/OUT_OF_CORE.md

The reference gradient of the same data is the hand-derived NumPy gradient computed chunk by chunk (the sum of the
chunks' gradients), so that the result is checked at every size without holding the data.
"""
from __future__ import annotations

import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

import s2sgrad as sg

FEATURES = 16
CHUNK_ROWS = 1 << 20                 # 128 MiB of float64 per chunk of X


def logistic_loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _data(gib: float):
    import dask.array as da
    rows = int(gib * 2 ** 30 / 8 / FEATURES) // CHUNK_ROWS * CHUNK_ROWS or CHUNK_ROWS
    rng = da.random.default_rng(0)
    X = rng.normal(size=(rows, FEATURES), chunks=(CHUNK_ROWS, FEATURES))
    y = (rng.random(rows, chunks=CHUNK_ROWS) < 0.5).astype(float)
    return X, y


def measure(client, gib: float) -> dict:
    """One size: the gradient's time, the largest worker's peak memory, and the difference from the chunk-by-chunk
    NumPy gradient."""
    import dask
    import dask.array as da
    X, y = _data(gib)
    w = da.from_array(np.linspace(-0.5, 0.5, FEATURES))
    start = time.perf_counter()
    dw = sg.grad(logistic_loss)(w, X, y).compute()
    seconds = time.perf_counter() - start
    peaks = client.run(_peak_rss_mib)
    blocks = list(zip(X.to_delayed().ravel(), y.to_delayed().ravel()))
    parts = dask.compute(*(dask.delayed(_chunk_grad)(x, t, w.compute()) for x, t in blocks))
    want = sum(parts) / X.shape[0]
    error = float(np.max(np.abs(dw - want)) / np.max(np.abs(want)))
    return {"GiB": X.nbytes / 2 ** 30, "rows": X.shape[0], "chunks": X.numblocks[0], "seconds": seconds,
            "peak MiB per worker": max(peaks.values()), "error": error}


def _chunk_grad(X, y, w):
    """The hand-derived NumPy gradient of one chunk's share of the mean loss, times the chunk's rows:
    ``X.T @ (sigmoid(X @ w) - y)``."""
    return X.T @ (1.0 / (1.0 + np.exp(-(X @ w))) - y)


def main(sizes: list[float]) -> None:
    from dask.distributed import Client, LocalCluster
    rows = []
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, memory_limit="6GiB",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        for gib in sizes:
            rows.append(measure(client, gib))
            print(rows[-1], flush=True)
    load = os.getloadavg()[0]
    lines = ["# Out of core: a logistic-regression gradient over a Dask dataset", "",
             f"Two worker processes (`LocalCluster(n_workers=2, processes=True)`, one thread each) on "
             f"{os.cpu_count()} cores shared with other work, Python {platform.python_version()}, load average "
             f"{load:.1f} at the end; X of {FEATURES} float64 features in chunks of {CHUNK_ROWS:,} rows (128 MiB), "
             "drawn chunk by chunk on the workers by `dask.array.random` inside the gradient's computation (never "
             "held whole); y likewise. Time: `sg.grad(logistic_loss)(w, X, y).compute()`, code generation included. "
             "Peak memory: the larger worker's peak resident set since the cluster started (sizes run in the order "
             "listed). Error: the largest difference from the NumPy gradient computed chunk by chunk, relative to "
             "its largest entry.", "",
             "| data (GiB) | rows | chunks | time (s) | GiB/s | peak per worker (MiB) | error |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['GiB']:.2f} | {r['rows']:,} | {r['chunks']} | {r['seconds']:.1f} | "
                     f"{r['GiB'] / r['seconds']:.3f} | {r['peak MiB per worker']:.0f} | {r['error']:.1e} |")
    Path(__file__).with_name("OUT_OF_CORE.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main([float(a) for a in sys.argv[1:]] or [0.25, 1.0, 4.0])
