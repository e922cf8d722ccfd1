"""Every refusal a small program can reach, rendered as the user sees it (file:line:col, the line, the caret,
the message and the hint), against `tests/expected/errors.txt`.

Each case is a module of its own: `CASES` maps a name to its source and to how it is differentiated. Run with
``S2SGRAD_UPDATE_EXPECTED=1`` to rewrite the expected file after a deliberate change of a message.
"""
import importlib.util
import os
import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import s2sgrad as sg
from s2sgrad.rules import registry

EXPECTED = Path(__file__).parent / "expected" / "errors.txt"
X = np.array([0.1, 0.2, 0.3])


def grad(m):
    return sg.grad(m.f)(X)


def jvp(m):
    return sg.jvp(m.f)(X, X)


def hvp(m):
    return sg.hvp(m.f)(X, X)


def with_generator_argument(m):
    return sg.grad(m.f)(X, np.random.default_rng(0))


def with_expm_argument(m):
    import scipy.linalg
    return sg.grad(m.f)(X, scipy.linalg.expm)


def with_library_object(m):
    import fractions
    return sg.grad(m.f)(X, fractions.Fraction(1, 2))


def wrt_beyond_the_items(m):
    return sg.grad(m.f, wrt=2)(X, X)


def body(code: str, params: str = "x") -> str:
    return f"import numpy as np\nimport s2sgrad as sg\n\n\ndef f({params}):\n" + textwrap.indent(code, "    ") + "\n"


MODEL = """
class Model:
    def __init__(self):
        self.W = np.ones(3)

    def loss(self, x):
        return np.sum(self.W * x)


def make():
    return Model()


def getf():
    return np.sin
"""

CASES = {
    # methods and attributes of local values: what works instead, by what the value is
    "method_of_unknown_class": (body("m = make()\nreturn m.loss(x)") + MODEL, grad),
    "method_of_branch_object": (body("m = Model() if x[0] > 0 else Model()\nreturn m.loss(x)") + MODEL, grad),
    "attribute_of_unknown_class": (body("m = make()\nreturn np.sum(m.W * x)") + MODEL, grad),
    "attribute_of_array": (body("y = x * 2.0\nreturn np.sum(y.W)"), grad),
    "method_of_array_not_array_method": (body("y = x * 2.0\nreturn y.loss()"), grad),
    "item": (body("return x.sum().item()"), grad),
    "tolist": (body("return sum(x.tolist())"), grad),
    "view": (body("return np.sum(x.view())"), grad),
    "conjugate": (body("return np.sum(x.conjugate())"), grad),
    "array_method_with_a_function": (body("return np.sum(x.take([0, 1]))"), grad),
    "array_method_without_rule": (body("return np.sum(x.compress([True, False, True]))"), grad),
    "array_method_of_a_piecewise_constant_function": (body("return np.sum(x[x.argsort()])"), grad),
    "generator_made_here": (body("rng = np.random.default_rng(0)\nreturn np.sum(x * rng.normal(size=3))"), grad),
    "method_of_library_object_argument": (body("return np.sum(x) * n.limit_denominator(10)", "x, n"),
                                          with_library_object),
    "method_of_a_string": (body("s = 'ab'\nreturn np.sum(x) * len(s.upper())"), grad),
    "flat": (body("return np.sum(x.flat)"), grad),
    "strides": (body("return np.sum(x) * x.strides[0]"), grad),
    "mT": (body("return np.sum(np.outer(x, x).mT)"), grad),
    "method_not_called": (body("s = x.sum\nreturn s()"), grad),
    # syntax named as it is written
    "set_display": (body("s = {x[0], x[1]}\nreturn np.sum(x) * len(s)"), grad),
    "yield_expression": (body("y = yield x\nreturn y"), grad),
    "yield_from": (body("yield from x"), grad),
    "async_def": (body("async def g():\n    pass\nreturn np.sum(x)"), grad),
    "match": (body("match 1:\n    case 1:\n        pass\nreturn np.sum(x)"), grad),
    "annotated_assignment": (body("y: float = np.sum(x)\nreturn y"), grad),
    "class_definition": (body("class A:\n    pass\nreturn np.sum(x)"), grad),
    "except_star": (body("try:\n    y = x\nexcept* ValueError:\n    y = x\nreturn np.sum(y)"), grad),
    "global": (body("global G\nG = 1\nreturn np.sum(x)"), grad),
    "nonlocal": (body("def g():\n    nonlocal x\n    x = 1\ng()\nreturn np.sum(x)"), grad),
    "dict_unpacking": (body("d = {'a': x}\ne = {**d}\nreturn np.sum(e['a'])"), grad),
    "starred_library_call": (body("return np.sum(np.add(*[x, x]))"), grad),
    "in_place_method": (body("y = x.copy()\ny.sort()\nreturn np.sum(y)"), grad),
    "f_string": (body("s = f'{x[0]}'\nreturn float(s)"), grad),
    "eval": (body("return eval('np.sum(x)')"), grad),
    "nested_list_comprehension": (body("return np.sum(np.array([x[i] * x[j] for i in range(3) for j in range(3)]))"),
                                  grad),
    "nested_dict_comprehension": (body("d = {(i, j): x[i] * x[j] for i in range(3) for j in range(2)}\n"
                                       "return d[(2, 1)]"), grad),
    "nested_set_comprehension": (body("s = {x[i] * x[j] for i in range(3) for j in range(2)}\n"
                                      "return np.sum(x) * len(s)"), grad),
    "starred_in_a_display": (body("ys = [*x]\nreturn sum(ys)"), grad),
    "nested_starred_assignment": (body("(a, *b), c = [x, x], x\nreturn np.sum(a)"), grad),
    "dict_of_zip": (body("d = dict(zip(['a'], [x]))\nreturn np.sum(d['a'])"), grad),
    "dict_get_without_key": (body("d = {'a': x}\nreturn np.sum(d.get())"), grad),
    "append_of_two": (body("ys = []\nys.append(x, x)\nreturn np.sum(ys[0])"), grad),
    "enumerate_of_nothing": (body("for i, v in enumerate():\n    pass\nreturn np.sum(x)"), grad),
    "pop_at_an_index": (body("xs = [x, x, x]\nv = xs.pop(2)\nreturn np.sum(v)"), grad),
    "del_of_an_item": (body("xs = [x, x]\ndel xs[0]\nreturn np.sum(xs[0])"), grad),
    "with_as": (body("with np.errstate(all='ignore') as state:\n    y = x * 2\nreturn np.sum(y)"), grad),
    "errstate_raise": (body("with np.errstate(divide='raise'):\n    y = x * 2\nreturn np.sum(y)"), grad),
    "write_into_a_read_only_view": (body("v = np.broadcast_to(x, (3, 3))\nv[0] = 1.0\nreturn np.sum(v)"), grad),
    "writer_without_rule": (body("y = np.zeros(3)\nnp.put(y, [0], x[0])\nreturn np.sum(y)"), grad),
    "pad_mode_without_rule": (body("return np.sum(np.pad(x, 1, mode='median'))"), grad),
    "bare_raise": (body("raise"), grad),
    # calls
    "call_of_a_call": (body("return np.sum(getf()(x))") + MODEL, grad),
    "call_of_a_conditional": (body("return np.sum((np.sin if x[0] > 0 else np.cos)(x))"), grad),
    "where_keyword": (body("return np.sum(np.add(x, x, where=x > 0))"), grad),
    "where_keyword_of_a_sum": (body("return np.sum(x, where=x > 0)"), jvp),
    "initial_keyword": (body("return np.sum(x, initial=1.0)"), hvp),
    "no_rule": (body("return np.nanmedian(x) * np.sum(x)"), grad),
    "no_tangent_rule": (body("return np.nanmedian(x) * np.sum(x)"), jvp),
    "no_tangent_rule_under_hvp": (body("return np.sum(triple(x) * x)") + """

def triple(x):
    return x * 3.0


@sg.adjoint(triple)
def _(y, x):
    sg.d[x] = sg.d[y] * 3.0
""".replace("sg.d[", "d["), hvp),
    "library_function_passed_in": (body("return np.sum(act(x))", "x, act"), with_expm_argument),
    "library_function_without_rule": (body("import scipy.linalg\nreturn np.sum(scipy.linalg.expm(np.outer(x, x)))"),
                                      grad),
    "generator_argument_through_a_draw": (body("return np.sum(rng.normal(x, 1.0))", "x, rng"),
                                          with_generator_argument),
    "construct_in_another_file": (body("return case_package.lse(x)").replace(
        "import s2sgrad as sg\n", "import s2sgrad as sg\nimport case_package\n"), grad),
    "construct_in_another_file_forward": (body("return case_package.lse(x)").replace(
        "import s2sgrad as sg\n", "import s2sgrad as sg\nimport case_package\n"), jvp),
    # wrt and outputs
    "wrt_beyond_the_items": (body("return np.sum(xs[0] * xs[1])", "*xs"), wrt_beyond_the_items),
    "vector_output": (body("return x * 2.0"), grad),
}


# a package the cases import: its source is not the user's
PACKAGE = """import numpy as np


def lse(x):
    top = np.max(x)
    seen = {top, 0.0}
    return top + np.log(np.sum(np.exp(x - top))) + 0.0 * len(seen)
"""


def run(name: str, tmp_path: Path) -> str:
    """The error case `name` raises, as printed, its file shown as ``case.py``."""
    source, call = CASES[name]
    source = source.replace("import s2sgrad as sg\n", "import s2sgrad as sg\nfrom s2sgrad import d  # noqa\n", 1)
    try:
        compile(source, name, "exec")
    except SyntaxError:
        pytest.skip(f"this Python cannot parse the case {name}")
    path = tmp_path / f"case_{name}.py"
    path.write_text(source)
    (tmp_path / "case_package").mkdir()
    (tmp_path / "case_package" / "__init__.py").write_text(PACKAGE)
    sys.path.insert(0, str(tmp_path))
    spec = importlib.util.spec_from_file_location(f"case_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        with pytest.raises(sg.S2SGradError) as info:
            call(module)
    finally:
        del sys.modules[spec.name]
        sys.modules.pop("case_package", None)
        sys.path.remove(str(tmp_path))
    shown = str(info.value).replace(str(path), "case.py").replace(str(tmp_path / "case_package"), "case_package")
    return f"{type(info.value).__name__}: {shown}"


def expected() -> dict:
    blocks = re.split(r"^== (\S+)\n", EXPECTED.read_text(), flags=re.M)[1:]
    return dict(zip(blocks[::2], (b.rstrip("\n") for b in blocks[1::2])))


@pytest.fixture(autouse=True)
def rule_table_as_it_was():
    """The rules a case registers (``@sg.adjoint(triple)``) go with it: test_rules.py asserts every rule has a
    finite-difference case."""
    saved, optional = (dict(registry._RULES), dict(registry._TANGENT_ONLY)), list(registry._OPTIONAL)
    yield
    for table, before in zip((registry._RULES, registry._TANGENT_ONLY), saved):
        table.clear()
        table.update(before)
    registry._OPTIONAL[:] = optional


@pytest.mark.parametrize("name", list(CASES))
def test_error_as_the_user_sees_it(name, tmp_path):
    shown = run(name, tmp_path)
    if os.environ.get("S2SGRAD_UPDATE_EXPECTED"):
        cases = expected() if EXPECTED.exists() else {}
        cases[name] = shown
        EXPECTED.write_text("".join(f"== {k}\n{cases[k]}\n" for k in CASES if k in cases))
    assert shown == expected().get(name), shown


def test_every_case_is_expected():
    assert set(expected()) == set(CASES)


def _handled_statements() -> set:
    """The statement classes `Lowerer.statements` lowers, read from its source."""
    import ast
    import inspect

    from s2sgrad.frontend import lower
    tree = ast.parse(inspect.getsource(lower.Lowerer))
    return {key.value for node in ast.walk(tree) if isinstance(node, ast.Dict)
            for key in node.keys if isinstance(key, ast.Constant)}


def test_no_refusal_names_an_ast_class():
    """Every expression and statement class lowering has no handler for is named as Python writes it."""
    import gast

    from s2sgrad.frontend.expressions import Expressions
    from s2sgrad.frontend.hints import SYNTAX
    desugared = {"For", "Try", "With", "AugAssign", "Import", "ImportFrom", "Global", "Nonlocal", "Break", "Continue",
                 "Return", "ListComp", "SetComp", "DictComp", "GeneratorExp", "NamedExpr", "Lambda"}
    python2 = {"Print", "Exec", "Repr"}
    classes = {name for name, c in vars(gast).items() if isinstance(c, type) and c not in (gast.expr, gast.stmt)
               and issubclass(c, (gast.expr, gast.stmt))}
    unhandled = classes - desugared - python2 - _handled_statements() - {
        n.removeprefix("expr_") for n in dir(Expressions) if n.startswith("expr_")}
    assert unhandled <= set(SYNTAX), sorted(unhandled - set(SYNTAX))
    words = re.compile(r"\b(" + "|".join(sorted(classes)) + r")\b")
    for name, shown in expected().items():
        said = [line.split(": ", 1)[1] for line in shown.splitlines() if not line.startswith(" ") and ": " in line]
        assert not any(words.search(line) for line in said), (name, said)


# what the hint for x.f(...) of an array suggests, np.f(x, ...), differentiates (arguments besides x)
SUGGESTED = {"argpartition": "1", "argsort": "", "cumprod": "", "partition": "1", "searchsorted": "0.25",
             "take": "[0, 2]"}


def test_every_suggested_numpy_function_is_suggested_only_where_it_exists():
    from s2sgrad.frontend.calls import METHODS
    from s2sgrad.frontend.hints import local_method
    from s2sgrad.ir.nodes import Var
    suggested = {m for m in dir(np.ndarray) if not m.startswith("_") and m not in METHODS
                 and callable(getattr(np.ndarray, m)) and f"np.{m}(x" in local_method(m, Var("x"), {})[1]}
    assert suggested - {"sort"} == set(SUGGESTED)         # (x.sort() is refused earlier: it sorts in place)


@pytest.mark.parametrize("method", list(SUGGESTED))
def test_the_numpy_function_a_hint_suggests_differentiates(method, tmp_path):
    from gradcheck import assert_grad_matches_fd
    extra = f", {SUGGESTED[method]}" if SUGGESTED[method] else ""
    path = tmp_path / f"suggested_{method}.py"
    path.write_text(f"import numpy as np\n\n\ndef f(x):\n    y = np.{method}(x{extra})\n"
                    f"    return np.sum(x * x) + np.sum(np.asarray(y, dtype=float) * x[0])\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert_grad_matches_fd(module.f, [np.array([0.3, 0.1, 0.2])])
