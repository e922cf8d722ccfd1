"""The code blocks of a Markdown page, and running them as a reader would.

A page's ```` ```python ```` blocks run in order, in one namespace, each saved as a file first (s2sgrad reads a
function's source), so that a later block uses what an earlier one defined. An HTML comment on the line
before a block's fence says what else the block is (GitHub and MkDocs show no comment):

- ``<!-- output -->``: what the page's code printed since the previous output block (any fence);
  ``...`` matches any text, as in doctest. What the code prints after the last output block is an error;
- ``<!-- file: example.py -->``: the block runs saved under that name (generated code names its file);
- ``<!-- excerpt: path/in/repo -->``: the block's lines are lines of that file, in order; not run.

``python tests/doc_blocks.py PAGE.md ...`` runs each page in a directory of its own under the current one, with
the rule table as it was before the page, and prints, for each, a JSON line ``[page, differences]`` (the
differences empty where the page is right).
"""
from __future__ import annotations

import contextlib
import doctest
import io
import json
import os
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parent.parent
_FENCE = re.compile(r"^(?:<!-- (?P<marker>[a-z]+)(?:: (?P<arg>\S+))? -->\n)?```(?P<lang>\w*)\n(?P<text>.*?)^```$",
                    re.MULTILINE | re.DOTALL)


@dataclass
class Block:
    kind: str            # "code", "output", "excerpt" or "other" (a fence of another language, not checked)
    text: str
    line: int            # the line of the page the fence opens on
    arg: str | None = None


def blocks(markdown: str) -> list[Block]:
    """The page's fenced blocks, each with what its marker says it is."""
    found = []
    for match in _FENCE.finditer(markdown):
        marker, lang = match["marker"], match["lang"]
        line = markdown.count("\n", 0, match.start("lang")) + 1
        if marker in ("output", "excerpt"):
            kind = marker
        elif marker not in (None, "file"):
            raise ValueError(f"line {line}: unknown marker {marker!r}")
        else:
            kind = "code" if lang == "python" else "other"
        found.append(Block(kind, match["text"], line, match["arg"]))
    return found


def excerpt_mismatch(block: Block) -> str | None:
    """The first line of an excerpt block that is not, in order, a line of the file it names."""
    lines = iter((ROOT / block.arg).read_text().splitlines())
    for wanted in block.text.splitlines():
        if not any(line == wanted for line in lines):
            return wanted
    return None


def run_page(path: Path) -> list[str]:
    """Run the page's code blocks in the current directory; the differences between what they print and
    its output blocks (empty if none)."""
    namespace: dict = {"__name__": "__main__"}
    printed = io.StringIO()
    problems = []
    for number, block in enumerate(blocks(path.read_text())):
        if block.kind == "code":
            file = Path(block.arg or f"{path.stem.lower()}_{number}.py").absolute()
            file.write_text(block.text)
            try:
                with contextlib.redirect_stdout(printed):
                    exec(compile(block.text, str(file), "exec"), namespace)
            except Exception:                         # noqa: BLE001 - the page's code fails: say how, stop
                return problems + [f"{path.name}:{block.line}: the code raises\n{traceback.format_exc()}"]
        elif block.kind == "output":
            got, printed = printed.getvalue().rstrip() + "\n", io.StringIO()
            if not doctest.OutputChecker().check_output(block.text.rstrip() + "\n", got, doctest.ELLIPSIS):
                problems.append(f"{path.name}:{block.line}: the output shown\n{block.text}\nis not what runs"
                                f"\n{got}")
    if printed.getvalue():
        problems.append(f"{path.name}: the code prints what the page does not show:\n{printed.getvalue()}")
    return problems


@contextlib.contextmanager
def rules_kept():
    """The rules a page registers (`sg.adjoint(np.sin)`, a rule of its own function) are taken back after it."""
    from s2sgrad.rules import registry
    tables = [registry._RULES, registry._TANGENT_ONLY, registry._NONDIFFERENTIABLE]
    saved, optional = [dict(table) for table in tables], list(registry._OPTIONAL)
    try:
        yield
    finally:
        for table, before in zip(tables, saved):
            table.clear()
            table.update(before)
        registry._OPTIONAL[:] = optional       # (SciPy's rules, if the page loaded them, load again when needed)


if __name__ == "__main__":
    for page in sys.argv[1:]:                      # each page in a directory of its own, named after it
        os.makedirs(Path(page).stem, exist_ok=True)
        os.chdir(Path(page).stem)
        with rules_kept():
            print(json.dumps([page, run_page(Path(page).absolute())]), flush=True)
        os.chdir("..")
