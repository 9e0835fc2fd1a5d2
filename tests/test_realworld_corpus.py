"""Recorded-log tier: real failure logs quoted from public bug reports (tests/realworld/realworld-dev, a copy of the
shared development corpus), diagnosed as a user would -- `distdoctor diagnose` on the case's files, no --task-map.

A case that cannot be got right yet is listed in KNOWN_GAPS with its reason (strict xfail: fixing it flags here)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from casedirs import OLD_WITHOUT_DECISIVE, case_names, case_params, judge

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "realworld" / "realworld-dev"
CASES = case_names(CORPUS)

# The old rounds' gaps: the decisive fact is not in the posted lines.
KNOWN_GAPS = {
    "dev_012": "two NCCL INFO lines ('0 -> 1 via P2P/IPC') are all there is; that the two ranks are on different "
               "machines with the same hostname is known only from the thread",
    "dev_051": "the only line is a TF_CONFIG; the wrong cluster domain is known only from the thread",
    "dev_054": "the log stops after normal start-up warnings; the auto-sharding hang is not visible in it",
    "dev_057": "the client's log ends before its cluster spec; the unstarted chief is known only from the thread",
}
# Third round (dev_101 and up), scored before anyone read them (29/69), then fixed with general knowledge. The misses
# left, one line each; "null" means the case's ``decisive`` is null (the log alone cannot settle it): those must
# come out low-confidence with the truth among the alternatives (checked below), not right.
KNOWN_GAPS.update({
    "dev_101": "null: nccl-tests aborts under mpirun; the mismatched NCCL builds are known only from the thread",
    "dev_106": "SIGILL from a binary built for a newer CPU: said version_mismatch (as the explanation reads it), "
               "label segfault_core_dump (the second reading, first alternative)",
    "dev_114": "a Slurm step cancelled with no reason (scancel): said preemption, the hang the user cancelled is the "
               "first alternative",
    "dev_115": "null: NCCL's bind failure says port_in_use (low); the exhausted ephemeral range is the alternative",
    "dev_118": "null: mpirun's abort alone; the GPU memory exhaustion is in no posted line",
    "dev_120": "null: NCCL INFO lines and then silence; the blocked port is known only from the thread",
    "dev_121": "a SIGSEGV in Horovod's extension: segfault_core_dump (high, wrong), the ABI mismatch an alternative",
    "dev_132": "Slurm's 'Requested node configuration is not available' reads as resource_exhaustion; label "
               "user_code_error (the job script's request; first alternative)",
    "dev_133": "a site's submit filter rejects '--gres' (the launcher is too old for the site): said user_code_error",
    "dev_134": "as dev_132: Slurm's impossible request, label user_code_error (first alternative)",
    "dev_208": "ImportError of libcuda.so.1 on some nodes only: version_mismatch, the nodes' differing setup is the "
               "alternative (one log cannot show the other nodes)",
    "dev_301": "null: TF1's wait for uninitialized variables (low), the unstarted chief first alternative",
    "dev_302": "null: worker:0 printed nothing; its wrong cluster spec is known only from the thread",
    "dev_303": "null: a TPU job that stops progressing while the TPU reports healthy; host OOM only from the thread",
    "dev_306": "null: a cut traceback; the ps's differing cluster spec is known only from the thread",
    "dev_313": "null: a remote eager context lost: a symptom; the TF version skew is in no posted line",
    "dev_316": "null: a remote call failed: a symptom; the thread concluded there was nothing to fix (other)",
})


# Cases whose category is right but whose culprit cannot be read from the posted log (asserted to stay wrong, so that
# fixing one flags here, like a strict xfail; their category is asserted like every other case's).
CULPRIT_GAPS = {
    "dev_043": "the 'WhereOp: Race condition' error (GPU memory exhausted in disguise) is on worker:1; the process that "
               "held the GPU's memory was ps:0, whose log was not posted",
    "dev_119": "Open MPI's 'Primary job terminated normally, but 1 process returned a non-zero exit code' names no "
               "rank; the unprefixed 'exiting!' was rank 0's",
    "dev_210": "Ray's preempted-node record names no rank; the worker's world_rank=1 is in an unrelated context dump",
}


# Cases only the learned reading decides (no signature names a cause: DD160), whose pick follows each rebuild of the
# model from a corpus that includes them: either way is no finding.
MODEL_DECIDED = {
    "dev_212": "DD160: the learned reading of an unknown line; other or version_mismatch by the rebuild",
    "dev_206": "DD160: TonY's NullPointerException; resource_exhaustion and oom_host tie (31 %) and swap by the rebuild",
    # the safety net's word model, removed in session 22, had learnt these two cases' own deciding lines (it was
    # trained on them); the learned reading ranks the truth first among the alternatives
    "dev_105": "DD160: Open MPI's 'OPAL ERROR: Error in file pmix3x_client.c': other (56 %), version_mismatch next",
    "dev_128": "DD160: NCCL's 'Socket creation failed : Address family not supported': other (48 %), "
               "network_unreachable next",
}


@pytest.mark.parametrize("case", case_params(CASES, KNOWN_GAPS, MODEL_DECIDED))
def test_realworld_case(case):
    r = judge(CORPUS / case)
    assert r["category_ok"], r
    if case in CULPRIT_GAPS:
        assert r["culprit_ok"] is False, f"{case}: culprit now right, remove it from CULPRIT_GAPS"
    else:
        assert r["culprit_ok"] is not False, r
    if r["status"] in ("failed", "hung"):
        assert r["evidence"] and r["confidence"] in ("high", "medium", "low"), "a verdict quotes its first line, with confidence"


def _bench(*args: str) -> dict:
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_realworld.py"), "--json", *args],
                         capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return json.loads(out.stdout)


def test_corpus_accuracy_floor():
    """The figures the README quotes, as floors: categories and culprits on the whole corpus and on the cases whose
    log holds the deciding line (issue 18's targets: >= 90 % and >= 85 %)."""
    data = _bench()
    assert data["category_ok"] >= 100 and data["culprit_ok"] >= 17, {k: data[k] for k in data if k != "rows"}
    holds = data["decisive"]["holds"]
    assert holds["category_ok"] >= 0.88 * holds["cases"], holds
    assert holds["culprit_ok"] >= 0.85 * holds["culprit_cases"], holds


def test_calibration_on_the_labelled_pool():
    """High confidence is right >= 95 % of the time, and the truth is the verdict or one of its alternatives >= 90 %,
    and the truth among the verdict and its first two alternatives >= 90 %, over every labelled set: the corpus, the
    four blind rounds and the fragment probes."""
    data = _bench("--pool")
    high, right = data["confidence"]["high"]
    assert high >= 50 and right >= 0.95 * high, data["confidence"]
    assert data["top3_ok"] >= 0.90 * data["cases"], data["top3_ok"]
    assert data["any_ok"] >= 0.90 * data["cases"], data["any_ok"]


# the older cases the corpus README and the first KNOWN_GAPS list as lacking the deciding line (they carry no
# ``decisive``); benchmarks/bench_realworld.py counts them with the null ones


LACKING = [c for c in CASES if json.loads((CORPUS / c / "case.json").read_text()).get("decisive", "unlisted") is None
           or c in OLD_WITHOUT_DECISIVE]


@pytest.mark.parametrize("case", LACKING)
def test_a_case_whose_log_lacks_the_deciding_line_is_low_confidence(case):
    """A case whose log lacks the deciding line comes out with low confidence (a guess is never sold as more). A
    damaged checkpoint is no exception: what damaged it decides the category, and the line does not say."""
    r = judge(CORPUS / case)
    assert r["confidence"] in (None, "low"), r


def test_where_the_log_lacks_the_deciding_line_the_truth_is_listed():
    """... and the truth is the verdict or one of its alternatives, the learned next most probable causes, in every
    case but a few. (The hand-written usual causes listed it in all: they were written from these very cases; the
    fair comparison is cross-validated over the whole real corpus, benchmarks/RESULTS-model-cv.md.)"""
    learned = [judge(CORPUS / c)["any_ok"] for c in LACKING]
    missed = [c for c, ok in zip(LACKING, learned) if not ok]
    assert sum(learned) >= 0.9 * len(LACKING), missed


def test_pasted_fragment_on_stdin():
    """A fragment pasted without its Traceback header, on stdin, with no task named anywhere, is still diagnosed."""
    text = ("2019-07-07 06:48:49.161736: E tensorflow/core/common_runtime/ring_alg.cc:279] Aborting RingReduce with "
            "Out of range: [_Derived_]End of sequence\n")
    out = subprocess.run([sys.executable, "-m", "distdoctor", "diagnose", "--json", "-"], input=text,
                         capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 1, out.stderr
    d = json.loads(out.stdout)
    assert d["root_cause"]["category"] == "user_code_error" and d["root_cause"]["confidence"] in ("medium", "high")
    assert d["root_cause"]["evidence_detail"][0]["where"] == "<stdin>:1"


@pytest.mark.parametrize("text, status", [("hello, nothing to see\n", "unknown"),
                                          ("srun: error: node7: task 4: Out Of Memory\n", "failed")])
def test_html_report_of_a_fragment(tmp_path, text, status):
    """The incident report is written for a fragment too (no task lanes, no known writer)."""
    out = tmp_path / "r.html"
    p = subprocess.run([sys.executable, "-m", "distdoctor", "diagnose", "--json", "--html", str(out), "-"], input=text,
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.returncode in (0, 1), p.stderr
    html = out.read_text()
    assert html.lstrip().lower().startswith("<!doctype html>") and f'data-status="{status}"' in html
