"""The examples in the package's docstrings run and print what they say."""
import doctest
import importlib
import pkgutil

import pytest

import s2sgrad
from s2sgrad.rules import registry

MODULES = sorted(info.name for info in pkgutil.walk_packages(s2sgrad.__path__, "s2sgrad.")
                 if info.name != "s2sgrad.__main__")                   # importing it runs the command line


@pytest.fixture
def rule_table_kept():
    """The registry's examples register rules of their own: the table is put back after them."""
    tables = [registry._RULES, registry._TANGENT_ONLY, registry._NONDIFFERENTIABLE]
    saved, optional = [dict(table) for table in tables], list(registry._OPTIONAL)
    yield
    for table, before in zip(tables, saved):
        table.clear()
        table.update(before)
    registry._OPTIONAL[:] = optional          # (SciPy's rules, if loaded meanwhile, are loaded again when needed)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, rule_table_kept):
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert failures == 0


def test_every_module_is_in_the_design_documents_table():
    """One row per module (``frontend/lower.py``), a package's own row (``runtime/``) standing for its
    ``__init__``; the rule tables share the row of ``rules/``."""
    import importlib.util
    from pathlib import Path
    design = (Path(__file__).parent.parent / "docs" / "design.md").read_text()
    for name in MODULES:
        parts = name.split(".")[1:]
        if parts[0] == "rules":
            assert "| `rules/` |" in design
            continue
        if importlib.util.find_spec(name).submodule_search_locations is not None:     # a package
            assert f"| `{'/'.join(parts)}/" in design, name
            continue
        assert f"| `{'/'.join(parts)}.py` |" in design, name
