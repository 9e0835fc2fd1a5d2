"""``distdoctor diagnose PATH...``: the root cause of a finished (or stuck) job, from its logs alone.

The pure entry point (:func:`diagnose_paths`); the command line and the rendering (terminal, JSON, HTML) live at
the edge (:mod:`distdoctor.report.diagnose_cli`), so ``diagnose`` never imports ``report``.

PATH is a ``distdoctor run`` bundle, a folder of per-task logs, log files, or
``-`` for one combined stream on standard input. Any readable text is
diagnosed. Exit codes: 0 the job succeeded or the logs show no failure
(status ``unknown``), 1 it failed, 3 it hung (positive evidence of waiting),
2 the input is unreadable (said in one line).
"""
from __future__ import annotations

import os
import time
from dataclasses import replace

from ..errors import DistDoctorError, InputError
from ..model import Diagnosis
from .observations import JobObservation

__all__ = ["diagnose_paths"]


def diagnose_paths(paths: list[str], task_map: dict[str, str] | None = None, *, jobs: int | None = None,
                   detected_at: float | None = None,
                   baseline: list[str] | None = None,
                   features_out: list | None = None, learned: bool = True) -> tuple[Diagnosis, JobObservation]:
    """Read the logs under ``paths`` and diagnose them. Raises :class:`InputError` for unusable input.

    ``baseline``: the logs of a good run of the same job (``--baseline``); a line it printed too is set aside
    (:mod:`.logs.baseline`). A run bundle's earlier attempt that succeeded is its baseline when none is given.
    ``learned``: the alternatives re-ranked by the learned reading (:mod:`.logs.learned`); False gives the
    hand-written reasoning's own (its tests)."""
    now = time.time() if detected_at is None else detected_at
    good = _baseline_shapes(baseline, task_map, jobs) if baseline else None
    try:
        from .bundlefacts import observation_of_record, read_recorded_run
        from .engine import diagnose
        from .from_logs import observation_from_scans
        from .logs.reason import reason
        from .logs.verdict import decide
        from .logsource import discover, scan_all
        disc = discover(list(paths), task_map)
        scans, notes, hits, facts = scan_all(disc, jobs=jobs)
        if not facts or all(f.bytes == 0 for f in facts):
            problems = [n for n in notes if "vanished" in n or "could not" in n or "stopped early" in n]
            raise InputError(problems[-1] if problems else "every log is empty: nothing to diagnose")
        text = [f for f in facts if not f.binary]
        if not text:
            raise InputError(f"{facts[0].name}{' and the others hold' if len(facts) > 1 else ' holds'} binary data, not "
                             "logs: nothing to diagnose")
        recorded = read_recorded_run(disc.bundle) if disc.bundle else None
        hits, unchecked, oom_notes = _kernel_ooms_of_the_job(hits, scans, recorded)
        notes = notes + oom_notes
        if good is None and disc.bundle:
            good = _succeeded_attempt(disc.bundle, jobs)
        if good is not None:
            hits, base_notes = _set_aside_seen(hits, good)
            notes = notes + base_notes
        notes = notes + _releases_note(hits)
        verdict = reason(hits, text)
        structural = None
        try:
            job = observation_from_scans(scans, notes=list(disc.notes) + notes, recorded=recorded)
            structural = diagnose(job, detected_at=now, command="diagnose")
        except InputError:   # no task could be named, or no TF lines: the signature reading stands alone, with the
            # run's records of its processes when this is a run bundle
            if recorded is not None:
                job = observation_of_record(recorded, tuple(list(disc.notes) + notes))
                structural = diagnose(job, detected_at=now, command="diagnose")
            else:
                job = JobObservation(tasks={}, source="logs", notes=tuple(list(disc.notes) + notes))
        diag = decide(verdict, structural, source="diagnose", detected_at=now, notes=tuple(job.notes), hits=hits,
                      ran_to_end=job.ran_to_end)
        from .logs.learned import with_learned_reading
        if features_out is not None:   # scripts/build_model.py: what the learned reading is trained on (the
            features_out.append((diag, hits, text))   # hand-written reading's, never the shipped model's)
        elif learned:
            diag = with_learned_reading(diag, hits, text, witnessed=recorded is not None)
    except DistDoctorError:
        raise
    except RecursionError as exc:  # pathological input nesting: still one line, never a traceback
        raise InputError(f"could not read these logs: {exc}") from None
    except Exception as exc:  # noqa: BLE001 -- the contract is one line, never a traceback
        if os.environ.get("DISTDOCTOR_DEBUG"):
            raise
        raise InputError(f"could not diagnose these logs: internal error {type(exc).__name__}: {str(exc)[:200]} "
                         "(set DISTDOCTOR_DEBUG=1 for the traceback and report it)") from None
    diag = _unchecked_is_not_certain(diag, unchecked)
    diag = _outlier_culprit(diag, disc)
    missing = tuple(n for n in job.notes if n not in diag.notes)
    if missing:
        diag = replace(diag, notes=tuple(diag.notes) + missing)
    return diag, job


def _baseline_shapes(paths: list[str], task_map: dict[str, str] | None, jobs: int | None):
    """The shapes of the lines the good run printed; an unreadable baseline is said in one line."""
    from .logs.baseline import BaselineShapes
    from .logsource import discover, scan_all
    try:
        disc = discover(list(paths), task_map)
        _, _, hits, facts = scan_all(disc, jobs=jobs)
    except InputError as exc:
        raise InputError(f"--baseline: {exc}") from None
    if not facts or all(f.bytes == 0 for f in facts):
        raise InputError("--baseline: every log of the good run is empty: nothing to compare with")
    return BaselineShapes.of_hits(hits, ", ".join(paths[:2]) + (" ..." if len(paths) > 2 else ""))


def _succeeded_attempt(bundle: str, jobs: int | None):
    """A run bundle's latest earlier attempt that succeeded (``attempts/<n>/``), as a baseline; None when none did."""
    import json
    folder = os.path.join(bundle, "attempts")
    try:
        numbers = sorted((int(n) for n in os.listdir(folder) if n.isdigit()), reverse=True)
    except OSError:
        return None
    for n in numbers:
        attempt = os.path.join(folder, str(n))
        try:
            with open(os.path.join(attempt, "diagnosis.json"), encoding="utf-8") as fh:
                status = json.load(fh).get("status")
        except (OSError, ValueError, AttributeError):
            continue
        if status == "succeeded" and os.path.isdir(os.path.join(attempt, "logs")):
            try:
                shapes = _baseline_shapes([os.path.join(attempt, "logs")], None, jobs)
            except InputError:
                continue
            shapes.source = f"attempt {n} of this run, which succeeded"
            return shapes
    return None


def _set_aside_seen(hits: list, good) -> tuple[list, list[str]]:
    """The hits less those the good run printed too, and a note of what was set aside."""
    from .logs.baseline import split_by_baseline
    from .logs.formats import clip
    new, seen = split_by_baseline(hits, good)
    if not seen:
        return new, [f"compared with the good run ({good.source}): every line read as evidence is new in this run"]
    return new, [f"compared with the good run ({good.source}): {len(seen)} line(s) it printed too were set aside, "
                 f"e.g. {clip(seen[0].text, 120)!r}; {len(new)} line(s) new in this run were weighed"]


OUTLIER_READ = 4 << 20   # bytes of each log read again for the odd task out (its first part: counts print at start)


def _outlier_culprit(diag: Diagnosis, disc) -> Diagnosis:
    """An imbalance with no culprit named: the task whose numbers differ on a line every task printed
    (:mod:`.logs.outliers`), read from the start of each log file."""
    from ..model import Category, Evidence
    from .logs.outliers import task_lines, value_outlier
    root = diag.root_cause
    if root is None or root.culprit or root.category is not Category.DATA_SHARDING_IMBALANCE:
        return diag
    lines = []
    for src in disc.sources:
        if src.path == "-" or src.member is not None:
            continue
        try:
            with open(src.path, "rb") as fh:
                lines += task_lines(fh.read(OUTLIER_READ), src.task)
        except OSError:
            continue
    odd = value_outlier(lines)
    if odd is None:
        return diag
    ev = Evidence(task=odd.task, ts=None, role="cause",
                  text=f"{odd.task} printed {odd.line!r} where the {odd.others} other tasks printed {odd.usual}")
    return replace(diag, root_cause=replace(root, culprit=odd.task, evidence=(ev,) + tuple(root.evidence)))


RELEASE_LINES = 40   # distinct lines per task looked up in the vocabulary (its signature hits: TF's messages)


def _releases_note(hits: list) -> list[str]:
    """A note when the TensorFlow messages in the logs cannot all come from one release: two tasks on different
    TensorFlow versions (:mod:`.logs.tfvocab`, the messages of five releases' wheels)."""
    from .logs.tfvocab import disjoint, releases_of, vocabulary
    order = vocabulary()[1]
    whole = (-1, len(order))
    read = ", ".join(order)
    by_writer: dict[str, list[str]] = {}
    for h in hits:
        by_writer.setdefault(h.writer or h.stream, []).append(h.text)

    def said(m) -> str:
        return f"{m.text!r} (printed by TensorFlow {', '.join(m.releases)})"
    spans = {}
    for who, lines in sorted(by_writer.items()):
        span, why = releases_of(list(dict.fromkeys(lines))[:RELEASE_LINES])
        if disjoint(span, span) and len(why) >= 2:
            return [f"{who}'s lines may come from more than one TensorFlow release: of the releases read ({read}), "
                    f"no one prints both {said(why[-2])} and {said(why[-1])}"]
        if span != whole:
            spans[who] = (span, why[-1])
    for a, (sa, wa) in spans.items():
        for b, (sb, wb) in spans.items():
            if a < b and disjoint(sa, sb):
                return [f"{a} and {b} may run different TensorFlow releases: of the releases read ({read}), no one "
                        f"prints both {a}'s {said(wa)} and {b}'s {said(wb)}"]
    return []


def _kernel_ooms_of_the_job(hits: list, scans: list, recorded) -> tuple[list, list, list[str]]:
    """The hits less the kernel OOM-killer records that are not about this job (:mod:`.logs.kernel_oom`): another
    process's pid, or a time outside the job's span. Returns the hits, the kept records that could not be checked,
    and a note for what was set aside."""
    from .logs.kernel_oom import is_kernel_record, pids_in_lines, sort_kernel_ooms
    if not any(is_kernel_record(h) for h in hits):
        return hits, [], []
    pids = pids_in_lines(hits)
    if recorded is not None:
        pids.update(recorded.pids())
    span = recorded.span() if recorded is not None else None
    if span is None:
        firsts = [s.first_ts for s in scans if s.task and s.first_ts is not None]
        lasts = [s.last_ts for s in scans if s.task and s.last_ts is not None]
        span = (min(firsts), max(lasts)) if firsts and lasts else None
    kept, unrelated, unchecked = sort_kernel_ooms(hits, pids, span)
    notes = []
    if unrelated:
        notes.append(f"{len(unrelated)} kernel OOM-killer line(s) ({unrelated[0].stream}: "
                     f"{unrelated[0].text.strip()[:120]}) are about another process or another time than this job's "
                     "(no pid of its tasks, outside its time span): not read as evidence")
    return kept, unchecked, notes


def _unchecked_is_not_certain(diag: Diagnosis, unchecked: list) -> Diagnosis:
    """A root cause that rests on a kernel OOM record whose pid and time could not be matched to the job is not
    high-confidence (at most medium): it may be another process's kill."""
    root = diag.root_cause
    if root is None or not unchecked or root.confidence not in ("high", None):
        return diag
    lines = {h.text for h in unchecked}
    if not any(e.text in lines for e in root.evidence[:2]):
        return diag
    low = replace(root, confidence="medium")
    return replace(diag, root_cause=low, findings=tuple(low if f is root else f for f in diag.findings),
                   notes=tuple(diag.notes) + ("the kernel's OOM-killer line names no pid of this job's tasks and "
                                              "carries no time that can be set against the job's: it may be "
                                              "another process's kill",))
