"""What ``Online(s)``'s tracker costs per loop trip: microseconds per ``step()``, no loop run.

    python benchmarks/online_tracker_cost.py [--old-rule COMMIT] [--repeats 3]

A ``while`` loop under ``checkpoint=Online(s)`` calls ``tracker.step()`` once
per trip, so for a cheap loop body the tracker's decision is part of the
loop's cost.  For s = 5, 10, 30, 100 and n = 10^4, 10^5 this times n calls of
``step()`` (the best of ``--repeats`` runs; one run for n = 10^5) for:

* *cached*: the tracker as it is, which keeps the sums of the stretch costs
  from the loop entry on and, after an eviction, prices again only the
  stretches from the evicted snapshot on;
* *from scratch*: the same rule pricing every stretch again after each store
  (`reversal_costs_from_scratch`, the rule as first written), which takes the same
  snapshots;
* *old rule*: the tracker of ``s2sgrad/schedules.py`` at ``--old-rule COMMIT``
  (``OLD_RULE``, the first ``Online``), read with ``git show``.

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
OLD_RULE = "58461ae"  # the first Online: levels throughout


def reversal_costs_from_scratch(tracker) -> tuple:
    """``tracker._reversal_costs()`` computed from the snapshots' positions alone."""
    s, positions = tracker.snapshots, [c.position for c in tracker._held]
    lengths = [b - a for a, b in zip(positions, positions[1:])]
    before = [0]
    for j, length in enumerate(lengths):
        before.append(before[-1] + schedules._quick_optimum(length, s - j))
    after = [0] * (s + 1)
    for j in range(s - 2, 0, -1):
        after[j] = after[j + 1] + schedules._quick_optimum(lengths[j], s - j + 1)
    inner, inner_cost = None, 0
    for k in range(1, s - 1):
        merged = schedules._quick_optimum(positions[k + 1] - positions[k - 1], s - k + 1)
        cost = before[k - 1] + merged + after[k + 1]
        if inner is None or cost < inner_cost:
            inner, inner_cost = k, cost
    return before[s - 1], inner, inner_cost, before[s - 2]


def from_scratch_tracker(snapshots: int):
    tracker = schedules.Online(snapshots).start()
    tracker._reversal_costs = lambda: reversal_costs_from_scratch(tracker)
    return tracker


def load_old_rule(commit: str):
    source = subprocess.run(["git", "show", f"{commit}:s2sgrad/schedules.py"], cwd=HERE.parent,
                            check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "schedules_old_rule.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("schedules_old_rule", path)
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


def section(old_rule: str | None = OLD_RULE, repeats: int = 3) -> list[str]:
    """The Markdown section ``checkpointing.py`` puts into ``CHECKPOINTING.md``."""
    makers = {"cached": lambda s: schedules.Online(s).start(), "from scratch": from_scratch_tracker}
    if old_rule:
        old = load_old_rule(old_rule)
        makers["old rule"] = lambda s: old.Online(s).start()
    lines = ["", "## What the tracker costs per trip", "",
             "Written by `benchmarks/online_tracker_cost.py`: microseconds per `tracker.step()` of `Online(s)` "
             "over n calls, no loop run (best of 3 for n = 10,000, one run for 100,000; the machine shared). "
             "*cached*: the tracker, which after an eviction prices again only the stretches from the evicted "
             "snapshot on; *from scratch*: the same rule pricing every stretch after each store, as first "
             f"written (the same snapshots); *old rule*: the tracker at commit {old_rule} (the level rule "
             "without the greedy replacement).", "",
             "| s | n | " + " | ".join(f"{name} µs/step" for name in makers) + " | from scratch ÷ cached |",
             "|---:|---:|" + "---:|" * (len(makers) + 1)]
    for s, n in CASES:
        times = {name: microseconds_per_step(make, s, n, repeats) for name, make in makers.items()}
        cells = " | ".join(f"{t:.1f}" for t in times.values())
        lines.append(f"| {s} | {n:,} | {cells} | {times['from scratch'] / times['cached']:.1f} |")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-rule", metavar="COMMIT", default=OLD_RULE)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print("\n".join(section(args.old_rule, args.repeats)))


if __name__ == "__main__":
    main()
