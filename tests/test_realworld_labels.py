"""Every real case's label keeps the corpus rules (tests/realworld/realworld-dev/README.md): a valid category slug,
shape and confidence, a log, its ``decisive`` text verbatim in its logs, and no thread used twice (one case per
source). (The per-batch ``check_cases.py`` scripts the collectors wrote did this for one batch each.)"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from distdoctor.model import Category

REAL = Path(__file__).resolve().parent / "realworld"
CASES = sorted(p for p in REAL.glob("*/*") if (p / "case.json").exists())
SLUGS = {c.value for c in Category}
SHAPES = {"fragment", "traceback", "mpirun", "kubectl", "slurm"}


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_a_case_is_labelled_by_the_rules(case):
    label = json.loads((case / "case.json").read_text())
    assert label["category"] in SLUGS
    assert label.get("shape") in SHAPES and label.get("confidence") in ("high", "medium", "low"), label
    logs = [p for p in case.iterdir() if p.name != "case.json"]
    assert logs, "a case without a log"
    text = "\n".join(p.read_text(errors="replace") for p in logs)
    decisive = label.get("decisive") or []
    missing = [d for d in ([decisive] if isinstance(decisive, str) else decisive) if d not in text]
    assert not missing, f"decisive lines not verbatim in the logs: {missing}"


_GITHUB = re.compile(r"^(?:https?://)?(?:www\.)?github\.com/([^/\s]+/[^/\s#]+)/(?:issues|pull|discussions)/(\d+)")


def thread_of(source: str) -> str:
    """One name per thread whichever way a case writes it: ``owner/repo#N`` and the thread's URL (an issue, a pull
    request or a discussion, with or without a comment anchor) are the same thread."""
    s = source.strip().lower()
    m = _GITHUB.match(s)
    if m:
        return f"{m.group(1)}#{m.group(2)}"
    return s.split("#")[0].rstrip("/") if s.startswith("http") else s


def test_one_thread_has_one_name():
    assert thread_of("https://github.com/Horovod/horovod/issues/2389#issuecomment-1") == "horovod/horovod#2389"
    assert thread_of("horovod/horovod#2389") == thread_of("https://github.com/horovod/horovod/pull/2389")
    assert thread_of("https://stackoverflow.com/questions/1/x#answer-2") == "https://stackoverflow.com/questions/1/x"


def test_no_thread_gives_two_cases():
    sources = Counter(thread_of(json.loads((c / "case.json").read_text())["source"]) for c in CASES)
    assert len(CASES) >= 200 and not [s for s, n in sources.items() if n > 1]


@pytest.mark.parametrize("case, task, says", [
    ("batch-2026-11-28-s9-tf/t9_005", "ps:0", "/job:ps/replica:0/task:0"),   # the device name TF prints
    ("batch-2026-11-28/rw_018", "rank:3", "[1,3]<"),                           # mpirun's rank prefix
    ("realworld-dev/dev_040", "worker:5", "worker:5"),
    ("realworld-dev/dev_210", "rank:1", "world_rank=1"),                    # Ray Train's context
    ("realworld-dev/dev_026", "rank:4", "task 4"),                          # Slurm's task id
    ("realworld-dev/dev_027", "worker:0", "worker-0.log"),                  # the task's own log
    ("batch-2026-11-28-s9-fail/f9_008", "rank:0", None),                    # a watchdog line that names no rank
    ("realworld-dev/dev_119", "rank:0", None),                              # "exiting!" from an unnamed rank
    ("batch-2026-11-28/rw_018", "rank:31", None),                              # not "rank 3" read as a prefix of 31
])
def test_the_culprit_figure_counts_a_task_only_where_the_log_names_it(case, task, says):
    from casedirs import log_names
    assert log_names(REAL / case, task) == says
