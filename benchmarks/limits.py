"""A limit on the wall time of a block: how ``run.py --max-seconds`` stops a slow peer's first call.

    >>> import time
    >>> try:
    ...     with time_limit(0.05):
    ...         while True:
    ...             time.sleep(0.01)
    ... except Stopped:
    ...     print("stopped")
    stopped
"""
import contextlib
import signal
from typing import Optional


class Stopped(BaseException):
    """A first call stopped at its time limit (a BaseException, so that no tool's ``except Exception`` takes it)."""


@contextlib.contextmanager
def time_limit(seconds: Optional[float]):
    """Raise ``Stopped`` in the block once it has run ``seconds`` of wall time (None: no limit).

    The alarm repeats every 0.1 s until the block is left: one that fires in a
    callback that swallows exceptions (a garbage-collector hook) is not lost.
    """
    if seconds is None or not hasattr(signal, "setitimer"):
        yield
        return

    def stop(signum, frame):
        raise Stopped

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.1)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
