"""Optional libraries the derivative rules of their own functions call, imported when first used.

``import s2sgrad`` never imports SciPy: the rules of ``scipy.special.gammaln`` call
``scipy_special.digamma``, and `scipy_special` imports ``scipy.special`` at its first read
(`scipy_signal`: ``scipy.signal``).

    >>> scipy_special.expit(0.0)
    np.float64(0.5)
"""
from __future__ import annotations

import importlib


class LazyModule:
    """A module imported at the first read of one of its attributes; each read is the module's own attribute."""

    def __init__(self, name: str):
        self.name = name

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(importlib.import_module(self.name), attr)

    def __repr__(self) -> str:
        return f"<{self.name}, imported when first used>"


scipy_special = LazyModule("scipy.special")
scipy_signal = LazyModule("scipy.signal")
