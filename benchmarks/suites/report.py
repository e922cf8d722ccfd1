"""Run both peer suites and write their counts and their classified failure list.

    python -m benchmarks.suites.report --autograd PATH --tangent PATH \\
        [--results benchmarks/suites/RESULTS.md --label "after X"] [--failures failures.md]

`--results` gets (or has replaced) a section headed `--label` with the counts of both suites, the date
and the commit measured; `--failures` is overwritten with every failure, one line each (test id, class,
first line of the error) grouped by the area it belongs to (`summary.area`, a guess from the message).
"""
from __future__ import annotations

import argparse
import datetime
import pathlib
import re
import subprocess
import tempfile
from collections import Counter

from . import run_autograd, run_tangent
from .summary import AREAS, area, table

FAILED = ("wrong", "crashed", "refused")


def failures(autograd_rows: dict, tangent_results: dict) -> list[tuple[str, str, str, str, str]]:
    """(test id, mode, class, message, area) of every failure: of the reverse mode, else of the forward mode,
    else of the second derivatives (the first that fails, per test or function)."""
    found = []
    for test, row in autograd_rows.items():
        if row["rev"] in FAILED:
            found.append((f"autograd {test}", "rev", row["rev"], row["failure"].get("message", "")))
        elif row["fwd"] in FAILED:
            found.append((f"autograd {test}", "fwd", row["fwd"], row["fwd_failure"].get("message", "")))
        elif row["rev2"] in FAILED:
            found.append((f"autograd {test}", "rev2", row["rev2"], row["rev2_failure"].get("message", "")))
    for name, r in tangent_results.items():
        for mode in ("rev", "fwd", "rev2"):
            if r[mode].status in FAILED:
                found.append((f"tangent functions.py::{name}", mode, r[mode].status, r[mode].message))
                break
    return [(t, m, s, _short(msg), area(t, msg)) for t, m, s, msg in found]


def _short(message: str) -> str:
    """The message without the folders of the adapter's wrappers, the installed packages and the suites."""
    message = re.sub(r"/tmp/s2sgrad-suite-wrappers-\w+/", "<wrapper>/", message)
    message = re.sub(r"/\S*/site-packages/", "<site-packages>/", message)
    return re.sub(r"/\S*/tests/(\w+\.py)", r"\1", message)


def failure_list(rows: list, header: str) -> str:
    lines = [header, ""]
    for name in AREAS:
        mine = [r for r in rows if r[4] == name]
        if not mine:
            continue
        lines += [f"## {name} ({len(mine)})", ""]
        mine.sort(key=lambda r: (r[2] != "wrong", r[0]))         # the wrong ones first
        lines += [f"- `{t}` | {m} {s} | {msg}" for t, m, s, msg, _ in mine]
        lines.append("")
    return "\n".join(lines)


def section(label: str, autograd_rows: dict, tangent_results: dict, collection_errors: dict) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=run_autograd.ROOT).stdout.strip()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows = autograd_rows.values()
    autograd = table([("reverse mode, first order", Counter(r["rev"] for r in rows)),
                      ("forward mode, first order", Counter(r["fwd"] for r in rows if r["fwd"] != "none")),
                      ("second order (forward over reverse)", Counter(r["rev2"] for r in rows if r["rev2"] != "none"))])
    tangent = table([("reverse mode (vjp)", Counter(r["rev"].status for r in tangent_results.values())),
                     ("forward mode (jvp)", Counter(r["fwd"].status for r in tangent_results.values())),
                     ("second order (hvp, jvp of vjp)", Counter(r["rev2"].status for r in tangent_results.values()))])
    skipped = ", ".join(f"`{m}`" for m in collection_errors)
    return (f"## {label}\n\n{when}, commit {commit}.\n\n"
            f"autograd v1.9.1 `tests/`: {len(autograd_rows)} tests run (the modules {skipped} import "
            f"autograd internals and are not run).\n\n{autograd}\n\n"
            f"Tangent `tests/functions.py`: {len(tangent_results)} functions that need no TensorFlow.\n\n"
            f"{tangent}\n")


def replace_section(path: pathlib.Path, label: str, text: str) -> None:
    old = path.read_text() if path.exists() else "# Peer suites through s2sgrad\n\n"
    pattern = re.compile(rf"^## {re.escape(label)}\n.*?(?=^## |\Z)", re.S | re.M)
    new = pattern.sub(lambda _: text + "\n", old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text
    path.write_text(new)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--autograd", type=pathlib.Path, required=True, help="an autograd checkout")
    parser.add_argument("--tangent", type=pathlib.Path, required=True, help="a Tangent checkout")
    parser.add_argument("--results", type=pathlib.Path)
    parser.add_argument("--label", default="results")
    parser.add_argument("--failures", type=pathlib.Path)
    args = parser.parse_args(argv)
    raw = run_autograd.run(args.autograd.resolve(), pathlib.Path(tempfile.mkdtemp()) / "autograd.json")
    autograd_rows = run_autograd.classified(raw)
    tangent_results = run_tangent.run(args.tangent.resolve())
    text = section(args.label, autograd_rows, tangent_results, raw["collection_errors"])
    print(text)
    if args.results:
        replace_section(args.results, args.label, text)
    rows = failures(autograd_rows, tangent_results)
    listing = failure_list(rows, f"# Failures of the peer suites ({args.label})\n\nOne line per test: id | mode "
                                 "and class | first line of the error, grouped by area (guessed from the "
                                 "message). `rev` is the reverse mode (vjp against finite differences); `fwd` "
                                 "(jvp) and `rev2` (second derivatives) are listed only where the modes before "
                                 "them passed. Made by "
                                 "`python -m benchmarks.suites.report` (see benchmarks/suites/README.md).")
    if args.failures:
        args.failures.write_text(listing + "\n")
    else:
        print(listing)


if __name__ == "__main__":
    main()
