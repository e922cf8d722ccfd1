"""How many values the forward sweep pushes per loop iteration: s2sgrad's to-be-recorded
analysis against the naive scheme that pushes every value the loop body defines.

Run:  python benchmarks/pushes.py      (writes benchmarks/PUSHES.md)
"""
import ast
from pathlib import Path

import numpy as np

import s2sgrad as sg


def rnn_loss(W, U, b, xs):
    """A 100-step RNN: h = tanh(W h + U x_t + b)."""
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h ** 2)


def scalar_loop(x, n):
    """A 1000-step scalar loop of smooth float math."""
    y = x
    i = 0
    while i < n:
        y = np.sin(y) * x + 0.5 * y
        i += 1
    return y


def _pushes(node) -> list:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr == "push"]


def pushes_per_iteration(fn, wrt, args, optimize):
    """The push statements in the body of the forward sweep's (only) loop, of them those of shapes only,
    and the pushes after it (a loop variable's final value, when the value a trip ends with is not
    pushed because the next trip pushes it as its loop variable)."""
    tree = ast.parse(sg.source(fn, wrt=wrt, args=args, optimize=optimize))
    loop = next(node for node in ast.walk(tree) if isinstance(node, ast.While))
    calls = _pushes(loop)
    shapes = sum(isinstance(c.args[0], ast.Call) and getattr(c.args[0].func, "id", "") == "like" for c in calls)
    return len(calls), shapes, len(_pushes(tree)) - len(calls)


def main():
    rng = np.random.default_rng(0)
    cases = [
        ("100-step RNN (hidden 32, input 16)", rnn_loss, (0, 1, 2),
         (rng.standard_normal((32, 32)) * 0.1, rng.standard_normal((32, 16)) * 0.1, rng.standard_normal(32),
          rng.standard_normal((100, 16)))),
        ("1000-step scalar loop", scalar_loop, 0, (0.3, 1000)),
    ]
    rows = ["| loop | pushed per iteration (s2sgrad) | of which shapes only | pushed once after the loop "
            "| pushed per iteration (push everything) |",
            "|---|---|---|---|---|"]
    for name, fn, wrt, args in cases:
        ours, shapes, after = pushes_per_iteration(fn, wrt, args, optimize=True)
        naive, _, _ = pushes_per_iteration(fn, wrt, args, optimize=False)
        rows.append(f"| {name} | {ours} | {shapes} | {after} | {naive} |")
    text = "# Values pushed per loop iteration\n\n" + "\n".join(rows) + "\n"
    Path(__file__).with_name("PUSHES.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
