"""Time the first call of a gradient (generate + compile + run) in fresh processes, stage by stage.

    python -m benchmarks.first_call [--runs N] [--before REV] [--out FILE]
    python -m benchmarks.first_call --cprofile PROGRAM [--sort cumulative|tottime]

Three programs, each written to a module file of its own so that ``inspect.getsource`` finds it:

- ``straight200``: a 200-line straight-line function of NumPy code (elementwise arithmetic, tanh/exp/log,
  matrix products, sums, indexing), generated deterministically;
- ``helpers10``: a function calling ten helper functions, most of them calling the next (a chain nine deep);
- ``ode``: ``while t < T: dt = HSTEP / (1.0 + x @ x); x = x + dt * (np.tanh(A @ x) - 0.1 * x); t = t + dt``
  on small inputs, ``HSTEP`` a module constant.

Each measurement runs in a new Python process (no generated code cached): it imports NumPy, then s2sgrad
(timed: the import time), builds the arguments, and times ``sg.grad(f)(*args)`` (CPU time). The stages of
generation are timed in the same call by wrapping the pipeline's functions (each stage's own time, the stages it calls
subtracted): parse (``inspect.getsource`` and gast), lower, analyze, reverse (both sweeps), each pass of
``GRADIENT_PASSES``, unparse, compile, and the first run of the generated code. The table gives the median
over the runs of each column. With ``--before REV`` (default ``main``) the ``s2sgrad`` package of that git
revision is extracted to a temporary directory and measured in the same run, interleaved with this checkout.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROGRAMS = ("straight200", "helpers10", "ode")
CLOCK = time.process_time   # CPU time: on a shared machine, wall time mostly measures the other processes
TARGETS = {"straight200": 0.15, "helpers10": 0.05, "ode": 0.05}


# ---------------------------------------------------------------- the programs

def straight_source(lines: int = 200, seed: int = 14) -> str:
    """A module with one straight-line function of `lines` statements, the same text for the same seed."""
    rng = random.Random(seed)
    vectors, scalars = ["x", "y"], ["c"]
    body = []

    def v():
        return rng.choice(vectors[-12:])

    def s():
        return rng.choice(scalars[-6:])
    forms = [
        lambda: f"np.tanh({v()} * {v()} + {rng.choice([0.1, 0.5, 1.0])})",
        lambda: f"{v()} * {s()} - 0.5 * {v()}",
        lambda: f"np.exp(-{v()} * {v()}) + {v()}",
        lambda: (lambda a: f"np.log(1.0 + {a} * {a})")(v()),
        lambda: f"W @ {v()} / {rng.choice([4.0, 8.0])}",
        lambda: f"np.tanh(V @ {v()}) * {v()}",
        lambda: f"{v()}[idx] * {rng.choice([0.3, 0.7])} + {v()}",
        lambda: f"{v()}[::-1] - np.sin({v()})",
        lambda: f"np.maximum({v()}, 0.0) + {v()} ** 2 / 4.0",
        lambda: f"({v()} + {v()}) / (1.0 + {s()} * {s()})",
    ]
    scalar_forms = [
        lambda: f"np.sum({v()} * {v()}) / 16.0",
        lambda: f"np.mean(np.tanh({v()}))",
        lambda: f"{v()}[{rng.randrange(8)}] * {s()}",
        lambda: f"np.sum(np.exp(-{v()} ** 2)) * 0.1 + {s()}",
        lambda: f"{v()} @ {v()} / 8.0",
    ]
    for k in range(lines - 1):
        if rng.random() < 0.3:
            name = f"s{k}"
            body.append(f"    {name} = {rng.choice(scalar_forms)()}")
            scalars.append(name)
        else:
            name = f"a{k}"
            body.append(f"    {name} = {rng.choice(forms)()}")
            vectors.append(name)
    body.append(f"    return np.sum({' + '.join(vectors[-4:])}) + {' + '.join(scalars[-4:])}")
    return "import numpy as np\n\n\ndef f(x, y, c, W, V, idx):\n" + "\n".join(body) + "\n"


HELPERS_SOURCE = '''import numpy as np


def g10(x):
    return np.tanh(x) * 0.5


def g9(x):
    return g10(x * 1.1) + 0.1 * x


def g8(x, W):
    return g9(W @ x / 4.0)


def g7(x, W):
    return np.exp(-g8(x, W) ** 2) + x


def g6(x, W):
    h = g7(x, W)
    return h * np.sin(x)


def g5(x, W):
    return np.log(1.0 + g6(x, W) ** 2)


def g4(x, W):
    return g5(x, W) - 0.3 * x


def g3(x, W):
    return np.tanh(g4(x, W) + x)


def g2(x, W):
    return g3(x, W) * g10(x)


def g1(x):
    return np.sum(x * x)


def f(x, W):
    h = g2(x, W)
    return g1(h) + g1(x) * 0.01
'''

ODE_SOURCE = '''import numpy as np

HSTEP = 0.05


def f(x, A, T):
    t = 0.0
    while t < T:
        dt = HSTEP / (1.0 + x @ x)
        x = x + dt * (np.tanh(A @ x) - 0.1 * x)
        t = t + dt
    return np.sum(x * x)
'''


def sources() -> dict:
    return {"straight200": straight_source(), "helpers10": HELPERS_SOURCE, "ode": ODE_SOURCE}


def arguments(program: str):
    import numpy as np
    rng = np.random.default_rng(0)
    if program == "straight200":
        n = 8
        return (rng.normal(size=n), rng.normal(size=n), 0.7, rng.normal(size=(n, n)), rng.normal(size=(n, n)),
                rng.permutation(n))
    if program == "helpers10":
        return rng.normal(size=8), rng.normal(size=(8, 8))
    return rng.normal(size=4) * 0.5, rng.normal(size=(4, 4)), 1.0


# ---------------------------------------------------------------- one measurement (in a fresh process)

class StageClock:
    """Each stage's own time: a wrapped function's time minus that of the wrapped functions it calls."""

    def __init__(self):
        self.totals: dict[str, float] = {}
        self.stack: list[list[float]] = []      # per active stage: [start, time of the stages it called]

    def wrap(self, stage: str, fn):
        def timed(*args, **kwargs):
            frame = [CLOCK(), 0.0]
            self.stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = CLOCK() - frame[0]
                self.stack.pop()
                self.totals[stage] = self.totals.get(stage, 0.0) + elapsed - frame[1]
                if self.stack:
                    self.stack[-1][1] += elapsed
        timed.__wrapped__ = fn
        return timed


def replace_everywhere(original, replacement) -> None:
    """Put `replacement` in place of function `original` in every loaded s2sgrad module that names it."""
    for name, module in list(sys.modules.items()):
        if name == "s2sgrad" or name.startswith("s2sgrad."):
            for attr, value in list(vars(module).items()):
                if value is original:
                    setattr(module, attr, replacement)


def instrument(clock: StageClock) -> None:
    from s2sgrad.analysis import activity
    from s2sgrad.api import generation
    from s2sgrad.backend import codegen
    from s2sgrad.frontend import lower, parse
    from s2sgrad.pipeline import driver
    from s2sgrad.transforms.reverse import Reverse
    for stage, fn in (("parse", parse.parse_function), ("lower", lower.lower_function),
                      ("analyze", activity.analyze), ("unparse", codegen.render),
                      ("compile", codegen.compile_module), ("generate", generation.generated_entry)):
        replace_everywhere(fn, clock.wrap(stage, fn))
    Reverse.run = clock.wrap("reverse", Reverse.run)
    driver.GradientModule.passes = tuple(driver.Pass(p.name, clock.wrap(f"pass {p.name}", p.run), p.optimization)
                                         for p in driver.GRADIENT_PASSES)


def measure(program: str, module_dir: str) -> dict:
    """Import s2sgrad, then time the first call of the gradient of `program`'s f (run in a fresh process)."""
    import importlib

    import numpy  # noqa: F401  (its import time is not s2sgrad's)
    start = CLOCK()
    import s2sgrad as sg
    imported = CLOCK() - start
    clock = StageClock()
    instrument(clock)
    sys.path.insert(0, module_dir)
    f = importlib.import_module(f"fc_{program}").f
    args = arguments(program)
    start = CLOCK()
    gradient = sg.grad(f)(*args)
    total = CLOCK() - start
    assert numpy.all(numpy.isfinite(gradient))
    stages = dict(clock.totals)
    generate = stages.pop("generate", 0.0)
    stages["other generation"] = generate
    stages["first run"] = total - sum(clock.totals.values())
    return {"import": imported, "first call": total, "stages": stages, "file": sg.__file__}


# ---------------------------------------------------------------- the harness

def write_programs(directory: Path) -> None:
    for program, text in sources().items():
        (directory / f"fc_{program}.py").write_text(text)


def run_child(package_root: str, program: str, module_dir: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([package_root, str(ROOT)]), OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="")
    out = subprocess.run([sys.executable, "-m", "benchmarks.first_call", "--child", program, "--modules", module_dir],
                         env=env, cwd=module_dir, capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["file"].startswith(package_root), (result["file"], package_root)
    return result


def extract(revision: str, directory: Path) -> str:
    """The `s2sgrad` package of git `revision`, extracted into `directory`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "s2sgrad"], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True)
    return str(directory)


def median_of(results: list, key: str) -> float:
    return statistics.median(r["stages"].get(key, 0.0) if key not in ("import", "first call") else r[key]
                             for r in results)


STAGE_ORDER = ["parse", "lower", "analyze", "reverse"]


def table(results: dict, labels: list) -> str:
    """Markdown: per program, each stage's median time per version (ms)."""
    out = []
    for program in PROGRAMS:
        stages = [s for s in STAGE_ORDER]
        passes = sorted({k for r in results.values() for run in r[program] for k in run["stages"]
                         if k.startswith("pass ")}, key=lambda k: [p for p in _pass_order()].index(k[5:]))
        stages += passes + ["unparse", "compile", "other generation", "first run"]
        header = f"| {program} (ms) | " + " | ".join(labels) + (" | after ÷ before |" if len(labels) == 2 else " |")
        out += [f"### {program}", "", header, "|---" * (len(labels) + 1 + (len(labels) == 2)) + "|"]
        for key in ["first call", *stages, "import"]:
            values = [median_of(results[label][program], key) * 1000 for label in labels]
            name = f"**{key}**" if key == "first call" else key
            cells = [f"{v:.1f}" for v in values]
            if len(labels) == 2:
                cells.append(f"{values[1] / values[0]:.2f}" if values[0] > 0.05 else "")
            out.append(f"| {name} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def _pass_order() -> list:
    from s2sgrad.pipeline.driver import GRADIENT_PASSES
    return [p.name for p in GRADIENT_PASSES]


def summary(results: dict, labels: list) -> str:
    lines = ["| program | target (ms) | " + " | ".join(f"{label} (ms)" for label in labels) + " |",
             "|---" * (len(labels) + 2) + "|"]
    for program in PROGRAMS:
        values = [f"{median_of(results[label][program], 'first call') * 1000:.0f}" for label in labels]
        lines.append(f"| {program} | {TARGETS[program] * 1000:.0f} | " + " | ".join(values) + " |")
    imports = [f"{statistics.median(r['import'] for p in PROGRAMS for r in results[label][p]) * 1000:.0f}"
               for label in labels]
    lines.append("| import s2sgrad | | " + " | ".join(imports) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per program and version")
    parser.add_argument("--before", default="main", help="git revision measured as 'before' ('' for none)")
    parser.add_argument("--out", default=str(HERE / "FIRST_CALL.md"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--modules", help=argparse.SUPPRESS)
    parser.add_argument("--cprofile", choices=PROGRAMS, help="profile one first call of PROGRAM with cProfile")
    parser.add_argument("--sort", default="cumulative", choices=["cumulative", "tottime"])
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child, args.modules)))
        return
    with tempfile.TemporaryDirectory() as scratch:
        modules = Path(scratch) / "programs"
        modules.mkdir()
        write_programs(modules)
        if args.cprofile:
            profile(args.cprofile, str(modules), args.sort)
            return
        versions = {"after": str(ROOT)}
        if args.before:
            versions = {"before": extract(args.before, Path(scratch)), **versions}
        labels = list(versions)
        results = {label: {p: [] for p in PROGRAMS} for label in labels}
        for run in range(args.runs):
            for program in PROGRAMS:
                for label, root in versions.items():
                    results[label][program].append(run_child(root, program, str(modules)))
            print(f"run {run + 1}/{args.runs}: " + ", ".join(
                f"{p} " + "/".join(f"{results[label][p][-1]['first call'] * 1000:.0f}" for label in labels)
                for p in PROGRAMS), file=sys.stderr)
    text = REPORT.format(runs=args.runs, before=args.before or "-", summary=summary(results, labels),
                         tables=table(results, labels), machine=machine())
    Path(args.out).write_text(text)
    print(text)


def machine() -> str:
    import platform
    return f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, " \
           f"{os.cpu_count()} CPUs (shared), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"


def profile(program: str, module_dir: str, sort: str) -> None:
    import cProfile
    import importlib
    import pstats

    import s2sgrad as sg
    sys.path.insert(0, module_dir)
    f = importlib.import_module(f"fc_{program}").f
    args = arguments(program)
    profiler = cProfile.Profile()
    profiler.enable()
    sg.grad(f)(*args)
    profiler.disable()
    pstats.Stats(profiler).sort_stats(sort).print_stats(40)


REPORT = """# First call of a gradient: generate, compile, run

`python -m benchmarks.first_call` (see its docstring): the CPU time (`time.process_time`) of the first call of
`sg.grad(f)(*args)` in a fresh process, median of {runs} processes per program and version, interleaved.
"before" is the `s2sgrad` package of git revision `{before}`, "after" this checkout, both measured in the same
run. Import time of s2sgrad (NumPy already imported) is not part of the first call. Machine: {machine}.

{summary}

## Stages

Each stage's own time (the stages it calls subtracted): parse is `inspect.getsource` and gast; lower is the
desugaring and lowering to the functional form; analyze is activity, kinds, shapes and dtypes; reverse writes
both sweeps (rule templates expanded); each pass of `GRADIENT_PASSES`; unparse prints the module with
`ast.unparse`; compile is Python's `compile`, running the module and writing its file to the cache directory;
other generation is the rest of `generated_entry` (the driver's own work, caches, guards); first run is the
generated gradient's run and the argument handling of the call.

{tables}"""


if __name__ == "__main__":
    main()
