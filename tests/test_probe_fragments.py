"""Fragment-probe tier: multi-line fragments of the kind users paste into public threads (tests/probes/fragments), where
the decisive line sits among noise -- start-up INFO lines, deprecation warnings, Keras progress bars, the cascade on
other ranks, a traceback, "[...]" cut markers, the user's own prints -- in the shapes of the held-out set: a bare
fragment, a Python traceback, mpirun/horovodrun interleaved output with ``[1,N]<stderr>:`` prefixes, kubectl
get/describe/logs output, Slurm (srun/slurmstepd plus task output).

Where tests/probes/messages.tsv tests VOCABULARY (does the tool know a message), this tier tests REASONING: which of many
alarming lines is the cause, which task wrote it, and whether a healthy run with alarming lines is left alone (the
negative controls, category ``other``).

Each case directory holds the log file(s) and a case.json with the same label fields as the development corpus
(category, culprit, shape) plus ``source`` (the real messages/situation it is built from) and ``note``. The lines were
written for this tier from what the tools print (TF's wheel strings, Horovod/NCCL/Open MPI/Kubernetes/Slurm message
texts), independently of tests/realworld and tests/probes/messages.tsv. Cases are diagnosed as a user would: the case's
files, no --task-map.

Score: ``.venv/bin/python benchmarks/bench_realworld.py tests/probes/fragments`` prints the figures per shape, the
confusion matrix and the misses.
First sight (before any change made for this tier): see the module constant FIRST_SIGHT.

A case that cannot be got right yet is listed in KNOWN with its reason (strict xfail: fixing it flags here)."""
from __future__ import annotations

from pathlib import Path

import pytest

from casedirs import case_names, case_params, judge, label as _label

ROOT = Path(__file__).resolve().parent / "probes" / "fragments"
CASES = case_names(ROOT)

FIRST_SIGHT = (
    "54 cases, scored on the code before any change for this tier: categories 41/54 (76 %) -- fragment 15/21, "
    "traceback 4/5, mpirun 10/15, kubectl 7/8, slurm 5/5; negative controls 7/11; culprits 16/20 where one is "
    "labelled (12/20 with the category right too). Three cases were then reworded to TF's exact strings (the "
    "task_id ValueError, the device-incarnation AbortedError, the ParameterServerStrategy coordinator's error) before "
    "any code change: 42/54. Round 2 (14 cases whose note starts 'round 2', written after the first fixes): "
    "categories 10/14 at first sight, culprits 5/6. Round 3 (12 cases, 'round 3', written after the round-2 fixes): "
    "categories 9/12 at first sight, culprits 6/6. After the fixes: 76/80 categories, 30/32 culprits; the 5 misses "
    "are in KNOWN. Round 4 (10 cases, 'round 4', written after the round-3 fixes): categories 6/10 at first sight, "
    "culprits 2/3. Round 5 (8 cases, 'round 5', written after the round-4 fixes): categories 4/8 at first sight, "
    "culprits 2/2. Round 6 (7 cases, 'round 6', written after the round-5 fixes): categories 2/7 at first sight, "
    "culprits 3/4. After all fixes: 98/105 categories, 37/41 culprits; the 8 misses are in KNOWN."
)

KNOWN: dict[str, str] = {
    "hvd-different-batch-sizes-args": "Horovod's 'Mismatched ALLREDUCE tensor shapes' reads the same whether ranks run "
                                      "different arguments or different code; the different batch sizes show only in "
                                      "the users' own argument prints, which no rule compares across ranks",
    "hvd-rank-finished-early-stall": "the missing rank's shorter epoch (372/372 against 390/390) and its own 'finished' "
                                     "print are the evidence; the fragment reasoning keeps no per-rank progress to "
                                     "compare, so the stall reads as a stuck rank",
    "nccl-connect-timed-out-firewall": "NCCL's own 'Connect to ... failed : Connection timed out' is read as NCCL having "
                                       "picked a wrong interface (network_unreachable, as messages.tsv "
                                       "network_unreachable-05 labels it); the security group is known only from the "
                                       "situation",
    "r2-neg-srun-step-retry": "the paste ends mid-training on every task; logs that stop mid-training are read as a "
                              "hang (the sigstop-early-foreign corpus case needs that), and a cut paste cannot be told "
                              "from a hang without the time it was taken",
    "r4-tf1-model-not-ready-chief-gone": "'Waiting for model to be ready ... Variables not initialized' reads the same "
                                         "when the chief is slow to initialise and when variables lie outside the "
                                         "chief's init op; the knowledge base reads it as the latter (user code)",
    "r6-neg-monitored-session-recovers": "the MonitoredSession recovery is read as such, but the paste then ends "
                                         "mid-training, which the logs' structural reading takes for a hang (as in "
                                         "r2-neg-srun-step-retry)",
    "r6-node-not-ready-pod-unknown": "NodeNotReady / pod Unknown is read as a lost node (peer_crashed, DD813 "
                                     "k8s-node-not-ready); whether the task is frozen or gone is not in the lines",
    "worker-fatal-python-segfault": "the worker index is only in the user's own print ('Running worker 0 of 2'); no "
                                    "rule reads a task from free text",
}


def label(case: str) -> dict:
    return _label(ROOT / case)


def test_fragment_cases_are_well_formed():
    from distdoctor.model import RUN_ONLY_CATEGORIES, Category
    slugs = {c.value for c in Category if c not in RUN_ONLY_CATEGORIES}   # no log shows what befell distdoctor
    assert set(KNOWN) <= set(CASES), set(KNOWN) - set(CASES)
    shapes = set()
    for case in CASES:
        lab = label(case)
        assert lab["category"] in slugs and lab["source"] and lab["note"], case
        shapes.add(lab["shape"])
        logs = [p for p in (ROOT / case).iterdir() if p.suffix == ".log"]
        assert logs and sum(p.read_text().count("\n") for p in logs) >= 4, f"{case}: a multi-line fragment"
    assert {label(c)["category"] for c in CASES} == slugs, "every category has cases"
    assert shapes == {"fragment", "traceback", "mpirun", "kubectl", "slurm"}
    assert sum(label(c)["category"] == "other" for c in CASES) >= 10, "at least 10 negative controls"


@pytest.mark.parametrize("case", case_params(CASES, KNOWN))
def test_fragment_case(case):
    r = judge(ROOT / case)
    assert r["category_ok"] and r["culprit_ok"] is not False, r
