"""Rules that only logs need (DD150-DD199), for ``distdoctor diagnose``.

``distdoctor run`` knows exit codes, signals and stacks; a post-mortem from
logs knows only what the tasks printed. These checks read the same
:class:`JobObservation` (``source == "logs"``) and cover what the process
rules cannot see from logs alone:

* the logs simply stop (``job.hang.kind == "silent"``, judged by
  :func:`judge_silence` when the observation is built) -- a hang, with the
  candidates and what would tell them apart when the logs do not decide;
* a peer that never joined the cluster (the coordination service's
  ``Waiting for 1/2 tasks to connect ... Example stragglers:`` names it);
* tasks that disagree about the cluster (printed cluster specs / TF_CONFIG,
  coordination-service registration errors) or a task that believes it has
  another task's index;
* a peer reported only through missed heartbeats and timeouts -- alive but
  frozen or cut off -- as opposed to a dead one, whose sockets reset;
* tasks whose logs end in errors that no other rule attributes.

Pure functions, in this module's :data:`RULES`; the engine runs their checks (:mod:`.rules`).
"""
from __future__ import annotations

import re
from collections import Counter

from ..catalogue import Rule, RuleList
from ..cluster.drift import DRIFT_MARK
from ..model import Category, Evidence, Severity, format_clock
from .events import EventKind, LogEvent, unresolved_waits
from .observations import HangVerdict, JobObservation, TaskObservation
from .taskfacts import PROPAGATED_ABORT, completed, evidence_of, events_of, heard_the_abort

__all__ = ["RULES", "judge_silence", "ended_with_error", "completed", "TERMINAL_KINDS", "CAUSE_KINDS"]

RULES = RuleList()

# A task whose log holds one of these did not go on training afterwards.
TERMINAL_KINDS = frozenset({EventKind.PY_EXCEPTION, EventKind.FATAL_SIGNAL, EventKind.CHECK_FAILED, EventKind.OOM_KILLER,
                            EventKind.OOM_TENSOR, EventKind.OOM_GPU, EventKind.PORT_IN_USE})
# Evidence of a cause on the task that printed it (the process rules attribute these).
CAUSE_KINDS = TERMINAL_KINDS | {EventKind.NCCL_ERROR, EventKind.CUDA_ERROR, EventKind.RESOURCE, EventKind.PREEMPTION}
_HOW_TO_TELL = ("a stack dump of each candidate (`py-spy dump --pid PID`, or `kill -USR1` with faulthandler) "
                "shows which one is outside the collective; `distdoctor run` records this for you")
_CLUSTER_SPEC = re.compile(r"cluster_spec\s*=\s*(\{.*?\})\s*,\s*task_type\s*=\s*'(\w+)'\s*,\s*task_id\s*=\s*(\d+)")
_TF_CONFIG_JSON = re.compile(r"(\{.*\"cluster\".*\})")
_JOB_LIST = re.compile(r"['\"](\w+)['\"]\s*:\s*\[([^\]]*)\]")
_TASK_IN_CONFIG = re.compile(r"['\"]task['\"]\s*:\s*\{[^}]*['\"]type['\"]\s*:\s*['\"](\w+)['\"][^}]*['\"]index['\"]\s*:\s*(\d+)")


_ev = evidence_of
_of = events_of


def ended_with_error(t: TaskObservation) -> bool:
    """The task's log shows it stopped on an error (an uncaught exception, a crash, a kill it reports)."""
    return any(e.kind in TERMINAL_KINDS or (e.kind == EventKind.PEER_SYMPTOM and e.frames) for e in t.events)


def _named_stragglers(job: JobObservation) -> dict[str, list[LogEvent]]:
    """Peers the coordination service kept waiting for: waits it never saw answered.

    Every normal start-up with TF's INFO lines on prints ``Waiting for 1/2
    tasks to connect ... Example stragglers`` while the tasks join; such a wait
    answered by ``... has connected to coordination service`` (or by the
    straggler's own log showing it joined or trained) names no culprit.
    """
    joined = frozenset(t.task for t in job.ordered() if t.steps is not None or _of(t, EventKind.CLUSTER_CONNECTED))
    out: dict[str, list[LogEvent]] = {}
    for t in job.ordered():
        for e in unresolved_waits(t.events, joined):
            if e.peer and e.peer != t.task:
                out.setdefault(e.peer, []).append(e)
    return out


def _never_joined(job: JobObservation, task: str) -> str | None:
    """Why ``task`` never joined the cluster, if its log (or the lack of one) shows that."""
    t = job.tasks.get(task)
    if t is None:
        return "no log of it was given"
    if not t.events and t.steps is None and t.last_output_at is None:
        return "its log is empty"
    if t.steps is None and not _of(t, EventKind.SERVER_STARTED, EventKind.CLUSTER_CONNECTED, EventKind.CLUSTER_SPEC,
                                   EventKind.PROGRESS):
        return "its log shows no server start and no training"
    return None


def judge_silence(job: JobObservation, finished: frozenset[str] = frozenset()) -> HangVerdict | None:
    """The logs' verdict that the job hung: nothing failed, not everyone finished, the logs just stop.

    Returns None when some task ended with an error or reports a lost peer (the
    job failed), or every training task finished -- by its progress lines, or
    because it is in ``finished`` (its log ends with a closing message) -- or
    there are no tasks. Culprits are named only when the logs show who: peers
    named as stragglers by the coordination service, or tasks that printed
    nothing while the others did.
    """
    tasks = job.ordered()
    if not tasks or any(ended_with_error(t) for t in tasks):
        return None
    if any(e.kind == EventKind.PEER_SYMPTOM and e.peer and e.peer != t.task for t in tasks for e in t.events):
        return None   # a peer is reported lost: the job is failing, the rules say who
    if all(t.task.startswith(("ps:", "evaluator:")) and t.steps is None for t in tasks):
        # a parameter server blocks in server.join() and prints nothing after start-up; an evaluator prints metrics
        # for a checkpoint's global step and waits for the next checkpoint: neither trains, and either log just stops
        return None
    trainers = [t for t in tasks if t.steps is not None]
    if trainers and all(completed(t) or t.task in finished for t in trainers):
        return None
    if not trainers and tasks and all(t.task in finished for t in tasks):
        return None
    stamps = [t.last_output_at for t in tasks if t.last_output_at is not None]
    progress = [t.last_progress_at for t in tasks if t.last_progress_at is not None]
    declared = max(stamps) if stamps else 0.0
    since = max(progress) if progress else (min(stamps) if stamps else 0.0)
    culprits: list[str] = [name for name in _named_stragglers(job) if name not in job.tasks or not completed(job.tasks[name])]
    reason = ""
    if culprits:
        reason = "the coordination service kept waiting for " + ", ".join(culprits)
    else:
        silent = [t.task for t in tasks if not t.events and t.steps is None]
        if silent and len(silent) < len(tasks):
            culprits = silent
            reason = ", ".join(silent) + " printed nothing while the others started"
    if not reason:
        reason = "no task reports an error or finishes; the logs simply stop"
    waiting = tuple(t.task for t in tasks if t.task not in culprits)
    return HangVerdict(kind="silent", declared_at=declared, since=since, culprits=tuple(culprits), waiting=waiting,
                       reason=reason)


def _task_line(t: TaskObservation, role: str) -> Evidence:
    parts = []
    if t.steps is not None:
        parts.append(f"{t.steps} steps")
    parts.append("last progress " + (format_clock(t.last_progress_at) if t.last_progress_at else "never"))
    parts.append("last output " + (format_clock(t.last_output_at) if t.last_output_at else "never"))
    return Evidence(task=t.task, ts=t.last_output_at, text="log stops: " + ", ".join(parts), role=role)


@RULES.check(code="DD150", rank=21, role="hang", name="logs-stop", category=Category.HANG_STALLED_WORKER, title="The logs simply stop",
             detects="Logs in which no task reports an error and not every task finishes: the job stopped making progress and nobody said why.",
             why="A stalled worker makes its peers wait inside the all-reduce forever without printing anything; from the logs the job just goes quiet.",
             evidence="Where each task's log stops, its last progress and step count; tasks that printed nothing; peers named as stragglers.",
             remedy="Take a stack dump of every task while it hangs (`py-spy dump --pid PID`): the one outside the collective is the culprit. "
                    "Or re-run under `distdoctor run`, which records every task's stack at the hang.")
def _logs_stop(rule: Rule, job: JobObservation):
    h = job.hang
    if h is None or h.kind != "silent":
        return
    if any(_never_joined(job, name) for name in _named_stragglers(job)):
        return  # DD151 names it
    if any(check(job) for other, check in RULES.checks if other.role == "hang" and other is not rule):
        return  # a more specific log rule explains the hang
    tasks = job.ordered()
    culprit = h.culprits[0] if len(h.culprits) == 1 else None
    candidates = h.culprits if len(h.culprits) > 1 else (() if culprit else tuple(t.task for t in tasks))
    steps = [f"{t.task} {t.steps}" for t in tasks if t.steps is not None]
    summary = (f"the job hung: {h.reason}"
               + (f" (last progress {format_clock(h.since)}" + (f"; steps: {', '.join(steps[:8])}" if steps else "") + ")" if h.since else ""))
    category = None
    if culprit and culprit in h.culprits and "printed nothing" in h.reason:
        category = Category.NETWORK_UNREACHABLE
        summary += f"; {culprit} may never have started or could not reach its peers"
    if culprit is None:
        summary += ". The logs do not say which task is stuck: " + _HOW_TO_TELL
    ev = [_task_line(t, "cause" if t.task in h.culprits else "context") for t in tasks[:12]]
    yield rule.finding(culprit=culprit, at=h.since or None, summary=summary, evidence=ev, candidates=candidates,
                       category=category)


@RULES.check(code="DD151", rank=48, role="hang", name="peer-never-joined", category=Category.NETWORK_UNREACHABLE, title="A peer never joined the cluster",
             detects="The coordination service waits for tasks to connect and names a straggler whose log is missing, empty, or shows it never started its server.",
             why="Every other task blocks at startup until the cluster is complete; the missing task's own log, if any, says nothing.",
             evidence="`Waiting for N/M tasks to connect ... Example stragglers: /job:worker/replica:0/task:1` and the straggler's log.",
             remedy="Check that the named task was started at all (scheduler, pod status), that its host name resolves and its port is reachable "
                    "from the others (firewall, security group), and that its TF_CONFIG names the same cluster.")
def _never_joined_rule(rule: Rule, job: JobObservation):
    for name, evs in _named_stragglers(job).items():
        why = _never_joined(job, name)
        if not why:
            continue
        evs = sorted(evs, key=lambda e: e.ts or 0)
        waiters = sorted({e.task for e in evs if e.task})
        yield rule.finding(culprit=name, at=evs[0].ts,
                           summary=f"{name} never joined the cluster: {', '.join(waiters)} waited for it to connect, and {why}",
                           evidence=[_ev(e, "consequence") for e in evs[:3]])


@RULES.check(code="DD152", rank=45, role="hang", name="cluster-mismatch", category=Category.CONFIG_MISMATCH_ACROSS_WORKERS, title="Tasks disagree about the cluster",
             detects="Tasks that printed different cluster specs (TF_CONFIG, `MultiWorkerMirroredStrategy with cluster_spec = ...`), or coordination-service errors about tasks outside the cluster or registered twice.",
             why="Tasks with different cluster definitions wait for peers that will never come or reject each other at registration.",
             evidence="The cluster spec each task printed; `not in the cluster` / `Duplicate task registration` / `different incarnation` lines.",
             remedy="Generate every task's TF_CONFIG from one cluster definition (same jobs, same addresses, in the same order); only `task` may differ.")
def _cluster_mismatch(rule: Rule, job: JobObservation):
    specs: dict[str, tuple[str, LogEvent]] = {}
    for t in job.ordered():
        for e in _of(t, EventKind.CLUSTER_CONNECTED, EventKind.CLUSTER_SPEC):
            spec = _spec_of(e.text)
            if spec:
                specs[t.task] = (spec, e)
    if len(specs) >= 2 and len({s for s, _ in specs.values()}) > 1:
        counts = Counter(s for s, _ in specs.values())
        top, n = counts.most_common(1)[0]
        odd = [task for task, (s, _) in specs.items() if s != top]
        majority = n > len(specs) - n
        culprit = odd[0] if majority and len(odd) == 1 else None
        yield rule.finding(culprit=culprit, at=min((e.ts for _, e in specs.values() if e.ts), default=None),
                           candidates=() if culprit else tuple(sorted(specs)),
                           summary=(f"{culprit} was given a different cluster than the other tasks" if culprit else
                                    "the tasks were given different clusters (no majority tells which one is wrong)"),
                           evidence=[_ev(e, "cause" if task in odd else "context") for task, (_, e) in list(specs.items())[:6]])
        return
    for t in job.ordered():
        for e in _of(t, EventKind.TF_ERROR):
            if any(m in e.text for m in ("not in the cluster", "Unexpected task registered", "Duplicate task registration",
                                         "connects to a wrong cluster")):
                named = e.peer if e.peer else None
                yield rule.finding(culprit=named, at=e.ts, candidates=() if named else tuple(job.tasks),
                                   summary=f"the coordination service rejected {named or 'a task'}: " + e.text[:200],
                                   evidence=[_ev(e)])
                return


def _spec_of(text: str) -> str | None:
    m = _CLUSTER_SPEC.search(text)
    body = m.group(1) if m else None
    if body is None:
        m2 = _TF_CONFIG_JSON.search(text)
        body = m2.group(1) if m2 else None
    if body is None:
        return None
    jobs = _JOB_LIST.findall(body)
    jobs = [(j, a) for j, a in jobs if j not in ("task",)]
    if not jobs:
        return None
    return ";".join(f"{j}=" + ",".join(x.strip().strip("'\"") for x in addrs.split(",") if x.strip())
                    for j, addrs in sorted(jobs))


def _claimed_task(text: str) -> str | None:
    m = _CLUSTER_SPEC.search(text)
    if m:
        return f"{m.group(2)}:{m.group(3)}"
    m = _TASK_IN_CONFIG.search(text)
    if m:
        return f"{m.group(1)}:{m.group(2)}"
    return None


@RULES.check(code="DD153", rank=42, role="hang", name="wrong-task-index", category=Category.CONFIG_TF_CONFIG, title="A task believes it is another task",
             detects="A log whose task (from its file name or prefix) printed a TF_CONFIG or cluster spec naming a different task type or index.",
             why="Two processes with the same index fight over one port and one place in the ring; the missing index is waited for forever.",
             evidence="The task/index each log printed, against the task its log belongs to.",
             remedy="Give each process its own `task.index` in TF_CONFIG (0..N-1, unique per job type).")
def _wrong_index(rule: Rule, job: JobObservation):
    for t in job.ordered():
        if t.task.startswith("rank:"):
            # a launcher's rank (srun's task N, mpirun's rank N) is not a TensorFlow task: the script maps it to one
            # (rank 0 the chief, rank N worker N-1, ...), so the task its TF_CONFIG names is no contradiction
            continue
        for e in _of(t, EventKind.CLUSTER_CONNECTED, EventKind.CLUSTER_SPEC):
            claimed = _claimed_task(e.text)
            if claimed and claimed != t.task:
                yield rule.finding(culprit=t.task, at=e.ts, evidence=[_ev(e)],
                                   summary=f"the log of {t.task} says this process is {claimed}: its TF_CONFIG has the wrong task")
                break


@RULES.check(code="DD154", rank=88, name="tf-config-changed", category=Category.CONFIG_TF_CONFIG,
             title="A task runs with a TF_CONFIG other than the one it was given",
             detects="`distdoctor run` gave each task its TF_CONFIG; the bootstrap agent saw a task's process hold another one (a wrapper or the script changed it before TensorFlow read it) with an address where no task listens, another task's index, or a different set of tasks. The supervisor notes it in that task's log (`[distdoctor] worker:1 runs with a TF_CONFIG other than the one distdoctor gave it: ...`).",
             why="TensorFlow waits at start-up, silently and for ever, for a peer at an address nobody listens on; two tasks with one index fight over one port and the other index never joins. The healthy tasks' symptoms (waiting, a port in use) name the wrong task.",
             evidence="The TF_CONFIG the process held, and what is wrong with it against the job's.",
             remedy="Do not rewrite TF_CONFIG inside the task (or compute it from the same cluster definition for every task): under `distdoctor run` leave it as given; with your own launcher, generate every task's TF_CONFIG from one cluster list, only `task` differing.")
def _tf_config_changed(rule: Rule, job: JobObservation):
    for t in job.ordered():
        for e in _of(t, EventKind.DISTDOCTOR):
            if DRIFT_MARK in e.text:
                what = e.text.split(DRIFT_MARK, 1)[1].lstrip(": ").split(". TF_CONFIG in this process", 1)[0]
                yield rule.finding(culprit=t.task, at=e.ts, evidence=[_ev(e)],
                                   summary=f"{t.task} runs with a TF_CONFIG other than the job's: {what}")
                break


# DD155 (peer-unresponsive-logs) is removed: real SIGKILL runs are reported by their peers through
# missed heartbeats alone as often as SIGSTOP ones, so the logs cannot tell frozen from dead.
RULES.add(
    code="DD155", name="peer-unresponsive-logs", category=Category.PEER_UNRESPONSIVE,
    title="Peers report a task that stopped answering", lifecycle="removed",
    detects="(removed) Peers report a task only through missed heartbeats, never a reset connection.",
    why="Recorded SIGKILL runs show the same heartbeat-only symptoms as frozen tasks; the distinction was wrong.",
    evidence="Heartbeat/timeout lines naming the task.",
    remedy="Use `distdoctor run`, which sees the process state, to tell a frozen task from a dead one.")


# TensorFlow's collective timeout (CommunicationOptions.timeout_seconds) and barrier timeout: the op waited for a
# peer that never joined it -- a stalled peer or one in another collective as often as a lost one
_COLLECTIVE_TIMEOUT = re.compile(r"Collective has timed out during execution|Barrier timed out")


@RULES.check(code="DD156", rank=27, name="unattributed-log-failure", category=Category.PEER_CRASHED, title="Tasks failed on a peer the logs do not show",
             detects="Task logs that end in errors about a lost peer, where no log shows a cause: the peer they name has no log here, or none is named.",
             why="The culprit's log is usually the one that is missing or silent; the errors at hand are its consequences.",
             evidence="The errors that ended each task's log and the peers they name.",
             remedy="Collect the logs of every task (including ones that printed nothing), the kernel log of each node (`dmesg`), and the scheduler's record of each pod/step.")
def _unattributed(rule: Rule, job: JobObservation):
    tasks = job.ordered()
    if any(_of(t, *CAUSE_KINDS) for t in tasks):
        return  # a cause is in the logs: the process rules speak
    failed = [t for t in tasks if ended_with_error(t)]
    if not failed:
        return
    if all(_COLLECTIVE_TIMEOUT.search(e.text or "") for t in failed for e in _of(t, EventKind.PEER_SYMPTOM)):
        return  # a collective that timed out waited for a peer that never joined it: no peer was seen lost
    named = {e.peer for t in tasks for e in _of(t, EventKind.PEER_SYMPTOM) if e.peer and e.peer != t.task}
    if named & set(job.tasks):
        return  # DD107 / DD155 attribute it to a task whose log is here
    first = min((e for t in failed for e in t.events if e.kind == EventKind.PEER_SYMPTOM),
                key=lambda e: (e.ts is None, e.ts or 0), default=None)
    ev = [_ev(e, "consequence") for t in failed for e in [x for x in t.events if x.kind == EventKind.PEER_SYMPTOM][-1:]][:6]
    if len(named) == 1:
        peer = next(iter(named))
        yield rule.finding(culprit=peer, at=first.ts if first else None, evidence=ev,
                           summary=f"{len(failed)} task(s) failed because they lost {peer}; no log of {peer} was given")
        return
    silent = [t.task for t in tasks if not ended_with_error(t)]
    cands = tuple(sorted(named)) or tuple(silent)
    yield rule.finding(culprit=None, at=first.ts if first else None, evidence=ev, candidates=cands,
                       summary=f"{len(failed)} task(s) failed on a lost peer, and the logs do not show which task was lost"
                               + (f"; candidates: {', '.join(cands)}" if cands else "")
                               + ". The missing logs, each node's `dmesg` and the scheduler's events would tell them apart.")


_SLOW_CALLBACK = re.compile(r"Callback method `(\w+)` is slow compared to the batch time \(batch time: ([\d.]+)s vs `\w+` time: ([\d.]+)s\)")


@RULES.check(code="DD157", name="slow-callback-straggler", category=Category.STRAGGLER_SLOW_WORKER,
             title="Keras reports one task's callbacks as slower than its steps",
             detects="Keras's `Callback method ... is slow compared to the batch time` warning on some tasks and not on the others.",
             why="In synchronous training every step waits for the slowest worker; a slow callback on one task slows them all, and their own step times look the same.",
             evidence="The Keras warning with the batch and callback times, and which tasks printed it.",
             remedy="Make that task's callbacks cheaper (log less often, move work off the training thread), or run them only on the chief.")
def _slow_callback(rule: Rule, job: JobObservation):
    hits: dict[str, LogEvent] = {}
    for t in job.ordered():
        for e in _of(t, EventKind.TF_ERROR):
            if _SLOW_CALLBACK.search(e.text):
                hits.setdefault(t.task, e)
                break
    trainers = [t for t in job.ordered() if t.steps is not None]
    if not hits or len(hits) >= max(2, len(trainers)):
        return
    for task, e in hits.items():
        m = _SLOW_CALLBACK.search(e.text)
        yield rule.finding(culprit=task, at=e.ts, severity=Severity.WARNING, evidence=[_ev(e)],
                           summary=f"{task}'s `{m.group(1)}` callback takes {float(m.group(3)):.3f} s against a "
                                   f"{float(m.group(2)):.3f} s step; every step of the job waited for it")


_CONNECT_FAILED = "failed to connect to all addresses"
_GRPC_ADDRESS = re.compile(r"ipv[46]:\[?([0-9A-Fa-f.:]+?)\]?:(\d+)\b|dns:([\w.-]+):(\d+)")


def first_hand_connect_failures(t: TaskObservation) -> list[tuple[LogEvent, str | None, str | None]]:
    """(event, peer, address) for each time this task itself failed to connect to a peer.

    A propagated abort (``Collective ops is aborted by: ...``) repeats another task's error; the
    first-hand one is the E-level line that says ``failed to connect to all addresses`` without
    it. The peer is named by the ``Additional GRPC error information from remote target
    /job:worker/replica:0/task:1`` line that follows it.
    """
    out = []
    evs = [e for e in t.events if e.kind == EventKind.PEER_SYMPTOM]
    for i, e in enumerate(evs):
        if _CONNECT_FAILED not in e.text or PROPAGATED_ABORT in e.text or e.text[:1] not in ("E", "W", "F"):
            continue
        peer = next((n.peer for n in evs[i + 1:i + 3] if n.peer and n.line_no <= e.line_no + 2), None)
        m = _GRPC_ADDRESS.search(e.text)
        addr = (f"{m.group(1)}:{m.group(2)}" if m.group(1) else f"{m.group(3)}:{m.group(4)}") if m else None
        out.append((e, peer, addr))
    return out


@RULES.check(code="DD158", rank=78, name="cannot-reach-a-live-peer", category=Category.CONFIG_MISMATCH_ACROSS_WORKERS,
             title="One task cannot connect to a peer that the others reach",
             detects="A task fails first-hand with `failed to connect to all addresses ... Connection refused` to a peer, while that peer's own log shows it alive and every other task got the error only as a propagated `Collective ops is aborted by`.",
             why="TensorFlow aborts the collective on every task, so each log shows the same error and the peer named in it looks lost; but only the task that could not connect has a different idea of where the peer is -- usually its own TF_CONFIG lists another address for it.",
             evidence="The first-hand connect failure with the address it tried, and the peer's own log receiving the abort.",
             remedy="Compare that task's TF_CONFIG with the others' (`distdoctor check --mesh` on every task names the odd one); if the configs agree, the path from that host to the peer is blocked.")
def _cannot_reach_live_peer(rule: Rule, job: JobObservation):
    failures = {t.task: first_hand_connect_failures(t) for t in job.ordered()}
    for t in job.ordered():
        for e, peer, addr in failures[t.task][:1]:
            target = job.tasks.get(peer) if peer else None
            if target is None or peer == t.task or not heard_the_abort(target):
                continue
            if target.signal is not None:
                continue   # it died: a crash rule speaks
            others = [o for o in job.ordered() if o.task not in (t.task, peer)]
            if any(p == peer and a == addr for o in others for _, p, a in failures[o.task]):
                continue   # the others cannot reach it at that address either: the peer is unreachable
            at = f" at {addr}" if addr else ""
            abort = next(x for x in target.events if x.kind == EventKind.PEER_SYMPTOM and PROPAGATED_ABORT in x.text)
            yield rule.finding(
                culprit=t.task, at=e.ts, severity=Severity.ERROR,
                summary=f"{t.task} could not connect to {peer}{at}, yet {peer} was alive and the other tasks reached "
                        f"it: {t.task}'s TF_CONFIG likely lists another address for {peer} (or the path from "
                        f"{t.task} to {peer} is blocked)",
                evidence=[_ev(e), Evidence(task=peer, ts=abort.ts, text=abort.text, role="context")])
