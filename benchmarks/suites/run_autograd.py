"""Run autograd's own test suite through s2sgrad and count what its derivatives did.

    python -m benchmarks.suites.run_autograd PATH/TO/AUTOGRAD [--out results.json] [-k EXPR] [FILES...]

PATH is an autograd checkout (only its ``tests/`` folder is read). The autograd shim
(``autograd_shim/``) is put first on the path, so that ``import autograd`` gives NumPy, SciPy and
s2sgrad-based operators; pytest runs autograd's test files with the `autograd_plugin` plugin, and the
counts are printed as a markdown table, followed by every failure of the reverse mode (then those of
the forward mode and of the second derivatives, where the reverse mode passed).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

from .summary import counts, first_failure, status, table

HERE = pathlib.Path(__file__).resolve().parent
MODES = ("rev", "fwd", "rev2", "all")
ROOT = HERE.parent.parent


def run(checkout: pathlib.Path, out: pathlib.Path, files=(), keyword: str | None = None) -> dict:
    """Run the suite at `checkout` (or only `files` of its tests/), write the raw outcomes to `out`, return them."""
    tests = checkout / "tests"
    if not tests.is_dir():
        raise SystemExit(f"{tests} is not a folder: give the path of an autograd checkout")
    env = dict(os.environ, S2SGRAD_SUITE_JSON=str(out),
               PYTHONPATH=os.pathsep.join([str(HERE / "autograd_shim"), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    targets = [str(tests / f) for f in files] or [str(tests)]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-p", "benchmarks.suites.autograd_plugin", "-c", os.devnull, "--rootdir", str(tests),
               "-W", "ignore", "--tb=no", "--no-header", "--continue-on-collection-errors", *targets]
    if keyword:
        command += ["-k", keyword]
    subprocess.run(command, env=env, cwd=str(tests))
    return json.loads(out.read_text())


def classified(results: dict) -> dict:
    """test id -> {"rev": ..., "fwd": ..., "rev2": ..., "all": ..., "failure": first failure of its reverse
    mode, "fwd_failure": ..., "rev2_failure": ...}."""
    rows = {}
    for test, r in results["tests"].items():
        if "test_complex.py" in test:
            rows[test] = {mode: "complex" for mode in MODES}
            rows[test].update(failure={}, fwd_failure={}, rev2_failure={})
            continue
        row = {mode: status(r["records"], r["error"], mode, r["used"], r["skipped"]) for mode in MODES}
        row["failure"] = first_failure(r["records"], r["error"], "rev", row["rev"])
        row["fwd_failure"] = first_failure(r["records"], r["error"], "fwd", row["fwd"])
        row["rev2_failure"] = first_failure(r["records"], r["error"], "rev2", row["rev2"])
        rows[test] = row
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=pathlib.Path)
    parser.add_argument("files", nargs="*", help="test files of tests/ to run (default: all)")
    parser.add_argument("--out", type=pathlib.Path, help="where the raw outcomes go (JSON)")
    parser.add_argument("-k", dest="keyword")
    args = parser.parse_args(argv)
    out = args.out or pathlib.Path(tempfile.mkdtemp()) / "autograd.json"
    results = run(args.checkout.resolve(), out, args.files, args.keyword)
    rows = classified(results)
    print(table([("reverse mode, first order", counts(r["rev"] for r in rows.values())),
                 ("forward mode, first order", counts(r["fwd"] for r in rows.values() if r["fwd"] != "none")),
                 ("second order (forward over reverse)",
                  counts(r["rev2"] for r in rows.values() if r["rev2"] != "none")),
                 ("every check of the test", counts(r["all"] for r in rows.values()))]))
    print(f"\ntests run: {len(rows)}; modules that did not import: {len(results['collection_errors'])}")
    for module, error in results["collection_errors"].items():
        print(f"  {module}: {error}")
    print()
    for test, r in rows.items():
        if r["rev"] in ("wrong", "crashed", "refused"):
            print(f"{test}\t{r['rev']}\t{r['failure'].get('message', '')}")
    for mode in ("fwd", "rev2"):
        for test, r in rows.items():
            if r[mode] in ("wrong", "crashed", "refused") and r["rev"] == "passed":
                print(f"{test}\t{mode} {r[mode]}\t{r[mode + '_failure'].get('message', '')}")
    print(f"\nraw outcomes: {out}")


if __name__ == "__main__":
    main()
