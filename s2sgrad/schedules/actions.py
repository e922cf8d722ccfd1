"""The actions a schedule yields and its driver carries out (see `s2sgrad.schedules` for their meaning).

    >>> Advance(3), Reverse()
    (Advance(steps=3), Reverse(steps=1))
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True, slots=True)
class Advance:
    """Run ``steps`` forward steps without recording: position ``p`` becomes ``p + steps``."""

    steps: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Store the current state in slot ``slot``, replacing what the slot held."""

    slot: int


@dataclass(frozen=True, slots=True)
class Restore:
    """Make the state stored in slot ``slot`` current; the slot keeps it."""

    slot: int


@dataclass(frozen=True, slots=True)
class Free:
    """The snapshot in slot ``slot`` will not be read again."""

    slot: int


@dataclass(frozen=True, slots=True)
class Reverse:
    """Record steps ``p .. p + steps - 1`` from the current position ``p``, then run
    their adjoints, last step first.  The current state is undefined afterwards."""

    steps: int = 1


Action = Union[Advance, Snapshot, Restore, Free, Reverse]
