"""A pytest plugin that classifies each of autograd's tests by what its s2sgrad derivatives did.

Loaded with ``-p benchmarks.suites.autograd_plugin`` (`run_autograd` does it), with the autograd shim
first on the path. For each test it collects the outcomes `grad_checks.check_grads` recorded and the
exception the test itself ended with, if any, and writes them all, as JSON, to the file named by the
environment variable ``S2SGRAD_SUITE_JSON`` when the session ends. Each test has at most
``S2SGRAD_SUITE_TIMEOUT`` seconds (default 120); one that runs longer ends as crashed.
"""
from __future__ import annotations

import json
import os
import re
import signal
import traceback

import pytest

from . import grad_checks, operators
from .checks import Outcome, _failure

RESULTS: dict = {}           # test id -> {"records": [...], "error": {...} or None, "used": bool}
COLLECTION_ERRORS: dict = {}  # module -> first line of the error


class Timeout(Exception):
    """The test ran past its time."""


def _alarm(signum, frame):
    raise Timeout(f"the test ran longer than {os.environ.get('S2SGRAD_SUITE_TIMEOUT', '120')} s")


def _ending(error: BaseException) -> Outcome:
    """The class of the exception a test itself ended with."""
    if isinstance(error, operators.ComplexOnly) or re.search(r"argument '\w+' of \w+ is complex", str(error)):
        return Outcome("test", "complex", str(error)[:300], type(error).__name__)
    if isinstance(error, (operators.NotMapped, ImportError)):
        return Outcome("test", "not-mapped", f"{type(error).__name__}: {error}"[:300], type(error).__name__)
    if isinstance(error, AttributeError) and re.match(r"module '(numpy|scipy)[\w.]*' has no attribute", str(error)):
        return Outcome("test", "no-numpy", str(error)[:300], "AttributeError")    # an autograd-only function
    if type(error).__name__ == "Failed" and str(error).startswith("DID NOT RAISE"):
        return Outcome("test", "not-mapped", f"autograd raises here, s2sgrad does not: {error}"[:300], "Failed")
    if isinstance(error, AssertionError):
        frame = traceback.extract_tb(error.__traceback__)[-1]
        text = (str(error).strip().splitlines() or ["assertion failed"])[0]
        return Outcome("test", "wrong", f"{text}  [{frame.line}]"[:300], "AssertionError")
    return _failure("test", error)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    del grad_checks.RECORDED[:]
    used = operators.USED[0]
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(os.environ.get("S2SGRAD_SUITE_TIMEOUT", "120")))
    outcome = yield
    signal.alarm(0)
    error = outcome.excinfo[1] if outcome.excinfo else None
    skipped = error is not None and isinstance(error, pytest.skip.Exception)
    RESULTS[item.nodeid] = {
        "records": [o.as_dict() for o in grad_checks.RECORDED],
        "error": None if error is None or skipped else _ending(error).as_dict(),
        "skipped": skipped,
        "used": operators.USED[0] > used or bool(grad_checks.RECORDED),
    }


def pytest_collectreport(report):
    if report.failed:
        text = str(report.longrepr).strip().splitlines()
        COLLECTION_ERRORS[report.nodeid] = next((line for line in reversed(text) if line.startswith("E ")),
                                                text[-1] if text else "")[:300]


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("S2SGRAD_SUITE_JSON")
    if path:
        with open(path, "w") as out:
            json.dump({"tests": RESULTS, "collection_errors": COLLECTION_ERRORS}, out, indent=1)
