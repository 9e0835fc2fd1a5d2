import re
from pathlib import Path

from distdoctor.catalogue import all_rules, render_markdown
from distdoctor.model import Category


def test_codes_are_stable_and_documented():
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules)
    for r in rules:
        assert re.fullmatch(r"DD\d{3}", r.code)
        assert isinstance(r.category, Category)
        assert r.detects and r.why and r.evidence and r.remedy


def test_docs_are_generated_from_the_catalogue():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text()
    assert doc.strip() == render_markdown().strip(), "run: distdoctor rules --markdown > docs/rules.md"
