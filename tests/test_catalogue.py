import re
from pathlib import Path

from distdoctor.catalogue import CODE_FORMAT, code_key
from distdoctor.rulebook import all_rules, render_markdown
from distdoctor.model import Category


def test_codes_are_stable_and_documented():
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules)
    for r in rules:
        assert re.fullmatch(CODE_FORMAT, r.code) and re.fullmatch(r"DD\d{3,4}", r.code)
        assert isinstance(r.category, Category)
        assert r.detects and r.why and r.evidence and r.remedy


def test_codes_sort_by_number():
    """Four-digit codes (DD1000+) come after DD999 in the catalogue, not between DD100 and DD101."""
    assert sorted(["DD1000", "DD101", "DD999", "DD100"], key=code_key) == ["DD100", "DD101", "DD999", "DD1000"]
    codes = [r.code for r in all_rules()]
    assert [int(c[2:]) for c in codes] == sorted(int(c[2:]) for c in codes)
    assert any(len(c) == 6 for c in codes)


def test_docs_are_generated_from_the_catalogue():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text()
    assert doc.strip() == render_markdown().strip(), "run: distdoctor rules --markdown > docs/rules.md"


def test_rules_carry_their_rank_and_role():
    """The engine's tie-break order and its hang/own-failure sets come from the rules themselves (no parallel lists)."""
    from distdoctor.catalogue import codes_with_role, priority
    from distdoctor.rulebook import all_rules
    from distdoctor.diagnose import engine
    rules = {r.code: r for r in all_rules()}
    assert engine.PRIORITY == priority()
    for code in ("DD151", "DD152", "DD153", "DD156"):
        assert rules[code].rank is not None, code
    assert codes_with_role("hang") >= {"DD150", "DD151", "DD152", "DD153", "DD201", "DD202", "DD203", "DD204"}
    assert all(rules[c].rank is not None for c in codes_with_role("hang") | codes_with_role("own_failure"))
