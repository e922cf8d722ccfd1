"""`docs/errors.md` lists every message s2sgrad raises and every error class; hints name the public API."""
import re
from pathlib import Path

import error_templates

import s2sgrad
from s2sgrad import errors
from s2sgrad.rules.registry import RuleTemplateError

TABLE = (Path(__file__).parent.parent / "docs" / "errors.md").read_text()


def listed(message: str) -> bool:
    escaped = message.replace("|", "\\|")
    return f"`{escaped}`" in TABLE or f"``{escaped}``" in TABLE


def test_every_message_is_in_the_error_table():
    missing = sorted({t.message for t in error_templates.templates() if not listed(t.message)})
    assert not missing, "docs/errors.md lacks:\n" + "\n".join(missing)


def test_every_error_class_has_a_section():
    classes = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.S2SGradError)]
    for cls in [*classes, RuleTemplateError]:
        assert f"\n## {cls.__name__}\n" in TABLE, cls.__name__


def test_the_table_is_plain_markdown():
    assert not re.search(r"<[a-z/][^>]*>", TABLE.replace("<s2sgrad", ""))


def test_hints_name_the_public_api():
    """``sg.f`` / ``s2sgrad.f`` in a message or hint names what ``import s2sgrad as sg`` exports."""
    for template in error_templates.templates():
        for text in (template.message, template.hint):
            for name in re.findall(r"\b(?:sg|s2sgrad)\.(\w+)", text):
                assert name in s2sgrad.__all__, f"{template.module}: {text}"
