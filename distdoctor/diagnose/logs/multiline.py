"""Readings that need more than one line: Horovod's stall inspector (a straggler, ranks that left early, a rank
that saved a checkpoint, a collective mismatch), TensorFlowOnSpark's reservations, a traceback cut before its
exception line, a NaN loss, and a printed cluster with a defect behind tasks that cannot reach each other.

Each takes the job's hits (:class:`~.jobhits.JobHits`) and returns a :class:`~.conclusion.Verdict` or None. Pure.
"""
from __future__ import annotations

import re

from ...model import Category, Status
from .clusters import defects, printed_clusters, startup_defect
from .conclusion import Alternative, Verdict
from .jobhits import JobHits, distinct, looked
from .scan import Hit
from .signature import Role

__all__ = ["multi_line_reading", "cut_traceback", "nan_reading", "cluster_defect_behind"]

_FINITE_VAL = re.compile(r"val_loss: (?!nan|inf)[\d.]")


def multi_line_reading(job: JobHits, causes: list[Hit], symptoms: list[Hit], waits: list[Hit]) -> Verdict | None:
    """Readings that need more than one line."""
    # Horovod initialised alone in several processes: they never formed one job.
    alone = job.of("horovod-size-one")
    if len(alone) >= 2 and not causes:
        root = alone[0]
        return Verdict(status=Status.FAILED, category=Category.VERSION_MISMATCH, culprit=None, confidence="medium",
                       code=root.sig.code, summary=f"{len(alone)} processes each initialised Horovod as rank 0 of size 1: "
                       "they trained alone instead of as one job", remedy=root.sig.remedy, root=root,
                       consequences=tuple(alone[1:4]), looked_at=looked(job),
                       settle="`horovodrun --check-build` and the launcher command on each node")
    stalls = job.of("horovod-stall")
    if stalls and not causes:
        # Horovod's stall inspector warns after 60 s of waiting and lists, per missing rank, the tensors waited for.
        # Warnings that keep naming the same one rank but different tensors each time mean the collectives in between
        # completed: that rank is slow every step, not stuck (a stuck rank is missing the same tensors every time)
        per = _missing_per_stall(job, stalls)
        ranks = {r for listed, _ in per for r in listed}
        tensors = [t for _, t in per]
        if len(per) >= 2 and len(ranks) == 1 and all(listed for listed, _ in per) \
                and all(a != b for a, b in zip(tensors, tensors[1:])):
            rank = ranks.pop()
            first = min(stalls, key=lambda h: job.order.get(id(h), 0))
            return Verdict(status=Status.FAILED, category=Category.STRAGGLER_SLOW_WORKER, culprit=rank,
                           confidence="low", code=first.sig.code,
                           summary=f"the other ranks waited for {rank} {len(per)} times, each time in different "
                                   f"collectives (training went on in between): {rank} is slower than its peers and "
                                   "holds every step back",
                           remedy="Find why that rank is slow (its GPU's clocks and temperature, its input pipeline, "
                                  "a busier or slower node) and fix or exclude that node.",
                           root=first, consequences=distinct(first, stalls)[:5], looked_at=looked(job),
                           settle=f"step times per rank (Horovod timeline) and `nvidia-smi -q` on {rank}'s node")
        if _stall_resolved(job, stalls):
            stalls = []    # training finished after the last warning: the wait ended, it was no hang
    if stalls and not causes:
        first = min(stalls, key=lambda h: job.order.get(id(h), 0))
        finished = [h for h in job.of("training-finished") if job.order.get(id(h), 0) < job.order.get(id(first), 0)]
        if finished:
            missing = _missing_ranks(job)
            return Verdict(status=Status.HUNG, category=Category.DATA_SHARDING_IMBALANCE, culprit=None,
                           candidates=tuple(missing), confidence="medium", code=first.sig.code,
                           summary="some ranks finished their data and left training while the others wait for them "
                                   "in a collective" + (f" (missing: {', '.join(missing)})" if missing else ""),
                           remedy="Give every rank the same number of steps: shard the data evenly, or stop all ranks "
                                  "at the shortest shard.", root=first, context=tuple(finished[:3]),
                           looked_at=looked(job), settle="each rank's step count when the stall began")
        saves = [h for h in job.of("checkpoint-save") if h.stream == first.stream and 0 < first.line_no - h.line_no <= 5]
        if saves:
            culprit = saves[-1].writer or "rank:0"
            return Verdict(status=Status.HUNG, category=Category.HANG_STALLED_WORKER, culprit=culprit, confidence="low",
                           code=first.sig.code, summary=f"{culprit} was saving a checkpoint (outside the collective) "
                           "while the other ranks waited for it", remedy="Saving on one rank stalls the others: save "
                           "less often, to faster storage, or asynchronously; raise the collective timeouts.",
                           root=first, context=tuple(saves[-1:]), looked_at=looked(job),
                           settle="how long the save took (the checkpoint file's timestamps)")
        if _missing_ranks(job) and len(stalls) >= 1 and not symptoms:
            missing = _missing_ranks(job)
            if len(missing) == 1 and missing[0].startswith("rank:"):
                # one rank missing from every stalled tensor, the others missing from none: that rank submitted
                # nothing (stuck or behind), rather than something else (a mismatch lists ranks on both sides)
                return Verdict(status=Status.HUNG, category=Category.HANG_STALLED_WORKER, culprit=missing[0],
                               confidence="low", code=first.sig.code,
                               summary=f"every other rank waits in a collective that {missing[0]} never joined: it is "
                                       "stuck or far behind", remedy="Look at what that rank was doing (a stack dump: "
                               "py-spy dump, its input pipeline, I/O, a checkpoint it was writing).", root=first,
                               looked_at=looked(job), settle=f"a stack dump of {missing[0]} during the stall")
            nums = sorted(int(t.split(":")[1]) for t in missing if t.startswith("rank:"))
            # ranks missing different tensors are on both sides of the mismatch (each waits for what the other never
            # submits): no block of ranks that runs other code
            one_side = len({h.text.split("[", 1)[-1] for h in job.of("horovod-missing-rank-entry")}) <= 1
            if len(nums) >= 4 and nums == list(range(nums[0], nums[-1] + 1)) and one_side:
                return Verdict(status=Status.HUNG, category=Category.CONFIG_MISMATCH_ACROSS_WORKERS, culprit=None,
                               candidates=tuple(missing), confidence="low", code=first.sig.code,
                               summary=f"a contiguous block of ranks ({nums[0]}-{nums[-1]}, a whole node's worth) never "
                                       "submitted a collective the other ranks did: those nodes run different code or "
                                       "arguments", remedy="Run identical code, arguments and environment on every node "
                                       "(one image, one command).", root=first, looked_at=looked(job),
                               settle="a diff of the code and command line on each node")
            return Verdict(status=Status.HUNG, category=Category.HANG_COLLECTIVE_MISMATCH, culprit=None,
                           candidates=tuple(missing), confidence="low", code=first.sig.code,
                           summary="ranks submitted different collectives: some never submitted what the others wait "
                                   f"for (missing: {', '.join(missing[:8])})", remedy=first.sig.remedy, root=first,
                           looked_at=looked(job), settle="the code and arguments each rank runs")
    # TensorFlowOnSpark reservations: two TF tasks placed in one executor process.
    dup = _tfos_shared_process(job)
    if dup is not None and not causes:
        return dup
    return None


def _stall_resolved(job: JobHits, stalls: list[Hit]) -> bool:
    """A task reports training finished after the last stall warning."""
    last = max(job.order.get(id(h), 0) for h in stalls)
    return any(job.order.get(id(h), 0) > last for h in job.of("training-finished"))


def _missing_per_stall(job: JobHits, stalls: list[Hit]) -> list[tuple[set[str], str]]:
    """For each stall warning, the ranks it lists as missing (the ``N: [tensor, ...]`` entries below it) and the
    tensors listed."""
    marks = sorted(job.order.get(id(h), 0) for h in stalls)
    per: list[tuple[set[str], list[str]]] = [(set(), []) for _ in marks]
    for h in job.of("horovod-missing-rank-entry"):
        at = job.order.get(id(h), 0)
        idx = max((i for i, m in enumerate(marks) if m < at), default=None)
        if idx is not None and h.named:
            per[idx][0].add(h.named)
            per[idx][1].append(h.text.split("[", 1)[-1])
    return [(ranks, " ".join(sorted(t))) for ranks, t in per]


_RANKS = re.compile(r"missing ranks: ([\d, ]+)", re.I)
_RANK_LINE = re.compile(r"^(\d+): \[")


def _missing_ranks(job: JobHits) -> list[str]:
    out: list[str] = [h.named for h in job.of("horovod-missing-rank-entry") if h.named]
    for h in job.of("horovod-missing-ranks"):
        m = _RANKS.search(h.text)
        if m:
            out += [f"rank:{int(x)}" for x in m.group(1).replace(" ", "").split(",") if x.isdigit()]
        elif h.text.strip().lower().startswith("missing ranks") and not job.of("horovod-missing-rank-entry"):
            out.append("(listed)")    # a header whose entries (`1: [tensor, ...]`) were not recognised
    return sorted(set(out), key=lambda t: (len(t), t))


_TFOS = re.compile(r"'host': '(?P<host>[^']+)', 'ppid': (?P<ppid>\d+), 'job_name': '(?P<job>\w+)'")
_TFOS_IDX = re.compile(r"'task_index': (?P<index>\d+)")


def _tfos_shared_process(job: JobHits) -> Verdict | None:
    """Two TF tasks reserved by one executor process (same host and parent pid) cannot both run."""
    seen: dict[tuple[str, str], str] = {}
    for h in job.of("tfos-reservation"):
        m, mi = _TFOS.search(h.text), _TFOS_IDX.search(h.text)
        if not (m and mi):
            continue
        task = f"{m.group('job').lower()}:{int(mi.group('index'))}"
        key = (m.group("host"), m.group("ppid"))
        if key in seen:
            first = seen[key]
            return Verdict(status=Status.FAILED, category=Category.CONFIG_TF_CONFIG, culprit=first,
                           candidates=(first, task), confidence="medium", code=h.sig.code,
                           summary=f"{first} and {task} were reserved in the same executor process (host {key[0]}, "
                                   f"ppid {key[1]}): one Spark executor cannot host two TensorFlow tasks",
                           remedy=h.sig.remedy, root=h, looked_at=looked(job),
                           settle="the Spark executor count against the TF cluster size")
        seen[key] = task
    return None


def cut_traceback(job: JobHits) -> Verdict | None:
    """A traceback whose exception line is missing: judge by what the task printed before it."""
    tbs = job.of("python-traceback")
    if not tbs:
        return None
    tb = tbs[-1]
    culprit = tb.writer
    for pc in printed_clusters(job.hits):
        if not pc.whole or pc.hits[0].stream != tb.stream:
            continue
        who = pc.own or culprit
        defect = startup_defect(pc, who)
        if defect:
            return Verdict(status=Status.FAILED, category=Category.CONFIG_TF_CONFIG, culprit=who, confidence="low",
                           code="DD872", summary=f"the task crashed at start-up right after printing its cluster "
                           f"configuration, which {defect}", remedy="Fix the cluster in TF_CONFIG (the operator's "
                           "replica specs): the strategy this task runs expects that entry.", root=tb,
                           context=pc.hits[:1], looked_at=looked(job),
                           settle="the exception line at the end of the traceback")
    cfg = [h for h in job.of("python-tf-config-frame", "python-cluster-config-frame")
           if h.stream == tb.stream and h.line_no > tb.line_no]
    if cfg:
        return Verdict(status=Status.FAILED, category=Category.CONFIG_TF_CONFIG, culprit=culprit, confidence="low",
                       code=cfg[-1].sig.code, summary="the task died inside TensorFlow's code that reads its cluster "
                       "(its traceback ends in " + cfg[-1].text.strip()[:160] + ")", remedy=cfg[-1].sig.remedy,
                       root=tb, context=tuple(cfg[-1:]), looked_at=looked(job),
                       settle="the exception line at the end of the traceback")
    net = [h for h in job.of("python-network-frame") if h.stream == tb.stream and h.line_no > tb.line_no]
    if net:
        # the task died inside a network call; on Kubernetes an outbound call that fails at start-up is most often
        # blocked (a network policy, a service-mesh sidecar not yet ready), elsewhere the address is unreachable
        k8s = _on_kubernetes(job)
        return Verdict(status=Status.FAILED,
                       category=Category.FIREWALL_OR_PORT_BLOCKED if k8s else Category.NETWORK_UNREACHABLE,
                       culprit=culprit, confidence="low", code=net[-1].sig.code,
                       summary="the task died inside a network call (its traceback ends in " + net[-1].text.strip()[:120]
                               + ")" + ("; on Kubernetes such calls are most often blocked by a network policy or a "
                                        "sidecar that is not ready yet" if k8s else ""),
                       remedy="Check that the task may reach that address from where it runs: DNS, egress rules, "
                              "proxies; on Kubernetes network policies and service-mesh sidecars (Istio: "
                              "`sidecar.istio.io/inject: \"false\"` on the job's pods, or holdApplicationUntilProxyStarts).",
                       root=tb, context=tuple(net[-1:]), looked_at=looked(job), settle="the exception line at the end of the traceback")
    return Verdict(status=Status.FAILED, category=Category.USER_CODE_ERROR, culprit=culprit, confidence="low",
                   code=tb.sig.code, summary="a Python traceback ended the task, but its exception line is not in the "
                   "log", remedy="Read the exception at the end of the full traceback; its last frame in your code is "
                   "where to look.", root=tb, looked_at=looked(job),
                   settle="the end of the traceback (the exception line)")


_K8S_MARKS = ("k8s-oomkilled", "k8s-backoff", "k8s-evicted", "k8s-exit-code", "k8s-pod-running",
              "k8s-api-unreachable", "k8s-insufficient", "k8s-killing-container", "k8s-image-pull")



def _on_kubernetes(job: JobHits) -> bool:
    return any(h.sig.name in _K8S_MARKS for h in job.hits) or any(f.on_kubernetes for f in job.facts.values())


_UNREACHED = (Category.PEER_UNRESPONSIVE, Category.NETWORK_UNREACHABLE, Category.FIREWALL_OR_PORT_BLOCKED)


def cluster_defect_behind(v: Verdict, hits: list[Hit]) -> Verdict | None:
    """Tasks that cannot reach each other (or a log that shows nothing else) under a cluster the log printed with a
    static defect -- a peer at ``localhost`` among remote hosts, two tasks at one address, an index past its job:
    the defect is the cause, the waiting and the refused connections are its consequences (same rules as `check`)."""
    reached = v.root is None or v.root.sig.role in (Role.SYMPTOM, Role.WAIT) or v.category in _UNREACHED
    if not reached:
        return None
    for pc in printed_clusters(hits):
        found = defects(pc)
        if not found:
            continue
        f = found[0]
        cons = ((v.root,) if v.root is not None else ()) + tuple(v.consequences)
        seen = v.status in (Status.FAILED, Status.HUNG)
        return Verdict(status=v.status if seen else Status.UNKNOWN, category=Category.CONFIG_TF_CONFIG,
                       culprit=f.culprit or v.culprit,
                       confidence="medium" if seen else "low", code=f.code,
                       summary=f"the cluster printed in the log: {f.summary}"
                               + (f"; the other lines are what that causes ({v.summary})" if seen else ""),
                       remedy=f.remedy or "Fix the addresses in TF_CONFIG (or the operator's replica specs) so "
                                          "that every task is listed at an address the others can reach.",
                       root=pc.hits[0], context=pc.hits[1:3], consequences=distinct(pc.hits[0], cons)[:6],
                       alternatives=((Alternative(v.category, v.culprit, v.summary[:200]),) if v.root is not None
                                     else ()) + v.alternatives[:2],
                       looked_at=v.looked_at, settle=None if seen else "whether the job failed: every task's log")
    return None


def nan_reading(job: JobHits) -> Verdict | None:
    nans = job.of("tf-nan-progress")
    if not nans:
        return None
    real = [h for h in nans if not _FINITE_VAL.search(h.text)]
    if not real:
        return None
    root = real[0]
    return Verdict(status=Status.FAILED, category=Category.NUMERICAL_DIVERGENCE, culprit=root.writer, confidence="medium",
                   code=root.sig.code, summary="the training loss became NaN/Inf", remedy=root.sig.remedy, root=root,
                   consequences=tuple(real[1:4]), looked_at=looked(job), settle="the loss curve before the first NaN")

