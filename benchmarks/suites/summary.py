"""From the recorded outcomes of a suite to its counts, its failure list and the areas the failures belong to.

A test's status in one mode is the worst of the measured outcomes (`checks.MEASURED`) of its checks in that
mode, together with the exception the test itself ended with; a test with no measured outcome is counted
apart, as ``complex``, ``not-mapped``, ``no-numpy``, ``skipped`` or ``no-derivative`` (it made no derivative).

    >>> status([{"mode": "rev", "status": "passed"}, {"mode": "rev", "status": "complex"}], None, "rev")
    'passed'
    >>> status([{"mode": "rev", "status": "complex"}], None, "rev")
    'complex'
"""
from __future__ import annotations

import re
from collections import Counter

from .checks import MEASURED, ORDER

APART = ("complex", "not-mapped", "no-numpy")


def status(records: list, error: dict | None, mode: str, used: bool = True, skipped: bool = False) -> str:
    """The status of one test in `mode` (``rev``; ``fwd``; ``rev2``, second derivatives; or ``all`` for every
    check it made). A test that made checks in other modes only is ``none`` in this one."""
    mine = [r["status"] for r in records if mode == "all" or r["mode"] == mode]
    if not used:                        # the test made no derivative: whatever it found is not about s2sgrad
        if error is not None and error["status"] in APART:
            return error["status"]
        return "skipped" if skipped else "no-derivative"
    if error is not None and (mode in ("rev", "all") or mine):
        mine.append(error["status"])
    measured = [s for s in mine if s in MEASURED]
    if measured:
        return min(measured, key=ORDER.__getitem__)
    for apart in APART:
        if apart in mine:
            return apart
    if skipped:
        return "skipped"
    return "passed" if mode in ("rev", "all") else "none"


def first_failure(records: list, error: dict | None, mode: str, wanted: str) -> dict:
    """The first outcome of class `wanted` in `mode` (the test's own exception last)."""
    for r in records + ([error] if error else []):
        if r["status"] == wanted and (mode == "all" or r["mode"] in (mode, "test")):
            return r
    return {"message": "", "kind": ""}


def counts(statuses: list) -> Counter:
    return Counter(statuses)


def table(rows: list[tuple[str, Counter]]) -> str:
    """A markdown table: one row per (label, counts), measured columns first."""
    columns = list(MEASURED) + [c for c in ("complex", "not-mapped", "no-numpy", "skipped", "no-derivative")
                                if any(c in n for _, n in rows)]
    head = "| | measured | " + " | ".join(columns) + " | pass rate |"
    lines = [head, "|" + "---|" * (len(columns) + 3)]
    for label, n in rows:
        measured = sum(n[c] for c in MEASURED)
        rate = f"{100 * n['passed'] / measured:.1f} %" if measured else "-"
        lines.append(f"| {label} | {measured} | " + " | ".join(str(n[c]) for c in columns) + f" | {rate} |")
    return "\n".join(lines)


# --- areas ---------------------------------------------------------------------------------

AREAS = ("linalg/fft/complex", "numpy rules/scipy", "syntax & signatures", "builtins",
         "objects & methods & pytrees", "callables", "api/outputs", "other")

_RULES = [                # (pattern on the message, area): the first match wins
    (r"no (derivative|forward-mode \(tangent\)) rule for (dict|list|tuple|sorted|max|min|sum|map|abs|pow|round|"
     r"divmod|reversed|enumerate|float|int)\b", "builtins"),
    (r"the method '(items|values|keys|get)' is not supported", "syntax & signatures"),
    (r"site-packages/(scipy|numpy)", "numpy rules/scipy"),
    (r"the method '\w+' is not supported on a local value", "objects & methods & pytrees"),
    (r"complex", "linalg/fft/complex"),
    (r"np\.linalg|np\.fft|scipy\.linalg", "linalg/fft/complex"),
    (r"no (derivative|forward-mode \(tangent\)) rule for (np|scipy|stats)\.|np\.r_|einsum", "numpy rules/scipy"),
    (r"truth value|to return a scalar|a scalar output", "api/outputs"),
    (r"only named functions can be called|local function .* can only be called|lambda|partial|"
     r"not a Python function", "callables"),
    (r"\*args|keyword-only|is out of range: \w+ has \d+ argument\(s\) \(args, kwargs\)|'with'|'raise'|'try'|"
     r"walrus|global", "syntax & signatures"),
]


def area(test_id: str, message: str) -> str:
    """A first guess at the area a failure belongs to, from its message, else its test file."""
    for pattern, name in _RULES:
        if re.search(pattern, message):
            return name
    if re.search(r"test_(linalg|fft|complex)\.py", test_id):
        return "linalg/fft/complex"
    if re.search(r"test_(scipy|systematic|numpy|binary_ops|scalar_ops|ufunc_dispatch)\.py", test_id):
        return "numpy rules/scipy"
    return "other"
