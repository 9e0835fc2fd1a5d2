"""Findings: what one rule of the catalogue concluded, with its typed evidence; the categories and statuses.

Each class writes its JSON (``to_json``) and reads it back (``from_json``, tolerant of the files earlier
versions wrote). Data objects here do no I/O and read no clock.
"""
from __future__ import annotations

import enum
import re
import time as _time
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Category", "CATEGORY_DOCS", "RUN_ONLY_CATEGORIES", "Severity", "Status", "Evidence", "Finding", "Alternative", "JobEvent",
    "format_clock", "format_iso", "SCHEMA_VERSION",
]

SCHEMA_VERSION = 1


class Category(str, enum.Enum):
    """The fixed list of root-cause categories (stable slugs, never reused)."""

    PEER_CRASHED = "peer_crashed"
    SEGFAULT_CORE_DUMP = "segfault_core_dump"
    OOM_HOST = "oom_host"
    OOM_GPU = "oom_gpu"
    USER_CODE_ERROR = "user_code_error"
    HANG_STALLED_WORKER = "hang_stalled_worker"
    HANG_COLLECTIVE_MISMATCH = "hang_collective_mismatch"
    PEER_UNRESPONSIVE = "peer_unresponsive"
    DATA_SHARDING_IMBALANCE = "data_sharding_imbalance"
    STRAGGLER_SLOW_WORKER = "straggler_slow_worker"
    NETWORK_UNREACHABLE = "network_unreachable"
    FIREWALL_OR_PORT_BLOCKED = "firewall_or_port_blocked"
    PORT_IN_USE = "port_in_use"
    CONFIG_TF_CONFIG = "config_tf_config"
    CONFIG_MISMATCH_ACROSS_WORKERS = "config_mismatch_across_workers"
    VERSION_MISMATCH = "version_mismatch"
    RESOURCE_EXHAUSTION = "resource_exhaustion"
    NUMERICAL_DIVERGENCE = "numerical_divergence"
    PREEMPTION = "preemption"
    OTHER = "other"
    INTERRUPTED = "interrupted"


CATEGORY_DOCS: dict[Category, str] = {
    Category.PEER_CRASHED: "A task died (killed, or exited non-zero) and its peers failed or hung because of it.",
    Category.SEGFAULT_CORE_DUMP: "A task died from a fatal signal of its own (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL): a native crash.",
    Category.OOM_HOST: "A task was killed by the kernel's OOM killer or its memory cgroup limit.",
    Category.OOM_GPU: "A task ran out of accelerator memory (ResourceExhaustedError / CUDA out of memory).",
    Category.USER_CODE_ERROR: "A task raised a Python exception in the training code.",
    Category.HANG_STALLED_WORKER: "Peers wait in a collective for one task that is stuck elsewhere (its own code, its input pipeline).",
    Category.HANG_COLLECTIVE_MISMATCH: "Every task waits in a collective that can never complete (different collectives or counts per task).",
    Category.PEER_UNRESPONSIVE: "A task is alive but frozen (stopped, uninterruptible sleep) or stopped answering.",
    Category.DATA_SHARDING_IMBALANCE: "A task ran fewer steps than its peers and finished early: its shard of the data is smaller.",
    Category.STRAGGLER_SLOW_WORKER: "One task is consistently slower than its peers and holds every synchronous step back.",
    Category.NETWORK_UNREACHABLE: "A peer could not be reached at all (never started, no route, name does not resolve).",
    Category.FIREWALL_OR_PORT_BLOCKED: "Packets to a task's port are silently dropped (a firewall or security group).",
    Category.PORT_IN_USE: "A task's port is already bound by another process.",
    Category.CONFIG_TF_CONFIG: "A task's TF_CONFIG is invalid or wrong for this cluster (bad JSON, index, loopback for remote peer...).",
    Category.CONFIG_MISMATCH_ACROSS_WORKERS: "Tasks disagree about the cluster or the training arguments.",
    Category.VERSION_MISMATCH: "Tasks run different software versions or environments.",
    Category.RESOURCE_EXHAUSTION: "A task ran out of a resource other than memory (disk, /dev/shm, file descriptors, threads) or is close to its memory limit.",
    Category.NUMERICAL_DIVERGENCE: "The loss became NaN or infinite.",
    Category.PREEMPTION: "A task was terminated from outside (SIGTERM, preemption, eviction).",
    Category.OTHER: "A failure that no more specific category describes.",
    Category.INTERRUPTED: "distdoctor itself was stopped (Ctrl-C, SIGTERM or SIGHUP sent to it, not to a task): a person "
                          "or the scheduler ended the run; the verdict says what the job was doing then.",
}

# What only ``run`` can conclude, from what happened to distdoctor itself: no task's log line shows it, so
# ``diagnose`` never gives it and the log corpora (probes, fragments) have no cases of it.
RUN_ONLY_CATEGORIES = frozenset({Category.INTERRUPTED})


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Status(str, enum.Enum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    HUNG = "hung"
    RUNNING = "running"  # only in live snapshots, never in a final diagnosis
    UNKNOWN = "unknown"  # ``diagnose`` of logs that show no failure and no end: nothing to blame


def format_iso(ts: float | None) -> str | None:
    """UTC date and time with milliseconds and the zone (evidence in JSON carries its date)."""
    if ts is None:
        return None
    return _time.strftime("%Y-%m-%dT%H:%M:%S", _time.gmtime(ts)) + f".{int((ts % 1) * 1000):03d}Z"


def format_clock(ts: float | None) -> str:
    """Wall-clock time of day with milliseconds, as evidence lines show it."""
    if ts is None:
        return "--:--:--.---"
    lt = _time.localtime(ts)
    return _time.strftime("%H:%M:%S", lt) + f".{int((ts % 1) * 1000):03d}"


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _prob(v: Any) -> float | None:
    n = _num(v)
    return n if n is not None and 0.0 <= n <= 1.0 else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _enum(kind, v: Any, default):
    try:
        return kind(v)
    except ValueError:
        return default


@dataclass(frozen=True)
class Evidence:
    """One quoted line of evidence: which task, when, what, and its role.

    ``role`` is ``cause`` for lines that show the failure itself, ``consequence``
    for symptoms that healthy tasks reported because of it, ``context`` for the rest.
    """

    task: str | None  # the task that wrote it; null: the job (or distdoctor)
    ts: float | None  # when (unix seconds); null when the line has no time
    text: str  # the line, or what distdoctor measured
    role: str = "cause"  # cause, consequence (a healthy task's symptom of it) or context
    where: str | None = None       # file:line the text was read from, when it came from a log

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "ts": self.ts, "at": format_iso(self.ts), "where": self.where,
                "text": self.text, "role": self.role}

    @staticmethod
    def from_json(d: dict) -> "Evidence":
        role = d.get("role")
        return Evidence(task=_str(d.get("task")), ts=_num(d.get("ts")), text=str(d.get("text") or ""),
                        role=role if role in ("cause", "consequence", "context") else "cause",
                        where=_str(d.get("where")))

    @staticmethod
    def from_line(line: str, near: float | None) -> "Evidence":
        """A rendered line of a ``diagnosis.json`` written before ``evidence_detail`` existed.

        Such files carry evidence only as :meth:`render` wrote it, ``[task HH:MM:SS.mmm] (role) text``; the
        time of day is put back on the day of ``near`` (the verdict's time), at or before it.
        """
        m = _RENDERED.match(line)
        if not m:
            return Evidence(task=None, ts=None, text=line, role="context")
        task, clock, role, text = m.groups()
        return Evidence(task=None if task == "job" else task, ts=_time_of_day(clock, near), text=text,
                        role=role or "cause")

    def render(self) -> str:
        where = self.task or "job"
        tag = " (consequence)" if self.role == "consequence" else ""
        text = self.text if len(self.text) <= 400 else self.text[:397] + "..."
        return f"[{where} {format_clock(self.ts)}]{tag} {text}"


_RENDERED = re.compile(r"^\[(\S+) ([0-9:.\-]+)\](?: \((consequence|context|cause)\))?\s?(.*)$", re.S)


def _time_of_day(clock: str, near: float | None) -> float | None:
    """``HH:MM:SS.mmm`` (local time, as :func:`format_clock` writes it) on the day of ``near``, at or before it."""
    try:
        h, m, rest = clock.split(":")
        secs = int(h) * 3600 + int(m) * 60 + float(rest)
    except ValueError:
        return None
    if near is None:
        return None
    lt = _time.localtime(near)
    midnight = int(near) - (lt.tm_hour * 3600 + lt.tm_min * 60 + lt.tm_sec)
    ts = midnight + secs + 0.0005           # the middle of the millisecond the line shows
    return ts - 86400 if ts > near + 60 else ts


@dataclass(frozen=True)
class Alternative:
    """Another reading of the same evidence, ranked below the root cause."""

    category: Category  # the other category
    culprit: str | None  # the task it would blame
    why: str  # why it is possible
    settle: str | None = None      # what would confirm or rule it out (a record to look at)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"category": self.category.value, "culprit": self.culprit, "why": self.why}
        if self.settle:
            out["settle"] = self.settle
        return out

    @staticmethod
    def from_json(d: dict) -> "Alternative":
        return Alternative(category=_enum(Category, d.get("category"), Category.OTHER), culprit=_str(d.get("culprit")),
                           why=str(d.get("why") or ""), settle=_str(d.get("settle")))


@dataclass(frozen=True)
class Weighed:
    """A line that weighed in the learned reading of the cause: without it, the learned probability of the cause
    falls by ``weight``."""

    text: str                  # the line
    task: str | None           # the task it names or that wrote it
    where: str | None          # file:line, when known
    weight: float              # the fall in probability without it (0..1)

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "task": self.task, "where": self.where, "weight": self.weight}

    @staticmethod
    def from_json(d: dict) -> "Weighed":
        return Weighed(text=str(d.get("text") or ""), task=_str(d.get("task")), where=_str(d.get("where")),
                       weight=_num(d.get("weight")) or 0.0)


@dataclass(frozen=True)
class Finding:
    """What one rule concluded. ``code`` is the rule's stable code (DDnnn)."""

    code: str  # the rule's stable code in the catalogue (``distdoctor rules``)
    category: Category  # one of the categories below
    severity: Severity  # error, warning or info
    culprit: str | None  # the task where the failure began (null: see candidates)
    summary: str  # one sentence: what happened, where
    evidence: tuple[Evidence, ...] = ()  # the lines that show it, the cause first
    remedy: str = ""  # what to do
    at: float | None = None  # when the problem began, for the root-cause policy
    candidates: tuple[str, ...] = ()  # when the culprit can't be decided
    confidence: str | None = None     # high / medium / low (``diagnose`` over logs it did not write)
    probability: float | None = None  # diagnose: the calibrated probability of this cause; ``confidence`` is its band
    alternatives: tuple[Alternative, ...] = ()  # other readings of the same evidence, ranked below it
    weighed: tuple[Weighed, ...] = ()  # the lines that weighed most in the learned reading of this cause (diagnose)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "category": self.category.value,
            "culprit": self.culprit,
            "severity": self.severity.value,
            "summary": self.summary,
            "evidence": [e.render() for e in self.evidence],    # for people and grep; programs read evidence_detail
            "remedy": self.remedy,
            "at": self.at,
        }
        out["evidence_detail"] = [e.to_json() for e in self.evidence]
        if self.candidates:
            out["candidates"] = list(self.candidates)
        if self.confidence:
            out["confidence"] = self.confidence
        if self.probability is not None:
            out["probability"] = self.probability
        if self.alternatives:
            out["alternatives"] = [a.to_json() for a in self.alternatives]
        if self.weighed:
            out["weighed"] = [w.to_json() for w in self.weighed]
        return out

    @staticmethod
    def from_json(d: dict, near: float | None = None) -> "Finding":
        """The finding ``to_json`` wrote; evidence from ``evidence_detail``, or (older files) from the rendered
        lines, whose time of day is put on the day of ``near`` (the diagnosis' ``detected_at``)."""
        detail = d.get("evidence_detail")
        if isinstance(detail, list):
            evidence = tuple(Evidence.from_json(e) for e in detail if isinstance(e, dict))
        else:
            ref = _num(d.get("at")) if near is None else near
            evidence = tuple(Evidence.from_line(str(e), ref) for e in d.get("evidence") or ()
                             if isinstance(e, (str, int, float)))
        conf = d.get("confidence")
        return Finding(code=str(d.get("code") or ""), category=_enum(Category, d.get("category"), Category.OTHER),
                       severity=_enum(Severity, d.get("severity", "error"), Severity.ERROR),
                       culprit=_str(d.get("culprit")) or None, summary=str(d.get("summary") or ""), evidence=evidence,
                       remedy=str(d.get("remedy") or ""), at=_num(d.get("at")),
                       candidates=tuple(c for c in d.get("candidates") or () if isinstance(c, str)),
                       confidence=conf if isinstance(conf, str) else None, probability=_prob(d.get("probability")),
                       alternatives=tuple(Alternative.from_json(a) for a in d.get("alternatives") or ()
                                          if isinstance(a, dict)),
                       weighed=tuple(Weighed.from_json(w) for w in d.get("weighed") or () if isinstance(w, dict)))

    @property
    def culprits(self) -> tuple[str, ...]:
        """The culprit, or the candidates when it could not be decided."""
        return (self.culprit,) if self.culprit else self.candidates


@dataclass(frozen=True)
class JobEvent:
    """One lifecycle event of a run: a line of the bundle's ``events.jsonl`` (``task`` None is the whole job).

    ``kind`` is a :class:`~distdoctor.supervise.lifecycle.JobEventKind` when the supervisor writes it, and the
    plain string read back (bundles of older runs hold kinds that are no longer written, e.g. ``first_step``).
    """

    ts: float  # when (unix seconds)
    task: str | None  # the task; null: the whole job
    kind: str  # start, agent, connected, fault, stall_suspected, stall_cleared, hang_declared, exit, signal_sent, ...
    text: str = ""  # what happened, in words

    def to_json(self) -> dict[str, Any]:
        return {"ts": self.ts, "task": self.task, "kind": getattr(self.kind, "value", self.kind), "text": self.text}
