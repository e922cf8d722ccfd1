"""Checkpointed loops: peak memory, time and forward steps against store-all.

    python benchmarks/checkpointing.py [--quick] [--out DIR] [--n 1000 10000 ...] [--snapshots 10 30]

An explicit-Euler integration of ``dy/dt = tanh(a * y + b) - y / 2`` with a
state of 1,000 float64, differentiated with respect to ``y0``, ``a`` and
``b``, in two versions:

* ``for``: ``for i in range(n)``, the trip count known on entry;
* ``while``: ``while t < T`` with ``t += dt``, the trip count known only when
  the loop ends (``dt`` is a power of two and ``T = (n - 1/2) dt``, so the
  loop makes exactly ``n`` trips).

Each is differentiated with the per-call option ``checkpoint=``: ``None``
(store-all), ``Periodic(every=isqrt(n))``, ``Periodic(every=n)`` (one segment), and ``Revolve(s)`` (``for``) or
``Online(s)`` (``while``) for s = 10 and 30, and s = 50 for n <= 3000 (where
n <= (s + 1)(s + 2) / 2 for n = 1000).  For each it measures

* the peak memory of one gradient call with tracemalloc, and its ratio to
  store-all's;
* the CPU time (``time.process_time``, so that other processes on the
  machine count less) of one gradient call without tracemalloc (best of 3
  for ``n <= 3000``; beyond, best of 2 for store-all and Periodic, one run
  for the others), and its ratio to store-all's;
* the body executions, counted by the body itself; the *forward steps* are
  the executions that are not recordings (body executions minus ``n``),
  compared with ``optimal_forward_steps(n, s)``, the binomial optimum for
  ``s`` snapshot slots (which counts the first forward sweep's steps);
* the largest relative difference of the gradients from store-all's.

Then ``online_bound.py`` sweeps ``Online(s)``'s forward steps against the
online bound, without running a loop (``--online-max-n``, default 10^5),
and ``online_tracker_cost.py`` times its tracker per step.
It writes ``CHECKPOINTING.md`` (the tables) and, if matplotlib imports,
``checkpointing.png`` (peak memory against n, log-log) and
``online_bound.png`` to ``benchmarks/``, or
with ``--quick`` (small n) to ``benchmarks/out/``.
"""
from __future__ import annotations

import argparse
import datetime
import gc
import itertools
import os
import platform
import sys
import time
import tracemalloc
from dataclasses import dataclass
from math import isqrt
from pathlib import Path

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402
import online_bound  # noqa: E402
import online_tracker_cost  # noqa: E402

import s2sgrad as sg  # noqa: E402
from s2sgrad.schedules import optimal_forward_steps  # noqa: E402

STATE = 1000
DT = 1.0 / 1024                 # a power of two: t = k * DT exactly
FULL_N = [1000, 3000, 10_000, 100_000]
QUICK_N = [100, 300, 1000]
FULL_SNAPSHOTS = [10, 30]
QUICK_SNAPSHOTS = [5, 10]
# and, for small n only, an s with n <= (s + 1)(s + 2) / 2, where Online is near-optimal
FULL_SMALL_N, FULL_EXTRA = 3000, 50
QUICK_SMALL_N, QUICK_EXTRA = 300, 20


STEPS = itertools.count()      # body executions: each takes the next number (keeping nothing)


def body_runs_since(mark: int) -> int:
    """Body executions since ``mark = next(STEPS)`` was taken."""
    return next(STEPS) - mark - 1


def ode_for(y0, a, b, n):
    y = y0
    for i in range(n):
        next(STEPS)
        y = y + 0.05 * (np.tanh(a * y + b) - 0.5 * y)
    return np.sum(y * y)


def ode_while(y0, a, b, T):
    y = y0
    t = 0.0
    while t < T:
        next(STEPS)
        y = y + 0.05 * (np.tanh(a * y + b) - 0.5 * y)
        t = t + DT
    return np.sum(y * y)


VERSIONS = {"for": ode_for, "while": ode_while}


def last_argument(version: str, n: int):
    return n if version == "for" else (n - 0.5) * DT


def inputs():
    rng = np.random.default_rng(0)
    return rng.standard_normal(STATE), rng.standard_normal(STATE), 0.5 * rng.standard_normal(STATE)


@dataclass
class Row:
    version: str
    n: int
    label: str
    snapshots: int | None
    peak: int
    seconds: float
    runs: int
    max_rel_diff: float
    memory_ratio: float = 1.0
    time_ratio: float = 1.0

    @property
    def forward_steps(self) -> int:
        return self.runs - self.n

    @property
    def optimum(self) -> int | None:
        return None if self.snapshots is None else optimal_forward_steps(self.n, self.snapshots)


def schedules(version: str, n: int, snapshots: list[int]):
    yield "store-all", None, None
    every = max(1, isqrt(n))
    yield f"Periodic({every})", sg.Periodic(every=every), None
    yield f"Periodic({n})", sg.Periodic(every=n), None          # one segment: store-all in effect
    for s in snapshots:
        if version == "for":
            yield f"Revolve({s})", sg.Revolve(snapshots=s), s
        else:
            yield f"Online({s})", sg.Online(snapshots=s), s


def rel_diff(got, expected) -> float:
    return max(float(np.max(np.abs(g - e)) / np.max(np.abs(e))) for g, e in zip(got, expected))


def measure(version: str, n: int, snapshots: list[int], log) -> list[Row]:
    f = VERSIONS[version]
    y0, a, b = inputs()
    last = last_argument(version, n)
    rows = []
    reference = None
    for label, schedule, s in schedules(version, n, snapshots):
        df = sg.grad(f, wrt=(0, 1, 2), checkpoint=schedule)
        df(y0, a, b, last_argument(version, 3))          # generate the code first
        gc.collect()
        best, runs = float("inf"), None
        # best of 3 for small n; for large n, store-all and Periodic (cheap) run twice, so that
        # store-all's time does not depend on whether the process already holds the pages it fills
        repeats = 3 if n <= 3000 else 2 if s is None else 1
        for _ in range(repeats):
            mark = next(STEPS)
            start = time.process_time()
            grads = df(y0, a, b, last)
            best = min(best, time.process_time() - start)
            runs = body_runs_since(mark)
            del grads
            gc.collect()
        tracemalloc.start()
        grads = df(y0, a, b, last)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        if reference is None:
            reference = grads
        row = Row(version, n, label, s, peak, best, runs, rel_diff(grads, reference))
        del grads
        gc.collect()
        rows.append(row)
        row.memory_ratio = row.peak / rows[0].peak
        row.time_ratio = row.seconds / rows[0].seconds
        log(row)
    return rows


def mb(nbytes: int) -> str:
    return f"{nbytes / 1e6:.3g}"


def table(rows: list[Row]) -> list[str]:
    out = ["| loop | n | schedule | peak MB | memory ÷ store-all | time s | time ÷ store-all "
           "| (forward steps + n) ÷ 2n | body runs | forward steps | optimum | ÷ optimum | max rel. diff |",
           "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        optimum = r.optimum
        ratio = f"{r.forward_steps / optimum:.3f}" if optimum else "—"
        out.append(f"| {r.version} | {r.n:,} | {r.label} | {mb(r.peak)} | {r.memory_ratio:.2e} "
                   f"| {r.seconds:.3g} | {r.time_ratio:.2f} | {(r.forward_steps + r.n) / (2 * r.n):.2f} "
                   f"| {r.runs:,} | {r.forward_steps:,} "
                   f"| {'—' if optimum is None else f'{optimum:,}'} | {ratio} | {r.max_rel_diff:.1e} |")
    return out


def summary(rows: list[Row]) -> list[str]:
    out = []
    for r in rows:
        if r.label.startswith("Periodic"):
            every = int(r.label[len("Periodic("):-1])
            out.append(f"- {r.version}, n = {r.n:,}, {r.label}: {r.runs:,} body runs, n + every · (⌈n / every⌉ − 1) "
                       f"= {r.n + every * (-(-r.n // every) - 1):,}")
        if r.label.startswith("Revolve"):
            extra = r.forward_steps - r.optimum
            out.append(f"- {r.version}, n = {r.n:,}, {r.label}: {r.forward_steps:,} forward steps, "
                       f"optimum {r.optimum:,} (+{extra})")
    online = [r for r in rows if r.label.startswith("Online")]
    if online:
        for r in online:
            s = r.snapshots
            regime = "n ≤ (s+1)(s+2)/2" if r.n <= (s + 1) * (s + 2) // 2 else "n > (s+1)(s+2)/2"
            out.append(f"- {r.version}, n = {r.n:,}, {r.label}: {r.forward_steps / r.optimum:.3f} × the "
                       f"offline optimum ({regime})")
    return out


def write_markdown(path: Path, rows: list[Row], args, elapsed: float, cpu: float,
                   online_section: list[str]) -> None:
    lines = [
        "# Checkpointed loops: memory, time and forward steps",
        "",
        f"Written by `benchmarks/checkpointing.py{' --quick' if args.quick else ''}` on "
        f"{datetime.date.today().isoformat()} ({platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, NumPy {np.__version__}); the run took {elapsed:.0f} s "
        f"({cpu:.0f} s of CPU).",
        "",
        f"Workload: explicit Euler on `dy/dt = tanh(a*y + b) - y/2`, state of {STATE:,} float64, "
        "gradient with respect to `y0`, `a`, `b` of `sum(y*y)` at the end; `for i in range(n)` and "
        "`while t < T` versions, checkpointed with the `checkpoint=` option.",
        "",
        "- *peak MB*: tracemalloc's peak during one gradient call (the inputs excluded);",
        "- *time s*: CPU time (`time.process_time`) of one gradient call without tracemalloc "
        "(best of 3 for n ≤ 3,000; beyond, best of 2 for store-all and Periodic, one run otherwise);",
        "- *body runs*: executions of the loop body, counted by the body; *forward steps* = body runs − n "
        "(every step is recorded exactly once), the convention of `s2sgrad.schedules`, in which "
        "`optimal_forward_steps(n, s)` (*optimum*) is the binomial optimum with s snapshot slots, "
        "the steps of the first forward sweep included;",
        "- *(forward steps + n) ÷ 2n*: the time ratio if a recorded and reversed step cost two plain "
        "steps and nothing else counted: what the extra forward steps alone cost;",
        "- *max rel. diff*: the largest difference from store-all's gradients, relative to the "
        "largest entry of each.",
        "",
        "Online(s) is benchmarked on the `while` version, whose trip count is not known on entry "
        "(what it is for); Revolve(s) on a `while` loop is Online(s).",
        "",
        *table(rows),
        "",
        "## Forward steps against the optimum",
        "",
        "The forward sweep records the trips of the plan's first `Reverse` as it runs them (a `for` loop), "
        "or the trips since the latest snapshot of a tracker that asks for it (`Periodic` on a `while` loop), "
        "so that they run once; the state at the turn is not copied, so no more than s snapshots are ever "
        "held. Revolve: the forward sweep runs n − 1 steps unrecorded (the plan's advances) and records "
        "step n − 1 (its first `Reverse(1)`), so the forward steps are the optimum exactly. Periodic: "
        "every segment but the last runs twice (once unrecorded, once recorded), the last once.",
        "",
        *summary(rows),
        "",
        *online_section,
        *online_tracker_cost.section(),
        "",
    ]
    path.write_text("\n".join(lines))


def plot(path: Path, rows: list[Row]) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7.5, 5))
    labels = []
    rows = [r for r in rows if r.label != f"Periodic({r.n})"]   # one segment: store-all's line
    for r in rows:
        key = (r.version, "Periodic(√n)" if r.label.startswith("Periodic") else r.label)
        if key not in labels:
            labels.append(key)
    markers = {"store-all": "o", "Periodic(√n)": "s"}
    for version, label in labels:
        points = [r for r in rows if r.version == version and
                  (r.label == label or (label == "Periodic(√n)" and r.label.startswith("Periodic")))]
        ax.loglog([r.n for r in points], [r.peak / 1e6 for r in points],
                  linestyle="-" if version == "for" else "--",
                  marker=markers.get(label, "^" if label.startswith(("Revolve", "Online")) else "x"),
                  label=f"{version}: {label}")
    ax.set_xlabel("n (loop trips)")
    ax.set_ylabel("peak memory of the gradient (MB, tracemalloc)")
    ax.set_title(f"Checkpointed Euler loop, state of {STATE:,} float64")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small n: a smoke run, written to benchmarks/out/")
    parser.add_argument("--n", type=int, nargs="+", help="the trip counts (default 10^3 .. 10^5)")
    parser.add_argument("--snapshots", type=int, nargs="+", help="the s of Revolve(s) and Online(s)")
    parser.add_argument("--versions", nargs="+", choices=list(VERSIONS), default=list(VERSIONS))
    parser.add_argument("--out", type=Path, help="where CHECKPOINTING.md and checkpointing.png go")
    parser.add_argument("--online-max-n", type=int, default=online_bound.MAX_N,
                        help="the largest n of Online's sweep against its bound (online_bound.py)")
    args = parser.parse_args(argv)
    ns = args.n or (QUICK_N if args.quick else FULL_N)

    def snapshots(n):
        if args.snapshots:
            return args.snapshots
        if args.quick:
            return QUICK_SNAPSHOTS + ([QUICK_EXTRA] if n <= QUICK_SMALL_N else [])
        return FULL_SNAPSHOTS + ([FULL_EXTRA] if n <= FULL_SMALL_N else [])
    out = args.out or (HERE / "out" if args.quick else HERE)
    out.mkdir(parents=True, exist_ok=True)

    def log(r: Row) -> None:
        optimum = f", optimum {r.optimum:,}" if r.optimum is not None else ""
        print(f"{r.version:5} n={r.n:>7,} {r.label:14} peak {mb(r.peak):>8} MB ({r.memory_ratio:.2e})  "
              f"{r.seconds:7.3f} s ({r.time_ratio:5.2f})  runs {r.runs:>9,}  forward {r.forward_steps:>9,}"
              f"{optimum}  diff {r.max_rel_diff:.1e}", flush=True)

    start, cpu_start = time.perf_counter(), time.process_time()
    rows = []
    for version in args.versions:
        for n in ns:
            rows += measure(version, n, snapshots(n), log)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    results = online_bound.sweep(online_bound.SNAPSHOTS, args.online_max_n)
    picture = "online_bound.png" if online_bound.plot(out / "online_bound.png", results) else None
    write_markdown(out / "CHECKPOINTING.md", rows, args, elapsed, cpu, online_bound.section(results, picture))
    print(f"wrote {out / 'CHECKPOINTING.md'}")
    if plot(out / "checkpointing.png", rows):
        print(f"wrote {out / 'checkpointing.png'}")
    else:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
    print(f"{elapsed:.0f} s ({cpu:.0f} s of CPU)")


if __name__ == "__main__":
    main()
