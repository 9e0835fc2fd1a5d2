"""Blind probe set (tests/probes/blind, README there): 50 logs of the kinds posted in public threads about distributed
TF / Horovod+TF / TFJob / Slurm / TensorFlowOnSpark failures, written without looking at the rules, diagnosed as a
user would (`diagnose_paths` on the case's files, no --task-map). Category and culprit are asserted.

KNOWN lists the misses at first sight (strict xfail: fixing one flags here, then take it out of KNOWN). The set is a
measurement, not a target: do not tune rules to these cases (see the README)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from distdoctor.diagnose.command import diagnose_paths

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "probes" / "blind"
CASES = sorted(p.name for p in CORPUS.iterdir() if (p / "case.json").exists())

KNOWN: dict[str, str] = {
}


def _params():
    return [pytest.param(c, marks=pytest.mark.xfail(reason=KNOWN[c], strict=True)) if c in KNOWN else c
            for c in CASES]


@pytest.mark.parametrize("case", _params())
def test_blind_case(case):
    label = json.loads((CORPUS / case / "case.json").read_text())
    files = sorted(str(p) for p in (CORPUS / case).iterdir() if p.name != "case.json")
    diag, _ = diagnose_paths(files, detected_at=0.0)
    rc = diag.root_cause
    got = rc.category.value if rc is not None else "other"
    assert got == label["category"], (rc.summary if rc else diag.status)
    want = label["culprit"]
    if want:
        wants = want if isinstance(want, list) else [want]
        assert rc.culprit in wants, (rc.culprit, rc.summary)


def test_known_misses_are_cases():
    assert set(KNOWN) <= set(CASES)
