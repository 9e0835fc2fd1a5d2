"""docs/schema.md's reference is generated from the model (distdoctor/model/schemadoc.py) and says what
``to_json`` writes: every key, each with its meaning. Pure and fast."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from distdoctor.model import Diagnosis, Finding, JobEvent, Status, Weighed
from distdoctor.model.schemadoc import CLASSES, DERIVED, OPTIONAL, field_comments, schema_markdown, update
from test_model_json import _run_diagnosis

DOC = Path(__file__).resolve().parent.parent / "docs" / "schema.md"


def test_the_reference_in_docs_is_current():
    text = DOC.read_text()
    assert schema_markdown() in text, ("docs/schema.md is out of date: run "
                                       "`python -m distdoctor.model.schemadoc --update docs/schema.md`")
    assert update(text) == text


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_key_has_a_meaning(cls):
    comments = field_comments(cls)
    for f in dataclasses.fields(cls):
        assert comments.get(f.name) or (cls, f.name) in DERIVED, f"{cls.__name__}.{f.name}: add a # comment"


def _examples() -> dict[type, object]:
    d = dataclasses.replace(_run_diagnosis(), interrupted="SIGINT")
    a = d.attempts[0]
    f = dataclasses.replace(a.root_cause, candidates=("worker:0", "worker:1"), probability=0.9,   # every key set
                            weighed=(Weighed("E a line", "worker:1", "worker-1.log:3", 0.2),))
    return {Diagnosis: d, type(d.tasks["worker:0"]): d.tasks["worker:0"], Finding: f, type(f.evidence[0]): f.evidence[0],
            type(f.alternatives[0]): f.alternatives[0], type(a): a, type(a.resumed_from): a.resumed_from,
            type(a.reached): a.reached, type(d.goodput): d.goodput, type(d.goodput.badput): d.goodput.badput,
            type(d.goodput.attempts[0]): d.goodput.attempts[0], JobEvent: JobEvent(1.0, None, "attempt", "x"),
            Weighed: f.weighed[0]}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_the_reference_lists_what_to_json_writes(cls):
    obj = _examples()[cls]
    documented = {f.name for f in dataclasses.fields(cls)} | {k for c, k in DERIVED if c is cls}
    assert set(obj.to_json()) == documented


def test_optional_keys_are_the_ones_left_out_when_empty():
    full = _examples()[Finding]
    f = Finding("DD1", full.category, full.severity, None, "s")
    assert set(full.to_json()) - set(f.to_json()) == OPTIONAL[Finding]
    d = Diagnosis(Status.FAILED, None, (), 0.0)
    assert set(_examples()[Diagnosis].to_json()) - set(d.to_json()) == OPTIONAL[Diagnosis]
    alt = full.alternatives[0]
    assert set(alt.to_json()) - set(dataclasses.replace(alt, settle=None).to_json()) == OPTIONAL[type(alt)]
