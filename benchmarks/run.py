"""Time s2sgrad's gradients against hand-written adjoints and other AD tools.

    python benchmarks/run.py [--quick] [--rounds N] [--workloads W1 W5 ...]
                             [--tools s2sgrad jax ...] [--max-seconds S]
                             [--skip jax:W5 ...] [--out DIR]

For each workload, in one process, single-threaded, interleaved round by
round, this times the forward function, the hand-written adjoint, s2sgrad's
gradient and each installed peer (autograd, JAX eager and jitted, PyTorch
eager), takes the median over the rounds, measures the peak memory of the
NumPy-based variants with tracemalloc, checks every gradient against the
hand-written one, and writes ``RESULTS.md`` and ``results.png``. See
``benchmarks/README.md`` for what each column means.
"""

import argparse
import contextlib
import datetime
import gc
import importlib.metadata
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Optional

# Single-threaded runs: the BLAS libraries read these when they load, and
# JAX sizes its thread pool by the CPUs the process may run on, so both are
# settled before anything imports NumPy or JAX. The process keeps the lowest
# CPU it may run on: `taskset -c N python benchmarks/run.py` chooses another.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402  (after the thread settings above)

import s2sgrad  # noqa: E402  (imported here, as the peers are, so that no first call pays for it)
from benchmarks.limits import Stopped, time_limit  # noqa: E402
from benchmarks.memory import peak_bytes  # noqa: E402
from benchmarks.peers import Peer, Prepared, available_peers  # noqa: E402
from benchmarks.workloads import WORKLOADS, Workload, leaves  # noqa: E402

try:
    import threadpoolctl
except ImportError:
    threadpoolctl = None

FORWARD, HAND, S2SGRAD, S2SGRAD_SPARSE = "forward", "hand-written", "s2sgrad", "s2sgrad sparse"
MISMATCH_TOLERANCE = 1e-6
LONG_CALL_SECONDS = 2.0
SPARSE_WORKLOADS = ("W6",)   # where a gradient is a gather's: sparse=True changes what the user gets
PEER_NAMES = [S2SGRAD, S2SGRAD_SPARSE, "autograd", "jax", "jax.jit", "torch"]
MEASURED_ALWAYS = (FORWARD, HAND, S2SGRAD, S2SGRAD_SPARSE)   # timed whatever --max-seconds says


@dataclass
class Row:
    """The measurements of one tool on one workload."""

    tool: str
    seconds: Optional[float] = None
    compile_seconds: Optional[float] = None
    peak_bytes: Optional[int] = None
    max_rel_error: Optional[float] = None
    notes: list = field(default_factory=list)


class _Timed(NamedTuple):
    """A tool that ran, ready for the timed rounds."""

    tool: Peer
    prepared: Prepared
    row: Row
    first_seconds: float
    repeat: int


# --------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------

def _prepare_forward(workload, args):
    return Prepared(lambda: workload.forward(*args), lambda value: ())


def _prepare_hand(workload, args):
    return Prepared(lambda: workload.adjoint(*args), leaves)


def _prepare_s2sgrad(workload, args, **options):
    gradient = s2sgrad.grad(workload.forward, wrt=workload.wrt, **options)

    def dense(g):
        return g.dense() if isinstance(g, s2sgrad.SparseGrad) else g

    def to_numpy(grads):
        return leaves(tuple(map(dense, grads)) if isinstance(grads, tuple) else dense(grads))

    return Prepared(lambda: gradient(*args), to_numpy)


def _prepare_s2sgrad_sparse(workload, args):
    """The gradient of a gather handed back as rows (``sparse=True``); made dense only to be checked."""
    return _prepare_s2sgrad(workload, args, sparse=True)


def select_tools(names):
    """The forward, the hand-written adjoint, s2sgrad and the installed peers.

    ``names``, when given, keeps only those tools (forward and hand-written
    are always kept: the ratios are relative to them). Returns the tools and
    the reasons the missing peers are missing.
    """
    peers, missing = available_peers()
    found = [
        Peer(FORWARD, _prepare_forward, numpy_based=True),
        Peer(HAND, _prepare_hand, numpy_based=True),
        Peer(S2SGRAD, _prepare_s2sgrad, compiles=True, numpy_based=True),
        Peer(S2SGRAD_SPARSE, _prepare_s2sgrad_sparse, compiles=True, numpy_based=True,
             workloads=SPARSE_WORKLOADS),
        *peers,
    ]
    if names:
        found = [tool for tool in found if tool.name in (FORWARD, HAND, *names)]
        missing = {name: why for name, why in missing.items() if name in names}
    return found, missing


# --------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------

def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


def _max_rel_error(grads, reference) -> float:
    """Largest over the gradients' leaves of max |g - ref| / max |ref|.

    Both are flat sequences of arrays (a gradient that is a list or dict of
    arrays is compared leaf by leaf, ``leaves``). Infinite when the number
    or the shapes of the leaves are wrong.
    """
    if len(grads) != len(reference) or any(
            np.shape(g) != np.shape(ref) for g, ref in zip(grads, reference)):
        return math.inf
    errors = []
    for g, ref in zip(grads, reference):
        scale = np.max(np.abs(ref))
        diff = np.max(np.abs(np.asarray(g, dtype=np.float64) - ref))
        errors.append(diff / scale if scale > 0 else diff)
    return max(errors)


def _repeat_count(prepared: Prepared, first: float, min_sample_seconds: float) -> int:
    """How many calls make a sample last ``min_sample_seconds``.

    The first call may include compilation, so unless it took over
    ``LONG_CALL_SECONDS``, more calls are timed to tell.
    """
    if first >= LONG_CALL_SECONDS:
        return 1
    calls = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < min_sample_seconds:
        prepared.call()
        calls += 1
    return max(1, math.ceil(calls * min_sample_seconds / elapsed))


def _restore_inputs(args, snapshot) -> bool:
    """Whether the leaves of ``args`` still equal ``snapshot``; puts back any array that does not."""
    unchanged = True
    for a, b in zip(leaves(args), snapshot):
        if not np.array_equal(a, b):
            unchanged = False
            a[...] = b
    return unchanged


def _too_slow(row: Row, first: float, max_seconds: Optional[float]) -> bool:
    """Whether a first call over ``max_seconds`` leaves the tool out of the timed rounds (noted in its row)."""
    if max_seconds is None or first <= max_seconds:
        return False
    row.notes.append(f"too slow: first call {_time(first)} (over --max-seconds {max_seconds:g})")
    return True


def measure(workload: Workload, args: tuple, tools: list, rounds: int,
            min_sample_seconds: float, max_seconds: Optional[float] = None, skip=frozenset()) -> list:
    """All measurements of one workload, a ``Row`` per tool.

    Each tool is prepared and called once (warm-up, gradient check, compile
    time), then timed: each round takes one sample of every tool, in an
    order that rotates from round to round; a sample repeats the call enough
    times to last ``min_sample_seconds`` and is divided by the repeat count.
    A peer whose first call takes over ``max_seconds`` is not timed further
    (its row notes the first call's time, or that it was stopped at the
    limit); one named in ``skip`` as ``"tool:KEY"`` is not called at all.
    """
    snapshot = [np.copy(a) for a in leaves(args)]
    rows, timed = [], []
    reference = None
    for tool in tools:
        if tool.workloads is not None and workload.key not in tool.workloads:
            continue
        row = Row(tool.name)
        rows.append(row)
        if f"{tool.name}:{workload.key}" in skip:
            row.notes.append("skipped (--skip)")
            continue
        limit = None if tool.name in MEASURED_ALWAYS else max_seconds
        try:
            with time_limit(limit):
                start = time.perf_counter()
                prepared = tool.prepare(workload, args)
                result = prepared.call()
                first = time.perf_counter() - start
            grads = prepared.to_numpy(result)
        except Stopped:
            row.notes.append(f"too slow: first call stopped after {limit:g} s (--max-seconds)")
            _restore_inputs(args, snapshot)
            continue
        except Exception as error:  # the row reports it; the run goes on
            kind = "unsupported" if tool.name in (S2SGRAD, S2SGRAD_SPARSE) else "failed"
            row.notes.append(f"{kind}: {_first_line(error)}")
            continue
        if tool.name == HAND:
            reference = grads
        elif tool.name != FORWARD and reference is not None:
            row.max_rel_error = _max_rel_error(grads, reference)
            if not row.max_rel_error <= MISMATCH_TOLERANCE:
                row.notes.append("gradient differs from the hand-written one")
        if not _restore_inputs(args, snapshot):
            row.notes.append("modified its inputs")
        if _too_slow(row, first, limit):
            continue
        repeat = _repeat_count(prepared, first, min_sample_seconds)
        timed.append(_Timed(tool, prepared, row, first, repeat))

    if not timed:
        return rows
    samples = {t.tool.name: [] for t in timed}
    for r in range(rounds):
        shift = r % len(timed)
        for t in timed[shift:] + timed[:shift]:
            gc.collect()
            start = time.perf_counter()
            for _ in range(t.repeat):
                t.prepared.call()
            samples[t.tool.name].append((time.perf_counter() - start) / t.repeat)

    for t in timed:
        t.row.seconds = statistics.median(samples[t.tool.name])
        if t.tool.compiles:
            t.row.compile_seconds = max(0.0, t.first_seconds - t.row.seconds)
        if t.tool.numpy_based:
            t.row.peak_bytes = peak_bytes(t.prepared.call)
    return rows


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

def _time(seconds: Optional[float]) -> str:
    if seconds is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _bytes(count: Optional[int]) -> str:
    if count is None:
        return "—"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count} B"


def _ratio(seconds: Optional[float], base: Optional[float]) -> str:
    if seconds is None or not base:
        return "—"
    return f"{seconds / base:.3g}"


def _by_tool(rows) -> dict:
    return {row.tool: row for row in rows}


def table_lines(results) -> list:
    """The detailed markdown table: one row per workload and tool."""
    lines = [
        "| workload | tool | time | ÷ forward | ÷ hand-written | compile | peak memory | max rel. error | note |",
        "|---|---|--:|--:|--:|--:|--:|--:|---|",
    ]
    for workload, rows in results:
        base = _by_tool(rows)
        forward, hand = base[FORWARD].seconds, base[HAND].seconds
        for row in rows:
            error = "—" if row.max_rel_error is None else f"{row.max_rel_error:.1e}"
            lines.append(
                f"| {workload.key} {workload.name} | {row.tool} | {_time(row.seconds)} "
                f"| {_ratio(row.seconds, forward)} | {_ratio(row.seconds, hand)} "
                f"| {_time(row.compile_seconds)} | {_bytes(row.peak_bytes)} | {error} "
                f"| {'; '.join(row.notes).replace('|', '/')} |"
            )
    return lines


def _summary_cell(row: Row, hand: Optional[float]) -> str:
    """The ratio to the hand-written adjoint, or why there is none (too slow, skipped)."""
    if row.seconds is None:
        for note in row.notes:
            if note.startswith(("too slow", "skipped")):
                return note.split(":")[0].split(" (")[0]
    return _ratio(row.seconds, hand)


def summary_lines(results, tools) -> list:
    """Time ÷ hand-written adjoint: one row per workload, one column per tool."""
    names = [tool.name for tool in tools if tool.name not in (FORWARD, HAND)]
    lines = [
        "| workload | hand-written ÷ forward | " + " | ".join(names) + " |",
        "|---|--:|" + "--:|" * len(names),
    ]
    for workload, rows in results:
        base = _by_tool(rows)
        forward, hand = base[FORWARD].seconds, base[HAND].seconds
        cells = [_summary_cell(base[n], hand) if n in base else "—" for n in names]
        lines.append(f"| {workload.key} {workload.name} | {_ratio(hand, forward)} | "
                     + " | ".join(cells) + " |")
    return lines


def machine_line() -> str:
    """The CPU and its load, the OS, Python, NumPy and its BLAS, the peers' versions."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    blas = ""
    if threadpoolctl is not None:
        for info in threadpoolctl.threadpool_info():
            if info.get("user_api") == "blas":
                blas = (f" ({info.get('internal_api')} {info.get('version')}, "
                        f"{info.get('architecture')}, {info.get('num_threads')} thread(s))")
                break
    if hasattr(os, "sched_getaffinity"):
        cpu += f", {os.cpu_count()} CPUs (run pinned to CPU {min(os.sched_getaffinity(0))})"
    if hasattr(os, "getloadavg"):
        cpu += f", load average {os.getloadavg()[0]:.1f}"
    parts = [
        cpu,
        f"{platform.system()} {platform.release()}",
        f"Python {platform.python_version()}",
        f"NumPy {np.__version__}{blas}",
    ]
    for module in ("autograd", "jax", "torch"):
        if sys.modules.get(module) is not None:
            parts.append(f"{module} {importlib.metadata.version(module)}")
    return "; ".join(parts)


def write_markdown(path: Path, results, tools, missing, options, plot_name) -> None:
    now = datetime.datetime.now().astimezone()
    size = "small variants (--quick)" if options.quick else "full sizes"
    lines = [
        "# Benchmark results",
        "",
        f"Date: {now:%Y-%m-%d %H:%M %Z}  ",
        f"Machine: {machine_line()}  ",
        f"Run: `{' '.join(['python benchmarks/run.py', *sys.argv[1:]])}`; "
        f"{size}, median of {options.rounds} rounds, single-threaded.",
        "",
    ]
    if missing:
        lines += ["Not installed: " + "; ".join(f"{n} ({why})" for n, why in missing.items()), ""]
    lines += ["## Gradient time ÷ hand-written adjoint", ""]
    lines += summary_lines(results, tools)
    lines += ["", "## All measurements", ""]
    lines += table_lines(results)
    lines += ["", "Workloads:", ""]
    lines += [f"- {w.key} {w.name}: {w.small_size if options.quick else w.size}" for w, _ in results]
    if plot_name:
        lines += ["", f"![gradient time ÷ hand-written adjoint]({plot_name})"]
    path.write_text("\n".join(lines) + "\n")


def write_plot(path: Path, results, tools) -> bool:
    """A log-scale bar chart of time ÷ hand-written adjoint; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    names = [tool.name for tool in tools if tool.name not in (FORWARD, HAND)]
    width = 0.8 / max(1, len(names))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(results)), 4.5))
    for n, name in enumerate(names):
        xs, ratios = [], []
        for w, (_, rows) in enumerate(results):
            base = _by_tool(rows)
            if name in base and base[name].seconds and base[HAND].seconds:
                xs.append(w + (n - (len(names) - 1) / 2) * width)
                ratios.append(base[name].seconds / base[HAND].seconds)
        if ratios:
            ax.bar(xs, ratios, width, label=name, color=f"C{n}")
    ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label="hand-written adjoint")
    ax.set_yscale("log")
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels([f"{w.key}\n{w.name}" for w, _ in results])
    ax.set_ylabel("gradient time ÷ hand-written adjoint")
    ax.legend(fontsize="small", ncol=2)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def print_rows(workload: Workload, rows) -> None:
    base = _by_tool(rows)
    forward, hand = base[FORWARD].seconds, base[HAND].seconds
    print(f"\n{workload.key} {workload.name}")
    for row in rows:
        error = "" if row.max_rel_error is None else f"err {row.max_rel_error:.1e}"
        compile_time = "" if row.compile_seconds is None else f"compile {_time(row.compile_seconds)}"
        print(f"  {row.tool:<15} {_time(row.seconds):>9}  ×fwd {_ratio(row.seconds, forward):>6}"
              f"  ×hand {_ratio(row.seconds, hand):>6}  {_bytes(row.peak_bytes):>8}"
              f"  {error:<12} {compile_time:<16} {'; '.join(row.notes)}", flush=True)


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------

def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small variants, 3 rounds: a smoke run (written to benchmarks/out/)")
    parser.add_argument("--rounds", type=int, help="rounds to take the median of (default 5; 3 with --quick)")
    parser.add_argument("--workloads", nargs="+", metavar="KEY", choices=[w.key for w in WORKLOADS],
                        help="only these workloads (W1 ... W10)")
    parser.add_argument("--tools", nargs="+", metavar="NAME", choices=PEER_NAMES,
                        help="only these tools besides forward and hand-written "
                             f"({' '.join(PEER_NAMES)})")
    parser.add_argument("--max-seconds", type=float, metavar="S",
                        help="a peer's first call is stopped after S seconds and the peer is not "
                             "timed on that workload (its row says 'too slow')")
    parser.add_argument("--skip", nargs="+", default=[], metavar="TOOL:KEY",
                        help="leave these measurements out, e.g. jax:W5 autograd:W8")
    parser.add_argument("--out", type=Path,
                        help="where RESULTS.md and results.png go "
                             "(default benchmarks/, or benchmarks/out/ with --quick)")
    options = parser.parse_args(argv)
    if options.rounds is not None and options.rounds < 1:
        parser.error("--rounds must be at least 1")
    if options.rounds is None:
        options.rounds = 3 if options.quick else 5
    keys = {w.key for w in WORKLOADS}
    for item in options.skip:
        tool, _, key = item.partition(":")
        if tool not in PEER_NAMES or key not in keys:
            parser.error(f"--skip takes TOOL:KEY with TOOL one of {' '.join(PEER_NAMES)} "
                         f"and KEY a workload, not {item!r}")
    if options.out is None:
        options.out = HERE / "out" if options.quick else HERE
    return options


def main(argv=None) -> int:
    options = parse_args(argv)
    workloads = [w for w in WORKLOADS if not options.workloads or w.key in options.workloads]
    tools, missing = select_tools(options.tools)
    limit = threadpoolctl.threadpool_limits(1) if threadpoolctl else contextlib.nullcontext()
    min_sample = 0.02 if options.quick else 0.1
    for name, why in missing.items():
        print(f"{name}: not installed ({why})")

    results = []
    with limit:
        for workload in workloads:
            args = workload.make_inputs(small=options.quick)
            rows = measure(workload, args, tools, options.rounds, min_sample,
                           options.max_seconds, frozenset(options.skip))
            print_rows(workload, rows)
            results.append((workload, rows))

    options.out.mkdir(parents=True, exist_ok=True)
    plotted = write_plot(options.out / "results.png", results, tools)
    write_markdown(options.out / "RESULTS.md", results, tools, missing, options,
                   "results.png" if plotted else None)
    print(f"\nwrote {options.out / 'RESULTS.md'}" + (" and results.png" if plotted else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
