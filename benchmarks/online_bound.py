"""Online checkpointing against its lower bound: forward steps of ``Online(s)`` over n, no loop run.

    python benchmarks/online_bound.py [--max-n 1000000] [--snapshots 1 2 5 ...] [--out DIR]

A loop that must run to its end before its trip count n is known cannot be
reversed with s snapshot slots in fewer than ``optimal_forward_steps(n + 1, s)``
forward steps (the *online bound*; the module docstring of
``s2sgrad.schedules`` says how steps are counted).  For each s this drives
``Online(s).start()`` through n steps and prices the backward sweep its
snapshots allow (each stretch between them reversed binomially with the
slots free by then, as ``reverse()`` does), for every n up to 3,000 and
about 500 n per decade beyond, plus the 40 n after each
``C(s + r, r)``.  Beside it:

* Revolve, ``optimal_forward_steps(n, s)``: the offline optimum, which knows
  n on entry;
* Wang, Moin and Iaccarino's dynamic checkpointing as their paper counts
  slots: a list of s + 1 leveled entries, the newest being the state just
  computed, which needs no slot (the realization ``Online`` is of it frees a
  dispensable slot one step early, so the two differ by a few steps at
  some n).

``section()`` returns the Markdown that ``checkpointing.py`` puts into
``CHECKPOINTING.md``; ``plot()`` draws ``online_bound.png``.  Run alone, it
writes ``ONLINE_BOUND.md`` and the plot to ``--out`` (``benchmarks/out``),
their names ending in ``_N`` for ``--max-n N`` other than 100,000
(``benchmarks/ONLINE_BOUND_1000000.md``: ``--max-n 1000000 --out benchmarks``).
"""
from __future__ import annotations

import argparse
import sys
from math import comb, inf
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import online_tracker_cost  # noqa: E402

from s2sgrad.schedules import Online, optimal_forward_steps  # noqa: E402

SNAPSHOTS = [1, 2, 3, 5, 10, 20, 50, 100]
# earlier Online rules, read with git show: the rule of least cost alone, and the first (levels throughout,
# without the paper's placeholder)
EARLIER = {"previous": "a91b2b2", "first": "58461ae"}
MAX_N = 100_000


def reversal_cost(positions: list[int], n: int, snapshots: int) -> int:
    """Forward steps of a loop of n steps whose forward sweep left snapshots at `positions`."""
    free, end, total = snapshots - len(positions), n, n
    for position in reversed(positions):
        free += 1
        total += optimal_forward_steps(end - position, free)
        end = position
    return total


def sample(snapshots: int, max_n: int) -> list[int]:
    """The n priced: every n to 3,000, then geometric, and the 40 after each C(s + r, r)."""
    ns = set(range(1, min(max_n, 3000) + 1))
    n = 3000.0
    while n < max_n:
        n *= 1.0046
        ns.add(min(int(n), max_n))
    r = 2
    while comb(snapshots + r, r) < max_n:
        ns.update(range(comb(snapshots + r, r), min(comb(snapshots + r, r) + 40, max_n) + 1))
        r += 1
    return sorted(ns)


def online_steps(snapshots: int, ns: list[int], online=Online) -> dict[int, int]:
    tracker, out = online(snapshots).start(), {}
    wanted = iter(ns)
    target = next(wanted)
    for n in range(1, ns[-1] + 1):
        tracker.step()
        if n == target:
            held = tracker.held() if hasattr(tracker, "held") else [c.position for c in tracker._held]
            out[n] = reversal_cost(held, n, snapshots)
            target = next(wanted, None)
    return out


def wang_moin_iaccarino_steps(snapshots: int, ns: list[int]) -> dict[int, int]:
    """The paper's accounting: s + 1 entries [position, level], the newest needing no slot."""
    entries: list[list] = [[0, inf]]
    out, wanted = {}, iter(ns)
    target = next(wanted)
    for n in range(1, ns[-1] + 1):
        position = n - 1
        if position > 0:
            if len(entries) <= snapshots:
                entries.append([position, 0])
            else:
                later = -1
                for k in range(len(entries) - 1, 0, -1):
                    if entries[k][1] < later:
                        del entries[k]
                        entries.append([position, 0])
                        break
                    later = max(later, entries[k][1])
                else:
                    if len(entries) > 1:
                        entries[-1] = [position, entries[-1][1] + 1]
        if n == target:
            held = [e[0] for e in entries][:snapshots]
            out[n] = reversal_cost(held, n, snapshots)
            target = next(wanted, None)
    return out


def sweep(snapshots: list[int], max_n: int) -> dict[int, dict]:
    earlier = {name: online_tracker_cost.load_old_rule(commit).Online for name, commit in EARLIER.items()}
    results = {}
    for s in snapshots:
        ns = sample(s, max_n)
        bound = {n: optimal_forward_steps(n + 1, s) for n in ns}
        results[s] = {"n": ns, "bound": bound, "online": online_steps(s, ns),
                      "wmi": wang_moin_iaccarino_steps(s, ns),
                      "revolve": {n: optimal_forward_steps(n, s) for n in ns},
                      **{name: online_steps(s, ns, rule) for name, rule in earlier.items()}}
    return results


def _ratio(steps: int, bound: int) -> float:
    return steps / bound if bound else 1.0


def _against(r: dict, other: str) -> str:
    """The share of n where Online takes more forward steps than `other` (its worst excess), and fewer."""
    worse = [n for n in r["n"] if r["online"][n] > r[other][n]]
    excess = max((r["online"][n] / r[other][n] for n in worse), default=1.0)
    better = sum(r["online"][n] < r[other][n] for n in r["n"])
    return f"{len(worse) / len(r['n']):.0%} ({excess:.3f}) / {better / len(r['n']):.0%}"


def guarantee_rows(results: dict[int, dict]) -> list[str]:
    """The measured guarantee: Online's worst ratio to the bound by range of n, beside the other rules'."""
    rows = ["| s | n ≤ (s+1)(s+2)/2 | worst beyond (at n) | worst for n ≥ 10·(s+1)(s+2)/2 | "
            "n within 1 % of the bound | previous: worst beyond, within 1 % | WMI: worst beyond, within 1 % | "
            "n where Online > WMI (worst) / < WMI | > previous (worst) / < previous | > first (worst) / < first |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s, r in results.items():
        beta2 = comb(s + 2, 2)
        ratios = {key: {n: _ratio(r[key][n], r["bound"][n]) for n in r["n"]} for key in ("online", "previous", "wmi")}
        ratio = ratios["online"]
        early = max((ratio[n] for n in r["n"] if n <= beta2), default=1.0)
        beyond = [n for n in r["n"] if n > beta2]
        worst_n = max(beyond, key=ratio.get) if beyond else None
        far = [ratio[n] for n in r["n"] if n >= 10 * beta2]

        def other(key: str) -> str:
            worst = f"{max(ratios[key][n] for n in beyond):.3f}" if beyond else "—"
            return f"{worst}, {sum(ratios[key][n] <= 1.01 for n in r['n']) / len(r['n']):.0%}"

        rows.append(
            f"| {s} | {early:.3f} | "
            + (f"{ratio[worst_n]:.3f} ({worst_n:,})" if worst_n else "—") + " | "
            + (f"{max(far):.3f}" if far else "—") + " | "
            + f"{sum(ratio[n] <= 1.01 for n in r['n']) / len(r['n']):.0%} | {other('previous')} | {other('wmi')} | "
            + f"{_against(r, 'wmi')} | {_against(r, 'previous')} | {_against(r, 'first')} |")
    return rows


def section(results: dict[int, dict], picture: str | None) -> list[str]:
    max_n = max(r["n"][-1] for r in results.values())
    lines = ["## Online checkpointing against the online bound", "",
             f"Written by `benchmarks/online_bound.py` (n up to {max_n:,}; to 10^6 in `ONLINE_BOUND_1000000.md`, "
             "from `online_bound.py --max-n 1000000 --out benchmarks`): forward steps of `Online(s)` on a loop "
             "whose trip count is known only when it ends, "
             "divided by the online bound `optimal_forward_steps(n + 1, s)`, the fewest any such schedule can "
             "take. *WMI*: Wang, Moin and Iaccarino's dynamic checkpointing as their paper counts slots; *previous*: "
             f"`Online` at commit {EARLIER['previous']} (the rule of least cost, not steered); *first*: `Online` at "
             f"commit {EARLIER['first']} (levels throughout, the paper's placeholder left out). Sampled: "
             "every n to 3,000, about 500 n per decade beyond, and the 40 n after each C(s + r, r).", ""]
    lines += guarantee_rows(results)
    lines += ["", "No online schedule is at or below both WMI and *first* at every n: with s = 3, of all the sets "
              "of snapshots an online schedule may hold after each step, none reverses at or below the better "
              "of the two at every n up to 22, and with s = 2 none at every n up to 12, where none is even at or "
              "below WMI alone: its count holds the placeholder, a third state, before it is known whether it stays "
              "(`tests/test_schedules.py` enumerates them). `Online` follows the "
              "level rule to each n where it is on the bound and holds its snapshots there (the tracker runs it "
              "ahead); between, the rule of least cost decides."]
    if picture:
        lines += ["", f"![forward steps ÷ online bound]({picture})"]
    return lines


def plot(path: Path, results: dict[int, dict]) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(len(results), 1, figsize=(9, 2.2 * len(results)), sharex=True)
    for ax, (s, r) in zip(axes, results.items()):
        ns = r["n"]
        for key, label, style in [("online", "Online", "-"), ("previous", "previous Online", "-."),
                                  ("wmi", "WMI (paper's count)", ":"),
                                  ("revolve", "Revolve (n known)", "--")]:
            ax.plot(ns, [_ratio(r[key][n], r["bound"][n]) for n in ns], style, label=label, linewidth=0.9)
        ax.axvline(comb(s + 2, 2), color="grey", linewidth=0.5)
        ax.set_ylabel(f"s = {s}")
        ax.set_xscale("log")
    axes[0].legend(loc="upper left", fontsize=8)
    axes[0].set_title("forward steps ÷ online bound t(n+1, s); grey: n = (s+1)(s+2)/2")
    axes[-1].set_xlabel("trip count n")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-n", type=int, default=MAX_N)
    parser.add_argument("--snapshots", type=int, nargs="+", default=SNAPSHOTS)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    results = sweep(args.snapshots, args.max_n)
    suffix = "" if args.max_n == MAX_N else f"_{args.max_n}"   # beside checkpointing.py's own sweep
    picture = f"online_bound{suffix}.png"
    picture = picture if plot(args.out / picture, results) else None
    (args.out / f"ONLINE_BOUND{suffix}.md").write_text("\n".join(section(results, picture)) + "\n")
    print("\n".join(guarantee_rows(results)))


if __name__ == "__main__":
    main()
