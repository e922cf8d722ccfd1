"""The README's and the documentation pages' code runs and prints what the pages show (`doc_blocks` says how
a page marks its blocks); excerpts are lines of the files they name.

The pages run one after another in a process of their own, each in a fresh directory and namespace, with the
rules it registers taken back after it: a page may register rules without changing what other pages or
tests see. ``docs/errors.md`` is checked by its own test.
"""
import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest
from doc_blocks import ROOT, blocks, excerpt_mismatch

PAGES = ["README.md", "docs/design.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "tutorials").glob("*.md"))]


def test_the_pages_are_found():
    assert len(PAGES) >= 5


@pytest.fixture(scope="module")
def differences(tmp_path_factory) -> dict:
    """What each page's code printed that the page does not show, running every page in one process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "doc_blocks.py"), *(str(ROOT / p) for p in PAGES)],
                          cwd=tmp_path_factory.mktemp("pages"), env=env, capture_output=True, text=True, timeout=300)
    found = dict(json.loads(line) for line in done.stdout.splitlines())
    return {page: found.get(str(ROOT / page), [f"did not run: {done.stderr}"]) for page in PAGES}


@pytest.mark.parametrize("page", PAGES)
def test_code_prints_what_the_page_shows(page, differences):
    assert not differences[page], "\n".join(differences[page])


@pytest.mark.parametrize("page", PAGES)
def test_excerpts_are_lines_of_their_files(page):
    for block in blocks((ROOT / page).read_text()):
        if block.kind == "excerpt":
            assert excerpt_mismatch(block) is None, f"{page}:{block.line}: {excerpt_mismatch(block)!r}"


def test_the_readme_shows_what_its_example_prints():
    """The README's example prints the gradient's value and the code that computed it."""
    readme = blocks((ROOT / "README.md").read_text())
    assert [block.kind for block in readme[1:5]] == ["code", "output", "code", "output"]
    assert "args=(0.7, 3)" in readme[3].text and "def df_dx(x, n, dy=1.0):" in readme[4].text


def test_the_site_has_every_page():
    """mkdocs.yml's navigation lists every page under docs/ (and the home page, made from the README)."""
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert pages | {"index.md"} == set(re.findall(r": (\S+\.md)$", nav, re.MULTILINE))


def test_the_memory_plot_measures_what_the_tutorial_says():
    """docs/memory_plot.py's loops: storing keeps more than recomputing, which keeps more than checkpointing,
    and the checkpointed loop's peak does not grow with the trip count."""
    spec = importlib.util.spec_from_file_location("memory_plot", ROOT / "docs" / "memory_plot.py")
    memory_plot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(memory_plot)
    store_all, recomputed, checkpointed = memory_plot.LOSSES.values()
    peaks = {loss: [memory_plot.peak_bytes(loss, n, size=100) for n in (40, 80)]
             for loss in (store_all, recomputed, checkpointed)}
    assert peaks[store_all][1] > peaks[recomputed][1] > peaks[checkpointed][1]
    assert peaks[store_all][1] - peaks[store_all][0] > 2.5 * 40 * 800            # three arrays a trip
    assert peaks[checkpointed][1] < 1.1 * peaks[checkpointed][0]


def test_doctest_examples_in_docstrings_become_code_blocks():
    """The site's hook fences doctest lines, so that the API reference shows them as code (and a list a
    doctest prints is no Markdown link)."""
    pytest.importorskip("mkdocs")
    import markdown
    spec = importlib.util.spec_from_file_location("doctest_blocks", ROOT / "docs" / "hooks" / "doctest_blocks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    text = "A tracker.\n\n>>> [t.step() for _ in range(2)]\n[Snapshot(slot=0), None]\n\nAfter.\n\n```python\n>>> kept\n```"
    html = markdown.markdown(text, extensions=["fenced_code", hooks.DoctestBlocks()])
    assert '<pre><code class="language-pycon">&gt;&gt;&gt; [t.step() for _ in range(2)]\n[Snapshot(slot=0), None]' in html
    assert "<p>After.</p>" in html and html.count("<pre>") == 2
