"""Judging a mesh: from the reports the tasks exchanged to findings that name the odd task. Pure.

Policy, in the order the findings are listed:

* **Identity first.** Two processes claiming one task (DD518), a config that
  lists a remote peer at a loopback address (DD511), tasks whose cluster lists
  disagree (DD510, majority vote), another task answering at an address
  (DD509). Probe failures caused by a task's own odd cluster list are folded
  into its DD510 finding instead of blaming the peers it could not find.
* **Then reachability, per culprit.** A failed probe blames its destination,
  unless the source failed against every peer it tried with an outcome that
  implicates the source (wrong token, dropped, unreachable, unresolved) while
  those peers were fine for others: then the source is the odd one. A
  destination that nobody reached and that sent no report "never arrived"
  (DD506).
* **Then differences** in software (DD512), variables (DD513) and command
  lines (DD514), each naming the minority task; with no majority, every task
  is a candidate (:mod:`.meshdiff`).
* **Then link quality** (DD515-DD517) and every task's local host and
  environment findings.
"""
from __future__ import annotations

import functools
import json
import statistics
from collections import Counter, defaultdict
from typing import Iterable, Mapping, Sequence

from ..catalogue import get
from . import host_rules, mesh_rules  # noqa: F401  (register the codes fetched with get)
from ..model import Evidence, Finding, Severity
from .meshdiff import differences, majority, option_map
from .meshmodel import Outcome, PeerReport, Probe
from ..cluster.spec import AddressError, parse_address

__all__ = ["judge_mesh", "majority", "option_map", "PRIORITY"]

#: Order of findings of equal severity: identity, reachability, differences, quality.
PRIORITY = ("DD518", "DD511", "DD510", "DD509", "DD505", "DD502", "DD503", "DD504", "DD506", "DD501", "DD508",
            "DD412", "DD410", "DD512", "DD514", "DD513", "DD507", "DD516", "DD515", "DD517", "DD519")
_SRC_FAULTS = {Outcome.WRONG_TOKEN, Outcome.DROPPED, Outcome.UNREACHABLE, Outcome.UNRESOLVED}
_CODE = {Outcome.DROPPED: "DD502", Outcome.UNREACHABLE: "DD503", Outcome.UNRESOLVED: "DD504",
         Outcome.WRONG_TOKEN: "DD505", Outcome.FOREIGN: "DD508", Outcome.ERROR: "DD503"}
SLOW_FACTOR, SLOW_MIN_EXTRA_MS, SLOW_ABSOLUTE_MS = 5.0, 5.0, 100.0
LOW_THROUGHPUT_FACTOR = 0.25


def _f(code: str, culprit: str | None, summary: str, evidence: Iterable[Evidence] = (), *,
       severity: Severity = Severity.ERROR, candidates: Iterable[str] = (), remedy: str | None = None) -> Finding:
    return get(code).finding(culprit=culprit, summary=summary, evidence=evidence, severity=severity,
                             candidates=candidates, remedy=remedy)


def _ev(task: str | None, text: str, role: str = "cause") -> Evidence:
    return Evidence(task, None, text, role)


def _probe_line(p: Probe) -> str:
    tries = f", {p.attempts} attempt{'s' if p.attempts != 1 else ''} in {p.elapsed_s:.1f} s" if p.attempts else ""
    return f"{p.src} -> {p.dst} at {p.address}: {p.outcome.value}: {p.detail}{tries}"


def _names(tasks: Sequence[str], limit: int = 4) -> str:
    tasks = list(tasks)
    return ", ".join(tasks[:limit]) + (f" and {len(tasks) - limit} more" if len(tasks) > limit else "")


# --- identity ------------------------------------------------------------------------------------
def _index(reports: Sequence[PeerReport]) -> tuple[dict[str, PeerReport], list[Finding]]:
    """One report per task (a bound one first) for the analysis; DD518 for tasks claimed twice."""
    by_task: dict[str, list[PeerReport]] = defaultdict(list)
    for r in reports:
        if all(r.info.instance != o.info.instance for o in by_task[r.task]):
            by_task[r.task].append(r)
    primary, out = {}, []
    for task, reps in by_task.items():
        reps.sort(key=lambda r: not r.info.bound)
        primary[task] = reps[0]
        if len(reps) > 1:
            lines = [f"pid {r.info.pid} on {r.info.hostname}: "
                     + ("listening at " + str(r.info.address) if r.info.bound else f"could not bind ({r.info.bind_error})")
                     for r in reps]
            out.append(_f("DD518", task, f"{len(reps)} processes claim to be {task}: " + "; ".join(lines),
                          [_ev(task, line) for line in lines]))
    return primary, out


def _cluster_diff(mine: Mapping[str, list[str]], ref: Mapping[str, list[str]]) -> list[str]:
    diffs = []
    for job in sorted(set(mine) | set(ref)):
        a, b = mine.get(job), ref.get(job)
        if a is None:
            diffs.append(f"has no {job} job (the others list {len(b)})")
        elif b is None:
            diffs.append(f"has an extra {job} job {a}")
        elif len(a) != len(b):
            diffs.append(f"lists {len(a)} {job} tasks where the others list {len(b)}")
        else:
            diffs.extend(f"lists {job}:{i} at {x} where the others have {y}" for i, (x, y) in enumerate(zip(a, b))
                         if x != y)
    return diffs


def _own_entries(primary: Mapping[str, PeerReport]) -> dict[str, str]:
    """Each task's address as its own cluster list gives it: the task is the authority on that."""
    own = {}
    for t, r in primary.items():
        job, _, index = t.partition(":")
        addrs = r.info.cluster_dict().get(job) or []
        if index.isdigit() and int(index) < len(addrs):
            own[t] = addrs[int(index)]
    return own


def _wrong_views(primary: Mapping[str, PeerReport]) -> dict[str, list[str]]:
    """task -> how its view of its peers differs from those peers' own entries."""
    own = _own_entries(primary)
    wrong: dict[str, list[str]] = defaultdict(list)
    for s, r in primary.items():
        for job, addrs in sorted(r.info.cluster_dict().items()):
            for i, a in enumerate(addrs):
                peer = f"{job}:{i}"
                if peer != s and peer in own and a != own[peer]:
                    wrong[s].append(f"lists {peer} at {a} where {peer} itself has {own[peer]}")
    return dict(wrong)


def _clusters(primary: Mapping[str, PeerReport]) -> tuple[list[Finding], dict[str, list[str]], set[str]]:
    """DD510. Returns findings, the majority cluster (or {}), and the odd tasks.

    Each task is the authority on its own address (it binds there): a task whose view of a peer
    differs from that peer's own entry is the misconfigured one. This names the culprit even with
    two tasks, where no majority exists. Only when every task holds a wrong view (or the lists
    differ in shape alone) does the majority vote decide.
    """
    canon = {t: json.dumps(r.info.cluster_dict(), sort_keys=True) for t, r in primary.items()}
    top, odd = majority(canon)
    if not odd:
        return [], (json.loads(top) if top else {}), set()
    wrong = _wrong_views(primary)
    if wrong and len(wrong) < len(primary):
        out = [_f("DD510", t, f"{t}'s cluster list disagrees with its peers' own addresses: " + "; ".join(d[:3])
                  + (f" and {len(d) - 3} more" if len(d) > 3 else ""),
                  [_ev(t, line) for line in d],
                  remedy=f"fix {t}'s TF_CONFIG (each task's own entry is where it listens)")
               for t, d in sorted(wrong.items())]
        return out, (json.loads(top) if top else {}), set(wrong)
    if top is None:
        groups: dict[str, list[str]] = defaultdict(list)
        for t, c in canon.items():
            groups[c].append(t)
        lines = [f"{_names(sorted(ts))}: {c}" for c, ts in groups.items()]
        return [_f("DD510", None, f"the tasks hold {len(groups)} different cluster lists and none has a majority",
                   [_ev(None, line) for line in lines], candidates=sorted(canon))], {}, set(canon)
    ref = json.loads(top)
    out = []
    for t in odd:
        diffs = _cluster_diff(primary[t].info.cluster_dict(), ref)
        out.append(_f("DD510", t, f"{t}'s cluster list differs from the other {len(canon) - len(odd)} tasks': "
                                  + "; ".join(diffs[:3]), [_ev(t, d) for d in diffs]))
    return out, ref, set(odd)


@functools.lru_cache(maxsize=4096)
def _is_loopback(text: str | None) -> bool:
    try:
        return text is not None and parse_address(text).is_loopback
    except AddressError:
        return False


@functools.lru_cache(maxsize=64)
def _loopback_entries(cluster: tuple) -> tuple[tuple[str, int, str], ...]:
    """(job, index, address) of the loopback entries of a cluster; tasks mostly share one cluster."""
    return tuple((job, i, a) for job, addrs in cluster for i, a in enumerate(addrs) if _is_loopback(a))


def _loopback_for_remote(primary: Mapping[str, PeerReport]) -> tuple[list[Finding], set[str]]:
    """DD511: a task lists a peer at a loopback address, but that peer runs elsewhere."""
    out, culprits = [], set()
    for t, r in primary.items():
        entries = _loopback_entries(r.info.cluster)
        if not entries:
            continue
        selfish = {p.dst for p in r.failures if p.answered_as == t}
        for job, i, addr in entries:
            peer = f"{job}:{i}"
            if peer == t:
                continue
            pr = primary.get(peer)
            elsewhere = pr is not None and (pr.info.hostname != r.info.hostname
                                             or (pr.info.address and not _is_loopback(pr.info.address)))
            if not (elsewhere or peer in selfish):
                continue
            where = f"{pr.info.address} on {pr.info.hostname}" if pr is not None else "another host"
            ev = [_ev(t, f"{t}'s cluster: {job}[{i}] = {addr!r}")]
            if peer in selfish:
                ev.append(_ev(t, f"{t} probed {addr} for {peer} and reached itself"))
            out.append(_f("DD511", t, f"{t}'s TF_CONFIG lists {peer} at {addr}, a loopback address, but {peer} "
                                      f"runs at {where}", ev,
                          remedy=f"list {peer} in {t}'s TF_CONFIG by an address other hosts can reach"))
            culprits.add(t)
    return out, culprits


def _wrong_task(primary: Mapping[str, PeerReport], skip: set[str]) -> list[Finding]:
    """DD509: at the address a config lists for A, B answered."""
    groups: dict[tuple[str, str], list[Probe]] = defaultdict(list)
    for r in primary.values():
        for p in r.failures:
            if p.outcome is Outcome.WRONG_TASK and p.src not in skip and p.answered_as != p.src:
                groups[(p.dst, p.answered_as or "?")].append(p)
    out = []
    for (dst, answered), probes in sorted(groups.items()):
        out.append(_f("DD509", answered, f"at {probes[0].address}, listed for {dst}, {answered} answered "
                                         f"(seen by {_names([p.src for p in probes])})",
                      [_ev(p.src, _probe_line(p)) for p in probes], candidates=(dst, answered)))
    return out


# --- reachability ---------------------------------------------------------------------------------
def _reachability(primary: Mapping[str, PeerReport], odd_cluster: set[str], timeout: float) -> tuple[list[Finding], dict[str, list[Evidence]]]:
    fails = [p for r in primary.values() for p in r.failures if p.outcome is not Outcome.WRONG_TASK]
    ok_by_dst = defaultdict(set)
    for r in primary.values():
        for link in r.links:
            ok_by_dst[link.dst].add(r.task)
    tried = Counter({t: len(r.rows) for t, r in primary.items()})
    failed = Counter(p.src for p in fails)
    folded: dict[str, list[Evidence]] = defaultdict(list)

    def src_is_odd(src: str) -> bool:
        mine = [p for p in fails if p.src == src]
        if tried[src] < 2 or failed[src] < tried[src] or any(p.outcome not in _SRC_FAULTS for p in mine):
            return False
        others_reports = [t for t in primary if t != src]
        if not others_reports:
            return True  # alone with only failures of our own making: more likely us than all of them
        return any(ok_by_dst[p.dst] - {src} for p in mine)

    # every failed handshake involves one task (as prober or as prober's target): that task holds another token,
    # whichever of its probes or its peers' probes of it were finished when the reports were written
    token_fails = [p for p in fails if p.outcome is Outcome.WRONG_TOKEN]
    common = set.intersection(*({p.src, p.dst} for p in token_fails)) if len(token_fails) >= 2 else set()
    odd_token = next(iter(common)) if len(common) == 1 else None
    groups: dict[tuple[str, str], list[Probe]] = defaultdict(list)
    for p in fails:
        if p.src in odd_cluster:
            folded[p.src].append(_ev(p.src, _probe_line(p)))
            continue
        if p.dst in odd_cluster and primary[p.dst].info.address != p.address:
            folded[p.dst].append(_ev(p.src, _probe_line(p) + f" (it listens at {primary[p.dst].info.address})"))
            continue
        if odd_token is not None and p.outcome is Outcome.WRONG_TOKEN:
            groups[("DD505", odd_token)].append(p)
            continue
        if src_is_odd(p.src):
            groups[(_CODE.get(p.outcome, "DD503"), p.src)].append(p)
            continue
        code = _CODE.get(p.outcome, "DD501")
        if p.outcome is Outcome.REFUSED:
            code = "DD501" if (p.dst in primary or ok_by_dst[p.dst]) else "DD506"
        groups[(code, p.dst)].append(p)
    out = []
    for (code, culprit), ps in sorted(groups.items()):
        srcs = sorted({p.src for p in ps})
        addr = ps[0].address
        silent = culprit not in primary
        tail = "; it sent no report either" if silent else ""
        ev = [_ev(p.src, _probe_line(p)) for p in ps]
        if code == "DD505" and culprit == odd_token and not all(p.src == culprit for p in ps):
            summary = (f"{culprit} holds another DISTDOCTOR_TOKEN than the rest of the job: every failed mesh "
                       f"handshake ({len(ps)}, in both directions) involves it")
        elif all(p.src == culprit for p in ps):
            if code == "DD505":
                summary = (f"{culprit} failed the mesh handshake with all {tried[culprit]} peers it tried: it holds "
                           "another DISTDOCTOR_TOKEN than the rest of the job")
            else:
                others = " while they reached each other" if len(primary) > 1 else ""
                summary = (f"{culprit} failed against all {tried[culprit]} peers it tried ({ps[0].outcome.value}: "
                           f"{ps[0].detail}){others}: the fault is on {culprit}'s side")
        elif code == "DD506":
            summary = (f"{culprit} never arrived: {_names(srcs)} tried {addr} for up to {timeout:.0f} s and got "
                       f"connection refused (nothing listening); it sent no report")
        elif code == "DD501":
            summary = f"{culprit} is up, but {_names(srcs)} got connection refused at {addr}"
        elif code == "DD502":
            summary = (f"connections to {culprit} at {addr} were silently dropped (no answer, no refusal) for "
                       f"{_names(srcs)}{tail}")
        elif code == "DD504":
            summary = f"{culprit}'s host name in {addr} did not resolve on {_names(srcs)}{tail}"
        elif code == "DD505":
            summary = (f"{culprit} at {addr} failed the mesh handshake with {_names(srcs)}: it does not share this "
                       f"job's token (another job's task, or another DISTDOCTOR_TOKEN)")
        elif code == "DD508":
            summary = f"something other than {culprit}'s mesh check holds {addr} ({ps[0].detail})"
        else:
            summary = f"{_names(srcs)} cannot reach {culprit} at {addr}: {ps[0].detail}{tail}"
        out.append(_f(code, culprit, summary, ev))
    return out, folded


_REFUSED = {"no-token": "could not prove they hold this job's token",
            "refused-our-token": "could not verify this task's token (another token, another job)",
            "unknown-task": "claimed a task this cluster does not have",
            "wrong-source-address": "claimed a task from an address that is not that task's",
            "malformed-hello": "sent a malformed hello",
            "busy": "came while too many unauthenticated connections were open, or from an address that "
                    "kept failing"}


def _refusals(primary: Mapping[str, PeerReport], findings: list[Finding], known: set[str]) -> list[Finding]:
    """Connections a task's responder refused: a warning (DD507), never an error.

    Refusals are counts per source address (nothing a stranger sent is kept), so a connection that cannot
    prove it holds the token decides nothing: a task of this job with another token shows in the probes
    (DD505). Where there is such a finding about the refusing task, the counts join its evidence.
    """
    out = []
    for t, r in sorted(primary.items()):
        rows = [rf for rf in r.refusals if rf.reason in _REFUSED]
        if not rows:
            continue
        lines = [f"{t} refused {rf.count} connection(s) from {rf.peer} that {_REFUSED[rf.reason]}"
                 for rf in sorted(rows, key=lambda rf: -rf.count)[:10]]
        target = next((i for i, f in enumerate(findings) if f.code == "DD505" and f.culprit == t), None)
        if target is not None:
            f = findings[target]
            findings[target] = _f(f.code, f.culprit, f.summary, f.evidence + tuple(_ev(t, ln) for ln in lines),
                                  candidates=f.candidates)
            continue
        total = sum(rf.count for rf in rows)
        sources = sorted({rf.peer for rf in rows})
        out.append(_f("DD507", None, f"{t} refused {total} connection(s) from {', '.join(sources[:5])}"
                      f"{' and others' if len(sources) > 5 else ''} that did not authenticate as a task of this job",
                      [_ev(t, ln) for ln in lines], severity=Severity.WARNING))
    return out


# --- link quality -----------------------------------------------------------------------------------
def _links(primary: Mapping[str, PeerReport]) -> list[Finding]:
    out = []
    tasks = sorted(primary)
    per_task: dict[str, list[float]] = defaultdict(list)   # RTTs of the pairs a task is part of
    per_dst_rate: dict[str, list[float]] = defaultdict(list)
    rtts, rates = [], []
    for src, r in primary.items():
        for link in r.links:
            if link.lost:
                line = f"{src} -> {link.dst}: {link.lost} of {link.sent} pings unanswered within 1 s"
                out.append(_f("DD516", link.dst, f"{link.lost} of {link.sent} pings from {src} to {link.dst} got no "
                                                 "answer within 1 s", [_ev(src, line)], severity=Severity.WARNING))
            if link.rtt_ms is not None:
                rtts.append(link.rtt_ms)
                per_task[src].append(link.rtt_ms)
                per_task[link.dst].append(link.rtt_ms)
            if link.mbps:
                rates.append(link.mbps)
                per_dst_rate[link.dst].append(link.mbps)
    if rtts:
        overall = statistics.median(rtts)
        for t in tasks:
            if not per_task[t]:
                continue
            m = statistics.median(per_task[t])
            # relative when there are peers to compare with; absolute only for a lone pair
            relative = len(tasks) >= 3 and m > SLOW_FACTOR * overall and m > overall + SLOW_MIN_EXTRA_MS
            if relative or (len(tasks) == 2 and m > SLOW_ABSOLUTE_MS):
                out.append(_f("DD515", t, f"round trips to and from {t} take {m:.1f} ms (median), against "
                                          f"{overall:.1f} ms across the mesh", severity=Severity.WARNING))
    if rates and len(tasks) >= 3:
        overall = statistics.median(rates)
        for t in tasks:
            mine = per_dst_rate[t]
            if mine and statistics.median(mine) < LOW_THROUGHPUT_FACTOR * overall:
                out.append(_f("DD517", t, f"throughput to {t} is {statistics.median(mine):.0f} Mbit/s against "
                                          f"{overall:.0f} Mbit/s across the mesh", severity=Severity.WARNING))
    return out


def _local(primary: Mapping[str, PeerReport], extra: Sequence[PeerReport], me: str) -> list[Finding]:
    """Each task's own host/environment findings (config ones only from us: DD510 covers the others).

    A finding every task reports alike (same rule, same words bar the task's
    name) is shown once, for the job, instead of once per task.
    """
    groups: dict[tuple[str, str], list[tuple[str, Finding]]] = defaultdict(list)
    for t, r in [*primary.items(), *((r.task, r) for r in extra)]:
        for f in r.info.findings:
            if t == me or not f.code.startswith("DD3"):
                groups[(f.code, f.summary.replace(t, "{task}"))].append((t, f))
    out = []
    for (code, _), items in groups.items():
        tasks = {t for t, _ in items}
        if len(primary) > 1 and tasks == set(primary) and all(f.culprit == t for t, f in items):
            rep = next((f for t, f in items if t == me), items[0][1])
            out.append(_f(code, None, f"on all {len(tasks)} reporting tasks: {rep.summary}", rep.evidence,
                          severity=rep.severity, remedy=rep.remedy))
        else:
            out.extend(f for _, f in items)
    return out


def _order(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    sev = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
    prio = {c: i for i, c in enumerate(PRIORITY)}
    seen, out = set(), []
    for f in findings:
        key = (f.code, f.culprit, f.summary)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return tuple(sorted(out, key=lambda f: (sev[f.severity], prio.get(f.code, len(prio)), f.code, f.culprit or "")))


def judge_mesh(reports: Sequence[PeerReport], *, me: str, expected: Sequence[str] = (), missing: Sequence[str] = (),
               timeout: float = 0.0) -> tuple[Finding, ...]:
    """Every finding the exchanged reports support, ordered by the policy above."""
    primary, out = _index(reports)
    loop_findings, loop_culprits = _loopback_for_remote(primary)
    cluster_findings, ref, odd = _clusters(primary)
    odd_cluster = odd | loop_culprits
    reach, folded = _reachability(primary, odd_cluster, timeout)
    for i, f in enumerate(cluster_findings):
        if f.culprit in folded:
            cluster_findings[i] = _f(f.code, f.culprit, f.summary, f.evidence + tuple(folded[f.culprit]),
                                     candidates=f.candidates)
    for i, f in enumerate(loop_findings):
        if f.culprit in folded and f.culprit not in odd:
            loop_findings[i] = _f(f.code, f.culprit, f.summary, f.evidence + tuple(folded[f.culprit]),
                                  remedy=f.remedy)
    out += loop_findings + cluster_findings + _wrong_task(primary, odd_cluster) + reach
    out += _refusals(primary, out, set(expected) | set(primary))
    out += differences(primary)
    out += _links(primary)
    out += _local(primary, [r for r in reports if primary.get(r.task) is not r], me)
    if missing:
        out.append(_f("DD519", None, f"no report arrived from {_names(sorted(missing))} although "
                                     f"{'they were' if len(missing) > 1 else 'it was'} reachable",
                      severity=Severity.WARNING, candidates=sorted(missing)))
    return _order(out)
