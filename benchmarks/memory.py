"""The peak memory of one call, as every benchmark measures it: tracemalloc's peak above what was allocated
before the call, the call's result included (it is dropped only after the peak is read).

    >>> import numpy as np
    >>> peak_bytes(lambda: np.zeros(1000)) >= 8000
    True
"""
import gc
import tracemalloc
from typing import Callable


def peak_bytes(call: Callable[[], object]) -> int:
    """Peak memory NumPy and Python allocate during one call, above the start."""
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        result = call()
        peak = tracemalloc.get_traced_memory()[1] - start
        del result
    finally:
        tracemalloc.stop()
    return peak
