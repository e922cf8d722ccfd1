"""Generated modules written to real files, so that everything that reads source from disk shows them.

Python 3.11's and 3.12's own traceback printer, coverage and profilers read a code object's file, not
`linecache`: each generated module is therefore also written to a file in a per-user cache directory,
``$S2SGRAD_CACHE_DIR``, else ``$XDG_CACHE_HOME/s2sgrad``, else ``~/.cache/s2sgrad``. The file is for
display only: the code that runs is compiled from the text just generated (under the file's name), so a
stale or planted file is never executed; one with the right name and other content is replaced.

- The directory is made with mode 0o700; one not owned by the user, or writable by others, is not used
  (a private directory of this process's own is made instead).
- A file is named after the user's module and function and the generated function, with a hash of its
  text: ``mymodule.loss.dloss_dx.3f2a9c0d41b7e655.py``. It is written to a temporary file in the same
  directory, then renamed over the name (``os.replace``): other processes see the old file or the new
  one, never a part.
- Files not used for `MAX_AGE` seconds are removed, and the oldest beyond `MAX_FILES`, every `CLEAN_EVERY`
  writes of a process and when a process that wrote one exits (not at its first write, which would make a
  first call scan the directory); a file another process removes meanwhile is skipped (a module's text
  stays in linecache in the processes that use it).

    >>> import tempfile, os
    >>> os.environ["S2SGRAD_CACHE_DIR"] = tempfile.mkdtemp()
    >>> path = write_source("x = 1\\n", "mymodule.loss.dloss_dx")
    >>> os.path.basename(path)
    'mymodule.loss.dloss_dx.9e26bf369911c45c.py'
    >>> open(path).read()
    'x = 1\\n'
    >>> oct(os.stat(os.path.dirname(path)).st_mode & 0o777)
    '0o700'
    >>> del os.environ["S2SGRAD_CACHE_DIR"]
"""
from __future__ import annotations

import atexit
import hashlib
import os
import re
import stat
import tempfile
import time
import warnings

ENVIRONMENT_VARIABLE = "S2SGRAD_CACHE_DIR"
MAX_AGE = 7 * 24 * 3600          # seconds a file is kept after it was last written or used
MAX_FILES = 2000                 # files kept at most (the oldest go first)
CLEAN_EVERY = 500                # writes between clean-ups
_SUFFIX = ".py"
_TEMPORARY = ".tmp"

_writes: dict[str, int] = {}     # directory -> files this process wrote or used there
_private: dict[str, str] = {}    # a directory refused -> the private one used instead


def cache_directory() -> str:
    """The directory generated modules are written to (made, and checked to be the user's own)."""
    configured = os.environ.get(ENVIRONMENT_VARIABLE)
    if configured:
        directory = os.path.expanduser(configured)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        directory = os.path.join(base, "s2sgrad")
    directory = os.path.abspath(directory)
    if directory in _private:
        return _private[directory]
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        problem = _unsafe(directory)
    except OSError as error:
        problem = str(error)
    if problem is None:
        return directory
    warnings.warn(f"s2sgrad does not write generated code to {directory}: {problem}; it uses a private "
                  f"directory of this process instead (set {ENVIRONMENT_VARIABLE} to choose another)", stacklevel=2)
    _private[directory] = tempfile.mkdtemp(prefix="s2sgrad-")
    return _private[directory]


def _unsafe(directory: str) -> str | None:
    """Why `directory` must not hold generated code, or None: it must be a real directory (not a link) of
    the user's, which nobody else can write to."""
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a directory"
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return "it belongs to another user"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "other users can write to it"
    return None


def file_name(text: str, stem: str) -> str:
    """``stem.<hash of text>.py``, with characters other than letters, digits, ``_``, ``.`` and ``-`` as ``_``.

        >>> file_name("x = 1\\n", "my module.f <lambda>")
        'my_module.f__lambda_.9e26bf369911c45c.py'
    """
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return f"{re.sub(r'[^A-Za-z0-9_.-]', '_', stem)[:120]}.{digest}{_SUFFIX}"


def write_source(text: str, stem: str) -> str | None:
    """Write `text` to its file in the cache directory (see `file_name`) unless the file holds it already;
    returns the file's path, or None if it cannot be written (the code is then shown from linecache alone)."""
    try:
        directory = cache_directory()
        path = os.path.join(directory, file_name(text, stem))
        if _holds(path, text):
            os.utime(path, (time.time(), os.stat(path).st_mtime))   # used now (its access time), unchanged
            # (its modification time is what numba's disk cache of a compiled module checks)
        else:
            descriptor, temporary = tempfile.mkstemp(suffix=_TEMPORARY, prefix=".", dir=directory)
            try:
                with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                    file.write(text)
                os.replace(temporary, path)
            except BaseException:
                _remove(temporary)
                raise
        _writes[directory] = _writes.get(directory, 0) + 1
        if _writes[directory] == 1:
            atexit.register(_clean_at_exit, directory)
        elif _writes[directory] % CLEAN_EVERY == 0:
            clean(directory)
        return path
    except OSError:
        return None


def _clean_at_exit(directory: str) -> None:
    try:
        clean(directory)
    except OSError:
        pass                 # (the directory is gone)


def _holds(path: str, text: str) -> bool:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read() == text
    except (OSError, UnicodeDecodeError):
        return False


def clean(directory: str, max_age: float = MAX_AGE, max_files: int = MAX_FILES) -> None:
    """Remove the generated files of `directory` not used for `max_age` seconds, then the oldest beyond
    `max_files` (and temporary files left by a process that stopped while writing)."""
    now = time.time()
    files = []
    for entry in os.scandir(directory):
        if not entry.name.endswith((_SUFFIX, _TEMPORARY)) or not entry.is_file(follow_symlinks=False):
            continue
        try:
            status = entry.stat(follow_symlinks=False)
            used = max(status.st_atime, status.st_mtime)
        except OSError:
            continue
        if now - used > (max_age if entry.name.endswith(_SUFFIX) else 3600):
            _remove(entry.path)
        elif entry.name.endswith(_SUFFIX):
            files.append((used, entry.path))
    for _, path in sorted(files)[:max(0, len(files) - max_files)]:
        _remove(path)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass                 # (removed by another process already)
