"""A MkDocs hook: the site's home page is the repository's README.md, so that the two never differ."""
from pathlib import Path

from mkdocs.structure.files import File

README = Path(__file__).parent.parent.parent / "README.md"


def on_files(files, config):
    files.append(File.generated(config, "index.md", content=README.read_text()))
    return files
