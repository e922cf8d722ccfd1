"""Notes on errors raised inside generated code, naming the user's line the failing statement came from.

An exception raised by a generated statement (a ZeroDivisionError, a shape mismatch, a LinAlgError) is
reported at a line of the generated module; `add_origin_note` adds a note (PEP 678, Python 3.11 and later)
with the user's own ``file:line`` and source line, from the module's line map (`Source.origins`), so that
the traceback ends at the user's code too:

    ZeroDivisionError: float division by zero
    s2sgrad: the failing line of generated code (df_dx, line 9) comes from /home/me/model.py:4
        z = 1.0 / y

    >>> import s2sgrad as sg
    >>> try:
    ...     sg.grad(lambda x: 1.0 / x)(0.0)
    ... except ZeroDivisionError as error:
    ...     print(error.__notes__[0].splitlines()[0][:60])      # doctest: +SKIP
    s2sgrad: the failing line of generated code (d_lambda_dx, line
"""
from __future__ import annotations

import linecache

from ..backend.codegen import SOURCE_GLOBAL
from ..errors import S2SGradError

PREFIX = "s2sgrad: the failing line of generated code"


def add_origin_note(error: BaseException) -> None:
    """Add to `error` the note naming the user's line its innermost generated frame came from (once: a
    derivative called inside generated code sees the error first); nothing on Python 3.10, for an error
    s2sgrad located itself, or where no frame is generated code."""
    if not hasattr(error, "add_note") or isinstance(error, S2SGradError) and error.location is not None:
        return
    if any(str(note).startswith(PREFIX) for note in getattr(error, "__notes__", ())):
        return
    innermost = None
    tb = error.__traceback__
    while tb is not None:
        if SOURCE_GLOBAL in tb.tb_frame.f_globals:
            innermost = tb
        tb = tb.tb_next
    if innermost is None:
        return
    source = innermost.tb_frame.f_globals[SOURCE_GLOBAL]
    where = source.origin(innermost.tb_lineno)
    if where is None:
        return
    text = (linecache.getline(where.filename, where.line) or where.text).strip()
    error.add_note(f"{PREFIX} ({innermost.tb_frame.f_code.co_name}, line {innermost.tb_lineno}) comes from "
                   f"{where.filename}:{where.line}" + (f"\n    {text}" if text else ""))
