"""The mesh check's data: what one task saw of each peer, what it tells the others, the verdict.

A :class:`Probe` is one directed pair as its source saw it (``worker:0 ->
worker:2``: refused, dropped, ok with these round-trip times...). A
:class:`PeerReport` is everything one task sends the others once its own
probes are done: who it is (:class:`TaskInfo`: cluster, fingerprint, command
line, its local findings), its probes, and the connections it refused. Every
task collects every report it can, and the pure judge
(:mod:`.meshjudge`) turns the collection into findings, so any task can print
the whole-mesh table. :class:`MeshResult` is one task's verdict.

Plain frozen data; ``to_json``/``from_json`` are the wire and output form.
"""
from __future__ import annotations

import enum
import functools
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, NamedTuple, Sequence

from ..model import Category, Evidence, Finding, Severity
from .fingerprint import Fingerprint

__all__ = ["Outcome", "Probe", "Link", "Refusal", "TaskInfo", "PeerReport", "MeshResult", "finding_to_wire",
           "finding_from_wire"]


class Outcome(str, enum.Enum):
    """How a probe of one peer's port ended."""

    OK = "ok"
    REFUSED = "refused"          # RST: nothing listening at that address
    DROPPED = "dropped"          # no answer at all: filtered
    UNREACHABLE = "unreachable"  # no route to host / network
    UNRESOLVED = "unresolved"    # the name does not resolve
    WRONG_TOKEN = "wrong_token"  # handshake failed: another job or another token
    FOREIGN = "foreign"          # something answered that does not speak the mesh protocol
    WRONG_TASK = "wrong_task"    # authenticated, but another task answered
    ERROR = "error"              # any other socket error


def finding_to_wire(f: Finding) -> dict[str, Any]:
    """Findings travel between tasks with their evidence intact (``Finding.to_json`` renders it)."""
    return {"code": f.code, "category": f.category.value, "severity": f.severity.value, "culprit": f.culprit,
            "summary": f.summary, "remedy": f.remedy, "at": f.at, "candidates": list(f.candidates),
            "evidence": [{"task": e.task, "ts": e.ts, "text": e.text, "role": e.role} for e in f.evidence]}


def finding_from_wire(d: Mapping[str, Any]) -> Finding:
    return Finding(code=str(d["code"]), category=Category(d["category"]), severity=Severity(d["severity"]),
                   culprit=d.get("culprit"), summary=str(d.get("summary", "")), remedy=str(d.get("remedy", "")),
                   at=d.get("at"), candidates=tuple(d.get("candidates") or ()),
                   evidence=tuple(Evidence(e.get("task"), e.get("ts"), str(e.get("text", "")), e.get("role", "cause"))
                                  for e in d.get("evidence") or ()))


@dataclass(frozen=True)
class Probe:
    """One directed pair, as ``src`` saw it.

    ``rtts_ms``: every timed round trip (the handshake's two, then the pings);
    ``sent``/``lost`` count the pings; ``mbps`` only with --bandwidth.
    """

    src: str
    dst: str
    address: str
    outcome: Outcome
    detail: str = ""
    attempts: int = 0
    answered_as: str | None = None
    rtts_ms: tuple[float, ...] = ()
    sent: int = 0
    lost: int = 0
    mbps: float | None = None
    elapsed_s: float = 0.0
    instance: str = ""          # the answering process (tells two claimants of one task apart)

    @property
    def rtt_ms(self) -> float | None:
        """Median round-trip time of the pings that came back."""
        if not self.rtts_ms:
            return None
        s = sorted(self.rtts_ms)
        return s[len(s) // 2]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"src": self.src, "dst": self.dst, "address": self.address,
                               "outcome": self.outcome.value}
        for key in ("detail", "attempts", "answered_as", "sent", "lost", "mbps", "elapsed_s", "instance"):
            value = getattr(self, key)
            if value not in ("", 0, None, 0.0):
                out[key] = value
        if self.rtts_ms:
            out["rtts_ms"] = [round(r, 3) for r in self.rtts_ms]
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Probe":
        return cls(src=str(d["src"]), dst=str(d["dst"]), address=str(d.get("address", "")),
                   outcome=Outcome(d["outcome"]), detail=str(d.get("detail", "")), attempts=int(d.get("attempts", 0)),
                   answered_as=d.get("answered_as"), rtts_ms=tuple(float(r) for r in d.get("rtts_ms", ())),
                   sent=int(d.get("sent", 0)), lost=int(d.get("lost", 0)), mbps=d.get("mbps"),
                   elapsed_s=float(d.get("elapsed_s", 0.0)), instance=str(d.get("instance", "")))


    def to_row(self) -> list:
        """Compact wire form inside a report (whose task is ``src``): reports carry N-1 probes each."""
        return [self.dst, self.address, self.outcome.value, self.detail, self.attempts,
                None if self.answered_as == self.dst else self.answered_as, [round(r, 3) for r in self.rtts_ms],
                self.sent, self.lost, self.mbps, round(self.elapsed_s, 4), self.instance]

    @classmethod
    def from_row(cls, src: str, row: Sequence[Any]) -> "Probe":
        # Hot path: a task parses N-1 reports of N-1 rows each. Rows come from authenticated peers
        # running this code, so we check shapes cheaply and let a bad row fail the whole report.
        dst, address, outcome, detail, attempts, answered, rtts, sent, lost, mbps, elapsed, instance = row
        outcome = _OUTCOMES[outcome]
        if answered is None and outcome is Outcome.OK:
            answered = dst
        if type(rtts) is not list or not all(type(r) in (float, int) for r in rtts):
            raise ValueError("bad rtts")
        return cls(src, dst, address, outcome, detail, attempts, answered, tuple(rtts), sent, lost, mbps, elapsed,
                   instance)


_OUTCOMES = {o.value: o for o in Outcome}


@dataclass(frozen=True)
class Refusal:
    """Inbound connections this task's responder turned away: how many, from which address, why.

    Only counts: nothing the other side sent (a task it claimed, its text) is kept, so a stranger can
    neither grow this record nor put words in the diagnosis. ``claimed`` stays in the format for old
    reports and is always None now.
    """

    peer: str              # the source address (or "other" past the gate's limit of addresses)
    claimed: str | None    # always None: a refused claim is not kept
    reason: str            # a wire.Deny word
    count: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"peer": self.peer, "claimed": None, "reason": self.reason, "count": self.count}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Refusal":
        count = d.get("count", 1)
        return cls(str(d.get("peer", ""))[:64], None, str(d.get("reason", ""))[:64],
                   count if type(count) is int and count >= 0 else 1)


@dataclass(frozen=True)
class TaskInfo:
    """Who a task is, as it tells the others."""

    task: str
    instance: str                                  # random per process: tells duplicates apart
    hostname: str
    pid: int
    address: str | None                            # its own entry in its own cluster
    bound: bool                                    # whether it could listen there
    cluster: tuple[tuple[str, tuple[str, ...]], ...]
    fingerprint: Fingerprint | None
    argv: tuple[str, ...]
    findings: tuple[Finding, ...] = ()             # its local static/host/environment findings
    bind_error: str = ""
    side_port: int | None = None                   # run --node: where this task's supervisor takes the side link

    def cluster_dict(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in self.cluster}

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "instance": self.instance, "hostname": self.hostname, "pid": self.pid,
                "address": self.address, "bound": self.bound, "bind_error": self.bind_error,
                "cluster": self.cluster_dict(),
                "fingerprint": self.fingerprint.to_json() if self.fingerprint else None,
                "argv": list(self.argv), "findings": [finding_to_wire(f) for f in self.findings],
                **({"side_port": self.side_port} if self.side_port else {})}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "TaskInfo":
        fp = d.get("fingerprint")
        return cls(task=str(d["task"]), instance=str(d.get("instance", "")), hostname=str(d.get("hostname", "")),
                   pid=int(d.get("pid", 0)), address=d.get("address"), bound=bool(d.get("bound", False)),
                   bind_error=str(d.get("bind_error", "")),
                   cluster=tuple((str(k), tuple(map(str, v))) for k, v in (d.get("cluster") or {}).items()),
                   fingerprint=Fingerprint.from_json(fp) if fp else None, argv=tuple(map(str, d.get("argv", ()))),
                   findings=tuple(finding_from_wire(f) for f in d.get("findings", ())),
                   side_port=_port_or_none(d.get("side_port")))


def _port_or_none(value: Any) -> int | None:
    return value if type(value) is int and 0 < value < 65536 else None


class Link(NamedTuple):
    """An answered probe, reduced to what link-quality rules read.

    A NamedTuple, not a dataclass, on purpose: a task builds N-1 of these per report it
    receives (N^2 in all), and they are ten times cheaper to make than a :class:`Probe`.
    """

    dst: str
    instance: str
    rtt_ms: float | None      # median of the timed round trips
    sent: int
    lost: int
    mbps: float | None


_ANSWERED = ("ok", "wrong_task")


@dataclass(frozen=True)
class PeerReport:
    """What one task sends every other once its probes are done.

    ``rows`` are the probes in their compact wire form (:meth:`Probe.to_row`):
    every task receives N-1 reports of N-1 rows, so full :class:`Probe`
    objects are built only when asked for (``probes``), and the hot paths read
    ``failures`` (the few probes that did not end ok) and ``links``.
    """

    info: TaskInfo
    rows: tuple[tuple, ...]
    refusals: tuple[Refusal, ...] = ()

    def __hash__(self) -> int:  # rows hold lists (RTTs); one process sends one report
        return hash((self.info.task, self.info.instance))

    @classmethod
    def of(cls, info: TaskInfo, probes: Sequence[Probe], refusals: Sequence[Refusal] = ()) -> "PeerReport":
        report = cls(info, tuple(tuple(p.to_row()) for p in probes), tuple(refusals))
        report.__dict__["probes"] = tuple(probes)  # already built: the cached_property's slot
        return report

    @property
    def task(self) -> str:
        return self.info.task

    @functools.cached_property
    def probes(self) -> tuple[Probe, ...]:
        return tuple(Probe.from_row(self.info.task, row) for row in self.rows)

    @functools.cached_property
    def failures(self) -> tuple[Probe, ...]:
        return tuple(p for p in self.probes if p.outcome is not Outcome.OK) if "probes" in self.__dict__ else \
            tuple(Probe.from_row(self.info.task, row) for row in self.rows if row[2] != "ok")

    @functools.cached_property
    def links(self) -> tuple[Link, ...]:
        out = []
        for dst, _, outcome, _, _, _, rtts, sent, lost, mbps, _, instance in self.rows:
            if outcome == "ok":
                s = sorted(rtts)
                out.append(Link(dst, instance, s[len(s) // 2] if s else None, sent, lost, mbps))
        return tuple(out)

    def answered(self) -> Iterator[tuple[str, str]]:
        """(task, instance) of every process this task reached, whichever task it claimed to be."""
        for row in self.rows:
            if row[2] in _ANSWERED and row[11]:
                yield (row[5] or row[0]), row[11]

    def to_json(self) -> dict[str, Any]:
        """The wire form."""
        return {"info": self.info.to_json(), "probes": [list(r) for r in self.rows],
                "refusals": [r.to_json() for r in self.refusals]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "PeerReport":
        info = TaskInfo.from_json(d["info"])
        rows = tuple(tuple(r) for r in d.get("probes", ()))
        for r in rows:  # cheap shape check here; a bad row fails the whole report, not the judge later
            if len(r) != 12 or r[2] not in _OUTCOMES or type(r[6]) is not list:
                raise ValueError("malformed probe row")
        return cls(info, rows, tuple(Refusal.from_json(r) for r in d.get("refusals", ())))


@dataclass(frozen=True)
class MeshResult:
    """One task's verdict on the whole mesh.

    ``complete`` is False when reports of tasks that were reachable did not
    arrive in time (``missing`` names them); times are wall-clock seconds,
    measured by the caller and passed in.
    """

    task: str
    reports: tuple[PeerReport, ...]
    findings: tuple[Finding, ...]
    complete: bool
    missing: tuple[str, ...]
    started_at: float
    verdict_at: float
    released_at: float | None = None
    probed_at: float | None = None      # own probes settled
    exchanged_at: float | None = None   # every report in (or the deadline)

    @property
    def ok(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def probes(self) -> tuple[Probe, ...]:
        return tuple(p for r in self.reports for p in r.probes)

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "ok": self.ok, "complete": self.complete, "missing": list(self.missing),
                "started_at": self.started_at, "probed_at": self.probed_at, "exchanged_at": self.exchanged_at,
                "verdict_at": self.verdict_at, "released_at": self.released_at,
                "tasks": [{k: v for k, v in r.info.to_json().items() if k not in ("findings", "fingerprint")}
                          for r in self.reports],
                "pairs": [p.to_json() for p in self.probes],
                "refusals": [dict(r.to_json(), at=rep.task) for rep in self.reports for r in rep.refusals]}
