"""Random programs that make a second name for an array, or a view of it, and change it through one name.

`generate(rng)` builds one program as Python source: ``f(x)``, x of shape (6,), which makes its own
array ``y`` of shape (2, 3) from x and then

* a second name ``v`` for it, made by one of `MAKERS`: every NumPy function (and method, and index)
  that may return a view of its argument (``np.reshape(y, ...)``, ``np.asarray(y)``, ``y[...]``,
  ``np.diagonal(y)``, ``np.broadcast_to(y, ...)`` (read-only), ...) and some that copy
  (``np.copy(y)``, ``np.array(y)``, ``y * 1.0``), or a container holding such views (a list, a tuple,
  a list appended to in a loop, a tuple unpacked);
* a change in place through one of the names: ``n[index] = e``, ``n[index] += e`` with a basic index
  valid for that name's shape, or ``n *= c``, ``n += e`` — in straight-line code, under a data
  branch, in a loop (also reading the other name in the loop), through the rows of ``for row in n``,
  or in a helper the program calls with that name (a module-level function or a nested ``def``;
  called once, in a loop, under a branch, or in a conditional expression);
* a result that reads the other name (and maybe the changed one).

The test runs each program as Python and through s2sgrad: the value and gradient must be Python's (the
gradient checked by central differences), or s2sgrad must refuse the program with an `S2SGradError`
pointing at a line of it. Where Python raises (a write into a read-only view), s2sgrad must raise too.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

SHAPE = (2, 3)

# (expression of the array `y`, shape of the result, a view of y?, read-only?)
MAKERS = [
    ("np.reshape(y, (3, 2))", (3, 2), True, False),
    ("np.reshape(y, (6,))", (6,), True, False),
    ("np.reshape(y, -1)", (6,), True, False),
    ("np.ravel(y)", (6,), True, False),
    ("np.transpose(y)", (3, 2), True, False),
    ("np.transpose(y, (1, 0))", (3, 2), True, False),
    ("np.swapaxes(y, 0, 1)", (3, 2), True, False),
    ("np.moveaxis(y, 0, -1)", (3, 2), True, False),
    ("np.expand_dims(y, 0)", (1, 2, 3), True, False),
    ("np.squeeze(y)", (2, 3), True, False),
    ("np.atleast_1d(y)", (2, 3), True, False),
    ("np.atleast_2d(y)", (2, 3), True, False),
    ("np.asarray(y)", (2, 3), True, False),
    ("np.asanyarray(y)", (2, 3), True, False),
    ("np.array(y, copy=False)", (2, 3), True, False),
    ("np.flip(y)", (2, 3), True, False),
    ("np.fliplr(y)", (2, 3), True, False),
    ("np.flipud(y)", (2, 3), True, False),
    ("np.real(y)", (2, 3), True, False),
    ("np.matrix_transpose(y)", (3, 2), True, False),
    ("np.diagonal(y)", (2,), True, True),
    ("np.broadcast_to(y, (2, 2, 3))", (2, 2, 3), True, True),
    ("y", (2, 3), True, False),
    ("y[...]", (2, 3), True, False),
    ("y[:]", (2, 3), True, False),
    ("y[1]", (3,), True, False),
    ("y[:, 1:]", (2, 2), True, False),
    ("y[::-1]", (2, 3), True, False),
    ("y[0, 1:3]", (2,), True, False),
    ("y.T", (3, 2), True, False),
    ("y.reshape(3, 2)", (3, 2), True, False),
    ("y.reshape((6,))", (6,), True, False),
    ("y.ravel()", (6,), True, False),
    ("y.squeeze()", (2, 3), True, False),
    ("y.swapaxes(0, 1)", (3, 2), True, False),
    ("y.transpose()", (3, 2), True, False),
    ("y.diagonal()", (2,), True, True),
    ("np.copy(y)", (2, 3), False, False),
    ("y.copy()", (2, 3), False, False),
    ("np.array(y)", (2, 3), False, False),
    ("y * 1.0", (2, 3), False, False),
    ("np.reshape(y + 0.0, (3, 2))", (3, 2), False, False),
    ("y.flatten()", (6,), False, False),
    ("np.sin(y)", (2, 3), False, False),
]
MAKERS = [m for m in MAKERS if not m[0].startswith("np.") or hasattr(np, m[0][3:].split("(")[0])]

PLACES = ("straight", "branch", "loop", "loop_read", "rows", "helper", "nested", "helper_loop", "helper_branch",
          "helper_expression")
CALLS = {   # how the helper g is called (with the name written through), by place
    "helper": ["    q = g({n}, x)"],
    "nested": ["    q = g({n}, x)"],
    "helper_loop": ["    q = 0.0", "    for i in range(2):", "        q = q + g({n}, x)"],
    "helper_branch": ["    q = 0.0", "    if x[1] > 0.0:", "        g({n}, x)"],
    "helper_expression": ["    q = g({n}, x) if x[1] > 0.0 else 0.5"],
}
CONTAINERS = ("none", "none", "none", "list", "tuple", "appended", "unpacked")


@dataclass
class Program:
    source: str
    writes_read_only: bool       # writes through a read-only view (Python raises where that write runs)


def _index(rng: random.Random, shape: tuple) -> str:
    """A basic index valid for `shape`: ints, slices, ``...``."""
    if rng.random() < 0.1:
        return "..."
    parts = []
    for n in shape[:rng.randint(1, len(shape))]:
        choice = rng.random()
        if choice < 0.45:
            parts.append(str(rng.randrange(-n, n)))
        elif choice < 0.8:
            lo = rng.randrange(0, n)
            parts.append(f"{lo}:{rng.randint(lo + 1, n)}")
        else:
            parts.append(":")
    return ", ".join(parts)


def _write(rng: random.Random, name: str, shape: tuple, x_index: str) -> str:
    k = rng.randrange(6)
    kind = rng.choice(["set", "set", "item_aug", "scale", "add"])
    if kind == "set":
        return f"{name}[{_index(rng, shape)}] = 0.5 * np.cos({x_index}[{k}])"
    if kind == "item_aug":
        op = rng.choice(["+=", "*=", "-="])
        return f"{name}[{_index(rng, shape)}] {op} 0.7 * {x_index}[{k}]"
    if kind == "scale":
        return f"{name} *= {rng.choice(['1.5', '0.5', '-2.0'])}"
    return f"{name} += np.sin({x_index}[{k}])"


def generate(rng: random.Random) -> Program:
    """One program (see the module docstring)."""
    maker, shape, _, read_only = rng.choice(MAKERS)
    container = rng.choice(CONTAINERS)
    place = rng.choice(PLACES)
    lines = ["def f(x):", "    y = np.reshape(np.sin(x) + 0.5, (2, 3)) * 1.0"]
    helper = []
    names = {"y": SHAPE}
    make = maker
    if container == "none":
        lines.append(f"    v = {make}")
        names["v"] = shape
        reads = ["v", "y"]
    elif container in ("list", "tuple"):
        other = rng.choice(MAKERS)[0]
        open_, close = ("[", "]") if container == "list" else ("(", ")")
        lines.append(f"    parts = {open_}{make}, {other}{close}")
        lines.append("    v = parts[0]")
        names["v"] = shape
        reads = ["parts[1]", "v", "y"]
    elif container == "appended":
        lines += ["    parts = []", "    for i in range(2):", "        parts.append(y[i])"]
        lines.append("    v = parts[0]")
        names["v"] = (3,)
        read_only = False
        reads = ["parts[1]", "v", "y"]
    else:                                                  # unpacked
        lines += [f"    pair = ({make}, x)", "    v, w = pair"]
        names["v"] = shape
        reads = ["w", "v", "y"]
    target = rng.choice(["v", "y"])
    write = _write(rng, target, names[target], "x")
    body = []
    if place == "rows" and len(names[target]) >= 2:       # each row a view of the array iterated
        body = [f"    for row in {target}:", f"        {_write(rng, 'row', names[target][1:], 'x')}"]
    elif place in ("straight", "rows"):
        body = [f"    {write}"]
    elif place == "branch":
        body = ["    if x[0] > 0.0:", f"        {write}"]
        if rng.random() < 0.5:
            body += ["    else:", f"        {_write(rng, target, names[target], 'x')}"]
    elif place == "loop":
        body = ["    for i in range(2):", f"        {write}"]
    elif place == "loop_read":
        read = rng.choice(reads)
        body = ["    s = 0.0", "    for i in range(2):", f"        {write}", f"        s = s + np.sum({read} * {read})"]
    else:
        inner = _write(rng, "a", names[target], "t")
        definition = ["def g(a, t):", f"    {inner}", "    return 0.1 * np.sum(a * a) + 0.5 * np.sum(t)"]
        if place == "nested":
            body = ["    " + line for line in definition]
        else:
            helper = definition + ["", ""]
        calls = CALLS[place]
        if place == "helper_loop" and rng.random() < 0.5:
            calls = calls[:2] + ["        g({n}, x)"]                          # a call statement
        body += [line.format(n=target) for line in calls]
    lines += body
    first, second = rng.choice(reads), rng.choice(reads)
    result = f"np.sum(np.sin({first})) + 0.5 * np.sum({second} * {second})"
    if place == "loop_read":
        result += " + s"
    elif place in CALLS:
        result += " + q"
    lines.append(f"    return {result}")
    source = "import numpy as np\n\n\n" + "\n".join(helper + lines) + "\n"
    writes_read_only = read_only and target == "v"
    return Program(source, writes_read_only)
