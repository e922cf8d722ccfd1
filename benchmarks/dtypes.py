"""The gradient in float32 against float64: time and peak memory, for the memory-bound workloads.

    python -m benchmarks.dtypes [--before PATH] [--repeat N] [--out FILE]

W3 (the elementwise chain over 10^6 values) and W4 (the MLP) from `benchmarks.workloads`, their float arrays
in float64 and in float32, differentiated by `s2sgrad.grad`: the time of one gradient (the minimum over
rounds of the median of a few calls), its peak memory (tracemalloc, NumPy's allocations included) and the
dtype it returns. Each measurement runs in a process of its own, single-threaded, importing s2sgrad from the
tree being measured: this one, and with ``--before PATH`` (a checkout of an earlier s2sgrad, e.g. ``git
worktree add /tmp/before main``) that one too, side by side in one run. Writes ``benchmarks/DTYPES.md``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORKLOADS = ("W3", "W4")
DTYPES = ("float64", "float32")

MEASURE = r"""
import gc, json, statistics, sys, time, tracemalloc
import numpy as np
import s2sgrad as sg
from benchmarks.workloads import BY_KEY

key, dtype, repeat = sys.argv[1], np.dtype(sys.argv[2]), int(sys.argv[3])
workload = BY_KEY[key]
args = tuple(a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
             for a in workload.make_inputs())
df = sg.grad(workload.forward, wrt=workload.wrt)
grads = df(*args)                                          # generated, compiled, warmed up
medians = []
for _ in range(repeat):
    times = []
    for _ in range(3):
        start = time.perf_counter()
        df(*args)
        times.append(time.perf_counter() - start)
    medians.append(statistics.median(times))
gc.collect()
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
df(*args)
peak = tracemalloc.get_traced_memory()[1] - base
tracemalloc.stop()
print(json.dumps({"time": min(medians), "peak": peak, "dtype": str(grads[0].dtype),
                  "s2sgrad": sg.__file__}))
"""


def measure(tree: Path, key: str, dtype: str, repeat: int) -> dict:
    """One measurement, in a fresh single-threaded process importing s2sgrad from `tree`."""
    env = dict(os.environ, PYTHONPATH=f"{tree}{os.pathsep}{ROOT}", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", MEASURE, key, dtype, str(repeat)], env=env, cwd=tree,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(results: dict, trees: dict) -> list[str]:
    """The Markdown rows: per workload and tree, float64 and float32 side by side, and their ratios."""
    rows = ["| workload | s2sgrad | float64 time | float32 time | time 32/64 | float64 peak | float32 peak "
            "| peak 32/64 | gradient dtype (float32 in) |",
            "|---|---|---|---|---|---|---|---|---|"]
    for key in WORKLOADS:
        for label in trees:
            wide, narrow = results[label, key, "float64"], results[label, key, "float32"]
            rows.append(f"| {key} | {label} | {wide['time'] * 1e3:.1f} ms | {narrow['time'] * 1e3:.1f} ms "
                        f"| {narrow['time'] / wide['time']:.2f} | {wide['peak'] / 2 ** 20:.1f} MiB "
                        f"| {narrow['peak'] / 2 ** 20:.1f} MiB | {narrow['peak'] / wide['peak']:.2f} "
                        f"| {narrow['dtype']} |")
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="an earlier s2sgrad checkout, measured beside this one")
    parser.add_argument("--repeat", type=int, default=7, help="rounds the minimum is taken over (default 7)")
    parser.add_argument("--out", type=Path, default=HERE / "DTYPES.md")
    options = parser.parse_args(argv)
    trees = {"before": options.before} if options.before else {}
    trees["after"] = ROOT
    results = {}
    for round_ in range(2):                      # interleaved: each tree measured in both halves of the run
        for key in WORKLOADS:
            for label, tree in trees.items():
                for dtype in DTYPES:
                    got = measure(tree, key, dtype, (options.repeat + 1) // 2)
                    best = results.get((label, key, dtype))
                    if best is None or got["time"] < best["time"]:
                        results[label, key, dtype] = got
                    print(f"{key} {label} {dtype}: {got['time'] * 1e3:.1f} ms, {got['peak'] / 2 ** 20:.1f} MiB, "
                          f"gradient {got['dtype']}", flush=True)
    lines = ["# Gradients in float32 and float64", "",
             f"Measured {datetime.date.today()} on {platform.machine()}, Python {platform.python_version()}, "
             "one thread, by `python -m benchmarks.dtypes"
             + (" --before PATH" if options.before else "") + "`: W3 (elementwise chain, 10^6 values) and W4 "
             "(MLP, batch 256, 784-256-256-10) of `benchmarks/workloads.py`, their float arrays in each dtype. "
             "Time: one `sg.grad` call (minimum over rounds of the median of three calls); peak: tracemalloc "
             "during one call. `before` is the `--before` checkout (an earlier s2sgrad), `after` this tree. The "
             "last column is the dtype of the gradient of float32 arguments: both hand back float32, the peak "
             "shows what it was computed in.", "", *table(results, trees), ""]
    options.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
