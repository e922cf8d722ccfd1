"""Checkpointed loops with a loop-invariant weight: time and memory against store-all, before and after.

    python -m benchmarks.checkpointed_loops [--before TREE] [--rounds 5] [--quick] [--out DIR]

Three workloads, each differentiated with respect to its weight (and state, bias):

* ``ode``: ``while t < T: x = x + dt * np.tanh(W @ x)``, with a 2000 x 2000 weight (64 steps) and a
  256 x 256 one (1000 steps); Revolve needs the trip count on entry, so it runs the same step as
  ``for _ in range(n)`` (``ode_for``), timed against that loop's store-all;
* ``rnn``: ``for i in range(T): h = np.tanh(W @ h + xs[i] + b)``, a 512 x 512 weight, 200 steps.

Each is run with ``checkpoint=None`` (store-all), ``Periodic(every=k)``, ``Online(s)`` and ``Revolve(s)``
(k = s = isqrt(steps)). For each it reports

* time ÷ store-all (CPU time of one gradient call, the minimum over rounds of each round's median), for
  the tree given by ``--before`` (the code before the change, imported through PYTHONPATH) and for this
  tree, measured in one run: two worker processes, one per tree, asked in turn;
* the extra forward steps ÷ steps: the body executions beyond store-all's (the trips recorded again and
  the trips advanced), counted by running the schedule (`s2sgrad.runtime.Checkpoints`);
* the target: time ÷ store-all ≤ 1 + extra forward steps ÷ steps + 0.2;
* the peak memory of one gradient call (tracemalloc), before and after;
* the largest difference of the gradient from store-all's, relative to its largest element.

It writes ``CHECKPOINTED_LOOPS.md`` to ``benchmarks/`` (with ``--quick``, smaller sizes, to
``benchmarks/out/``).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from math import isqrt
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


# ---------------------------------------------------------------- the workloads (as users write them)

def ode(W, x, T):
    t = 0.0
    dt = 0.125
    while t < T:
        x = x + dt * np.tanh(W @ x)
        t = t + dt
    return np.sum(x * x)


def ode_for(W, x, n):
    dt = 0.125
    for _ in range(n):
        x = x + dt * np.tanh(W @ x)
    return np.sum(x * x)


def rnn(W, b, xs, h):
    for i in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[i] + b)
    return np.sum(h * h)


# what --before was for the published table: `git archive` of the branch point
BEFORE_IS = ("commit 14bb0a7 (a checkpointed loop's forward sweep recording nothing, Online's tracker deciding "
             "at every step)")
FULL = [("ode", 2000, 64), ("ode", 256, 1000), ("rnn", 512, 200)]
QUICK = [("ode", 200, 16), ("ode", 64, 100), ("rnn", 64, 40)]


def arguments(kind: str, size: int, steps: int, loop: str):
    """The function, its arguments and the indices differentiated."""
    rng = np.random.default_rng(0)
    W = rng.standard_normal((size, size)) / np.sqrt(size)
    if kind == "rnn":
        return rnn, (W, 0.1 * rng.standard_normal(size), rng.standard_normal((steps, size)),
                     rng.standard_normal(size)), (0, 1, 3)
    x = rng.standard_normal(size) / np.sqrt(size)
    if loop == "for":
        return ode_for, (W, x, steps), (0, 1)
    return ode, (W, x, (steps - 0.5) * 0.125), (0, 1)


def schedules(kind: str, steps: int):
    """(label, the loop the schedule runs on, the schedule's text): the ODE's ``while`` loop, or its ``for``
    loop for Revolve (which needs the trip count on entry); the RNN's ``for`` loop."""
    s = max(isqrt(steps), 2)
    loop = "for" if kind == "rnn" else "while"
    out = [("store-all", loop, "None"), (f"Periodic({s})", loop, f"sg.Periodic(every={s})"),
           (f"Online({s})", loop, f"sg.Online(snapshots={s})")]
    if kind != "rnn":
        out.append(("store-all (for)", "for", "None"))
    return out + [(f"Revolve({s})", "for", f"sg.Revolve(snapshots={s})")]


def extra_forward_steps(schedule_text: str, steps: int, loop: str) -> int:
    """The body executions beyond store-all's `steps`: every step the backward sweep runs again."""
    import s2sgrad as sg
    from s2sgrad.runtime import Checkpoints
    if schedule_text == "None":
        return 0
    schedule = eval(schedule_text, {"sg": sg})
    checkpoints = Checkpoints(schedule, steps if loop == "for" else None)
    for k in range(steps):
        checkpoints.step((k,))
    checkpoints.state = (steps,)
    extra = 0
    for work in checkpoints.backward():
        if work.recorded:                 # recorded by the forward sweep: its trips run once
            continue
        extra += work.steps
        if not work.reverse:
            checkpoints.state = (None,)
    return extra


# ---------------------------------------------------------------- a worker: one tree of s2sgrad

def worker(tree: str) -> None:
    """Answer requests (JSON lines on stdin) with measurements made with the s2sgrad found in `tree`."""
    sys.path.insert(0, tree)
    import s2sgrad as sg
    gradients = {}
    for line in sys.stdin:
        request = json.loads(line)
        key = (request["kind"], request["size"], request["steps"], request["loop"], request["schedule"])
        if key not in gradients:
            fn, args, wrt = arguments(*key[:4])
            schedule = eval(request["schedule"], {"sg": sg})
            gradient = sg.grad(fn, wrt=wrt, checkpoint=schedule)
            gradient(*args)                              # generate and compile once
            gradients[key] = gradient, args
        gradient, args = gradients[key]
        if request["what"] == "time":
            times = []
            for _ in range(request["repeat"]):
                start = time.process_time()
                gradient(*args)
                times.append(time.process_time() - start)
            answer = {"median": statistics.median(times)}
        elif request["what"] == "memory":
            tracemalloc.start()
            gradient(*args)
            answer = {"peak": tracemalloc.get_traced_memory()[1]}
            tracemalloc.stop()
        else:                                             # the gradient itself, in a file
            np.savez(request["path"], *gradient(*args))
            answer = {"path": request["path"]}
        print(json.dumps(answer), flush=True)


class Worker:
    def __init__(self, tree: str):
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        env.pop("PYTHONPATH", None)
        self.process = subprocess.Popen([sys.executable, str(Path(__file__)), "--worker", tree], env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, **request):
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker stopped on {request}")
        return json.loads(line)

    def close(self):
        self.process.stdin.close()
        self.process.wait()


# ---------------------------------------------------------------- the run

def largest_difference(got: list, expected: list) -> float:
    worst = 0.0
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        scale = float(np.max(np.abs(e))) or 1.0
        worst = max(worst, float(np.max(np.abs(g - e))) / scale)
    return worst


def measure(workloads, before: str | None, rounds: int) -> list[dict]:
    trees = {"after": str(HERE.parent)}
    if before:
        trees["before"] = before
    workers = {name: Worker(tree) for name, tree in trees.items()}
    rows = []
    scratch = Path(tempfile.mkdtemp())
    try:
        for kind, size, steps in workloads:
            repeat = 3 if size >= 1000 else 7
            base = {}
            for label, loop, text in schedules(kind, steps):
                request = dict(kind=kind, size=size, steps=steps, loop=loop, schedule=text)
                row = dict(workload=f"{kind} {size}x{size}, {steps} steps", schedule=label, loop=loop,
                           extra=extra_forward_steps(text, steps, loop) / steps)
                medians = {name: [] for name in workers}
                for _ in range(rounds):
                    for name, w in workers.items():
                        medians[name].append(w.ask(what="time", repeat=repeat, **request)["median"])
                for name, w in workers.items():
                    row[f"time_{name}"] = min(medians[name])
                    row[f"peak_{name}"] = w.ask(what="memory", **request)["peak"]
                path = workers["after"].ask(what="grads", path=str(scratch / "grads.npz"), **request)["path"]
                with np.load(path) as saved:
                    grads = [saved[k] for k in saved.files]
                if text == "None":
                    base[loop] = row
                    row["expected"] = grads
                row["difference"] = largest_difference(grads, base[loop]["expected"])
                for name in workers:
                    row[f"ratio_{name}"] = row[f"time_{name}"] / base[loop][f"time_{name}"]
                rows.append(row)
                print(f"{row['workload']:<28} {label:<16} " + "  ".join(
                    f"{name} {row[f'ratio_{name}']:.2f}x" for name in workers)
                    + f"  bound {1 + row['extra'] + 0.2:.2f}", flush=True)
    finally:
        for w in workers.values():
            w.close()
        shutil.rmtree(scratch)
    return rows


def table(rows: list[dict], before: bool) -> str:
    head = ["workload", "schedule", "time ÷ store-all"]
    if before:
        head.insert(2, "before: time ÷ store-all")
    head += ["extra forward steps ÷ steps", "target ≤", "met", "time (s)", "peak memory (MB)"]
    if before:
        head.append("before: peak memory (MB)")
    head.append("largest difference from store-all")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        bound = 1 + row["extra"] + 0.2
        cells = [row["workload"], row["schedule"], f"{row['ratio_after']:.2f}"]
        if before:
            cells.insert(2, f"{row['ratio_before']:.2f}")
        cells += [f"{row['extra']:.2f}", f"{bound:.2f}", "yes" if row["ratio_after"] <= bound else "**no**",
                  f"{row['time_after']:.3f}", f"{row['peak_after'] / 1e6:.1f}"]
        if before:
            cells.append(f"{row['peak_before'] / 1e6:.1f}")
        cells.append(f"{row['difference']:.1e}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="a tree of s2sgrad to compare with (the code before the change)")
    parser.add_argument("--before-is", default=BEFORE_IS, help="what the tree given by --before is, for the text")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    out = args.out or (HERE / "out" if args.quick else HERE)
    out.mkdir(parents=True, exist_ok=True)
    rounds = 2 if args.quick else args.rounds
    rows = measure(QUICK if args.quick else FULL, args.before, rounds)
    text = [
        "# Checkpointed loops with a loop-invariant weight",
        "",
        f"Generated by `python -m benchmarks.checkpointed_loops{' --before TREE' if args.before else ''}` on "
        f"{datetime.date.today().isoformat()} ({platform.machine()}, Python {platform.python_version()}, NumPy "
        f"{np.__version__}, one BLAS thread). Time: CPU time of one gradient call, the minimum over {rounds} "
        f"rounds of each round's median; *before* is {args.before_is}, measured in the same run. Store-all is "
        "the `while` loop's, and the `for` loop's for "
        "Revolve. Extra forward steps: the body executions beyond store-all's (the trips recorded again and "
        "the trips advanced), counted by running the schedule. Target: time ÷ store-all ≤ 1 + extra forward "
        "steps ÷ steps + 0.2.",
        "",
        table(rows, bool(args.before)),
        "",
    ]
    (out / "CHECKPOINTED_LOOPS.md").write_text("\n".join(text))
    print(f"wrote {out / 'CHECKPOINTED_LOOPS.md'}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
    else:
        sys.path.insert(0, str(HERE.parent))
        main()
