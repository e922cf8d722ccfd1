"""What docs/design.md's "What is not supported" list names is refused, with an error at the user's own line
(a sample of the list: each item below is quoted from it). Recursion, which the list no longer names, works."""
import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

import s2sgrad as sg

DESIGN = (Path(__file__).parent.parent / "docs" / "design.md").read_text()
UNSUPPORTED = " ".join(DESIGN[DESIGN.index("## What is not supported"):].split())


def set_display(x):
    s = {1.0, 2.0}
    return x * len(s)


def bare_raise(x):
    if x > 10.0:
        raise
    return x * 2.0


def bound_in_one_branch(x):
    if x > 0.0:
        y = x * 2.0
    return y


def starred_display(x):
    xs = [x, x]
    ys = [*xs, x]
    return ys[0] * ys[2]


def list_extend(x):
    ys = [x]
    ys.extend([x])
    return ys[1]


def list_sort(x):
    ys = [x, 2.0 * x]
    ys.sort()
    return ys[0]


def walrus_in_comprehension(x):
    ys = [y := t * x for t in range(3)]
    return y + ys[0]


def unseeded_in_recomputed(x):
    return _noisy(x) * 2.0


@sg.recompute
def _noisy(x):
    np.random.seed()
    return x * np.random.normal()


def generator_made_in_the_function(x):
    rng = np.random.default_rng(0)
    return x * rng.normal()


CASES = {                       # the function, and the words of the list that name it
    "set_display": (set_display, "set displays (`{1.0, 2.0}`"),
    "bare_raise": (bare_raise, "a bare `raise` outside an except block"),
    "bound_in_one_branch": (bound_in_one_branch, "a name bound in one branch of an `if` only"),
    "walrus_in_comprehension": (walrus_in_comprehension, "(or by `:=` in a comprehension) and read after it"),
    "starred_display": (starred_display, "starred items in a list or tuple display (`[*xs, x]`"),
    "list_extend": (list_extend, "methods of a local list other than `append` and `pop()`/`pop(0)` (`extend`"),
    "list_sort": (list_sort, "`sort`, `index`, ...)"),
    "unseeded_in_recomputed": (unseeded_in_recomputed, "`np.random.seed()` without a seed in code that runs again"),
    "generator_made_in_the_function": (generator_made_in_the_function, "drawing from a generator made in the function"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_listed_construct_is_refused_at_its_line(name):
    fn, words = CASES[name]
    assert words in UNSUPPORTED
    with pytest.raises(sg.S2SGradError) as refused:
        sg.grad(fn)(1.5)
    location = refused.value.location
    lines, first = inspect.getsourcelines(_noisy if name == "unseeded_in_recomputed" else fn)
    assert location.filename.endswith("test_unsupported_list.py")
    assert first <= location.line < first + len(lines)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="except* is Python 3.11's")
def test_except_star_is_refused_at_its_line(tmp_path, monkeypatch):
    assert "`try … except*`" in UNSUPPORTED
    (tmp_path / "except_star.py").write_text("def f(x):\n    try:\n        y = x * 2.0\n    except* ValueError:\n"
                                              "        y = x\n    return y\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from except_star import f
    with pytest.raises(sg.UnsupportedSyntax) as refused:
        sg.grad(f)(1.5)
    assert refused.value.location.line == 2


def test_a_transform_of_a_hessian_is_refused():
    assert "any transform of `sg.hessian(f)`" in UNSUPPORTED
    with pytest.raises(sg.S2SGradError, match="assembled in Python from Hessian-vector products"):
        sg.grad(sg.hessian(lambda x: np.sum(x ** 3)))(np.ones(2))


def _power(x, n):
    if n == 0:
        return x
    return _power(x * 2.0, n - 1) * x


def test_recursion_is_differentiated():
    assert "recursi" not in UNSUPPORTED
    assert sg.grad(_power)(1.5, 3) == pytest.approx(256.0 * 1.5 ** 3)      # 8x 4x 2x x = 64 x^4
    assert sg.check_grad(_power, 1.5, 3) < 1e-8
