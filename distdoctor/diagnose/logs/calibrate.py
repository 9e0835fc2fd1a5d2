"""Calibrated answers: a confidence that means what it says, and up to three ranked alternatives, each with what
would settle it.

* **Confidence caps for messages that name an effect, not its cause.** A signature's rank says how specific its line
  is, but some specific lines have more than one usual cause; such a verdict is at most ``medium``, with the other
  cause as an alternative (``AMBIGUOUS``). Lines whose category is decided by a cause they do not contain (a damaged
  checkpoint: damaged by what?) or that are read as a cause only by association (an error that names neither the
  resource nor the fault) are ``low``. ``high`` is kept for lines whose cause is the message itself; the bench
  (benchmarks/bench_realworld.py) measures that high verdicts are right >= 95 % of the time on the labelled pool.
* **Alternatives.** The readings the hits themselves offered (other causes and symptoms) come first, then the causes
  known to produce the same lines (``LOOKALIKES``: a task that died silently was often OOM-killed; a hang in a
  collective is a stalled task or a mismatch) -- none for Python's own exception raised in the user's own file, whose
  traceback shows the line of code that raised it. A verdict that rests on no line from the failure's own source -- only
  symptoms, a traceback cut before its exception, or no failure line at all -- lists the usual causes of what the log
  does show (:mod:`.usual_causes`); the categories the words of the lines resemble (:mod:`.wordmodel`) are listed
  only where the resemblance is real (``MIN_RESEMBLANCE``: a guess at 0 % says nothing). Each carries what would
  settle it (:mod:`.settle`).

Pure: a verdict and the hits in, a verdict out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ...model import Category as C, Status
from .conclusion import Alternative, Verdict
from .frames import lines_before, plain_user_error
from .scan import Hit, StreamFacts
from .settle import settle_for
from .usual_causes import MIN_RESEMBLANCE, of_cut_traceback, of_silence, of_symptom
from .wordmodel import model

__all__ = ["calibrate", "AMBIGUOUS", "LOOKALIKES", "MAX_ALTERNATIVES"]

MAX_ALTERNATIVES = 3
_ORDER = {"low": 0, "medium": 1, "high": 2}


@dataclass(frozen=True)
class Ambiguous:
    """A signature whose line has another usual cause: the cap on the verdict's confidence and that cause."""

    cap: str
    other: C
    why: str
    when: str | None = None          # a pattern the root line must match for the cap to apply (None: always)
    more: tuple[C, ...] = ()         # further usual causes, listed after ``other``


# "Requested node configuration is not available": no node of the partition can ever run the request as written
# (more CPUs, memory or GPUs per node than any node has, a feature none has): the job script's mistake as much as
# a shortage
_UNSATISFIABLE = Ambiguous("medium", C.USER_CODE_ERROR, "no node can ever satisfy the request as written: the job "
                           "script asks for what the partition does not have",
                           when=r"Requested node configuration is not available")

# A line that says what broke but not what broke it: the verdict's category is decided by a cause the line does not
# contain. A checkpoint that fails its checksum was cut or overwritten -- by a writer killed while saving, a full disk,
# or a task reading while another rewrites or deletes it -- and only the other logs say which. A file that is no
# table at all is as often a path that names something other than a checkpoint (its .meta or .index file, another
# format) as a damaged one.
_DAMAGED_CHECKPOINT = (
    Ambiguous("low", C.USER_CODE_ERROR, "the path may name a file that is not a checkpoint (its .meta, .index or a "
              "data file instead of the checkpoint's prefix, or another format)",
              when=r"not an sstable|Unable to open table file", more=(C.RESOURCE_EXHAUSTION, C.PEER_CRASHED)),
    Ambiguous("low", C.RESOURCE_EXHAUSTION, "a checkpoint is cut short when the disk or quota fills while it is "
              "written", more=(C.PEER_CRASHED, C.OOM_HOST)),
)
# A line whose words name neither the resource nor the fault, read as GPU memory exhaustion only by association
# (issue threads traced it there): the line that names the cause (the allocator's) is not in the log. The CUDA
# library errors ("failed to create cublas handle", cuDNN's failed initialisation) have a second usual cause, a
# CUDA/cuDNN build that does not match the driver or the GPU; lines that say the allocation failed are left alone.
_GPU_DISGUISED = (
    Ambiguous("low", C.VERSION_MISMATCH, "the same error comes from a CUDA or cuDNN library that does not match the "
              "driver or the GPU", when=r"WhereOp: Race condition"),
    Ambiguous("medium", C.VERSION_MISMATCH, "the same error comes from a CUDA or cuDNN library that does not match "
              "the driver or the GPU", when=r"^(?!.*(?:ALLOC_FAILED|Dst tensor is not initialized))"),
)

# The NVIDIA driver's "GPU has fallen off the bus" (Xid 79) and NVML's lost GPU name a hardware fault, not what the job
# did: the task that used the GPU most often hangs inside the driver (its peers wait for it), or dies with it
_GPU_LOST = Ambiguous("medium", C.HANG_STALLED_WORKER, "a process whose GPU fell off the bus most often hangs inside "
                      "the driver while its peers wait for it in a collective", more=(C.PEER_CRASHED,))
# A process that exits on SIGABRT ended itself: a failed check, an uncaught C++ exception, or an allocation that
# failed (memory, threads) ends the same way; the abort names none of them
_ABORTED = Ambiguous("medium", C.RESOURCE_EXHAUSTION, "an allocation that failed (threads, memory, file handles) "
                     "aborts the process the same way", when=r"(?i)signal 6\b|\(Aborted\)|SIGABRT",
                     more=(C.OOM_HOST,))

AMBIGUOUS: dict[str, Ambiguous | tuple[Ambiguous, ...]] = {
    "nvml-gpu-lost": _GPU_LOST,
    "nvidia-xid": _GPU_LOST,
    "native-segv": _ABORTED,
    # Hydra's proxy names a firewall as the usual reason it cannot connect back to mpiexec; a route missing between
    # the nodes fails the same connect (its "unable to connect from ... (No route to host)" line just before is the
    # same for both when a firewall answers with an ICMP reject)
    "hydra-proxy-upstream-refused": Ambiguous("medium", C.NETWORK_UNREACHABLE, "a route missing between the nodes "
                                              "fails the same connect"),
    "tf-checkpoint-corrupt": _DAMAGED_CHECKPOINT,
    "gpu-oom-disguised": _GPU_DISGUISED,
    # SIGILL is a native crash as much as a CPU-feature mismatch: the exit status alone cannot tell them apart; on one
    # node of several it is that node's older CPU (the nodes differ)
    "sigill-exit-132": Ambiguous("medium", C.SEGFAULT_CORE_DUMP, "an illegal instruction is also how a corrupted "
                                 "jump or a bad native extension crashes", more=(C.CONFIG_MISMATCH_ACROSS_WORKERS,)),
    # a job still running at its time limit, or cancelled by a person, was most often one that stopped progressing
    "slurm-time-limit": Ambiguous("medium", C.HANG_STALLED_WORKER, "a job that runs into its time limit has often "
                                  "stopped making progress long before"),
    "slurm-preemption": Ambiguous("medium", C.HANG_STALLED_WORKER, "a step cancelled with no reason given was "
                                  "cancelled by a person (`scancel`), most often because it had stopped progressing",
                                  when=r"CANCELLED AT (?!.*DUE TO)"),
    # Horovod reports the same tensor with different shapes or types: the ranks run different arguments or code
    "horovod-mismatched-shapes": Ambiguous("medium", C.CONFIG_MISMATCH_ACROSS_WORKERS, "ranks that submit one tensor "
                                           "with different shapes run with different arguments (batch size, model)"),
    "horovod-mismatched-dtypes": Ambiguous("medium", C.CONFIG_MISMATCH_ACROSS_WORKERS, "ranks that submit one tensor "
                                           "with different types run different code or environments"),
    # NCCL picks its own ports: an address in use there is an exhausted or reserved ephemeral range more than a
    # second process on a port someone chose
    # (a task's server that cannot bind because the cluster spec gives its twin the same host:port is
    # :mod:`.hindsight`'s: the printed spec says so; without one, another process holding the port is the usual cause)
    "tf-server-bind-failed": Ambiguous("low", C.RESOURCE_EXHAUSTION, "NCCL binds ports it picks itself: a port "
                                       "already in use there means the ephemeral range is exhausted or reserved",
                                       when=r"NCCL WARN"),
    "slurm-unable-to-allocate": _UNSATISFIABLE,
    "slurm-cpu-count": _UNSATISFIABLE,          # the vocab branch's signature for the same Slurm message
    # NCCL's InfiniBand retry counter ran out: the peer's side never acknowledged. NCCL itself says "remote process
    # exited or there was a network error": the fabric between the nodes, or a peer that died (its own log says which)
    "nccl-ib-retry-exceeded": Ambiguous("medium", C.PEER_CRASHED, "a peer process that died stops acknowledging too "
                                        "(NCCL: 'remote process exited or there was a network error')"),
    # TF1's session manager on a non-chief task waits for the chief to initialize the variables: either some variables
    # are not the chief's to initialize (per-worker state), or no running task is the chief (is_chief / TF_CONFIG)
    "tf-uninitialized-variables-wait": Ambiguous("low", C.CONFIG_TF_CONFIG, "the chief that initializes the "
                                                 "variables may not be running, or no task is configured as chief"),
}

# causes known to produce the same lines as the verdict's, most usual first (the alternatives a reader would check)
LOOKALIKES: dict[C, tuple[C, ...]] = {
    C.PEER_CRASHED: (C.OOM_HOST, C.PREEMPTION, C.SEGFAULT_CORE_DUMP),
    C.OOM_HOST: (C.PEER_CRASHED, C.RESOURCE_EXHAUSTION),
    C.OOM_GPU: (C.OOM_HOST, C.RESOURCE_EXHAUSTION),
    C.SEGFAULT_CORE_DUMP: (C.VERSION_MISMATCH, C.OOM_HOST),
    C.USER_CODE_ERROR: (C.VERSION_MISMATCH, C.CONFIG_TF_CONFIG, C.DATA_SHARDING_IMBALANCE),
    C.VERSION_MISMATCH: (C.USER_CODE_ERROR, C.CONFIG_MISMATCH_ACROSS_WORKERS),
    C.CONFIG_MISMATCH_ACROSS_WORKERS: (C.VERSION_MISMATCH, C.HANG_COLLECTIVE_MISMATCH, C.CONFIG_TF_CONFIG),
    C.CONFIG_TF_CONFIG: (C.NETWORK_UNREACHABLE, C.CONFIG_MISMATCH_ACROSS_WORKERS),
    C.NETWORK_UNREACHABLE: (C.FIREWALL_OR_PORT_BLOCKED, C.CONFIG_TF_CONFIG, C.PEER_CRASHED),
    C.FIREWALL_OR_PORT_BLOCKED: (C.NETWORK_UNREACHABLE, C.PEER_UNRESPONSIVE),
    C.PEER_UNRESPONSIVE: (C.NETWORK_UNREACHABLE, C.HANG_STALLED_WORKER, C.PEER_CRASHED),
    C.PORT_IN_USE: (C.CONFIG_TF_CONFIG, C.RESOURCE_EXHAUSTION),
    C.HANG_STALLED_WORKER: (C.HANG_COLLECTIVE_MISMATCH, C.DATA_SHARDING_IMBALANCE, C.STRAGGLER_SLOW_WORKER),
    C.HANG_COLLECTIVE_MISMATCH: (C.CONFIG_MISMATCH_ACROSS_WORKERS, C.HANG_STALLED_WORKER, C.DATA_SHARDING_IMBALANCE),
    C.DATA_SHARDING_IMBALANCE: (C.HANG_STALLED_WORKER, C.USER_CODE_ERROR),
    C.STRAGGLER_SLOW_WORKER: (C.HANG_STALLED_WORKER, C.RESOURCE_EXHAUSTION),
    C.RESOURCE_EXHAUSTION: (C.OOM_HOST, C.CONFIG_TF_CONFIG),
    C.NUMERICAL_DIVERGENCE: (C.USER_CODE_ERROR,),
    C.PREEMPTION: (C.PEER_CRASHED, C.OOM_HOST, C.HANG_STALLED_WORKER),
    C.OTHER: (),
}
_WHY_LOOKALIKE = "a cause known to produce the same lines"


def _ambiguity(v: Verdict) -> Ambiguous | None:
    entry = AMBIGUOUS.get(v.root.sig.name)
    for amb in (entry if isinstance(entry, tuple) else (entry,) if entry else ()):
        if not amb.when or re.search(amb.when, v.root.text.strip()):
            return amb
    return None


def _cap(v: Verdict) -> Verdict:
    if v.root is None or v.category != v.root.sig.category:
        return v
    amb = _ambiguity(v)
    if amb is None:
        return v
    conf = amb.cap if _ORDER[v.confidence] > _ORDER[amb.cap] else v.confidence
    new = (amb.other,) + amb.more
    alts = tuple(Alternative(c, v.culprit, amb.why if c == amb.other else _WHY_LOOKALIKE, settle=settle_for(c))
                 for c in new)
    alts += tuple(a for a in v.alternatives if a.category not in new)
    return replace(v, confidence=conf, alternatives=alts)


def _text_of(v: Verdict, hits: list[Hit], facts: list[StreamFacts]) -> str:
    lines = [h.text for h in hits] + [t for f in facts for t in f.tail]
    return "\n".join(lines)[:20000]


def _only_symptoms(v: Verdict) -> bool:
    """A verdict read from symptoms alone (no line says what failed): the cause is in a log we do not have."""
    return v.root is not None and v.root.sig.role.value == "symptom" and v.confidence == "low"


def _guesses(text: str, seen: set[C], floor: float = 0.0) -> list[Alternative]:
    """What the words resemble, best first, from ``floor`` up (``other`` is no alternative: it is the absence of one)."""
    out = []
    for cat, p in model().scores(text):
        if p < floor or len(out) >= MAX_ALTERNATIVES:
            break
        if cat not in seen and cat != C.OTHER:
            out.append(Alternative(cat, None, f"the words of the lines resemble {cat.value} ({p:.0%})",
                                   settle=settle_for(cat)))
    return out


def _fill(v: Verdict, hits: list[Hit], facts: list[StreamFacts]) -> Verdict:
    out: list[Alternative] = []
    for a in v.alternatives:
        if a.category != v.category and a.category not in {b.category for b in out}:
            out.append(a if a.settle else replace(a, settle=settle_for(a.category)))
    lookalikes = [] if _own_error(v, facts) else \
        [Alternative(c, v.culprit, _WHY_LOOKALIKE, settle=settle_for(c)) for c in LOOKALIKES.get(v.category, ())]
    if v.root is None and v.category == C.OTHER:
        # no line is evidence of a failure: what the logs' shape says (two at most), what their words strongly
        # resemble, then the causes that leave no line
        shape, silent = of_silence(facts)
        out += shape[:2] + _guesses(_text_of(v, hits, facts), {v.category}, MIN_RESEMBLANCE) + shape[2:] + silent
    elif v.root is None:
        out += lookalikes + _guesses(_text_of(v, hits, facts), {v.category}, MIN_RESEMBLANCE)
    elif _only_symptoms(v):
        # the nearest reading another line offers (a generic reading of the symptom's own line is the symptom
        # again), the usual causes of the symptom, then what the words resemble
        out = _from_other_lines(v, out, hits)[:1] + of_symptom(v, hits, facts) + lookalikes
        out += _guesses(_text_of(v, hits, facts), {v.category}, MIN_RESEMBLANCE)
    else:
        out += of_cut_traceback(v, facts) + lookalikes
        if v.category == C.OTHER:
            out += _guesses(v.root.text, {v.category})
    return replace(v, alternatives=_distinct(v, out))


def _own_error(v: Verdict, facts: list[StreamFacts]) -> bool:
    """Python's own exception raised in the user's own file, as the traceback before the verdict's line shows: no
    other cause produces that line, so no lookalike is an alternative."""
    if v.root is None or v.category != C.USER_CODE_ERROR:
        return False
    for f in facts:
        before = lines_before(v.root.text, f.tail) if f.name == v.root.stream else None
        if before is not None:
            return plain_user_error(before, v.root.text)
    return False


def _from_other_lines(v: Verdict, readings: list[Alternative], hits: list[Hit]) -> list[Alternative]:
    """The readings that some line besides the verdict's own offers."""
    at = (v.root.stream, v.root.line_no)
    elsewhere = {h.sig.category for h in hits if (h.stream, h.line_no) != at}
    return [a for a in readings if a.category in elsewhere]


def _distinct(v: Verdict, alts: list[Alternative]) -> tuple[Alternative, ...]:
    seen, out = {v.category}, []
    for a in alts:
        if a.category not in seen:
            seen.add(a.category)
            out.append(a)
    return tuple(out[:MAX_ALTERNATIVES])


def calibrate(v: Verdict, hits: list[Hit], facts: list[StreamFacts]) -> Verdict:
    """Cap the confidence of ambiguous messages and rank up to three alternatives, each with what settles it."""
    v = _cap(v)
    if v.status == Status.SUCCEEDED and v.root is None:
        return v
    return _fill(v, hits, facts)
