"""The message templates of every error s2sgrad raises, read from its source: each call constructing an
`S2SGradError` subclass, or of a helper that makes one (``lowerer.error(...)``, ``refuse(...)``), whose message
is written out (a string or an f-string, its replacement fields shown as ``…``).

    >>> any(t.message == "generators and coroutines are not supported" for t in templates())
    True
"""
import ast
import functools
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "s2sgrad"
ERRORS = {"S2SGradError", "UnsupportedSyntax", "NoDerivativeRule", "NonScalarOutput", "WrtError", "SourceNotFound",
          "RuleTemplateError"}
HELPERS = {"error", "refuse", "unsupported", "error_at"}       # functions and methods that make or raise one
HOLE = "…"


@dataclass(frozen=True)
class Template:
    message: str
    kind: str            # the error class, or "" where a helper makes it
    module: str          # s2sgrad/frontend/calls.py
    hint: str


def text(node) -> str | None:
    """The text a string or f-string expression writes, its replacement fields as `HOLE`; None for others."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else HOLE for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = text(node.left), text(node.right)
        return None if left is None and right is None else (left or HOLE) + (right or HOLE)
    return None


def _called(node) -> str | None:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


@functools.cache
def templates() -> tuple[Template, ...]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = _called(node)
            if name not in ERRORS and name not in HELPERS:
                continue
            message = text(node.args[0])
            if message is None or message == HOLE:
                continue
            hints = [text(a) for a in node.args[2:3]] + [text(k.value) for k in node.keywords if k.arg == "hint"]
            found.append(Template(message, name if name in ERRORS else "", str(path.relative_to(PACKAGE.parent)),
                                  next((h for h in hints if h), "")))
    return tuple(found)
