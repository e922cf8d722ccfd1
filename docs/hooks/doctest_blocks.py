"""A MkDocs hook: doctest examples (``>>>`` lines and the output after them) in the docstrings the API reference
shows are code blocks, as they read in the source, not prose (where a printed list would read as a link)."""
import re

from markdown import Extension
from markdown.preprocessors import Preprocessor
from mkdocs.plugins import event_priority

_PROMPT = re.compile(r"^(\s*)>>> ")


class _DoctestPreprocessor(Preprocessor):
    """Fences each run of doctest lines: from a ``>>>`` line outside a fenced block to the next blank line."""

    def run(self, lines):
        out, fenced, indent = [], False, None          # indent: the open doctest's, None outside one
        for line in lines:
            if indent is not None:
                if line.strip():
                    out.append(line[len(indent):] if line.startswith(indent) else line.strip())
                    continue
                out.append("```")
                indent = None
            prompt = None if fenced else _PROMPT.match(line)
            if prompt:
                indent = prompt[1]
                out += ([""] if out and out[-1].strip() else []) + ["```pycon", line[len(indent):]]
                continue
            fenced ^= line.lstrip().startswith("```")
            out.append(line)
        return out + (["```"] if indent is not None else [])


class DoctestBlocks(Extension):
    def extendMarkdown(self, md):
        md.preprocessors.register(_DoctestPreprocessor(md), "doctest_blocks", 30)    # before fenced_code (25)


@event_priority(100)                              # before mkdocstrings reads the extensions
def on_config(config):
    config.markdown_extensions.append(DoctestBlocks())
    return config
