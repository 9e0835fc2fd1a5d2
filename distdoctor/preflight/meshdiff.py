"""Differences across the tasks of a mesh: software (DD512), environment variables (DD513) and command lines
(DD514), each finding naming the minority task; with no majority, every task is a candidate. Pure.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable, Mapping, Sequence

from ..catalogue import get
from . import mesh_rules  # noqa: F401  (registers the codes fetched with get)
from ..model import Evidence, Finding, Severity
from .meshmodel import PeerReport

__all__ = ["differences", "majority", "option_map"]

_CRITICAL = ("tensorflow", "python", "tensorflow-cpu", "tensorflow-gpu", "tf-nightly", "keras", "tf-keras",
             "protobuf", "numpy", "grpcio", "keras_flavour", "nccl")
#: Command-line options that name the task itself and so differ by design.
_PER_TASK_OPTIONS = {"task_index", "task_id", "task", "index", "rank", "worker_index", "local_rank", "node_rank",
                     "replica", "task_type", "job_name"}
_ENV_PER_TASK = {"CUDA_VISIBLE_DEVICES"}


def _f(code: str, culprit: str | None, summary: str, evidence: Iterable[Evidence] = (), *,
       severity: Severity = Severity.ERROR, candidates: Iterable[str] = ()) -> Finding:
    return get(code).finding(culprit=culprit, summary=summary, evidence=evidence, severity=severity,
                             candidates=candidates)


def _ev(task: str | None, text: str, role: str = "cause") -> Evidence:
    return Evidence(task, None, text, role)


def majority(values: Mapping[str, str]) -> tuple[str | None, list[str]]:
    """(majority value, tasks that differ from it); (None, all tasks) when no strict majority."""
    counts = Counter(values.values())
    if len(counts) <= 1:
        return (next(iter(counts)) if counts else None), []
    top, n = counts.most_common(1)[0]
    if n * 2 <= len(values):
        return None, sorted(values)
    return top, sorted(t for t, v in values.items() if v != top)


def differences(primary: Mapping[str, PeerReport]) -> list[Finding]:
    """The software, environment-variable and command-line differences between the tasks that reported."""
    out: list[Finding] = []
    software = {t: _software(r) for t, r in primary.items() if r.info.fingerprint is not None}
    out += _differences(primary, "DD512", software, "(not installed)", "software", _CRITICAL)
    env = {t: {k: v for k, v in r.info.fingerprint.env if k not in _ENV_PER_TASK}
           for t, r in primary.items() if r.info.fingerprint is not None}
    out += _differences(primary, "DD513", env, "(unset)", "environment variables")
    argv = {t: {k: v for k, v in option_map(r.info.argv).items() if k not in _PER_TASK_OPTIONS}
            for t, r in primary.items() if r.info.argv}
    out += _differences(primary, "DD514", argv, "(absent)", "command-line arguments")
    return out


def _software(r: PeerReport) -> dict[str, str]:
    fp = r.info.fingerprint
    if fp is None:
        return {}
    out = {"python": fp.python, "keras_flavour": fp.keras_flavour, "nvidia_driver": fp.nvidia_driver or "(none)"}
    out.update({f"tf_build.{k}": v for k, v in fp.tf_build})
    out.update(dict(fp.packages))
    # whichever distribution provides it (tensorflow, tensorflow-cpu, ...): the version that runs
    out["tensorflow"] = fp.tensorflow or "(not installed)"
    return out


def _differences(primary: Mapping[str, PeerReport], code: str, facts: Mapping[str, Mapping[str, str]],
                 absent: str, what: str, critical: Iterable[str] = ()) -> list[Finding]:
    tasks = sorted(facts)
    if len(tasks) < 2:
        return []
    order = {k: i for i, k in enumerate(critical)}
    critical = set(critical)
    per_task: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    no_majority: list[tuple[str, dict[str, str]]] = []
    for key in sorted({k for v in facts.values() for k in v}):
        values = {t: facts[t].get(key, absent) for t in tasks}
        top, odd = majority(values)
        if not odd:
            continue
        if top is None:
            no_majority.append((key, values))
            continue
        for t in odd:
            per_task[t].append((key, values[t], top))
    def is_critical(key: str) -> bool:
        return key in critical or key.startswith("tf_build.")

    def rank(key: str) -> tuple:  # the critical keys in their listed order (TensorFlow, Python first)
        return (order.get(key, len(order)) if is_critical(key) else len(order) + 1, key)

    out = []
    for t, diffs in sorted(per_task.items()):
        diffs.sort(key=lambda d: rank(d[0]))  # TF and Python first: the likely cause
        sev = Severity.ERROR if any(is_critical(k) for k, _, _ in diffs) else Severity.WARNING
        parts = [f"{k}={mine}" for k, mine, _ in diffs]
        out.append(_f(code, t, f"{t} differs from the other tasks in {what}: " + ", ".join(parts[:5])
                      + (f" and {len(parts) - 5} more" if len(parts) > 5 else ""),
                      [_ev(t, f"{k}: {t} has {mine!r}, the others {top!r}") for k, mine, top in diffs], severity=sev))
    if no_majority:
        # one finding that names every task with its value (two tasks that differ have no majority);
        # the keys that matter most first, so the summary leads with them
        no_majority.sort(key=lambda kv: rank(kv[0]))
        sev = Severity.ERROR if any(is_critical(k) for k, _ in no_majority) else Severity.WARNING
        shown = ["{} ({})".format(k, ", ".join(f"{t}={v}" for t, v in values.items())) for k, values in no_majority]
        out.append(_f(code, None, f"the tasks disagree on {what} with no majority: " + "; ".join(shown[:3])
                      + (f" and {len(shown) - 3} more" if len(shown) > 3 else ""),
                      [_ev(t, f"{k}: {v!r}") for k, values in no_majority for t, v in values.items()],
                      severity=sev, candidates=tuple(tasks)))
    return out


def option_map(argv: Sequence[str]) -> dict[str, str]:
    """``python train.py --batch=64 --data /d -v`` -> {"pos0": "python", "pos1": "train.py", "batch": "64", ...}."""
    out, pos, i = {}, 0, 0
    args = list(argv)
    while i < len(args):
        a = args[i]
        if a.startswith("-") and len(a) > 1 and not a[1:2].isdigit():
            key, eq, value = a.lstrip("-").partition("=")
            key = key.replace("-", "_").lower()
            if not eq:
                if i + 1 < len(args) and not args[i + 1].startswith("-"):
                    value, i = args[i + 1], i + 1
                else:
                    value = "(set)"
            out[key] = value
        else:
            out[f"pos{pos}"] = a
            pos += 1
        i += 1
    return out
