"""Every real case's label keeps the corpus rules (tests/realworld/realworld-dev/README.md): a valid category slug,
its ``decisive`` text verbatim in its logs, and no thread used twice (one case per source)."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from distdoctor.model import Category

REAL = Path(__file__).resolve().parent / "realworld"
CASES = sorted(p for p in REAL.glob("*/*") if (p / "case.json").exists())
SLUGS = {c.value for c in Category}


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_a_case_is_labelled_by_the_rules(case):
    label = json.loads((case / "case.json").read_text())
    assert label["category"] in SLUGS
    text = "\n".join(p.read_text(errors="replace") for p in case.iterdir() if p.name != "case.json")
    decisive = label.get("decisive") or []
    missing = [d for d in ([decisive] if isinstance(decisive, str) else decisive) if d not in text]
    assert not missing, f"decisive lines not verbatim in the logs: {missing}"


def test_no_thread_gives_two_cases():
    sources = Counter(json.loads((c / "case.json").read_text())["source"].strip().lower() for c in CASES)
    assert len(CASES) >= 200 and not [s for s, n in sources.items() if n > 1]
