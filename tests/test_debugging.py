"""Debugging a gradient by reading its code: generated modules in real files (tracebacks, traceback,
inspect, pdb), notes naming the user's line on errors raised in generated code, the full line map
(``sg.source(..., lines=True)``), what ``sg.grad(f)`` returns (its repr, `source`, `generated`,
`generated_for`) and the `Source` object ``sg.source`` returns."""
import inspect
import io
import linecache
import os
import pathlib
import pdb
import re
import stat
import subprocess
import sys
import textwrap
import threading
import time
import traceback
import types

import numpy as np
import pytest

import s2sgrad as sg
from s2sgrad.api.origin_notes import PREFIX
from s2sgrad.backend import source_files
from s2sgrad.backend.generated_source import Source

NOTES = sys.version_info >= (3, 11)          # PEP 678
ROOT = pathlib.Path(__file__).resolve().parent.parent


def loss(x, scale):
    y = x * scale
    z = 1.0 / y
    return z * z


def root(x):
    return x ** 0.5


def inverse_sum(A):
    B = np.linalg.inv(A)
    return np.sum(B)


def layer(x, W):
    h = np.tanh(W @ x)
    return np.sum(h)


def small(x):
    y = np.sin(x) * x
    return np.sum(y)


def ratio(a, b):
    return a / b


def calls_ratio(x):
    return ratio(1.0, x) * x


def fresh(f):
    """A new function object with `f`'s code: its code is generated anew (into the current cache directory)."""
    return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__)


def line_of(f, text: str) -> int:
    lines, start = inspect.getsourcelines(f)
    return start + next(k for k, line in enumerate(lines) if line.strip() == text)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv(source_files.ENVIRONMENT_VARIABLE, str(directory))
    return directory


# ---------------------------------------------------------------- tracebacks, in a process of their own

SCRIPT = '''\
import numpy as np
import s2sgrad as sg


def loss(x, scale):
    y = x * scale
    z = 1.0 / y
    return z * z


print(sg.grad(loss)(0.0, 2.0))
'''


def test_an_uncaught_error_shows_the_generated_line_and_the_users_line(tmp_path):
    """The interpreter's own traceback printer (which reads the file, not linecache, before 3.13)."""
    (tmp_path / "model.py").write_text(SCRIPT)
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(ROOT), source_files.ENVIRONMENT_VARIABLE: str(cache)}
    run = subprocess.run([sys.executable, "model.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1
    err = run.stderr
    assert re.search(rf'File "{re.escape(str(cache))}/model\.loss\.dloss_dx\.[0-9a-f]{{16}}\.py", line \d+, '
                     r'in dloss_dx\n    z = 1\.0 / y  # model\.py:7\n', err), err
    assert "ZeroDivisionError: float division by zero" in err
    if NOTES:
        assert f"{PREFIX} (dloss_dx, line " in err
        assert f"comes from {tmp_path / 'model.py'}:7\n    z = 1.0 / y\n" in err, err


# ---------------------------------------------------------------- notes

def _error_cases():
    a = np.ones((2, 2))
    return [
        ("division", lambda: sg.grad(loss)(0.0, 2.0), ZeroDivisionError, loss, "z = 1.0 / y"),
        ("backward sweep", lambda: sg.grad(root)(0.0), ZeroDivisionError, root, "return x ** 0.5"),
        ("shape mismatch", lambda: sg.grad(layer)(np.ones(3), np.ones((2, 4))), ValueError, layer,
         "h = np.tanh(W @ x)"),
        ("singular matrix", lambda: sg.grad(inverse_sum)(a), np.linalg.LinAlgError, inverse_sum,
         "B = np.linalg.inv(A)"),
        ("value_and_grad", lambda: sg.value_and_grad(loss, wrt=(0, 1))(0.0, 2.0), ZeroDivisionError, loss,
         "z = 1.0 / y"),
        ("vjp", lambda: sg.vjp(loss)(0.0, 2.0, 1.0), ZeroDivisionError, loss, "z = 1.0 / y"),
        ("jvp", lambda: sg.jvp(root)(0.0, 1.0), ZeroDivisionError, root, "return x ** 0.5"),
        ("hvp", lambda: sg.hvp(root)(0.0, 1.0), ZeroDivisionError, root, "return x ** 0.5"),
        ("grad of grad", lambda: sg.grad(sg.grad(root))(0.0), ZeroDivisionError, root, "return x ** 0.5"),
        ("hessian", lambda: sg.hessian(inverse_sum)(a), np.linalg.LinAlgError, inverse_sum,
         "B = np.linalg.inv(A)"),
        ("a called function", lambda: sg.grad(calls_ratio)(0.0), ZeroDivisionError, ratio, "return a / b"),
    ]


@pytest.mark.skipif(not NOTES, reason="exception notes are Python 3.11's")
@pytest.mark.parametrize("name, call, error, f, text", _error_cases(), ids=[c[0] for c in _error_cases()])
def test_an_error_in_generated_code_names_the_users_line(name, call, error, f, text):
    with pytest.raises(error) as caught:
        call()
    notes = [n for n in caught.value.__notes__ if n.startswith(PREFIX)]
    assert len(notes) == 1, caught.value.__notes__
    assert notes[0].endswith(f"comes from {inspect.getsourcefile(f)}:{line_of(f, text)}\n    {text}")
    # the error itself is the one raised, unchanged
    assert type(caught.value) is error and caught.value.__traceback__ is not None


def test_an_error_s2sgrad_located_gets_no_note():
    with pytest.raises(sg.WrtError) as caught:
        sg.grad(loss)(1, 2.0)                # an integer argument: refused at the user's def line
    assert not any(n.startswith(PREFIX) for n in getattr(caught.value, "__notes__", ()))


def test_traceback_and_inspect_show_the_generated_lines():
    df = sg.grad(loss)
    try:
        df(0.0, 2.0)
    except ZeroDivisionError:
        text = traceback.format_exc()
    gen = df.generated_for(0.0, 2.0)
    assert f'File "{gen.__code__.co_filename}", line' in text
    assert "    z = 1.0 / y  # test_debugging.py:" in text
    assert inspect.getsource(gen).startswith("def dloss_dx(x, scale, dprod=1.0):\n    # forward sweep\n")
    assert inspect.getsource(gen) in df.source(0.0, 2.0)


def test_pdb_steps_through_the_generated_function():
    df = sg.grad(loss)
    gen = df.generated_for(1.0, 2.0)
    out = io.StringIO()
    debugger = pdb.Pdb(stdin=io.StringIO("step\nlist\ncontinue\n"), stdout=out, nosigint=True)
    debugger.use_rawinput = False
    assert debugger.runcall(gen, 1.0, 2.0) == df(1.0, 2.0)
    text = out.getvalue()
    assert f"> {gen.__code__.co_filename}(" in text
    assert "-> y = x * scale  # test_debugging.py:" in text
    assert "->\t    z = 1.0 / y  # test_debugging.py:" in text            # the listing


def test_a_profile_names_the_generated_file():
    import cProfile
    import pstats
    gen = sg.grad(loss).generated_for(1.0, 2.0)
    profile = cProfile.Profile()
    profile.runcall(gen, 1.0, 2.0)
    files = {filename for filename, _, name in pstats.Stats(profile).stats if name == "dloss_dx"}
    assert files == {gen.__code__.co_filename} and os.path.isfile(gen.__code__.co_filename)


# ---------------------------------------------------------------- the files

def test_the_module_is_written_to_a_private_directory_named_after_the_function(cache):
    df = sg.grad(fresh(loss))
    gen = df.generated_for(1.0, 2.0)
    path = pathlib.Path(gen.__code__.co_filename)
    assert path.parent == cache
    assert re.fullmatch(r"test_debugging\.loss\.dloss_dx\.[0-9a-f]{16}\.py", path.name)
    assert path.read_text() == df.source(1.0, 2.0) == "".join(linecache.getlines(str(path)))
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) & 0o022 == 0
    forward = sg.hvp(fresh(loss)).generated_for(1.0, 2.0, 1.0)
    assert re.fullmatch(r"test_debugging\.loss\.dloss_dx\.hvp_loss_x\.[0-9a-f]{16}\.py",
                        os.path.basename(forward.__code__.co_filename))


def test_a_planted_file_is_never_executed_and_is_replaced(cache):
    path = pathlib.Path(sg.grad(fresh(loss)).generated_for(1.0, 2.0).__code__.co_filename)
    expected = path.read_text()
    path.write_text("def dloss_dx(*args, **kwargs):\n    return 'planted'\n")
    df = sg.grad(fresh(loss))
    assert df(1.0, 2.0) == pytest.approx(-0.5)
    assert df.generated_for(1.0, 2.0).__code__.co_filename == str(path)
    assert path.read_text() == expected


def test_a_directory_others_can_write_to_is_not_used(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv(source_files.ENVIRONMENT_VARIABLE, str(shared))
    with pytest.warns(UserWarning, match="other users can write to it"):
        path = pathlib.Path(source_files.write_source("x = 1\n", "m.f.df_dx"))
    assert path.parent != shared and not any(shared.iterdir())
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert source_files.write_source("x = 2\n", "m.f.df_dx").startswith(str(path.parent))   # (warned once)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs to give a directory away")
def test_a_directory_of_another_user_is_not_used(tmp_path, monkeypatch):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, -1)
    monkeypatch.setenv(source_files.ENVIRONMENT_VARIABLE, str(theirs))
    with pytest.warns(UserWarning, match="belongs to another user"):
        path = source_files.write_source("x = 1\n", "m.f.df_dx")
    assert not path.startswith(str(theirs))


def test_files_are_written_whole_by_a_rename(cache, monkeypatch):
    renames = []
    replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: renames.append((a, b)) or replace(a, b))
    path = source_files.write_source("x = 1\n", "m.f.df_dx")
    assert renames == [(renames[0][0], path)] and os.path.dirname(renames[0][0]) == str(cache)
    assert source_files.write_source("x = 1\n", "m.f.df_dx") == path and len(renames) == 1   # held already
    assert sorted(os.listdir(cache)) == [os.path.basename(path)]                              # no temporary left


def test_a_file_written_again_keeps_its_modification_time(cache):
    """Written again, a file is marked used (its access time, which the clean-up reads) and keeps its
    modification time, which numba's disk cache of a compiled module checks."""
    path = source_files.write_source("x = 1\n", "m.f.df_dx")
    os.utime(path, (1e9, 1e9))
    assert source_files.write_source("x = 1\n", "m.f.df_dx") == path
    status = os.stat(path)
    assert status.st_mtime == 1e9 and status.st_atime > time.time() - 60
    source_files.clean(str(cache))
    assert os.path.exists(path)


def test_a_failed_write_leaves_nothing_and_the_code_still_runs(cache, monkeypatch):
    def fail(a, b):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", fail)
    assert source_files.write_source("x = 1\n", "m.f.df_dx") is None
    assert os.listdir(cache) == []
    df = sg.grad(fresh(loss))
    assert df(1.0, 2.0) == pytest.approx(-0.5)
    filename = df.generated_for(1.0, 2.0).__code__.co_filename
    assert filename.startswith("<s2sgrad ") and "def dloss_dx" in "".join(linecache.getlines(filename))


def test_several_writers_of_one_file(cache):
    text = "y = 2\n" * 10000
    paths = []
    threads = [threading.Thread(target=lambda: paths.append(source_files.write_source(text, "m.f.g")))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(paths)) == 1 and open(paths[0]).read() == text
    assert os.listdir(cache) == [os.path.basename(paths[0])]


def test_clean_removes_old_files_and_the_oldest_beyond_the_limit(tmp_path):
    now = time.time()
    ages = {"a.py": 8 * 24 * 3600, "b.py": 30, "c.py": 20, "d.py": 10, ".x.tmp": 7200, ".y.tmp": 5, "notes.txt": 1e9}
    for name, age in ages.items():
        (tmp_path / name).write_text(name)
        os.utime(tmp_path / name, (now - age, now - age))
    source_files.clean(str(tmp_path), max_files=2)
    assert sorted(os.listdir(tmp_path)) == [".y.tmp", "c.py", "d.py", "notes.txt"]


# ---------------------------------------------------------------- what sg.grad(f) returns

@pytest.mark.parametrize("make, expected, name", [
    (lambda: sg.grad(loss), "<gradient of loss w.r.t. x>", "grad_loss"),
    (lambda: sg.value_and_grad(loss, wrt=(0, 1)), "<value and gradient of loss w.r.t. x, scale>",
     "value_and_grad_loss"),
    (lambda: sg.vjp(loss, wrt="scale"), "<vector-Jacobian product of loss w.r.t. scale>", "vjp_loss"),
    (lambda: sg.jvp(loss), "<Jacobian-vector product of loss w.r.t. x>", "jvp_loss"),
    (lambda: sg.hvp(loss), "<Hessian-vector product of loss w.r.t. x>", "hvp_loss"),
    (lambda: sg.hessian(inverse_sum), "<Hessian of inverse_sum w.r.t. A>", "hessian_inverse_sum"),
    (lambda: sg.grad(sg.grad(root)), "<gradient of grad(root) w.r.t. x>", "grad_grad_root"),
    (lambda: sg.jvp(sg.grad(loss), wrt=1), "<Jacobian-vector product of grad(loss) w.r.t. scale>",
     "jvp_grad_loss"),
])
def test_a_derivative_says_what_it_is(make, expected, name):
    df = make()
    assert repr(df) == expected and df.__name__ == name
    assert not hasattr(df, "__wrapped__") and inspect.unwrap(df) is df
    assert list(inspect.signature(df).parameters)[:1] == list(inspect.signature(df.s2sgrad_derivative.f).parameters)[:1]


def test_source_generated_and_generated_for_of_a_gradient():
    df = sg.grad(loss)
    assert df.source(1.0, 2.0) == sg.source(loss, args=(1.0, 2.0))
    assert isinstance(df.source(1.0, 2.0), Source)
    df(1.0, 2.0)
    df(1.0, np.float32(2.0))
    assert len(df.generated) == 2                            # (per kinds and dtypes of the arguments)
    gen = df.generated_for(1.0, 2.0)
    assert gen in df.generated.values() and gen.__name__ == "dloss_dx"
    assert gen(1.0, 2.0) == df(1.0, 2.0)
    dv = sg.vjp(loss)
    np.testing.assert_allclose(dv.generated_for(np.ones(2), 2.0, np.ones(2))(np.ones(2), 2.0, np.ones(2))[1],
                               dv(np.ones(2), 2.0, np.ones(2))[1])            # the derivative's own arguments


def test_source_and_generated_of_forward_mode_and_compositions():
    assert "def jvp_root_x(x, dx):" in sg.jvp(root).source(2.0, 1.0)
    assert sg.hvp(root).generated_for(2.0, 1.0).__name__ == "hvp_root_x"
    ddf = sg.grad(sg.grad(root))
    assert ddf(4.0) == pytest.approx(-0.25 * 4.0 ** -1.5)
    (gen,) = ddf.generated.values()
    assert gen is ddf.generated_for(4.0) and "def jvp_droot_dx_x(" in ddf.source(4.0)
    assert sg.hvp(root)(4.0, 1.0) == pytest.approx(-0.25 * 4.0 ** -1.5)
    assert sg.jvp(sg.grad(root))(4.0, 1.0)[1] == pytest.approx(-0.25 * 4.0 ** -1.5)


def test_a_derivative_on_a_class_binds_like_a_function():
    class Model:
        gradient = sg.grad(lambda self, x: x * x, wrt=1)
    assert Model().gradient(3.0) == 6.0


# ---------------------------------------------------------------- the line map and the Source object

def test_every_line_of_a_generated_statement_has_its_origin():
    text = sg.source(loss, args=(1.0, 2.0))
    user_lines = set(range(*(lambda lines, start: (start, start + len(lines)))(*inspect.getsourcelines(loss))))
    inside = False
    for number, line in enumerate(text.splitlines(), start=1):
        inside = inside or line.startswith("def ")
        code = line.strip()
        if inside and code and not code.startswith(("#", "def ")):
            where = text.origin(number)
            assert where is not None and where.line in user_lines, (number, line)
    assert text.origin(1) is None                           # the header


def test_lines_true_prints_each_line_with_its_origin():
    first = line_of(small, "y = np.sin(x) * x")
    assert sg.source(small, args=(np.ones(3),), lines=True) == textwrap.dedent(f'''\
        """Generated by s2sgrad from test_debugging.py:small. Edit freely; regenerate with s2sgrad.source()."""
        import numpy as np
        from s2sgrad.runtime import *


        def dsmall_dx(x, dsum=1.0):
            # forward sweep
            sin = np.sin(x)               # test_debugging.py:{first}  y = np.sin(x) * x
            # backward sweep
            dx = dsum * sin               # test_debugging.py:{first}  y = np.sin(x) * x
            dx += dsum * x * np.cos(x)    # test_debugging.py:{first}  y = np.sin(x) * x
            return dx                     # test_debugging.py:{first}  y = np.sin(x) * x
        ''')


def test_source_is_a_string_that_displays_highlighted():
    text = sg.source(small)
    assert isinstance(text, str) and str(text) == text and "# test_debugging.py:" in text
    assert text._repr_markdown_() == f"```python\n{text}```\n"
    shown = []
    text._repr_pretty_(types.SimpleNamespace(text=shown.append), False)
    assert shown == [str(text)]
    html = text._repr_html_()
    assert html.startswith("<pre") and '<span style="color:#008000;font-weight:bold">def</span> dsmall_dx' in html
    assert "&quot;" not in html.split("def")[0] or "Generated by s2sgrad" in html
    assert sg.source(sg.grad(root), args=(2.0,)).count("def ") >= 1          # a derivative's own source


class _Model:
    def __init__(self):
        self.W = np.eye(2) * 0.5

    def loss(self, x):
        return np.sum(np.tanh(self.W @ x))


def test_a_method_derivative_says_what_it_is_and_hands_out_its_code():
    model = _Model()
    d = sg.grad(model.loss)
    assert repr(d) == "<gradient of loss w.r.t. x, bound to a _Model>"
    assert d.__name__ == "grad_loss" and not hasattr(d, "__wrapped__")
    x = np.array([0.3, -0.2])
    assert "def dloss_dx(self, x" in d.source(x)
    assert d.generated_for(x)(model, x) is not None
    np.testing.assert_allclose(d(x), 0.5 * (1 - np.tanh(model.W @ x) ** 2), rtol=1e-12)
