"""What ``Online(s)``'s tracker costs per loop trip: microseconds per ``step()``, no loop run.

    python benchmarks/online_tracker_cost.py [--rules COMMIT ...] [--repeats 3]

A ``while`` loop under ``checkpoint=Online(s)`` calls ``tracker.step()`` once
per trip, so for a cheap loop body the tracker's decision is part of the
loop's cost.  For s = 5, 10, 30, 100 and n = 10^4, 10^5 this times n calls of
``step()`` (the best of ``--repeats`` runs; one run for n = 10^5) for the
tracker as it is and for the trackers of ``s2sgrad/schedules.py`` at the
commits ``--rules`` (``RULES``: the rule of least cost alone, and the first
``Online``, levels throughout), read with ``git show``.

``section()`` returns the Markdown that ``checkpointing.py`` puts into
``CHECKPOINTING.md``; run alone, this prints it.
"""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from s2sgrad import schedules  # noqa: E402

CASES = [(s, n) for s in (5, 10, 30, 100) for n in (10_000, 100_000)]
RULES = {"a91b2b2": "least cost alone", "58461ae": "first, levels"}


def load_old_rule(commit: str):
    source = subprocess.run(["git", "show", f"{commit}:s2sgrad/schedules.py"], cwd=HERE.parent,
                            check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / f"schedules_{commit}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"schedules_{commit}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def microseconds_per_step(make_tracker, snapshots: int, n: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats if n <= 10_000 else 1):
        step = make_tracker(snapshots).step
        start = time.perf_counter()
        for _ in range(n):
            step()
        best = min(best, time.perf_counter() - start)
    return best / n * 1e6


def section(rules: dict[str, str] | None = None, repeats: int = 3) -> list[str]:
    """The Markdown section ``checkpointing.py`` puts into ``CHECKPOINTING.md``."""
    rules = RULES if rules is None else rules
    makers = {"this": schedules.Online}
    for commit, what in rules.items():
        makers[f"{commit} ({what})"] = load_old_rule(commit).Online
    lines = ["", "## What the tracker costs per trip", "",
             "Written by `benchmarks/online_tracker_cost.py`: microseconds per `tracker.step()` of `Online(s)` "
             "over n calls, no loop run (best of 3 for n = 10,000, one run for 100,000; the machine shared), "
             "for this tracker and for those of earlier commits.", "",
             "| s | n | " + " | ".join(f"{name} µs/step" for name in makers) + " | this ÷ " +
             next(iter(rules), "") + " |",
             "|---:|---:|" + "---:|" * (len(makers) + 1)]
    for s, n in CASES:
        times = {name: microseconds_per_step(lambda k, make=make: make(k).start(), s, n, repeats)
                 for name, make in makers.items()}
        cells = " | ".join(f"{t:.1f}" for t in times.values())
        ratio = times["this"] / list(times.values())[1] if len(times) > 1 else 1.0
        lines.append(f"| {s} | {n:,} | {cells} | {ratio:.2f} |")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", metavar="COMMIT", nargs="*", default=list(RULES))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print("\n".join(section({c: RULES.get(c, c) for c in args.rules}, args.repeats)))


if __name__ == "__main__":
    main()
