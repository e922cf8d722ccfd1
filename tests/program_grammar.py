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
  or a loop, and a final ``return`` of a smooth scalar expression.

Compound statements nest up to ``MAX_DEPTH`` deep and the product of the trip
counts of nested loops stays small, so every program terminates quickly.

Every assigned value has a static bound (each variable is assumed to be at most
``VAR_BOUND`` in magnitude; an expression whose bound is larger is squashed by
tanh/sin or scaled), so values stay finite. Data-dependent comparisons can be
rendered instrumented (``instrument=True``): each ``l < r`` becomes
``__cmp__(l, r, '<')``, which lets the test measure how close the program came
to a branch switch, since finite differences across a switch are meaningless.

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
CONSTANTS = (0.5, 0.3, 1.5, 0.25, 0.7, 2.0, 0.1, 1.2)

# Optional constructs, each of which a test can switch off.
ALL_FEATURES = frozenset({
    "if", "elif", "else", "for", "for_step", "for_dep", "for_array", "enumerate",
    "while", "while_data", "while_true", "break", "continue", "early_return",
    "augassign", "array_augassign", "data_cond", "bool_ops", "math", "locals",
    "np_sum_inner", "pow", "array_alias", "scalar_alias", "iter_alias", "iter_rebind",
    "index_read", "index_write",
})


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

    def source(self, instrument: bool = False) -> str:
        lines = [f"def {self.name}({', '.join(self.params)}):"]
        for indent, text in self.body:
            if isinstance(text, tuple):        # ("if ", cond, ":")
                head, cond, tail = text
                text = head + cond.render(instrument) + tail
            lines.append("    " * (indent + 1) + text)
        return "\n".join(lines) + "\n"

    def module_source(self, instrument: bool = False) -> str:
        return "import math\n\nimport numpy as np\n\n\n" + self.source(instrument)


# --- the generator --------------------------------------------------------------

@dataclass
class Loop:
    counter: str | None        # an int variable usable in conditions, or None
    max_value: int             # the largest value the counter can take
    kind: str


class Generator:
    def __init__(self, chooser, features=ALL_FEATURES, name: str = "f"):
        self.c = chooser
        self.features = frozenset(features)
        self.name = name
        self.lines: list = []
        self.used: set = set()
        self.counter_names = (f"{n}{k or ''}" for k in range(100) for n in "ijkmnl")

    def on(self, feature: str, p: float) -> bool:
        """Whether to use an optional construct (never, if the feature is switched off)."""
        if feature not in self.features:
            return False
        hit = self.c.chance(p)
        if hit:
            self.used.add(feature)
        return hit

    def emit(self, indent: int, text) -> None:
        self.lines.append((indent, text))

    # -- expressions: each returns (source, bound on its magnitude, whether it is an array) --

    def const(self) -> tuple[str, float, bool]:
        v = self.c.choice(CONSTANTS)
        return repr(v), v, False

    def leaf(self, array: bool, loops: list[Loop]) -> tuple[str, float, bool]:
        kinds = ["var", "var", "var", "const"]
        if loops and any(lp.counter for lp in loops):
            kinds.append("counter")
        if array and self.arrays:
            kinds += ["array"] * 4
        if self.arrays and self.on("index_read", 0.1):
            return f"{self.c.choice(self.arrays)}[{self.index(loops)}]", VAR_BOUND, False
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
        forms = ["add", "mul", "sin", "tanh", "sub", "cos", "exp_sin", "gauss", "ratio", "square", "scale"]
        optional = {"pow": "pow", "math": "math", "sum": "np_sum_inner"}
        if "pow" in self.features and self.c.chance(0.3):
            forms.append("pow")
        if not array and "math" in self.features and self.c.chance(0.15):
            forms.append("math")
        if not array and self.arrays and "np_sum_inner" in self.features and self.c.chance(0.3):
            forms.append("sum")
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
        # "sum": a scalar from an array expression
        e, b, a = self.expr(depth - 1, True, loops)
        if not a:
            e = f"{e} * {self.c.choice(self.arrays)}"
        return f"np.sum({e})", 3 * b * VAR_BOUND, False

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
        v = self.c.choice(self.scalars)
        op = self.c.choice([">", "<"])
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
        self.emit(indent, f"{target} = {self.unaliased(self.bounded(to_array, loops), target, to_array)}")

    def unaliased(self, e: str, target: str, array: bool) -> str:
        """`e`, or, if it is another variable's bare name, a fresh value (unless aliases are wanted)."""
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
        if depth < MAX_DEPTH:
            if "if" in self.features:
                kinds.append("if")
            if trips * 2 <= MAX_TRIPS and ({"for", "while"} & self.features):
                kinds.append("loop")
        if loops and ({"break", "continue", "early_return"} & self.features):
            kinds.append("jump")
        kind = self.c.choice(kinds)
        if kind == "assign":
            self.assign(indent, loops)
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
            self.emit(indent + 1, f"return {self.result(loops)}")
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
            if self.arrays and self.on("for_array", 0.25):
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
        if self.on("locals", 0.4):
            self.emit(0, f"p = {self.unaliased(self.bounded(False, []), 'p', False)}")
            self.scalars.append("p")
            if self.arrays and self.c.chance(0.5):
                self.emit(0, f"y = {self.unaliased(self.bounded(True, []), 'y', True)}")
                self.arrays.append("y")
        self.block(0, 0, [], 1, n=self.c.integer(1, 4))
        self.emit(0, f"return {self.result([])}")
        return Program(self.name, params, array, self.lines, self.used)


def _names(source: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", source))


def generate(chooser, features=ALL_FEATURES, name: str = "f") -> Program:
    return Generator(chooser, features, name).program()


if __name__ == "__main__":          # print a few programs
    import sys
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    for s in range(seed, seed + 3):
        print(generate(RandomChooser(random.Random(s))).source())
