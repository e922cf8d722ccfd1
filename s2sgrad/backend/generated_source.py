"""The text of a generated module, with the user's line each of its lines came from.

`Source` is a ``str`` (what ``sg.source`` always returned: it prints as plain Python), which also holds
`origins`, the full line map: every generated line that is part of a statement -> the user's `Location`
it came from (the printed comments name only the first statement of each user line). In Jupyter it
displays highlighted (`_repr_html_`, `_repr_markdown_`), in IPython's terminal as plain text
(`_repr_pretty_`); `annotated` prints each line with its origin.

    >>> from s2sgrad.errors import Location
    >>> where = Location("/src/f.py", 2, 4, "y = np.sin(x)")
    >>> text = Source("def df_dx(x):\\n    t = np.cos(x)  # f.py:2\\n    return t\\n", {2: where, 3: where})
    >>> print(text.annotated())
    def df_dx(x):
        t = np.cos(x)    # f.py:2  y = np.sin(x)
        return t         # f.py:2  y = np.sin(x)
    >>> text.origin(3).line
    2
"""
from __future__ import annotations

import html
import io
import keyword
import linecache
import os
import token
import tokenize

from ..errors import Location

# The colours of the HTML display (those of a common light theme).
_STYLES = {"keyword": "color:#008000;font-weight:bold", "string": "color:#ba2121", "comment": "color:#408080;"
           "font-style:italic", "number": "color:#666666", "builtin": "color:#008000"}
_BUILTINS = {"None", "True", "False", "print", "len", "range", "tuple", "list", "dict", "float", "int"}


class Source(str):
    """Generated Python source (a ``str``), with `origins`: generated line number -> the user's `Location`."""

    origins: dict[int, Location]

    def __new__(cls, text: str, origins: dict[int, Location] | None = None) -> "Source":
        self = super().__new__(cls, text)
        self.origins = dict(origins or {})
        return self

    def origin(self, line: int) -> Location | None:
        """The user's line that generated line `line` (1-based) came from, or None (a header, a comment)."""
        return self.origins.get(line)

    def annotated(self) -> str:
        """The text with every line that came from the user's code followed by ``# file.py:N  <that line>``
        (instead of the comment the printed code gives the first of them)."""
        lines = self.splitlines()
        code = []
        for number, line in enumerate(lines, start=1):
            where = self.origins.get(number)
            if where is not None:
                line = line.removesuffix(f"  # {os.path.basename(where.filename)}:{where.line}")
            code.append(line.rstrip())
        width = max((len(line) for n, line in enumerate(code, start=1) if n in self.origins), default=0)
        out = []
        for number, line in enumerate(code, start=1):
            where = self.origins.get(number)
            if where is None:
                out.append(line)
                continue
            text = (where.text or linecache.getline(where.filename, where.line)).strip()
            out.append(f"{line:<{width}}    # {os.path.basename(where.filename)}:{where.line}  {text}".rstrip())
        return "\n".join(out) + "\n"

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        """IPython's terminal shows the code as it prints, not as a quoted string."""
        printer.text(str(self))

    def _repr_markdown_(self) -> str:
        return f"```python\n{self}```\n"

    def _repr_html_(self) -> str:
        return f'<pre style="line-height:1.25">{highlighted(str(self))}</pre>'


def highlighted(text: str) -> str:
    """`text` (Python) as HTML, keywords, strings, comments and numbers coloured.

        >>> highlighted("return x < 1")
        '<span style="color:#008000;font-weight:bold">return</span> x &lt; <span style="color:#666666">1</span>'
    """
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    out, at = [], 0
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return html.escape(text)
    for tok in tokens:
        style = _style(tok)
        if style is None:
            continue
        start = offsets[tok.start[0] - 1] + tok.start[1]
        end = offsets[tok.end[0] - 1] + tok.end[1]
        out.append(html.escape(text[at:start]))
        out.append(f'<span style="{_STYLES[style]}">{html.escape(text[start:end])}</span>')
        at = end
    out.append(html.escape(text[at:]))
    return "".join(out)


def _style(tok: tokenize.TokenInfo) -> str | None:
    if tok.type == token.NAME:
        return "keyword" if keyword.iskeyword(tok.string) and tok.string not in _BUILTINS \
            else "builtin" if tok.string in _BUILTINS else None
    return {token.STRING: "string", token.COMMENT: "comment", token.NUMBER: "number"}.get(tok.type)
