"""A grammar of small, smooth, terminating NumPy programs, for property-based gradient tests.

`generate(chooser, features)` builds one program as Python source: a function
``f(a, b[, c][, x])`` of two or three floats and optionally one array ``x`` of
shape (3,), made of

* assignments of smooth, bounded ufunc expressions (sin, cos, tanh, exp of a
  bounded argument, exp(-e*e), e / (1.5 + e*e), squares, products, sums, a few
  ``math`` functions on scalars, ``np.sum`` of array expressions), and augmented
  assignments (``+=``, ``-=``, ``*=``; also on arrays, in place); a second name
  for a value (``q = a``, ``y = x``) only with the features ``scalar_alias`` /
  ``array_alias`` (otherwise ``q = a + 0.0``), an in-place change of ``x`` or
  ``v`` inside ``for v in x`` only with ``iter_alias``, and a new value bound to
  ``x`` there only with ``iter_rebind``; elements read and written by index
  (``x[i % 3]``, ``y[-1] = ...``, ``x[1] += ...``: ``index_read``, ``index_write``);
* ``for i in range(...)`` (constant bounds, a step, or a stop that is an outer
  loop counter), ``for v in x`` and ``for k, v in enumerate(x)``;
* ``while`` loops with a counter: a known trip count, a data-dependent one (the
  counter bound always comes with it), and ``while True`` with a counter ``break``;
* ``if`` / ``elif`` / ``else`` on loop counters (``i % 2 == 0``, ``i > k``) or on
  data (``a > 0.3``, ``np.sum(x) < b``), combined with ``and``, ``or``, ``not``;
* ``break`` and ``continue`` under an ``if``, an early ``return`` inside a branch
  or a loop, and a final ``return`` of a smooth scalar expression; conditional
  expressions (``cond_expr``) and loops that run no trip for most arguments
  (``while v > 1.0: ... v = 0.9 * np.tanh(...)``, ``zero_trip``);
* calls of helpers (``helpers``): module-level ``h0``, ``h1``, ... of one to three
  floats, some parameters unused, overwritten before any read or read only in a
  condition (``helper_unused``, ``helper_overwritten``, ``helper_cond_only``), maybe
  an array parameter (``helper_array``; the result then maybe an array) and an
  integer one bounding a ``range`` that may be empty (``helper_int``), defaults
  (literals, or module constants ``K0 = ...``: ``default_args``), with branches,
  early returns and loops inside, calling earlier helpers (``helper_calls_helper``);
  nested ``def``s reading the enclosing function's variables (``nested_def``);
  recursive and mutually recursive ``r0``/``r1`` whose arguments' activity changes
  from one level to the next (``recursion``); lambdas bound to a name, maybe with a
  default, reading f's variables, or called in place (``lambdas``), and
  ``functools.partial`` of a callable, its first or last argument bound (``partial``). Each call passes variables (active),
  constants (inactive) or expressions, positionally or by keyword
  (``keyword_args``), leaving defaults out or not, so one helper is called with
  several activity patterns;
* a class ``M0`` (``methods``) holding two of the function's values as attributes (a plain class whose
  ``__init__`` sets them, maybe scaling one afterwards, or a dataclass), with a method reading them and a
  second calling the first (or ``__call__``); the function makes one at its end and adds a method's value
  (of a scalar, or ``np.sum`` of it on the array) to its result;
* module constants read as values (``globals``, `GLOBAL_FEATURES`): floats, NumPy float64 numbers and ints
  where a constant goes (also as a helper's argument), arrays of shape (3,) beside the array variables;
* Python's builtins in expressions (``builtins``, one of `EXTRA_FEATURES`): ``max(e1, e2)``, ``min(e1, e2, e3)``, ``max(x)``,
  ``abs(e)``, ``sum([e1, e2])``, ``math.fsum(elem * e for elem in x)``, ``sorted([e1, e2, e3])[1]``,
  ``pow(e, 2)``, ``math.fsum([e1, e2])``.

Compound statements nest up to ``MAX_DEPTH`` deep and the product of the trip
counts of nested loops stays small, so every program terminates quickly.

Every assigned value has a static bound (each variable is assumed to be at most
``VAR_BOUND`` in magnitude; an expression whose bound is larger is squashed by
tanh/sin or scaled), so values stay finite. Data-dependent comparisons can be
rendered instrumented (``instrument=True``): each ``l < r`` becomes
``__cmp__(l, r, '<')``, which lets the test measure how close the program came
to a branch switch, since finite differences across a switch are meaningless; so do ``max``, ``min``,
``sorted`` and ``abs`` (``__max__(...)``: how close the items came to a tie, or the argument to 0).

The choices are made through a *chooser*: `RandomChooser` (a `random.Random`)
for fixed-seed sweeps, or `DrawChooser` (hypothesis ``data.draw``) for property
tests, where every choice shrinks towards the simplest program (the first
option, the smallest count, no optional feature).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

VAR_BOUND = 2.0
MAX_DEPTH = 3
MAX_TRIPS = 40          # bound on the product of nested trip counts
INT_ARGUMENT_MAX = 3    # integer arguments of helpers are at most this
CONSTANTS = (0.5, 0.3, 1.5, 0.25, 0.7, 2.0, 0.1, 1.2)

# Optional constructs, each of which a test can switch off.
ALL_FEATURES = frozenset({
    "if", "elif", "else", "for", "for_step", "for_dep", "for_array", "enumerate",
    "while", "while_data", "while_true", "break", "continue", "early_return",
    "augassign", "array_augassign", "data_cond", "bool_ops", "math", "locals",
    "np_sum_inner", "pow", "array_alias", "scalar_alias", "iter_alias", "iter_rebind",
    "index_read", "index_write", "cond_expr", "branch_return",
    # helper functions the program calls (module-level defs, nested defs, recursion) and how
    "helpers", "helper_unused", "helper_overwritten", "helper_cond_only", "helper_calls_helper",
    "helper_array", "helper_int", "zero_trip", "keyword_args", "default_args", "nested_def", "recursion",
    # Python syntax around the arithmetic
    "kwonly", "walrus", "starred", "for_else",
    # functions as values: lambdas bound to a name (or called in place), functools.partial of a callable
    "lambdas", "partial",
    # a class whose parameters are attributes, made in the function and its methods called
    "methods",
})
# Constructs only the tests that ask for them switch on (so that the programs of ALL_FEATURES stay as they were):
# Python's builtins in expressions (max, min, abs, sum, sorted, pow, math.fsum).
EXTRA_FEATURES = frozenset({"builtins"})
# Module constants read as values (``G0 = 0.7``, ``G1 = np.float64(0.3)``, ``G2 = 2``, ``G3 = np.array([...])``),
# also in helpers and passed to them: only the tests that ask for them switch it on.
GLOBAL_FEATURES = frozenset({"globals"})
# constructs left out of helpers' bodies: writes into an array argument (changes the caller's array)
HELPER_BODY_EXCLUDED = frozenset({"index_write", "array_augassign", "iter_alias", "iter_rebind", "locals",
                                  "nested_def", "recursion", "lambdas", "partial"})
HELPER_FEATURES = frozenset(f for f in ALL_FEATURES if f.startswith("helper_")) | {
    "helpers", "zero_trip", "keyword_args", "default_args", "nested_def", "recursion", "kwonly", "lambdas",
    "partial"}


# --- choosers -------------------------------------------------------------------

class RandomChooser:
    """Choices from a `random.Random`."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def choice(self, options):
        return options[self.integer(0, len(options) - 1)]


class DrawChooser(RandomChooser):
    """Choices drawn from hypothesis; each shrinks to the first option / the low end / False."""

    def __init__(self, draw):
        from hypothesis import strategies as st
        self.draw = draw
        self.st = st

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(self.st.integers(lo, hi))

    def chance(self, p: float) -> bool:
        return self.draw(self.st.integers(0, 999)) >= round(1000 * (1 - p))


# --- the program tree -----------------------------------------------------------

@dataclass
class Cmp:
    """A comparison; `data` ones are instrumented, counter ones are not."""
    left: str
    op: str
    right: str
    data: bool

    def render(self, instrument: bool) -> str:
        if self.data and instrument:
            return f"__cmp__({self.left}, {self.right}, {self.op!r})"
        return f"{self.left} {self.op} {self.right}"


@dataclass
class BoolOp:
    op: str            # "and", "or", "not"
    parts: list

    def render(self, instrument: bool) -> str:
        if self.op == "not":
            return f"not ({self.parts[0].render(instrument)})"
        return f" {self.op} ".join(f"({p.render(instrument)})" for p in self.parts)


@dataclass
class Program:
    name: str
    params: list[str]
    array: str | None          # the name of the array parameter, if any
    body: list                 # lines, as (indent, text-or-condition-template)
    features_used: set = field(default_factory=set)
    helpers: list = field(default_factory=list)      # module-level functions it calls (Programs), in order
    constants: list = field(default_factory=list)    # module-level constants, as lines ``K0 = 0.5``
    signature: str | None = None                     # the def's parameters, if not `params` (defaults)

    def source(self, instrument: bool = False) -> str:
        lines = [f"{c}\n" for c in self.constants]
        lines += [h.source(instrument) + "\n" for h in self.helpers]
        lines.append(self.function_source(instrument))
        return "\n".join(lines)

    def function_source(self, instrument: bool = False) -> str:
        lines = [f"def {self.name}({self.signature or ', '.join(self.params)}):"]
        for indent, text in self.body:
            if isinstance(text, tuple):        # ("if ", cond, ":")
                head, cond, tail = text
                text = head + cond.render(instrument) + tail
            if instrument:
                text = INSTRUMENTED_BUILTINS.sub(r"__\1__(", text)
            lines.append("    " * (indent + 1) + text)
        return "\n".join(lines) + "\n"

    def module_source(self, instrument: bool = False) -> str:
        functools = "import functools\n" if "partial" in self.features_used else ""
        return functools + "import math\n\nimport numpy as np\n\n\n" + self.source(instrument)


# Python's builtins with a kink or a switch: instrumented like data-dependent comparisons.
INSTRUMENTED_BUILTINS = re.compile(r"(?<![\w.])(max|min|sorted|abs)\(")


# --- the generator --------------------------------------------------------------

@dataclass
class Helper:
    """A function the program can call: a module-level def, a nested def or a recursive one."""
    name: str
    params: list               # (name, kind, default source or None); kind is "scalar", "array" or "int"
    returns_array: bool
    kwonly: int = 0            # how many of the last parameters are keyword-only (after ``*``)


@dataclass
class Loop:
    counter: str | None        # an int variable usable in conditions, or None
    max_value: int             # the largest value the counter can take
    kind: str


class Generator:
    def __init__(self, chooser, features=ALL_FEATURES, name: str = "f", rates=None):
        self.c = chooser
        self.features = frozenset(features)
        self.name = name
        self.rates = dict(rates or {})      # feature -> the chance of using it, instead of the usual one
        self.is_helper = False
        self.lines: list = []
        self.used: set = set()
        self.counter_names = (f"{n}{k or ''}" for k in range(100) for n in "ijkmnl")
        self.max_depth = MAX_DEPTH
        self.callables: list[Helper] = []   # the functions expressions may call
        self.cond_vars: list[str] = []      # variables read only in conditions
        self.int_params: list[str] = []     # integer parameters (of a helper), bounds of `range`
        self.returns_array = False          # a helper's result is an array
        self.helpers: list[Program] = []
        self.constants: list[str] = []

    def on(self, feature: str, p: float) -> bool:
        """Whether to use an optional construct (never, if the feature is switched off)."""
        if feature not in self.features:
            return False
        hit = self.c.chance(self.rates.get(feature, p))
        if hit:
            self.used.add(feature)
        return hit

    def emit(self, indent: int, text) -> None:
        self.lines.append((indent, text))

    # -- expressions: each returns (source, bound on its magnitude, whether it is an array) --

    def const(self) -> tuple[str, float, bool]:
        if self.on("globals", 0.3):
            return self.module_constant(array=False)
        v = self.c.choice(CONSTANTS)
        return repr(v), v, False

    def module_constant(self, array: bool) -> tuple[str, float, bool]:
        """A new module constant, read as a value: a float, a NumPy float64 or an int (`array`: an array of
        shape (3,))."""
        name = f"G{len(self.constants)}"
        if array:
            values = [self.c.choice(CONSTANTS) for _ in range(3)]
            self.constants.append(f"{name} = np.array({values!r})")
            return name, max(values), True
        kind = self.c.choice(["float", "float64", "int"])
        v = self.c.choice((1, 2)) if kind == "int" else self.c.choice(CONSTANTS)
        self.constants.append(f"{name} = np.float64({v!r})" if kind == "float64" else f"{name} = {v!r}")
        return name, float(v), False

    def leaf(self, array: bool, loops: list[Loop]) -> tuple[str, float, bool]:
        kinds = ["var", "var", "var", "const"] if self.scalars else ["const"]
        if loops and any(lp.counter for lp in loops):
            kinds.append("counter")
        if array and self.arrays:
            kinds += ["array"] * 4
        if self.arrays and self.on("index_read", 0.1):
            return f"{self.c.choice(self.arrays)}[{self.index(loops)}]", VAR_BOUND, False
        if array and self.arrays and self.on("globals", 0.1):
            return self.module_constant(array=True)
        kind = self.c.choice(kinds)
        if kind == "var":
            return self.c.choice(self.scalars), VAR_BOUND, False
        if kind == "const":
            return self.const()
        if kind == "counter":
            lp = self.c.choice([lp for lp in loops if lp.counter])
            return f"0.1 * {lp.counter}", 0.1 * lp.max_value, False
        return self.c.choice(self.arrays), VAR_BOUND, True

    def expr(self, depth: int, array: bool, loops: list[Loop]) -> tuple[str, float, bool]:
        """An expression; with `array`, it may (not must) involve the array variables."""
        if depth <= 0 or self.c.integer(0, 3) == 0:
            return self.leaf(array, loops)
        usable = [h for h in self.callables if (array or not h.returns_array)
                  and (self.arrays or all(kind != "array" for _, kind, _ in h.params))]
        if usable and self.c.chance(0.2):
            helper = self.c.choice(usable)
            return self.call(helper, loops), VAR_BOUND, helper.returns_array
        forms = ["add", "mul", "sin", "tanh", "sub", "cos", "exp_sin", "gauss", "ratio", "square", "scale"]
        optional = {"pow": "pow", "math": "math", "sum": "np_sum_inner"}
        if "pow" in self.features and self.c.chance(0.3):
            forms.append("pow")
        if not array and "math" in self.features and self.c.chance(0.15):
            forms.append("math")
        if not array and self.arrays and "np_sum_inner" in self.features and self.c.chance(0.3):
            forms.append("sum")
        if "builtins" in self.features and self.c.chance(self.rates.get("builtins", 0.25)):
            forms.append("builtin")
            optional["builtin"] = "builtins"
        form = self.c.choice(forms)
        if form in optional:
            self.used.add(optional[form])
        sub = lambda: self.expr(depth - 1, array, loops)
        if form in ("add", "sub", "mul"):
            (l, bl, al), (r, br, ar) = sub(), sub()
            op = {"add": "+", "sub": "-", "mul": "*"}[form]
            return f"({l} {op} {r})", bl * br if form == "mul" else bl + br, al or ar
        if form == "scale":
            (e, b, a), (k, bk, _) = sub(), self.const()
            return f"{k} * {e}", bk * b, a
        if form in ("sin", "cos", "tanh"):
            e, _, a = sub()
            return f"np.{form}({e})", 1.0, a
        if form == "math":
            e, _, _ = self.expr(depth - 1, False, loops)
            fn = self.c.choice(["sin", "cos", "tanh"])
            return f"math.{fn}({e})", 1.0, False
        if form == "exp_sin":
            e, _, a = sub()
            inner = self.c.choice(["np.sin", "np.tanh", "np.cos"])
            return f"np.exp({inner}({e}))", 2.72, a
        if form == "gauss":
            e, _, a = sub()
            return f"np.exp(-({e}) * ({e}))", 1.0, a
        if form == "ratio":
            (n, bn, an), (d, _, ad) = sub(), sub()
            return f"({n} / (1.5 + {d} * {d}))", bn / 1.5, an or ad
        if form == "square":
            e, b, a = sub()
            return self.c.choice([(f"({e} * {e})", b * b, a), (f"np.square({e})", b * b, a)])
        if form == "pow":
            e, b, a = sub()
            return f"({e}) ** 2", b * b, a
        if form == "builtin":
            return self.builtin(depth, array, loops)
        # "sum": a scalar from an array expression
        e, b, a = self.expr(depth - 1, True, loops)
        if not a:
            e = f"{e} * {self.c.choice(self.arrays)}"
        return f"np.sum({e})", 3 * b * VAR_BOUND, False

    def builtin(self, depth: int, array: bool, loops: list[Loop]) -> tuple[str, float, bool]:
        """A call of one of Python's builtins on smaller expressions (numbers; with `array`, abs and sum may
        take arrays)."""
        number = lambda: self.expr(depth - 1, False, loops)  # noqa: E731
        forms = ["max", "min3", "abs", "sum_list", "sorted", "pow", "fsum"] + (["sum_gen", "max_array"]
                                                                              if self.arrays else [])
        form = self.c.choice(forms)
        if form == "max":
            (l, bl, _), (r, br, _) = number(), number()
            return f"{self.c.choice(['max', 'min'])}({l}, {r})", max(bl, br), False
        if form in ("min3", "sorted"):
            parts = [number() for _ in range(3)]
            items = ", ".join(p[0] for p in parts)
            call = f"min({items})" if form == "min3" else f"sorted([{items}])[1]"
            return call, max(p[1] for p in parts), False
        if form == "abs":
            e, b, a = self.expr(depth - 1, array, loops)
            return f"abs({e})", b, a
        if form == "sum_list":
            (l, bl, al), (r, br, _) = self.expr(depth - 1, array, loops), number()
            return f"sum([{l}, {r}])", bl + br, al
        if form == "pow":
            e, b, _ = number()
            return f"pow({e}, 2)", b * b, False
        if form == "fsum":
            (l, bl, _), (r, br, _) = number(), number()
            return f"math.fsum([{l}, {r}])", bl + br, False
        if form == "sum_gen":
            e, b, _ = number()
            return f"math.fsum(elem * {e} for elem in {self.c.choice(self.arrays)})", 3 * b * VAR_BOUND, False
        return f"{self.c.choice(['max', 'min'])}({self.c.choice(self.arrays)})", VAR_BOUND, False

    def bounded(self, array: bool, loops: list[Loop], limit: float = VAR_BOUND) -> str:
        """An expression whose magnitude is at most `limit`, squashing or scaling it if need be."""
        e, b, a = self.expr(self.c.integer(1, 3), array, loops)
        if array and not a:
            e = f"{e} + 0.0 * {self.c.choice(self.arrays)}"        # keep array variables arrays
        if b <= limit:
            return e
        if b <= 2 * limit:
            return f"0.5 * ({e})"
        squash = self.c.choice(["np.tanh", "np.sin", "np.cos"])
        return f"{min(limit, 1.5)} * {squash}({e})"

    # -- conditions --

    def counter_cond(self, loops: list[Loop]):
        lp = self.c.choice([lp for lp in loops if lp.counter])
        i, top = lp.counter, max(lp.max_value, 1)
        form = self.c.integer(0, 4)
        if form == 0:
            m = self.c.integer(2, 3)
            return Cmp(f"{i} % {m}", "==", str(self.c.integer(0, m - 1)), False)
        if form == 4 and len([l for l in loops if l.counter]) > 1:
            other = self.c.choice([l for l in loops if l.counter and l is not lp])
            return Cmp(i, self.c.choice(["<", ">", "==", "<=", "!="]), other.counter, False)
        return Cmp(i, self.c.choice([">", "==", "<", ">=", "!="]), str(self.c.integer(0, top)), False)

    def data_cond(self, loops: list[Loop]):
        self.used.add("data_cond")
        form = self.c.integer(0, 3)
        readable = self.scalars + self.cond_vars
        if not readable:
            return Cmp("1", "==", "1", False)
        v = self.c.choice(readable)
        op = self.c.choice([">", "<"])
        if not self.scalars:
            form = 0
        if form == 0:
            return Cmp(v, op, repr(self.c.choice((0.3, -0.2, 0.0, 0.8, -0.5))), True)
        if form == 1:
            w = self.c.choice(self.scalars)
            return Cmp(v, op, w, True) if w != v else Cmp(v, op, "0.5", True)
        if form == 2:
            return Cmp(f"np.sin({v})", op, repr(self.c.choice((0.2, -0.1))), True)
        if self.arrays:
            return Cmp(f"np.sum({self.c.choice(self.arrays)})", op, v, True)
        return Cmp(f"{v} * {self.c.choice(self.scalars)}", op, "0.25", True)

    def cond(self, loops: list[Loop], allow_data: bool = True):
        have_counter = any(lp.counter for lp in loops)
        use_data = allow_data and "data_cond" in self.features and (not have_counter or self.c.chance(0.35))
        if not use_data and not have_counter:
            use_data = "data_cond" in self.features
            if not use_data:
                return Cmp("1", "==", "1", False)          # no condition is available at all
        first = self.data_cond(loops) if use_data else self.counter_cond(loops)
        if self.on("bool_ops", 0.2):
            op = self.c.choice(["and", "or", "not"])
            if op == "not":
                return BoolOp("not", [first])
            second = self.data_cond(loops) if (allow_data and "data_cond" in self.features
                                              and (not have_counter or self.c.chance(0.5))) \
                else (self.counter_cond(loops) if have_counter else first)
            return BoolOp(op, [first, second])
        return first

    # -- statements --

    def index(self, loops: list[Loop]) -> str:
        """An index into a 3-element array: a constant, or a loop counter wrapped around."""
        return self.c.choice(["0", "1", "2", "-1"] + [f"{lp.counter} % 3" for lp in loops if lp.counter])

    def assign(self, indent: int, loops: list[Loop]) -> None:
        writable = [a for a in self.arrays if a not in self.iterating]
        if writable and self.on("index_write", 0.15):           # x[k] = ... or x[k] += ..., in place
            target, index = self.c.choice(writable), self.index(loops)
            if self.c.chance(0.5):
                self.emit(indent, f"{target}[{index}] = {self.bounded(False, loops)}")
            else:
                e, _, _ = self.expr(self.c.integer(1, 2), False, loops)
                self.emit(indent, f"{target}[{index}] += 0.25 * np.tanh({e})")
            return
        to_array = bool(self.arrays) and self.c.chance(0.3)
        targets = self.arrays if to_array else self.scalars
        if to_array and "iter_rebind" not in self.features:
            targets = [a for a in self.arrays if a not in self.iterating]
            to_array = bool(targets)
            targets = targets or self.scalars
        target = self.c.choice(targets)
        if "if" in self.features and self.on("cond_expr", 0.08):      # target = (e1) if c else (e2)
            e1, e2 = self.bounded(to_array, loops), self.bounded(to_array, loops)
            e1, e2 = self.unaliased(e1, target, to_array), self.unaliased(e2, target, to_array)   # (as below)
            self.emit(indent, (f"{target} = ({e1}) if ", self.cond(loops), f" else ({e2})"))
            return
        augmented = self.on("augassign" if not to_array else "array_augassign", 0.25)
        if augmented and (target in self.iterating or target in self.elements) \
                and not self.on("iter_alias", 1.0):
            augmented = False           # `for v in x: ... x += ...` or `v += ...`: v may be a view of x
        if target in self.iterating and not augmented:
            self.used.add("iter_rebind")    # `for v in x: ... x = ...`: the loop still runs over the old x
        if augmented:
            form = self.c.choice(["+=", "-=", "*="])
            if form == "*=":
                e, _, _ = self.expr(self.c.integer(1, 2), to_array, loops)
                self.emit(indent, f"{target} *= np.cos({e})")
            else:
                e, _, _ = self.expr(self.c.integer(1, 2), to_array, loops)
                self.emit(indent, f"{target} {form} 0.25 * np.tanh({e})")
            return
        if not to_array and self.on("walrus", 0.08):          # t = (t := e) * 0.5 + t * 0.5, which is e
            self.emit(indent, f"{target} = ({target} := {self.bounded(False, loops)}) * 0.5 + {target} * 0.5")
            return
        if not to_array and self.on("starred", 0.08):         # t, *rest = (e1, e2): t is e1
            first = self.unaliased(self.bounded(False, loops), target, False)
            if self.arrays and self.c.chance(0.5):
                self.emit(indent, f"{target}, *_, {target}_last = {self.c.choice(self.arrays)} * 0.5")
                self.emit(indent, f"{target} = np.sum({target} + {target}_last * 0.25)")
            else:
                self.emit(indent, f"*_, {target} = ({self.bounded(False, loops)}, {first})")
            return
        self.emit(indent, f"{target} = {self.unaliased(self.bounded(to_array, loops), target, to_array)}")

    def unaliased(self, e: str, target: str, array: bool) -> str:
        """`e`, or, if it is another variable's bare name, a fresh value (unless aliases are wanted; never a
        module constant's array, which a write would change)."""
        if array and any(c.startswith(f"{e} = np.array(") for c in self.constants):
            return f"{e} + 0.0"
        if e == target or e not in (self.arrays if array else self.scalars):
            return e
        if self.on("array_alias" if array else "scalar_alias", 1.0):
            return e
        return f"{e} + 0.0"

    def block(self, indent: int, depth: int, loops: list[Loop], trips: int, n: int | None = None) -> None:
        """Between 1 and 3 statements (n, if given), nested at most to MAX_DEPTH."""
        count = n if n is not None else self.c.integer(1, 3)
        for _ in range(count):
            self.statement(indent, depth, loops, trips)

    def statement(self, indent: int, depth: int, loops: list[Loop], trips: int) -> None:
        kinds = ["assign", "assign"]
        if depth < self.max_depth:
            if "if" in self.features:
                kinds.append("if")
            if trips * 2 <= MAX_TRIPS and ({"for", "while"} & self.features):
                kinds.append("loop")
        if loops and ({"break", "continue", "early_return"} & self.features):
            kinds.append("jump")
        if not loops and "branch_return" in self.features and self.c.chance(0.3):
            kinds.append("branch_return")
        if "zero_trip" in self.features and [v for v in self.scalars if v not in self.elements] \
                and self.c.chance(0.2):
            kinds.append("zero_trip")
        kind = self.c.choice(kinds)
        if kind == "assign":
            self.assign(indent, loops)
        elif kind == "branch_return":
            self.used.add("branch_return")
            self.emit(indent, ("if ", self.cond(loops), ":"))
            if self.c.chance(0.4):
                self.assign(indent + 1, loops)
            self.emit(indent + 1, f"return {self.returned(loops)}")
        elif kind == "zero_trip":
            self.zero_trip(indent, loops)
        elif kind == "if":
            self.if_stmt(indent, depth, loops, trips)
        elif kind == "loop":
            self.loop(indent, depth, loops, trips)
        else:
            self.jump(indent, loops)

    def if_stmt(self, indent: int, depth: int, loops: list[Loop], trips: int) -> None:
        self.used.add("if")
        self.emit(indent, ("if ", self.cond(loops), ":"))
        self.block(indent + 1, depth + 1, loops, trips)
        while self.on("elif", 0.3):
            self.emit(indent, ("elif ", self.cond(loops), ":"))
            self.block(indent + 1, depth + 1, loops, trips)
            if self.c.chance(0.5):
                break
        if self.on("else", 0.5):
            self.emit(indent, "else:")
            self.block(indent + 1, depth + 1, loops, trips)

    def jump(self, indent: int, loops: list[Loop]) -> None:
        """`break`, `continue` or an early `return`, under an `if`."""
        options = []
        if "break" in self.features:
            options.append("break")
        if "continue" in self.features:
            options.append("continue")
        if "early_return" in self.features and self.c.chance(0.3):
            options.append("return")
        if not options:
            self.assign(indent, loops)
            return
        what = self.c.choice(options)
        self.used.add({"break": "break", "continue": "continue", "return": "early_return"}[what])
        self.emit(indent, ("if ", self.cond(loops), ":"))
        if what == "return":
            self.emit(indent + 1, f"return {self.returned(loops)}")
        else:
            if self.c.chance(0.3):
                self.assign(indent + 1, loops)
            self.emit(indent + 1, what)

    def loop(self, indent: int, depth: int, loops: list[Loop], trips: int) -> None:
        kinds = [k for k in ("for", "while") if k in self.features]
        kind = self.c.choice(kinds)
        counter = next(self.counter_names)
        if kind == "for":
            self.used.add("for")
            outer = [lp for lp in loops if lp.counter and lp.max_value <= 4]
            form = "range"
            if self.int_params and self.c.chance(0.5):
                form = "int_param"
            elif self.arrays and self.on("for_array", 0.25):
                form = "array"
            elif outer and self.on("for_dep", 0.25):
                form = "dep"
            elif self.on("for_step", 0.2):
                form = "step"
            if form == "array":
                v, over = "v" + counter, self.c.choice(self.arrays)
                if self.on("enumerate", 0.5):
                    self.emit(indent, f"for {counter}, {v} in enumerate({over}):")
                    lp = Loop(counter, 2, "for")
                else:
                    self.emit(indent, f"for {v} in {over}:")
                    lp = Loop(None, 2, "for")
                self.scalars.append(v)
                self.elements.append(v)
                self.iterating.append(over)
                n = 3
            elif form == "int_param":        # no trip at all if the argument is 0
                self.emit(indent, f"for {counter} in range({self.c.choice(self.int_params)}):")
                n = INT_ARGUMENT_MAX
                lp = Loop(counter, n - 1, "for")
            elif form == "dep":
                o = self.c.choice(outer)
                extra = self.c.integer(0, 1)
                self.emit(indent, f"for {counter} in range({o.counter}{' + 1' if extra else ''}):")
                n = o.max_value + extra
                lp = Loop(counter, max(n - 1, 0), "for")
            elif form == "step":
                start, step = self.c.integer(0, 2), self.c.integer(2, 3)
                stop = start + step * self.c.integer(1, 3)
                self.emit(indent, f"for {counter} in range({start}, {stop}, {step}):")
                n = len(range(start, stop, step))
                lp = Loop(counter, stop - 1, "for")
            else:
                n = self.c.integer(0, 4) if self.c.chance(0.1) else self.c.integer(1, 4)
                self.emit(indent, f"for {counter} in range({n}):")
                lp = Loop(counter, max(n - 1, 0), "for")
            self.block(indent + 1, depth + 1, loops + [lp], trips * max(n, 1))
            self.loop_else(indent, depth, loops, trips)
            if form == "array":
                self.scalars.remove("v" + counter)
                self.elements.pop()
                self.iterating.pop()
            return
        self.used.add("while")
        n = self.c.integer(1, 4)
        self.emit(indent, f"{counter} = 0")
        if self.on("while_true", 0.2):
            self.emit(indent, "while True:")
            self.emit(indent + 1, f"{counter} += 1")
            self.emit(indent + 1, f"if {counter} > {n}:")
            self.emit(indent + 2, "break")
        else:
            head = f"{counter} < {n}"
            if "data_cond" in self.features and self.on("while_data", 0.35):
                cond = self.data_cond(loops)
                self.emit(indent, ("while ", BoolOp("and", [Cmp(counter, "<", str(n), False), cond])
                                   if self.c.chance(0.7) else BoolOp("and", [cond, Cmp(counter, "<", str(n), False)]),
                                   ":"))
            else:
                self.emit(indent, f"while {head}:")
            # the counter is incremented first, so that `continue` cannot skip it
            self.emit(indent + 1, f"{counter} += 1" if self.c.chance(0.5) else f"{counter} = {counter} + 1")
        lp = Loop(counter, n, "while")
        self.block(indent + 1, depth + 1, loops + [lp], trips * n)
        self.loop_else(indent, depth, loops, trips)

    def loop_else(self, indent: int, depth: int, loops: list[Loop], trips: int) -> None:
        """``for ... else`` / ``while ... else``: a block run where the loop ended without ``break``."""
        if self.on("for_else", 0.15):
            self.emit(indent, "else:")
            self.block(indent + 1, depth + 1, loops, trips, n=1)

    def zero_trip(self, indent: int, loops: list[Loop]) -> None:
        """``while v > 1.0: ... v = 0.9 * np.tanh(...)``: at most one trip, none for most arguments."""
        self.used.add("zero_trip")
        v = self.c.choice([v for v in self.scalars if v not in self.elements])
        cond = Cmp(v, ">", "1.0", True) if self.c.chance(0.5) else Cmp(v, "<", "-1.0", True)
        self.emit(indent, ("while ", cond, ":"))
        if self.c.chance(0.4):
            self.assign(indent + 1, loops)
        e, _, _ = self.expr(self.c.integer(1, 2), False, loops)
        self.emit(indent + 1, f"{v} = 0.9 * np.tanh({e})")

    def returned(self, loops: list[Loop]) -> str:
        """What a `return` returns: the program's result, or a helper's bounded value."""
        if not self.is_helper:
            return self.result(loops)
        return self.unaliased(self.bounded(self.returns_array, loops), "", self.returns_array)

    # -- calls of helpers --

    def argument(self, kind: str, loops: list[Loop]) -> str:
        """An argument of a call: active (a variable, an expression of them) or not (a constant)."""
        if kind == "int":
            counters = [lp.counter for lp in loops if lp.counter and lp.max_value <= INT_ARGUMENT_MAX]
            return self.c.choice([str(n) for n in range(INT_ARGUMENT_MAX + 1)] + counters)
        if kind == "array":
            return self.c.choice(self.arrays) if self.c.chance(0.6) else self.bounded(True, loops)
        form = self.c.integer(0, 2)
        if form == 0 and self.scalars:
            return self.c.choice(self.scalars)
        if form == 1:
            return self.const()[0]
        return self.bounded(False, loops)

    def call(self, helper: Helper, loops: list[Loop]) -> str:
        """A call of `helper`: positional arguments, then maybe keyword ones; defaults maybe left out."""
        params = helper.params
        first_keyword = len(params)
        if self.on("keyword_args", 0.3):
            first_keyword = self.c.integer(0, len(params) - 1)
        first_keyword = min(first_keyword, len(params) - helper.kwonly)     # keyword-only ones by name
        omit = [default is not None and self.c.chance(0.5) for _, _, default in params]
        for k in reversed(range(first_keyword)):     # a positional argument left out: only at the end
            if omit[k] and not all(omit[k + 1:first_keyword]):
                omit[k] = False
        if any(omit):
            self.used.add("default_args")
        positional = [self.argument(kind, loops) for k, (_, kind, _) in enumerate(params[:first_keyword])
                      if not omit[k]]
        keywords = [f"{name}={self.argument(kind, loops)}" for k, (name, kind, _) in enumerate(params)
                    if k >= first_keyword and not omit[k]]
        if self.c.chance(0.5):
            keywords.reverse()
        return f"{helper.name}({', '.join(positional + keywords)})"

    def helper(self, index: int) -> None:
        """A module-level function ``h<index>`` the program can call: one to three float parameters
        (some unused, overwritten before they are read, or read only in conditions; some with
        defaults), maybe an array parameter and an integer one (a `range` bound, maybe 0);
        branches, early returns and loops inside; its result a float, or an array."""
        name = f"h{index}"
        sub = Generator(self.c, self.features - HELPER_BODY_EXCLUDED, name, self.rates)
        sub.is_helper, sub.max_depth = True, 2
        sub.constants = self.constants               # (the module's, which its globals join)
        if self.callables and self.on("helper_calls_helper", 0.5):
            sub.callables = [h for h in self.callables if not h.name.startswith("g")]
        params, scalars, overwritten = [], [], []
        sub.scalars, sub.arrays, sub.iterating, sub.elements = [], [], [], []
        for k in range(self.c.integer(1, 3)):
            p = "abc"[k]
            params.append((p, "scalar"))
            role = self.c.choice(["read"] * 4 + [r for r in ("unused", "overwritten", "cond_only")
                                                 if f"helper_{r}" in self.features])
            self.used.add(f"helper_{role}") if role != "read" else None
            {"read": scalars, "unused": [], "overwritten": overwritten, "cond_only": sub.cond_vars}[role].append(p)
        if self.arrays and self.on("helper_array", 0.4):
            params.insert(self.c.integer(0, len(params)), ("v", "array"))
            sub.arrays.append("v")
            sub.returns_array = self.c.chance(0.5)
        if self.on("helper_int", 0.3):
            params.append(("n", "int"))
            sub.int_params.append("n")
        sub.scalars = list(scalars)
        for p in overwritten:                        # p = ... before any read of p
            sub.emit(0, f"{p} = {sub.unaliased(sub.bounded(False, []), p, False)}")
            sub.scalars.append(p)
        if not sub.scalars:                          # a local to assign to
            sub.emit(0, f"t = {sub.bounded(False, [])}")
            sub.scalars.append("t")
        for q in sub.cond_vars:                      # read only here
            sub.emit(0, ("if ", Cmp(q, self.c.choice([">", "<"]), repr(self.c.choice((0.3, -0.2, 0.0))), True), ":"))
            sub.block(1, 1, [], 1, n=1)
        sub.block(0, 0, [], 1, n=self.c.integer(0, 3))
        sub.emit(0, f"return {sub.returned([])}")
        defaults = []
        for k in range(len(params) - 1, -1, -1):    # trailing parameters may have defaults
            p, kind = params[k]
            if kind == "array" or not self.on("default_args", 0.3):
                break
            if kind == "int":
                defaults.insert(0, (p, str(self.c.integer(0, INT_ARGUMENT_MAX))))
            elif self.c.chance(0.5):
                constant = f"K{len(self.constants)}"
                self.constants.append(f"{constant} = {self.c.choice(CONSTANTS)!r}")
                defaults.insert(0, (p, constant))
            else:
                defaults.insert(0, (p, repr(self.c.choice(CONSTANTS))))
        default_of = dict(defaults)
        parts = [f"{p}={default_of[p]}" if p in default_of else p for p, _ in params]
        kwonly = 0
        if params[-1][1] != "array" and self.on("kwonly", 0.3):     # def h(a, *, b, n=2), called h(a, b=..)
            tail = next(k for k in range(len(params), -1, -1) if k == 0 or params[k - 1][1] == "array")
            kwonly = self.c.integer(1, len(params) - tail)
            parts.insert(len(parts) - kwonly, "*")
        signature = ", ".join(parts)
        self.used |= sub.used
        self.helpers.append(Program(name, [p for p, _ in params], None, sub.lines, sub.used, signature=signature))
        self.callables.append(Helper(name, [(p, kind, default_of.get(p)) for p, kind in params], sub.returns_array,
                                     kwonly))

    def recursive_helpers(self) -> None:
        """``r0(a, b, n)``, calling itself (or ``r1``, which calls it back) with ``n - 1`` and
        arguments whose activity may differ from its own (b passed as a, a constant as b)."""
        self.used.add("recursion")
        names = ["r0", "r1"] if self.c.chance(0.4) else ["r0"]
        for k, name in enumerate(names):
            callee = names[(k + 1) % len(names)]
            sub = Generator(self.c, self.features - HELPER_BODY_EXCLUDED - {"helpers"}, name, self.rates)
            sub.constants = self.constants
            sub.is_helper = True
            sub.scalars, sub.arrays, sub.iterating, sub.elements = ["a", "b"], [], [], []
            sub.emit(0, "if n <= 0:")
            sub.emit(1, f"return {sub.bounded(False, [])}")
            first = sub.c.choice(["a", "b", sub.bounded(False, [])])
            second = sub.c.choice(["b", "a", sub.const()[0], sub.bounded(False, [])])
            sub.emit(0, f"t = {callee}({first}, {second}, n - 1)")
            sub.scalars.append("t")
            sub.emit(0, f"return {sub.bounded(False, [])}")
            self.used |= sub.used
            self.helpers.append(Program(name, ["a", "b", "n"], None, sub.lines, sub.used))
        self.callables.append(Helper("r0", [("a", "scalar", None), ("b", "scalar", None), ("n", "int", None)], False))

    def nested_def(self) -> None:
        """``def g0(u, w=K): return ...``: reads f's variables as they are when it is called."""
        self.used.add("nested_def")
        name = f"g{sum(h.name.startswith('g') for h in self.callables)}"
        params = [("u", "scalar", None)]
        if self.c.chance(0.5):
            default = repr(self.c.choice(CONSTANTS))
            if self.c.chance(0.5):
                default = f"K{len(self.constants)}"
                self.constants.append(f"{default} = {self.c.choice(CONSTANTS)!r}")
            params.append(("w", "scalar", default))
        outer = self.scalars
        self.scalars = [p for p, _, _ in params] + [v for v in outer if self.c.chance(0.5)]
        saved, self.callables = self.callables, [h for h in self.callables if not h.name.startswith("g")]
        body = self.bounded(False, [])
        self.callables, self.scalars = saved, outer
        signature = ", ".join(f"{p}={d}" if d else p for p, _, d in params)
        self.emit(0, f"def {name}({signature}):")
        self.emit(1, f"return {body}")
        self.callables.append(Helper(name, params, False))

    def lambda_def(self) -> None:
        """``L0 = lambda u, w=K: ...`` reading f's variables as they are when it is called (or, instead, a
        lambda called in place: ``z = (lambda u: ...)(a)``)."""
        self.used.add("lambdas")
        name = f"L{sum(h.name.startswith('L') for h in self.callables)}"
        params = [("u", "scalar", None)]
        if self.c.chance(0.4):
            params.append(("w", "scalar", repr(self.c.choice(CONSTANTS))))
        outer = self.scalars
        self.scalars = [p for p, _, _ in params] + [v for v in outer if self.c.chance(0.5)]
        saved, self.callables = self.callables, [h for h in self.callables if h.name[0] in "hr"]
        body = self.bounded(False, [])
        self.callables, self.scalars = saved, outer
        signature = ", ".join(f"{p}={d}" if d else p for p, _, d in params)
        if "z" not in self.scalars and self.c.chance(0.3):
            self.emit(0, f"z = (lambda {signature}: {body})({self.argument('scalar', [])})")
            self.scalars.append("z")
            return
        self.emit(0, f"{name} = lambda {signature}: {body}")
        self.callables.append(Helper(name, params, False))
        self.called_now(self.callables[-1])

    def partial_def(self) -> None:
        """``P0 = functools.partial(h, arg)`` (its first parameter bound) or ``functools.partial(h, c=arg)`` (its
        last) of a function the program calls, the bound argument evaluated here."""
        usable = [h for h in self.callables if len(h.params) >= 2
                  and (self.arrays or all(kind != "array" for _, kind, _ in h.params))]
        if not usable:
            return
        self.used.add("partial")
        helper = self.c.choice(usable)
        name = f"P{sum(h.name.startswith('P') for h in self.callables)}"
        kwonly = helper.kwonly
        if self.c.chance(0.5) and kwonly < len(helper.params):      # a keyword-only parameter is bound by name
            _, kind, _ = helper.params[0]
            bound, rest = self.argument(kind, []), helper.params[1:]
        else:
            param, kind, _ = helper.params[-1]
            bound, rest = f"{param}={self.argument(kind, [])}", helper.params[:-1]
            kwonly = max(kwonly - 1, 0)
        self.emit(0, f"{name} = functools.partial({helper.name}, {bound})")
        self.callables.append(Helper(name, rest, helper.returns_array, kwonly))
        self.called_now(self.callables[-1])

    def called_now(self, helper: Helper) -> None:
        """Most often, ``vP0 = P0(...)`` right after a lambda or partial is made (else it may go uncalled)."""
        if self.c.chance(0.7):
            self.emit(0, f"v{helper.name} = {self.call(helper, [])}")
            (self.arrays if helper.returns_array else self.scalars).append(f"v{helper.name}")

    def result(self, loops: list[Loop]) -> str:
        """A smooth scalar expression of the variables."""
        e, _, _ = self.expr(self.c.integer(1, 3), False, loops)
        parts = [e]
        if self.arrays:
            a, _, is_array = self.expr(self.c.integer(0, 2), True, loops)
            if not is_array:
                a = f"{a} * {self.c.choice(self.arrays)}"
            parts.append(f"np.sum({a})")
        if self.c.chance(0.5) or not any(v in _names(e) for v in self.scalars):
            parts.append(self.c.choice(self.scalars))
        return " + ".join(parts)

    def program(self) -> Program:
        n_scalars = self.c.integer(2, 3)
        params = list("abc"[:n_scalars])
        self.scalars = list(params)
        self.arrays: list[str] = []
        self.iterating: list[str] = []      # arrays that enclosing `for v in x` loops iterate over
        self.elements: list[str] = []       # and their loop variables
        array = None
        if self.c.chance(0.35):
            array = "x"
            params.append("x")
            self.arrays.append("x")
        if self.on("helpers", 0.3):
            for k in range(self.c.integer(1, 3)):
                self.helper(k)
        if self.on("recursion", 0.1):
            self.recursive_helpers()
        if self.on("locals", 0.4):
            self.emit(0, f"p = {self.unaliased(self.bounded(False, []), 'p', False)}")
            self.scalars.append("p")
            if self.arrays and self.c.chance(0.5):
                self.emit(0, f"y = {self.unaliased(self.bounded(True, []), 'y', True)}")
                self.arrays.append("y")
        if self.on("nested_def", 0.1):
            self.nested_def()
        if self.on("lambdas", 0.1):
            self.lambda_def()
        if self.callables and self.on("partial", 0.15):
            self.partial_def()
        self.block(0, 0, [], 1, n=self.c.integer(1, 4))
        callable_here = [h for h in self.callables if self.arrays or not h.returns_array]
        if callable_here and self.c.chance(0.5):    # (so that every helper is likely to be called)
            helper = self.c.choice(callable_here)
            self.emit(0, f"q = {self.call(helper, [])}")
            (self.arrays if helper.returns_array else self.scalars).append("q")
        self.emit(0, f"return {self.result([])}")
        if self.on("methods", 0.3):                   # (drawn last: the rest of the program is as without it)
            cls, make, call = method_class(self.c, [v for v in self.scalars if v not in self.elements], self.arrays)
            self.helpers.append(cls)
            returned = self.lines.pop()
            self.lines += [(0, make), (0, f"{returned[1]} + {call}")]
        return Program(self.name, params, array, self.lines, self.used, self.helpers, self.constants)


@dataclass
class ClassSource:
    """A module-level class the program uses, as source."""
    text: str

    def source(self, instrument: bool = False) -> str:
        return self.text


INNER_METHODS = ("np.tanh(self.w * v + {c})", "self.w * np.sin(v) + self.u", "np.exp(-(self.u * v) ** 2) * self.w",
                 "self.u * v / (1.5 + v * v)")
OUTER_METHODS = ("self.inner(v) * self.w + np.cos(self.u)", "np.sin(self.inner(v)) + self.u * self.w",
                 "self.inner(self.inner(v) * {c})")


def method_class(c, scalars: list, arrays: list) -> tuple[ClassSource, str, str]:
    """A class ``M0`` with attributes ``w`` and ``u`` and methods ``inner`` and ``outer`` (or ``__call__``);
    the line making one from two of `scalars`, and a call of a method of it (on a scalar or an array)."""
    style = c.choice(["init", "dataclass", "call"])
    inner = c.choice(INNER_METHODS).format(c=repr(c.choice(CONSTANTS)))
    outer = c.choice(OUTER_METHODS).format(c=repr(c.choice(CONSTANTS)))
    name = "__call__" if style == "call" else "outer"
    if style == "dataclass":
        head = ["import dataclasses", "", "", "@dataclasses.dataclass", "class M0:", "    w: float", "    u: float"]
    else:
        head = ["class M0:", "    def __init__(self, w, u):", "        self.w = w", "        self.u = u"]
        if c.chance(0.5):
            head.append(f"        self.u = self.u * {c.choice(CONSTANTS)!r}")
    text = "\n".join([*head, "", "    def inner(self, v):", f"        return {inner}", "",
                      f"    def {name}(self, v):", f"        return {outer}", ""])
    w, u = c.choice(scalars), c.choice(scalars)
    argument = c.choice(scalars + arrays)
    call = f"m({argument})" if style == "call" else f"m.outer({argument})"
    return ClassSource(text), f"m = M0({w}, {u})", f"np.sum({call})" if argument in arrays else call


def _names(source: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", source))


def generate(chooser, features=ALL_FEATURES, name: str = "f", rates=None, max_depth: int = MAX_DEPTH) -> Program:
    """One program; `rates` (feature -> chance) overrides how often optional constructs are used."""
    generator = Generator(chooser, features, name, rates)
    generator.max_depth = max_depth
    return generator.program()


# how the sweeps of programs that call helpers weigh the constructs
HELPER_RATES = {"helpers": 1.0, "recursion": 0.3, "nested_def": 0.3, "helper_calls_helper": 0.7,
                "helper_array": 0.5, "helper_int": 0.4, "keyword_args": 0.4, "default_args": 0.5, "kwonly": 0.4,
                "lambdas": 0.3, "partial": 0.4}


if __name__ == "__main__":          # print a few programs
    import sys
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    for s in range(seed, seed + 3):
        print(generate(RandomChooser(random.Random(s))).source())
