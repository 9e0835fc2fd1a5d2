"""Labelled case folders -- the development corpus (tests/realworld/realworld-dev) and the probe sets
(tests/probes/fragments, tests/probes/blind): one way to list them, diagnose a case as a user would (the case's
files, no --task-map) and judge the verdict against its label. Used by the three case tiers and by
benchmarks/bench_realworld.py."""
from __future__ import annotations

import json
import re
from pathlib import Path

from distdoctor.diagnose.command import diagnose_paths

# the older corpus cases listed as lacking the deciding line: the corpus README's "Gaps and caveats" (dev_042, 043,
# 050, 051, 054, 057) and tests/test_realworld_corpus.py's KNOWN_GAPS as written before the third round (dev_012:
# the same hostname on two machines is known only from the thread; dev_028: the traceback stops before its exception)
OLD_WITHOUT_DECISIVE = frozenset({"dev_012", "dev_028", "dev_042", "dev_043", "dev_050", "dev_051", "dev_054",
                                  "dev_057"})


def case_names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if (p / "case.json").exists())


def label(case_dir: Path) -> dict:
    return json.loads((case_dir / "case.json").read_text())


def judge(case_dir: Path, *, learned: bool = True) -> dict:
    """The verdict on one case beside its label. ``culprit_ok`` is None when the label names no culprit; a list label
    is right when any of its tasks is named. ``learned`` False: the hand-written reasoning's alternatives."""
    lab = label(case_dir)
    logs = sorted(str(p) for p in case_dir.iterdir() if p.name != "case.json")
    diag, _ = diagnose_paths(logs, detected_at=0.0, learned=learned)
    rc = diag.root_cause
    got_cat = rc.category.value if rc is not None else "other"
    got_cul = rc.culprit if rc is not None else None
    want = lab["culprit"]
    wants = want if isinstance(want, list) else ([want] if want else [])
    alts = [a.category.value for a in rc.alternatives] if rc is not None else []
    others = [a for a in alts if a != got_cat]
    return {"case": case_dir.name, "shape": lab.get("shape"), "want": lab["category"], "got": got_cat,
            "alternatives": alts, "top3_ok": lab["category"] in [got_cat] + others[:2],
            "any_ok": lab["category"] in [got_cat] + others[:3], "code": rc.code if rc is not None else None,
            "source": lab.get("source"), "decisive": lab.get("decisive", "unlisted") is not None,
            "want_culprit": want, "got_culprit": got_cul, "status": diag.status.value,
            "confidence": rc.confidence if rc else None, "summary": (rc.summary if rc else "") or "",
            "evidence": len(rc.evidence) if rc else 0,
            "category_ok": got_cat == lab["category"], "culprit_ok": (got_cul in wants) if wants else None,
            "culprit_named": any(log_names(case_dir, t) for t in wants) if wants else None}


def log_names(case_dir: Path, task: str) -> str | None:
    """Whether a case's logs name the task ``task`` (``"worker:1"``, ``"rank:3"``), read by the benchmark on its own
    (never by the reading under test): the log file is that task's (``worker-1.log``), or a line names it the way the
    stack does -- ``/job:worker/replica:0/task:1``, ``worker-1``/``worker:1``/``worker 1``, TF_CONFIG's ``"type":
    "worker", "index": 1``; for a rank ``rank 3``/``Rank 3``/``rank=3``, mpirun's ``[1,3]<``, Ray's ``world_rank=3``,
    Slurm's ``task 3``. The text that names it, or None: the figure "culprit where the log names one" (issue 25)."""
    kind, _, n = task.partition(":")
    files = [p for p in sorted(case_dir.iterdir()) if p.name != "case.json"]
    own = next((p.name for p in files if p.name.startswith(f"{kind}-{n}.")), None)
    if own is not None:
        return own
    text = "\n".join(p.read_text(errors="replace") for p in files)
    if kind == "rank":
        pats = [rf"\brank[\s:=#\[(]*{n}\b", rf"\[1,{n}\]<", rf"\bworld_rank=\s*{n}\b", rf"\btask {n}\b"]
    elif kind == "launcher":
        pats = [r"\blauncher\b"]
    else:
        pats = [rf"/job:{kind}(?:/replica:\d+)?/task:{n}\b", rf"\b{kind}[-_:]{n}\b", rf"\b{kind} {n}\b",
                rf"[\"']type[\"']:\s*[\"']{kind}[\"'],\s*[\"']index[\"']:\s*{n}\b"]
    for pat in pats:
        m = re.search(pat, text, re.IGNORECASE)
        if m:
            return m.group(0)
    return None


def case_params(names: list[str], known: dict[str, str], loose: dict[str, str] | None = None) -> list:
    """pytest parameters, a case listed in ``known`` as a strict xfail with its reason; one in ``loose`` (a case the
    learned reading decides, whose pick can follow a rebuild) as an xfail that may pass."""
    import pytest
    loose = loose or {}
    return [pytest.param(c, marks=pytest.mark.xfail(reason=known[c], strict=True)) if c in known else
            pytest.param(c, marks=pytest.mark.xfail(reason=loose[c], strict=False)) if c in loose else c
            for c in names]
