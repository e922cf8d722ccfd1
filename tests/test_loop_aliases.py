"""In-place changes (``y += v``, ``y[...] = v``, ``np.add(y, v, out=y)``) of a name that may be another name's
array on some path: made before the loop or inside it, on the first trip or a later one, through a branch or a
list item, with ``y`` a number or an array before the loop.

Each generated program either gives f's own value and the gradient of central finite differences, or is
refused (UnsupportedSyntax) at the line of the change or of a read of the changed alias: never a silently
wrong gradient.
"""
import ast
import importlib.util
import itertools

import numpy as np
import pytest
from gradcheck import assert_grad_matches_fd

import s2sgrad as sg

_counter = itertools.count()

OPERATORS = {"+=": "1.5", "-=": "0.5", "*=": "1.5", "/=": "2.0", "**=": "2.0"}
WRITES = [f"y {op} {v}" for op, v in OPERATORS.items()] + \
    ["y += x", "y[...] = y * 1.5", "y[0] = y[1] * 3.0", "np.add(y, 1.0, out=y)", "np.multiply(y, x, out=y)"]
ALIASES = {   # where y becomes t's array (before the loop, at the top or the bottom of a trip), is t made in the loop
    "before": ("before", "y = t", False),
    "first": ("top", "y = t", True),
    "later": ("bottom", "y = t", True),
    "later_kept": ("bottom", "y = t", False),
    "branch": ("top", "if i % 2 == 1:\n{ind}    y = t", True),
    "later_branch": ("bottom", "if i % 2 == 0:\n{ind}    y = t", False),
    "item": ("top", "parts = [t]\n{ind}y = parts[0]", True),
    "later_tuple": ("bottom", "y, k = t, 1.0", False),
    "later_unpacked": ("bottom", "y, k = [t, x]", False),
    "view": ("top", "y = t[0:3]", True),
    "later_view": ("bottom", "y = t.reshape(3)", False),
    "before_branch": ("before", "if x[0] > 0:\n{ind}    y = t", False),
}
READS = ["after", "in_loop", "none"]          # t read after the loop, in the loop after the write, or not
EVERY_WRITE = {"before", "first", "later_kept", "branch"}     # swept with every write; the others with some
SOME_WRITES = {"y += 1.5", "y += x", "y[...] = y * 1.5", "np.add(y, 1.0, out=y)"}
INITIAL = {"scalar": "0.5", "array": "x * 1.5"}


def program(alias: str, write: str, read: str, initial: str) -> tuple[str, int, set]:
    """The source of f, the line of the write and the lines that read t."""
    where, making, t_in_loop = ALIASES[alias]
    lines = ["import numpy as np", "", "def f(x):", "    s = 0.0", "    t = x * 2.0", f"    y = {INITIAL[initial]}"]
    if where == "before":
        lines += ["    " + making.format(ind="    ")]
    lines += ["    for i in range(3):"]
    if t_in_loop:
        lines += ["        t = x * (i + 2.0)"]
    if where == "top":
        lines += ["        " + making.format(ind="        ")]
    lines += [f"        {write}"]
    if read == "in_loop":
        lines += ["        s = s + np.sum(t * t)"]
    if where == "bottom":
        lines += ["        " + making.format(ind="        ")]
    lines += ["    return s + np.sum(y * t)" if read != "none" else "    return s + np.sum(y * x)"]
    text = "\n".join(lines) + "\n"
    rows = text.splitlines()
    write_line = next(k + 1 for k, row in enumerate(rows) if row.strip() == write)
    reads = {node.lineno for node in ast.walk(ast.parse(text))
             if isinstance(node, ast.Name) and node.id == "t" and isinstance(node.ctx, ast.Load)}
    return text, write_line, reads


def runs_in_python(text: str) -> bool:
    namespace = {}
    exec(compile(text, "<case>", "exec"), namespace)
    try:
        with np.errstate(all="raise"):
            namespace["f"](np.array([0.7, 1.3, 0.9]))
    except (TypeError, ValueError, IndexError, FloatingPointError):
        return False
    return True


def _cases():
    cases = []
    for alias, write, read, initial in itertools.product(ALIASES, WRITES, READS, INITIAL):
        if (read != "after" or alias not in EVERY_WRITE) and write not in SOME_WRITES:
            continue
        if runs_in_python(program(alias, write, read, initial)[0]):
            cases.append(pytest.param(alias, write, read, initial, id=f"{alias}-{write}-{read}-{initial}"))
    return cases


def load(tmp_path, text: str):
    path = tmp_path / f"loop_alias_{next(_counter)}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f


@pytest.mark.parametrize("alias, write, read, initial", _cases())
def test_change_through_a_loop_alias_is_right_or_refused(tmp_path, alias, write, read, initial):
    text, write_line, reads = program(alias, write, read, initial)
    f = load(tmp_path, text)
    x = np.array([0.7, 1.3, 0.9])
    try:
        value, _ = sg.value_and_grad(f)(x.copy())
    except sg.UnsupportedSyntax as error:
        assert "changed in place" in error.message, error
        assert error.location.line in reads | {write_line}, (error, text)
        return
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-10, err_msg=text)
    assert_grad_matches_fd(f, (x,))
