"""New batch sizes and sequence lengths: does a gradient regenerate, and what does size-generic code cost?

    python -m benchmarks.sizes [--before PATH] [--rounds N]

For an RNN (a new sequence length), an MLP (a new batch size) and a 200-line straight-line function (a new batch
size), this times

* the first call with a new size, after a call with another size: in this tree, and in the tree at `--before`
  (a checkout of the code before shape patterns, run in a subprocess with ``PYTHONPATH`` pointing at it);
* the steady state, in this process, side by side round by round: the size-generic generated function (what
  `grad` runs now) against the size-specific one (generated for the arguments' exact shapes, as before), and
  the cost of computing the arguments' shape pattern on each call;

and writes ``benchmarks/SIZES.md``.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

# Single-threaded, as benchmarks/run.py: the BLAS libraries read these when they load.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def rnn(W, U, b, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h ** 2)


def mlp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    return np.mean((z - Y) ** 2)


LINE_FORMS = [
    "h{k} = np.tanh(h{a} @ W + b)",
    "h{k} = h{a} * 0.5 + np.sin(h{c}) * 0.25",
    "h{k} = h{a} - np.mean(h{a}, axis=0, keepdims=True) * 0.1",
    "h{k} = h{a} * np.exp(-0.01 * h{c} * h{c})",
    "h{k} = (h{a} + h{c}) * 0.5 + b * 0.01",
]


def long_source(lines: int = 200) -> str:
    """A straight-line function of `lines` statements on a batch X (n, d) with weights W (d, d) and b (d,)."""
    body = ["    h0 = X"]
    for k in range(1, lines - 1):
        body.append("    " + LINE_FORMS[k % len(LINE_FORMS)].format(k=k, a=k - 1, c=max(k - 3, 0)))
    body.append(f"    return np.sum(h{lines - 2} ** 2) / X.shape[0]")
    return "import numpy as np\n\n\ndef long_function(W, b, X):\n" + "\n".join(body) + "\n"


def long_function():
    folder = Path(tempfile.mkdtemp(prefix="s2sgrad_sizes_"))
    path = folder / "long_function.py"
    path.write_text(long_source())
    spec = importlib.util.spec_from_file_location("long_function", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.long_function


def workloads():
    """name -> (function, wrt, the arguments for each size in turn: the first, then new ones)."""
    r = np.random.default_rng(0)
    hidden, inputs = 32, 16
    W, U, b = r.normal(size=(hidden, hidden)) * 0.15, r.normal(size=(hidden, inputs)) * 0.25, r.normal(size=hidden)
    rnn_args = [(W, U, b, r.normal(size=(steps, inputs))) for steps in (200, 150, 250, 300)]
    W1, b1, W2, b2 = r.normal(size=(64, 128)) * 0.1, r.normal(size=128), r.normal(size=(128, 10)) * 0.1, \
        r.normal(size=10)
    mlp_args = [(W1, b1, W2, b2, r.normal(size=(n, 64)), r.normal(size=(n, 10))) for n in (256, 200, 300, 160)]
    d = 16
    Wl, bl = r.normal(size=(d, d)) * 0.2, r.normal(size=d)
    long_args = [(Wl, bl, r.normal(size=(n, d))) for n in (64, 100, 32, 80)]
    return {"RNN, new sequence length": (rnn, (0, 1, 2), rnn_args),
            "MLP, new batch size": (mlp, (0, 1, 2, 3), mlp_args),
            "200-line function, new batch size": (long_function(), (0, 1), long_args)}


def new_size_calls() -> dict:
    """name -> the median time (s) of a call with a new size, after a first call with another size."""
    import s2sgrad as sg
    out = {}
    for name, (f, wrt, sizes) in workloads().items():
        df = sg.grad(f, wrt)
        df(*sizes[0])
        times = []
        for args in sizes[1:]:
            times.append(timeit.timeit(lambda: df(*args), number=1))    # noqa: B023 - called at once
        out[name] = statistics.median(times)
    return out


def steady_state(rounds: int) -> dict:
    """name -> (generic s, specific s, their ratio, pattern s, extra lines): the generated functions on the
    first size, medians over interleaved rounds (each the min of a few repeats; the ratio: the median of the
    rounds' ratios), the per-call cost of the shape pattern, and the lines the generic code has in addition."""
    from s2sgrad.analysis.dtypes import dtype_of
    from s2sgrad.api.generation import generated
    from s2sgrad.api.reverse import _Call
    from s2sgrad.pipeline.kinds import kind_of, kinds_of
    out = {}
    for name, (f, wrt, sizes) in workloads().items():
        args = sizes[0]
        names = _Call(f, wrt).names
        dtypes = tuple(map(dtype_of, args))
        generic = generated(f, names, "grad", kinds_of(args, with_values=True), dtypes=dtypes)
        specific = generated(f, names, "grad", tuple(kind_of(v) for v in args), dtypes=dtypes)
        for a, b in zip(generic(*args), specific(*args)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        number = max(1, int(0.05 / timeit.timeit(lambda: generic(*args), number=1)))  # noqa: B023
        timings: dict = {"generic": [], "specific": []}
        for _ in range(rounds):
            for label, fn in (("generic", generic), ("specific", specific)):
                timings[label].append(min(timeit.repeat(lambda: fn(*args), number=number, repeat=3)) / number)  # noqa: B023
        pattern = min(timeit.repeat(lambda: kinds_of(args), number=2000, repeat=5)) / 2000   # noqa: B023
        exact = min(timeit.repeat(lambda: tuple(map(kind_of, args)), number=2000, repeat=5)) / 2000  # noqa: B023
        ratio = statistics.median(g / s for g, s in zip(timings["generic"], timings["specific"]))
        extra = len(generic.source.splitlines()) - len(specific.source.splitlines())
        out[name] = (statistics.median(timings["generic"]), statistics.median(timings["specific"]), ratio,
                     pattern - exact, extra)
    return out


def in_tree(path: str) -> dict:
    """`new_size_calls` run with the s2sgrad at `path`."""
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--new-size-calls"], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(before: dict | None, after: dict, steady: dict) -> str:
    lines = ["# A new size: regeneration and the cost of size-generic code", "",
             "Written by `python -m benchmarks.sizes`. *New-size call*: the first call of `grad(f)` with a size "
             "it has not seen, after a call with another (median over three new sizes); before shape patterns it "
             "regenerates the gradient, now it reuses it. *Steady state*: the size-generic generated function ÷ "
             "the size-specific one (generated for the exact shapes, as before), in one process, the median of "
             "the ratios of interleaved rounds; *pattern* is what computing the arguments' shape pattern adds to each "
             "call (over reading their shapes); *lines bound* are the generic code's only extra lines, reading "
             "sizes from the arguments (otherwise it is the specific code with shapes printed as names).", "",
             "| workload | new-size call before | new-size call now | steady state generic ÷ specific | "
             "pattern per call | lines bound |", "| --- | --- | --- | --- | --- | --- |"]
    for name in after:
        generic, specific, ratio, pattern, extra = steady[name]
        old = f"{before[name] * 1e3:.1f} ms" if before else "—"
        lines.append(f"| {name} | {old} | {after[name] * 1e3:.2f} ms | {ratio:.3f} "
                     f"({generic * 1e3:.3f} ms ÷ {specific * 1e3:.3f} ms) | {pattern * 1e6:.1f} µs | {extra} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="a checkout of s2sgrad before shape patterns (its root folder)")
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--new-size-calls", action="store_true", help="print `new_size_calls` as JSON and stop")
    options = parser.parse_args(argv)
    if options.new_size_calls:
        print(json.dumps(new_size_calls()))
        return
    before = in_tree(options.before) if options.before else None
    after = in_tree(str(ROOT))
    text = report(before, after, steady_state(options.rounds))
    (HERE / "SIZES.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
