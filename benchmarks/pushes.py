"""What s2sgrad's gradient of each loop workload keeps and says, against the hand-written adjoint.

For each loop workload of ``workloads.py``, at its full size:

* values pushed per iteration: the push statements in the body of the
  generated forward sweep's loop (of them, shape records ``like(...)``, and
  the pushes once after the loop), the same with every optimization off
  (``optimize=False``: every value the loop body defines that an adjoint
  reads), and the hand-written adjoint's: the values its forward loop
  appends to a list or writes into a pre-allocated array;
* statements: ``ast.stmt`` nodes in the generated gradient function and in
  the hand-written adjoint (all of them, nested ones included, as
  ``ast.walk`` finds them; not the ``def`` itself, nor a docstring);
* peak memory of one gradient call (after a first call), measured the same
  way for both, as ``run.py`` does: tracemalloc's peak above the start,
  the returned gradient included.

Run:  python -m benchmarks.pushes      (writes benchmarks/PUSHES.md)
"""
import ast
import inspect
import sys
import textwrap
from pathlib import Path

import s2sgrad as sg
from benchmarks.memory import peak_bytes
from benchmarks.workloads import BY_KEY, Workload

LOOP_WORKLOADS = ("W1", "W2", "W5", "W7", "W8", "W9", "W10")
STATEMENTS_TARGET = 1.5   # the generated gradient's statements ÷ the hand adjoint's (issue 14)
MEMORY_TARGET = 1.1       # peak memory ÷ the hand adjoint's


def _function(source: str) -> ast.FunctionDef:
    return next(node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef))


def statement_count(function: ast.FunctionDef) -> int:
    """The statements in ``function``'s body, nested ones included, its docstring left out.

        >>> statement_count(_function("def f(x):\\n    '''Doc.'''\\n    for i in x:\\n        y = i\\n    return y"))
        3
    """
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return sum(isinstance(node, ast.stmt) for statement in body for node in ast.walk(statement))


def _pushes(node) -> list:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr == "push"]


def generated_pushes(function: ast.FunctionDef) -> tuple[list[str], int, int]:
    """The values pushed in the body of the forward sweep's loop (the function's first loop), the number
    of them that are shape records, and the pushes outside it (a loop variable's final value, when the value
    a trip ends with is not pushed because the next trip pushes it)."""
    loop = next(node for node in ast.walk(function) if isinstance(node, (ast.While, ast.For)))
    calls = _pushes(loop)
    shapes = sum(isinstance(c.args[0], ast.Call) and getattr(c.args[0].func, "id", "") == "like" for c in calls)
    return [ast.unparse(c.args[0]) for c in calls], shapes, len(_pushes(function)) - len(calls)


def hand_pushes(function: ast.FunctionDef) -> list[str]:
    """What the hand adjoint's forward loop (its first loop) keeps per iteration: the values of its
    ``xs.append(...)`` calls and the values written into a pre-allocated array (``hs[t] = ...``).

        >>> loop = "def f(x):\\n    for t in x:\\n        a.append(t)\\n        hs[t] = t * t\\n        y = t"
        >>> hand_pushes(_function(loop))
        ['t', 't * t']
    """
    loop = next(node for node in ast.walk(function) if isinstance(node, (ast.For, ast.While)))
    kept = []
    for node in ast.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append":
            kept.append((node.lineno, node.col_offset, ast.unparse(node.args[0])))
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            kept.append((node.lineno, node.col_offset, ast.unparse(node.value)))
    return [value for _, _, value in sorted(kept)]


def measure(workload: Workload) -> dict:
    """Pushes, statements and peak memory of s2sgrad's gradient and of the hand adjoint, at full size."""
    args = workload.make_inputs()
    generated = _function(sg.source(workload.forward, wrt=workload.wrt, args=args))
    everything = _function(sg.source(workload.forward, wrt=workload.wrt, args=args, optimize=False))
    hand = _function(textwrap.dedent(inspect.getsource(workload.adjoint)))
    pushed, shapes, after = generated_pushes(generated)
    gradient = sg.grad(workload.forward, wrt=workload.wrt)
    gradient(*args)
    workload.adjoint(*args)
    return {
        "pushed": len(pushed), "values": pushed, "shapes": shapes, "after": after,
        "hand values": hand_pushes(hand),
        "push everything": len(generated_pushes(everything)[0]),
        "statements": statement_count(generated), "hand statements": statement_count(hand),
        "peak": peak_bytes(lambda: gradient(*args)), "hand peak": peak_bytes(lambda: workload.adjoint(*args)),
    }


def _code(values) -> str:
    return ", ".join(f"`{value}`" for value in values)


def _kilobytes(count: int) -> str:
    return f"{count / 1e3:,.0f} kB"


def _flag(ratio: float, target: float) -> str:
    return f"**{ratio:.2f}**" if ratio > target else f"{ratio:.2f}"


def table(results) -> str:
    """PUSHES.md: the two tables, ratios over the targets in bold."""
    lines = [
        "# What the gradients of the loop workloads keep and say",
        "",
        "Generated by `python -m benchmarks.pushes` (see its docstring for how each number is counted), at the",
        f"workloads' full sizes. Ratios over the targets of issue 14 (statements ≤ {STATEMENTS_TARGET}× the hand",
        f"adjoint's, peak memory ≤ {MEMORY_TARGET}×) are in bold.",
        "",
        "## Values pushed per loop iteration, and statements",
        "",
        "| workload | pushed per iteration (s2sgrad) | of which shape records | pushed once after the loop "
        "| pushed per iteration (hand-written) | pushed per iteration (push everything) "
        "| statements (s2sgrad) | statements (hand-written) | ratio | what s2sgrad pushes "
        "| what the hand-written adjoint keeps |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|---|",
    ]
    for workload, r in results:
        ratio = r["statements"] / r["hand statements"]
        lines.append(f"| {workload.key} {workload.name} | {r['pushed']} | {r['shapes']} | {r['after']} "
                     f"| {len(r['hand values'])} | {r['push everything']} | {r['statements']} "
                     f"| {r['hand statements']} | {_flag(ratio, STATEMENTS_TARGET)} "
                     f"| {_code(r['values'])} | {_code(r['hand values'])} |")
    lines += [
        "",
        "## Peak memory of one gradient call",
        "",
        "| workload | s2sgrad | hand-written | ratio |",
        "|---|--:|--:|--:|",
    ]
    for workload, r in results:
        ratio = r["peak"] / r["hand peak"]
        lines.append(f"| {workload.key} {workload.name} | {_kilobytes(r['peak'])} | {_kilobytes(r['hand peak'])} "
                     f"| {_flag(ratio, MEMORY_TARGET)} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    keys = (argv if argv is not None else sys.argv[1:]) or LOOP_WORKLOADS
    results = []
    for key in keys:
        results.append((BY_KEY[key], measure(BY_KEY[key])))
        print(key, {k: v for k, v in results[-1][1].items() if "values" not in k}, flush=True)
    text = table(results)
    if keys == LOOP_WORKLOADS:
        Path(__file__).with_name("PUSHES.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
