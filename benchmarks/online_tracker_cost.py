"""What ``Online(s)``'s tracker costs per loop trip: microseconds per ``step()``, no loop run.

    python benchmarks/online_tracker_cost.py [--before COMMIT] [--rules COMMIT ...] [--repeats 3]

A ``while`` loop under ``checkpoint=Online(s)`` calls ``tracker.step()`` once
per trip, so for a cheap loop body the tracker's decision is part of the
loop's cost.  For s = 5, 10, 30, 100 and n = 10^4, 10^5 this times n calls of
``step()`` (the best of ``--repeats`` runs; one run for n = 10^5), in one run:

* this tracker the first time (*cold*: its rule's decisions are worked out,
  as far as n) and again (*warm*: a tracker for the same number of slots
  replays them);
* the tracker of ``--before`` (``s2sgrad/schedules/`` there, by default the
  commit ``BEFORE``, whose rule is this one's) and those of
  ``s2sgrad/schedules.py`` at the commits ``--rules`` (``RULES``: the rule of
  least cost alone, and the first ``Online``, levels throughout), read with
  ``git show``.

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
BEFORE = "14bb0a7"  # the rule of this tracker, deciding at every step


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


def load_old_package(commit: str):
    """``s2sgrad/schedules/`` at `commit`, imported as a package of its own."""
    root = Path(tempfile.mkdtemp())
    archive = subprocess.run(["git", "archive", commit, "s2sgrad/schedules"], cwd=HERE.parent, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    name = f"schedules_{commit}"
    spec = importlib.util.spec_from_file_location(name, root / "s2sgrad/schedules/__init__.py",
                                                  submodule_search_locations=[str(root / "s2sgrad/schedules")])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
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


def cold(snapshots: int) -> schedules.Tracker:
    """A tracker of this `Online` that works its rule's decisions out afresh."""
    from s2sgrad.schedules import online
    online._OnlineTracker._decisions.pop(snapshots, None)
    return schedules.Online(snapshots).start()


def section(rules: dict[str, str] | None = None, repeats: int = 3, before: str = BEFORE) -> list[str]:
    """The Markdown section ``checkpointing.py`` puts into ``CHECKPOINTING.md``."""
    rules = RULES if rules is None else rules
    makers = {"this, cold": cold, "this, warm": lambda k: schedules.Online(k).start(),
              f"{before} (before)": lambda k, m=load_old_package(before): m.Online(k).start()}
    for commit, what in rules.items():
        makers[f"{commit} ({what})"] = lambda k, m=load_old_rule(commit): m.Online(k).start()
    lines = ["", "## What the tracker costs per trip", "",
             "Written by `benchmarks/online_tracker_cost.py`: microseconds per `tracker.step()` of `Online(s)` "
             "over n calls, no loop run (best of 3 for n = 10,000, one run for 100,000; the machine shared), in "
             "one run: this tracker the first time for s (*cold*, one run: its rule's decisions worked out as far as "
             "n) and "
             f"again (*warm*: replayed, a lookup per step), and the trackers of earlier commits ({before}: this "
             "rule, deciding at every step).", "",
             "| s | n | " + " | ".join(f"{name} µs/step" for name in makers) + " | warm ÷ before | cold ÷ before |",
             "|---:|---:|" + "---:|" * (len(makers) + 2)]
    for s, n in CASES:
        times = {}
        for name, make in makers.items():  # (warm after cold: the decisions are there as far as n)
            times[name] = microseconds_per_step(make, s, n, 1 if name == "this, cold" else repeats)
        cells = " | ".join(f"{t:.2f}" if t < 1 else f"{t:.1f}" for t in times.values())
        base = times[f"{before} (before)"]
        lines.append(f"| {s} | {n:,} | {cells} | {times['this, warm'] / base:.3f} | "
                     f"{times['this, cold'] / base:.2f} |")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", metavar="COMMIT", nargs="*", default=list(RULES))
    parser.add_argument("--before", metavar="COMMIT", default=BEFORE)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print("\n".join(section({c: RULES.get(c, c) for c in args.rules}, args.repeats, args.before)))


if __name__ == "__main__":
    main()
