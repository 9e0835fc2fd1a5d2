"""``distdoctor diagnose BUNDLE`` gives the run's verdict: the check, shared by the tests that have run bundles.

A run bundle holds the run's own verdict (``diagnosis.json``) beside the logs and records it reached it from.
``diagnose`` reasons again from those logs and the run's process records (exit codes, signals, pids, the hang the
supervisor declared: :mod:`distdoctor.diagnose.bundlefacts`); the two must name the same status, root-cause category
and culprit. :func:`assert_diagnose_agrees` runs the very function ``distdoctor diagnose BUNDLE --json`` runs
(:func:`~distdoctor.diagnose.command.diagnose_paths`) and compares.
"""
from __future__ import annotations

import json
import re
import shutil
from datetime import datetime, timedelta
from pathlib import Path

from distdoctor.diagnose.command import diagnose_paths
from distdoctor.model import Diagnosis

__all__ = ["Reading", "reading_of", "run_bundles", "assert_diagnose_agrees", "older_than_the_hang_record", "in_short",
           "read_later", "assert_read_order_does_not_matter"]

Reading = tuple[str, str | None, str | None]   # (status, root-cause category, culprit)


def reading_of(d: Diagnosis) -> Reading:
    root = d.root_cause
    return (d.status.value, root.category.value if root else None, root.culprit if root else None)


def in_short(d: dict) -> str:
    """A diagnosis (its JSON) in a few lines, first what decides: pytest cuts a long assertion message, so the code,
    summary, evidence and each task's end come before anything else."""
    root = d.get("root_cause") or {}
    lines = [f"{root.get('code')} {root.get('category')} culprit={root.get('culprit')}: {str(root.get('summary'))[:300]}"]
    lines += [f"  evidence: {str(e)[:240]}" for e in (root.get("evidence") or [])[:8]]
    tasks = d.get("tasks") or {}
    if isinstance(tasks, dict):
        lines.append("  tasks: " + "; ".join(f"{n} exit={t.get('exit_code')} signal={t.get('signal')} "
                                              f"calls={t.get('step_calls')}" for n, t in tasks.items() if isinstance(t, dict)))
    lines += [f"  finding: {f.get('code')} {f.get('category')} {f.get('culprit')} {f.get('severity')}"
              for f in (d.get("findings") or [])[:6] if isinstance(f, dict)]
    return "\n".join(lines)


def run_bundles(root: Path) -> list[Path]:
    """Every run bundle directly under ``root`` (a folder with ``diagnosis.json`` and ``logs/``), by name."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / "diagnosis.json").is_file() and (p / "logs").is_dir())


def older_than_the_hang_record(bundle_dir: Path) -> bool:
    """The bundle's run declared a hang but its ``events.jsonl`` does not carry the hang's shape (kind, culprits):
    written by a distdoctor from before that record, so no reading of the bundle can name the hang's culprit."""
    try:
        lines = (bundle_dir / "events.jsonl").read_text().splitlines()
    except OSError:
        return False
    for line in lines:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("kind") == "hang_declared" and not isinstance(e.get("hang"), dict):
            return True
    return False


def assert_diagnose_agrees(bundle_dir: Path | str) -> Reading:
    """Diagnose ``bundle_dir`` as ``distdoctor diagnose BUNDLE --json`` does; fail unless status, root-cause category
    and culprit are the run's own (``diagnosis.json``). Returns the shared reading."""
    bundle_dir = Path(bundle_dir)
    run = Diagnosis.from_json(json.loads((bundle_dir / "diagnosis.json").read_text()))
    diag, _ = diagnose_paths([str(bundle_dir)])
    ours, theirs = reading_of(diag), reading_of(run)
    assert ours == theirs, (f"{bundle_dir.name}: diagnose says {ours}, the run said {theirs}\n"
                            f"diagnose:\n{in_short(diag.to_json())}\nthe run:\n{in_short(run.to_json())}")
    return ours


_ISO_PREFIX = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6})(\+0000 )", re.M)


def read_later(text: str, by: float) -> str:
    """A log the supervisor wrote, as if it had read that task's pipe ``by`` seconds later (or earlier): every line's
    time-stamp prefix moved. Within a few tenths of a second, which pipe it reads first is the box's load, not the job."""
    def moved(m: re.Match) -> str:
        t = datetime.fromisoformat(m.group(1)) + timedelta(seconds=by)
        return t.isoformat(timespec="microseconds") + m.group(2)
    return _ISO_PREFIX.sub(moved, text)


def assert_read_order_does_not_matter(bundle_dir: Path | str, work: Path, by: float = 0.05) -> int:
    """``diagnose`` gives the run's verdict with each task's log read ``by`` seconds later, then earlier, than its
    peers' (one at a time). Returns how many orders were tried."""
    bundle_dir = Path(bundle_dir)
    run = reading_of(Diagnosis.from_json(json.loads((bundle_dir / "diagnosis.json").read_text())))
    tried = 0
    for log in sorted((bundle_dir / "logs").glob("*.log")):
        for d in (by, -by):
            copy = work / f"{bundle_dir.name}-{log.stem}{d:+}"
            shutil.copytree(bundle_dir, copy, ignore=shutil.ignore_patterns("report.html", "samples.jsonl", ".lock"))
            moved = copy / "logs" / log.name
            moved.write_text(read_later(moved.read_text(errors="replace"), d))
            ours = reading_of(diagnose_paths([str(copy)])[0])
            assert ours == run, f"{bundle_dir.name} with {log.name} read {d:+}s: diagnose says {ours}, the run said {run}"
            tried += 1
    return tried
