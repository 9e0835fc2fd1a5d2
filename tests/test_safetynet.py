"""The safety net (distdoctor/diagnose/logs/safetynet.py): a log whose lines read as errors is never
"no evidence of a failure", and a healthy log that merely says "error" somewhere does not become a failure."""
from __future__ import annotations

from pathlib import Path

import pytest

from logtext import diagnose_texts
from distdoctor.diagnose.logs.words import tokens



def diagnose(text: str, tmp: Path, name: str = "output.log"):
    return diagnose_texts({name: text}, tmp)


@pytest.mark.parametrize("text", [
    # a glog E line of a component whose message the knowledge base does not hold
    "I1126 10:00:00.000000 4242 main.cc:10] starting\n"
    "E1126 10:00:01.000000 4242 frobnicator.cc:88] Frobnicator could not attach to the shared ledger\n"
    "E1126 10:00:01.500000 4242 frobnicator.cc:90] second complaint\n",
    # Python logging's ERROR level
    "INFO:root:epoch 1 starting\nERROR:trainer:the gradient service refused the batch (code 7)\n",
    # a launcher's word for a failure
    "launching 4 ranks\nworkload step 'prepare-shards' failed after 3 attempts\n",
    # a non-zero exit of an unknown wrapper
    "running job\nwrapper: child exited with code 3\n",
])
def test_an_unknown_error_line_is_a_low_confidence_failure(tmp_path, text):
    d = diagnose(text, tmp_path)
    rc = d.root_cause
    assert d.status.value == "failed" and rc.code == "DD160" and rc.confidence == "low", rc
    assert "not in the knowledge base" in rc.summary
    first = [ln for ln in text.splitlines() if ln.startswith(("E", "ERROR", "workload", "wrapper"))][0]
    assert rc.evidence[0].text.strip() == first.strip()
    assert len(rc.alternatives) <= 3 and all(a.settle for a in rc.alternatives)
    assert rc.category not in {a.category for a in rc.alternatives}


@pytest.mark.parametrize("text", [
    # levels below error that mention errors
    "WARNING:tensorflow:There was an error reading the summary, retrying\nINFO:tensorflow:loss = 0.3, step = 100\n",
    "W1126 10:00:00.000000 4242 x.cc:1] failed to read the optional config; using defaults\n",
    "2026-11-26 10:00:00.000001: I tensorflow/core/x.cc:1] Connect failed once; retrying\n",
    # counts of nothing
    "tests: 42 passed, 0 failed\nno errors found\n",
    # a level line that only opens a block, and the harmless message of it (TF's 'never used' object warning)
    "ERROR:tensorflow:==================================\n"
    "Object was never used (type <class 'tensorflow.python.ops.tensor_array_ops.TensorArray'>):\n",
])
def test_lines_that_do_not_read_as_errors_are_no_failure(tmp_path, text):
    d = diagnose(text, tmp_path)
    assert d.status.value in ("unknown", "succeeded"), d.root_cause


def test_no_evidence_counts_the_lines_it_read(tmp_path):
    """"No evidence of a failure" says how many lines were read, in words that fit the number."""
    assert _summary(diagnose("Epoch 1/2\n", tmp_path)).endswith("(1 line read)")
    assert _summary(diagnose("Epoch 1/2\nEpoch 2/2\n", tmp_path)).endswith("(2 lines read)")


def _summary(d) -> str:
    return d.root_cause.summary if d.root_cause is not None else d.summary


def test_an_error_the_task_trained_past_is_no_failure(tmp_path):
    text = ("ERROR:loader:shard 3 could not be read, skipping it\n"
            "Epoch 1/2\n100/100 [==============================] - 3s 30ms/step - loss: 0.51\n"
            "Epoch 2/2\n100/100 [==============================] - 3s 30ms/step - loss: 0.42\n")
    assert diagnose(text, tmp_path).status.value in ("unknown", "succeeded")


def test_a_job_recorded_as_succeeded_is_not_failed_by_an_old_error(tmp_path):
    text = ('    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    1\n'
            '{"message":"TFJob default/mnist successfully completed.","reason":"TFJobSucceeded","type":"Succeeded"}\n')
    assert diagnose(text, tmp_path).status.value != "failed"


def test_the_words_of_a_line_split_camel_and_snake_case():
    assert tokens("ResourceExhaustedError: OOM")[:3] == ["resourceexhaustederror", "resource", "exhausted"]
    assert "exhausted" in tokens("ResourceExhaustedError: OOM") and "the" not in tokens("the worker_group_id")
