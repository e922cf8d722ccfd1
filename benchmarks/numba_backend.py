"""Time s2sgrad's numba backend against hand-written NumPy adjoints and ``jax.jit(jax.grad(...))``.

    python benchmarks/numba_backend.py [--quick]

Four loop workloads, measured side by side in one process (single-threaded; the tools timed in turn in each
of 15 rounds, the minimum kept): the scalar 1000-step ``while`` loop, the RNN (hidden 32, 200 steps), the
ODE ``while t < T`` with a state-dependent step (state 8, about 20,000 steps) and an array recurrence
``y[i] = f(y[i-1])`` (2,000 steps). The first call of the numba gradient (generation and numba's compile,
or loading numba's on-disk cache) is reported separately. Stack memory is the bytes the numba gradient's
stacks hold (rows times capacity, read off the generated code's stacks) against the peak the hand adjoint
allocates (tracemalloc).
Writes ``benchmarks/NUMBA.md`` and ``benchmarks/numba.png``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import timeit
import tracemalloc
from pathlib import Path

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_variable] = "1"

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import s2sgrad as sg  # noqa: E402
from benchmarks import workloads as w  # noqa: E402

TARGETS = {"scalar loop": 0.05, "RNN": 0.3, "ODE": 0.3, "recurrence": 0.1}


def recurrence(a, y0, n):
    """``y[i] = sin(a y[i-1]) + 0.1 y[i-1]`` written into an array; loss ``sum(y**2)``."""
    y = np.zeros(n)
    y[0] = y0
    for i in range(1, n):
        y[i] = np.sin(a * y[i - 1]) + 0.1 * y[i - 1]
    return np.sum(y * y)


def recurrence_adjoint(a, y0, n):
    """Gradient of ``recurrence`` with respect to ``a``: the cosines formed in one array operation, then two
    float updates per step backward."""
    y = np.zeros(n)
    y[0] = y0
    for i in range(1, n):
        y[i] = np.sin(a * y[i - 1]) + 0.1 * y[i - 1]
    c = np.cos(a * y[:-1]).tolist()
    ys = y.tolist()
    dy = (2.0 * y).tolist()
    da = 0.0
    for i in range(n - 1, 0, -1):
        g = dy[i]
        da += g * c[i - 1] * ys[i - 1]
        dy[i - 1] += g * (c[i - 1] * a + 0.1)
    return da


def recurrence_inputs(small=False):
    return 0.9, 0.5, (50 if small else 2000)


def jax_versions():
    """``jax.jit(jax.grad(...))`` of the workloads JAX can reverse (fixed trip counts), by name."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return {}
    jax.config.update("jax_enable_x64", True)

    def scalar_loop(x, n):
        return jax.lax.fori_loop(0, n, lambda i, y: jnp.sin(y) * x + 0.5 * y + 0.25, x)

    def rnn(W, U, b, xs):
        def step(h, x_t):
            return jnp.tanh(W @ h + U @ x_t + b), None
        h, _ = jax.lax.scan(step, jnp.zeros(W.shape[0]), xs)
        return jnp.sum(h ** 2)

    def recurrence_jax(a, y0, n):
        def step(y, _):
            new = jnp.sin(a * y) + 0.1 * y
            return new, new
        _, ys = jax.lax.scan(step, y0, None, length=n - 1)
        return y0 * y0 + jnp.sum(ys * ys)

    return {"scalar loop": jax.jit(jax.grad(scalar_loop), static_argnums=1),
            "RNN": jax.jit(jax.grad(rnn)),
            "recurrence": jax.jit(jax.grad(recurrence_jax), static_argnums=2)}


WORKLOADS = [
    ("scalar loop", w.scalar_loop, w.scalar_loop_adjoint, w.scalar_loop_inputs, "while i < n (1000 steps)"),
    ("RNN", w.rnn, w.rnn_adjoint, w.rnn_inputs, "for t in range(200), hidden 32"),
    ("ODE", w.ode, w.ode_adjoint, w.ode_inputs, "while t < T, state 8, ~20,000 steps"),
    ("recurrence", recurrence, recurrence_adjoint, recurrence_inputs, "y[i] = f(y[i-1]), 2,000 steps"),
]


def interleaved(tools: dict, args_of: dict, rounds: int) -> dict:
    """Seconds per call of each tool: min over `rounds` rounds, the tools timed one after another in each round
    (so that the machine's load falls on all of them alike), each round's calls lasting ~10 ms."""
    numbers = {name: max(1, int(0.01 / max(timeit.timeit(lambda: fn(*args_of[name]), number=1), 1e-7)))
               for name, fn in tools.items()}
    best = {name: float("inf") for name in tools}
    for _ in range(rounds):
        for name, fn in tools.items():
            args = args_of[name]
            best[name] = min(best[name], timeit.timeit(lambda: fn(*args), number=numbers[name]) / numbers[name])
    return best


def first(grad):
    """The gradient's value for the wrt=0 argument, whatever the gradient's form."""
    return grad[0] if isinstance(grad, tuple) else grad


def stack_bytes(f, args) -> int:
    """Bytes the numba gradient's stacks hold after its forward sweep: capacity times row size per stack."""
    import re
    text = sg.source(f, args=args, backend="numba")
    values = dict(zip(sg.api.generation.parameter_names(f), args))
    trips = w.ode_step_count(*args) if f is w.ode else None
    total = 0
    for name, capacity in re.findall(r"(\w+) = stack_new\(\w+, ([^)]+)\)", text):
        known = re.fullmatch(r"(\w+) \+ 1", capacity)
        rows = (values[known.group(1)] + 1) if known and known.group(1) in values else None
        row = _row_bytes(f, args, name)
        if rows is None:
            pushes = trips if trips is not None else args[2] if f is recurrence else args[3].shape[0]
            rows = int(capacity) if capacity.isdigit() else pushes + 1
            while rows < pushes:
                rows *= 2
        total += rows * row
    return total


def _row_bytes(f, args, stack: str) -> int:
    """The bytes of one row of `stack`: a state vector for the array workloads, a float otherwise."""
    if f is w.rnn:
        return 8 * args[0].shape[0]
    if f is w.ode and stack != "sum_stack":
        return 8 * args[1].shape[0]
    return 8


def hand_peak(adjoint, args) -> int:
    tracemalloc.start()
    adjoint(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small inputs, few repeats (a smoke run)")
    options = parser.parse_args()
    repeat = 3 if options.quick else 15
    jaxes = jax_versions()
    rows = []
    for label, f, adjoint, inputs, shape in WORKLOADS:
        args = inputs(small=options.quick)
        compiled = sg.grad(f, backend="numba")
        start = time.perf_counter()
        value = first(compiled(*args))
        first_call = time.perf_counter() - start
        np.testing.assert_allclose(value, first(adjoint(*args)), rtol=1e-8, atol=1e-10)
        tools = {"hand": adjoint, "numba": compiled, "numpy": sg.grad(f)}
        args_of = dict.fromkeys(tools, args)
        if label in jaxes:
            args_of["jax"] = tuple(np.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
            tools["jax"] = lambda *a, jitted=jaxes[label]: jitted(*a).block_until_ready()
            tools["jax"](*args_of["jax"])
        times = interleaved(tools, args_of, repeat)
        hand, numba_time, numpy_time, jax_time = times["hand"], times["numba"], times["numpy"], times.get("jax")
        rows.append((label, shape, hand, numba_time, numpy_time, jax_time, first_call,
                     stack_bytes(f, args), hand_peak(adjoint, args)))
        print(rows[-1], flush=True)
    write(rows, options.quick)


def write(rows, quick: bool) -> None:
    lines = ["# The numba backend against hand-written NumPy adjoints",
             "",
             f"`python benchmarks/numba_backend.py{' --quick' if quick else ''}`, one process, single-threaded, "
             f"numba {__import__('numba').__version__}, NumPy {np.__version__}; times are the minimum over 15 "
             "interleaved rounds of one call, ratios against the hand-written NumPy adjoint of "
             "`benchmarks/workloads.py` (the recurrence's is in this script). *first call* is generating and "
             "compiling (or loading numba's disk cache), not counted in the time.",
             "",
             "| workload | loop | hand adjoint (NumPy) | s2sgrad numba | ratio | target | s2sgrad NumPy | "
             "jax.jit(jax.grad) | first call (numba) | stacks: numba / hand peak |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for label, shape, hand, numba_time, numpy_time, jax_time, first_call, stacks, peak in rows:
        jax_cell = f"{jax_time * 1e3:.3f} ms ({jax_time / hand:.3f}×)" if jax_time is not None else \
            "JAX cannot reverse a while_loop"
        lines.append(f"| {label} | {shape} | {hand * 1e3:.3f} ms | {numba_time * 1e3:.3f} ms | "
                     f"**{numba_time / hand:.3f}×** | ≤ {TARGETS[label]}× | {numpy_time * 1e3:.3f} ms "
                     f"({numpy_time / hand:.2f}×) | {jax_cell} | {first_call:.1f} s | "
                     f"{stacks / 1024:.0f} KiB / {peak / 1024:.0f} KiB ({stacks / max(peak, 1):.2f}×) |")
    lines += ["", "The ODE and scalar loops are `while` loops: JAX's `lax.while_loop` has no reverse-mode "
              "derivative; the scalar loop's JAX column is the same map written as `lax.fori_loop` with its trip "
              "count fixed.", ""]
    (HERE / "NUMBA.md").write_text("\n".join(lines))
    plot(rows)


def plot(rows) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [r[0] for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.bar(x - 0.27, [r[3] / r[2] for r in rows], 0.27, label="s2sgrad numba")
    ax.bar(x, [r[4] / r[2] for r in rows], 0.27, label="s2sgrad NumPy")
    ax.bar(x + 0.27, [(r[5] / r[2]) if r[5] else 0 for r in rows], 0.27, label="jax.jit(jax.grad)")
    for k, r in enumerate(rows):
        if r[5] is None:
            ax.text(k + 0.27, 0.012, "no while_loop\nreverse", ha="center", fontsize=6, rotation=90)
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks(x, labels)
    ax.set_ylabel("time / hand-written NumPy adjoint")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(HERE / "numba.png", dpi=120)


if __name__ == "__main__":
    main()
