"""The structural line classifier as a declared table: which event kind a line is, from ordered tests.

Each :class:`LineKind` row names the literals a line must hold for its test to pass (one of them, ``caseless`` ones in
any ASCII case) and the test itself (a guard over the cleaned line, ``text``, and its lower case, ``low``). The
rows are tried in order; the first that answers decides (an answer may be "nothing": known noise). A row with no
literals is tried on every line (its test begins with a one-character check).

:func:`classify` tries every row. :func:`classify_hits` tries only the rows whose literals the prefilter found on
the line and the rows without literals: a row's literals are necessary for its test, so a row left out could not
have answered. The prefilter finds a literal by a structural keyword it holds (``taskfilter.EXPRESSIONS``: a weaker,
still necessary condition) or, holding none, by a pattern of its own (:data:`PATTERNS`, compiled by :mod:`.prescan`
after the keywords); the structural reader's candidate lines come with every such pattern found. The hits are the
raw line's; :class:`~distdoctor.diagnose.logparse.TaskLogParser` uses them only when the cleaned text is a piece of
that raw line (cleaning removed no colour code, no ``\\r`` redraw, nothing in the middle), so every literal of the
text is found in it. Pure.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ..events import EventKind
from .formats import _ABSL, _ABSL_CLOCK, _OLD_TF, _TASK_PATH
from .progress import _EPOCH, _progress
from .taskfilter import EXPRESSIONS

__all__ = ["LineKind", "KINDS", "LITERALS", "CASELESS", "PATTERNS", "classify", "classify_hits"]

_NOISE = (
    "failed call to cuInit",
    "oneDNN custom operations are on",
    "Could not find cuda drivers",
    "Unable to register cu",
    "This TensorFlow binary is optimized",
    "TF-TRT Warning",
    "All log messages before absl::InitializeLog",
    "will not be optimized because the dataset does not implement",
    "computation placer already registered",
    "Check health not enabled",
    "To enable the following instructions",
    "cuda_dnn.cc",
    "Unable to register cuDNN",
)
# A symptom that says outright the failure came from elsewhere: checked before
# the cause patterns, because these lines often quote the peer's own error
# ("Collective ops is aborted by: ... OOM when allocating ...").
_FROM_PEER = (
    "Collective ops is aborted by",
    "Additional GRPC error information from remote target",
    "The following tasks are unhealthy",
    "stopped sending heartbeats",
    "The tasks have crashed",
    "heartbeat timeout",
    "RecvTensor cancelled",
    "Polled an error from coordination service",
    "Failed to send RPC to coordination service",
    "coordination service encountered an error",
    "Proceeding with agent shutdown anyway",
    "Shutdown barrier in coordination service has failed",
)
_PEER_SYMPTOMS = (
    "Connection reset by peer",
    "Socket closed",
    "failed to connect to all addresses",
    "Connection refused",
    "DEADLINE_EXCEEDED",
    "Deadline Exceeded",
    "is unhealthy",
    "Cancelling all pending collectives",
    "Broken pipe",
    "Connection timed out",
    "Unable to find the relevant tensor remote_handle",
    "Coordination service has stopped",
    "has been set to ERROR",
    "UnavailableError",
    "Collective has timed out",
    "Barrier timed out",
    "Aborting RingReduce",
    "StartAbort",
    "Local rendezvous is aborting",
)
_CONFIG_ERRORS = (
    "that is not in the cluster",
    "Unexpected task registered",
    "Duplicate task registration",
    "connects to a wrong cluster",
)
_WAITING = re.compile(r"Waiting for (\d+)/(\d+) tasks to connect")
_SHELL_CRASHES = ("Segmentation fault", "Aborted", "Bus error", "Illegal instruction", "Floating point exception",
                  "Trace/breakpoint trap")
_SHELL_CRASH = re.compile(r"^(?:.*?: line \d+: +\d+ )?(" + "|".join(map(re.escape, _SHELL_CRASHES)) +
                          r")(?: +\(core dumped\))?(?:\s.*)?$")
# TF reports ENOSPC, EDQUOT, EMFILE and ENFILE as RESOURCE_EXHAUSTED too: such a ResourceExhaustedError is no memory
_NOT_MEMORY = re.compile(r"No space left on device|Disk quota exceeded|Too many open files")

_NO = object()          # a row's test did not answer: try the next row


@dataclass(frozen=True)
class LineKind:
    """One row: the kind it answers (for reading), the literals its test needs, the test."""

    kind: str
    literals: tuple[str, ...]
    test: Callable[[str, str], object]          # (text, low) -> (kind, fields), None (noise) or _NO
    caseless: tuple[str, ...] = ()              # literals matched in any ASCII case (the test reads ``low``)


def _epoch(text, low):
    if text.startswith("Epoch"):     # "Epoch 3/60" and nothing else: no other row can match it
        m = _EPOCH.match(text.strip())
        if m:
            return EventKind.EPOCH, {"epoch": int(m.group(1)), "total": int(m.group(2))}
    return _NO


def _when(words: tuple[str, ...], result) -> Callable[[str, str], object]:
    """The test "one of ``words`` is in the text"."""
    def test(text, low):
        for w in words:
            if w in text:
                return result
        return _NO
    return test


def _fatal(text, low):
    if ("Fatal Python error:" in text or "core dumped" in text or "*** SIG" in text or "Received signal" in text
            or ("received signal" in low and "SIG" in text) or "Caught signal" in text):
        return EventKind.FATAL_SIGNAL, {}
    return _NO


_GRADIENT_FRAMES = ("in _all_reduce_sum_fn", "in all_reduce_sum_gradients")


def _type_mismatch(text, low):
    if "Collective instance" in text and "expected type" in text and "Collective ops is aborted by" not in text:
        return EventKind.COLLECTIVE_MISMATCH, {}
    return _NO


def _shell_crash(text, low):
    return (EventKind.FATAL_SIGNAL, {}) if _SHELL_CRASH.match(text) else _NO


def _absl_fatal(text, low):      # an absl F line, or an old-format TF F line
    if (text[0] == "F" and _ABSL.match(text) is not None) \
            or (text[0].isdigit() and ": F " in text[:40] and _OLD_TF.match(text) is not None):
        return EventKind.CHECK_FAILED, {}
    return _NO


_OOM_KILLER = ("out of memory: killed process", "memory cgroup out of memory", "oom-kill", "oom_reaper",
               "oom_kill event", "oomkilled", "oom killed")


def _oom_killer(text, low):
    for w in _OOM_KILLER:
        if w in low:
            return EventKind.OOM_KILLER, {}
    return _NO


def _oom_gpu(text, low):
    if "CUDA_ERROR_OUT_OF_MEMORY" in text or "CUDA out of memory" in text or ("OOM when allocating" in text and "GPU" in text):
        return EventKind.OOM_GPU, {}
    return _NO


def _not_memory(text, low):
    if "ResourceExhaustedError" in text and _NOT_MEMORY.search(text):
        return EventKind.RESOURCE, {}
    return _NO


def _oom_tensor(text, low):
    if "OOM when allocating" in text or "ResourceExhaustedError" in text or "std::bad_alloc" in text or text.startswith("MemoryError"):
        return EventKind.OOM_TENSOR, {}
    return _NO


def _waiting(text, low):
    m = _WAITING.search(text)
    if m and m.group(1) == "0":
        return EventKind.PEER_CONNECTED, {}      # "Waiting for 0/2 tasks to connect.": every task has joined
    if m or "Example stragglers" in text:
        return EventKind.WAITING_FOR_TASKS, {}
    return _NO


def _nccl(text, low):
    if "NCCL WARN" in text or "NCCL error" in text or "ncclSystemError" in text or "ncclInternalError" in text \
            or "ncclUnhandledCudaError" in text or "ncclRemoteError" in text:
        return EventKind.NCCL_ERROR, {}
    return _NO


_PREEMPTED = ("Received SIGTERM", "SIGTERM received", "DUE TO PREEMPTION", "PreemptionCheckpointHandler")
_PREEMPTED_ANY_CASE = ("was preempted", "preemption notice", "termination notice")


def _preempted(text, low):
    if (("Received SIGTERM" in text or "SIGTERM received" in text or "was preempted" in low or "preemption notice" in low
         or "DUE TO PREEMPTION" in text or "termination notice" in low or "PreemptionCheckpointHandler" in text)
            and "e.g. preemption" not in text):
        return EventKind.PREEMPTION, {}
    return _NO


def _slurm_cancelled(text, low):
    return (EventKind.PREEMPTION, {}) if "CANCELLED AT" in text and "slurmstepd" in text else _NO


def _cluster_spec(text, low):
    if "TF_CONFIG" in text and "cluster" in text and "{" in text:
        return EventKind.CLUSTER_SPEC, {}        # the task printed the cluster it believes in (before joining it)
    return _NO


def _registered(text, low):
    if "connected to coordination service" in text and _TASK_PATH.search(text):
        # The coordination service (on its leader task only) registering a task, itself included:
        # "/job:worker/replica:0/task:1 has connected to coordination service. Incarnation: ..."
        return EventKind.PEER_CONNECTED, {}
    return _NO


# This task joined the cluster. TF 2.21 prints, in order: every task's own coordination agent
# "Coordination agent has successfully connected." (C++ INFO, hidden by TF_CPP_MIN_LOG_LEVEL>=1),
# then, with Python INFO logging on, "Enabled multi-worker collective ops with available devices"
# and "MultiWorkerMirroredStrategy with cluster_spec = ...".
_JOINED = ("Coordination agent has successfully connected", "Enabled multi-worker collective ops",
           "MultiWorkerMirroredStrategy with cluster_spec", "has successfully connected to coordination service")


def _progress_line(text, low):
    if ("/" in text or "step" in low) and ("loss" in low or "step" in low or "[" in text or "━" in text):
        found = _progress(text)
        if found:
            return found
    return _NO


def _tf_error(text, low):        # an absl E line (either clock), or an old-format TF E line
    c = text[0]
    if (c == "E" and (_ABSL.match(text) or _ABSL_CLOCK.match(text))) \
            or (c.isdigit() and ": E " in text[:40] and _OLD_TF.match(text)):
        return EventKind.TF_ERROR, {}
    return _NO


def _distdoctor(text, low):
    return (EventKind.DISTDOCTOR, {}) if text.startswith("[distdoctor]") else _NO


def _noise(text, low):
    for w in _NOISE:
        if w in text:
            return None         # known noise: never an event
    return _NO


_TF_ERROR = (EventKind.TF_ERROR, {})

# The rows, in the order they are tried. Each row's literals: at least one is in every line its test accepts.
KINDS: tuple[LineKind, ...] = (
    LineKind("EPOCH", ("Epoch ",), _epoch),
    LineKind("noise", _NOISE, _noise),
    LineKind("DISTDOCTOR", ("[distdoctor]",), _distdoctor),
    LineKind("PEER_SYMPTOM (from a peer)", _FROM_PEER, _when(_FROM_PEER, (EventKind.PEER_SYMPTOM, {}))),
    LineKind("FATAL_SIGNAL", ("Fatal Python error:", "core dumped", "*** SIG", "Received signal", "Caught signal"), _fatal,
         caseless=("received signal",)),
    LineKind("FATAL_SIGNAL (shell)", _SHELL_CRASHES, _shell_crash),
    LineKind("CHECK_FAILED", ("Check failed:", "CHECK failed"), _when(("Check failed:", "CHECK failed"), (EventKind.CHECK_FAILED, {}))),
    LineKind("CHECK_FAILED (F line)", (), _absl_fatal),
    LineKind("OOM_KILLER", (), _oom_killer, caseless=_OOM_KILLER),
    LineKind("OOM_GPU", ("CUDA_ERROR_OUT_OF_MEMORY", "CUDA out of memory", "OOM when allocating"), _oom_gpu),
    LineKind("RESOURCE (not memory)", ("ResourceExhaustedError",), _not_memory),
    LineKind("OOM_TENSOR", ("OOM when allocating", "ResourceExhaustedError", "std::bad_alloc", "MemoryError"), _oom_tensor),
    LineKind("PORT_IN_USE", ("Address already in use", "Failed to add port to server", "Could not start gRPC server",
                         "No address added out of total"),
         _when(("Address already in use", "Failed to add port to server", "Could not start gRPC server",
                "No address added out of total"), (EventKind.PORT_IN_USE, {}))),
    LineKind("COLLECTIVE_MISMATCH", ("mismatch in the collective instance",),
         _when(("mismatch in the collective instance",), (EventKind.COLLECTIVE_MISMATCH, {}))),
    # the collective group's leader found two members' instances of different types (TF's
    # CollectiveParamResolverLocal: "Collective instance 122 expected type 0 and data_type 9 but got type 0 and
    # data_type 1"): the tasks ran different collectives (an input's end-of-data sync against the gradients)
    LineKind("COLLECTIVE_MISMATCH (types)", ("but got type",), _type_mismatch),
    # "Detected at node CollectiveReduceV2 defined at": a frame of the optimizer's gradient all-reduce says the
    # failing collective was the step's ordinary one (a task in another collective left the step)
    LineKind("GRADIENT_REDUCE", _GRADIENT_FRAMES, _when(_GRADIENT_FRAMES, (EventKind.GRADIENT_REDUCE, {}))),
    LineKind("PEER_CONNECTED / WAITING_FOR_TASKS", ("tasks to connect", "Example stragglers"), _waiting),
    LineKind("TF_ERROR (configuration)", _CONFIG_ERRORS, _when(_CONFIG_ERRORS, _TF_ERROR)),
    # Keras names this task's own callbacks as the slow part of each step
    LineKind("TF_ERROR (slow callbacks)", ("is slow compared to the batch time",),
         _when(("is slow compared to the batch time",), _TF_ERROR)),
    # a worker's data ended before its steps did (sharding imbalance)
    LineKind("TF_ERROR (input ran out)", ("Your input ran out of data",), _when(("Your input ran out of data",), _TF_ERROR)),
    LineKind("PEER_SYMPTOM", _PEER_SYMPTOMS, _when(_PEER_SYMPTOMS, (EventKind.PEER_SYMPTOM, {}))),
    LineKind("NCCL_ERROR", ("NCCL WARN", "NCCL error", "ncclSystemError", "ncclInternalError", "ncclUnhandledCudaError",
                        "ncclRemoteError"), _nccl),
    LineKind("CUDA_ERROR", ("CUDA_ERROR", "cudaError", "CUDA error"),
         _when(("CUDA_ERROR", "cudaError", "CUDA error"), (EventKind.CUDA_ERROR, {}))),
    LineKind("NAN_LOSS", ("Invalid loss, terminating training", "had NaN values", "had Inf values"),
         _when(("Invalid loss, terminating training", "had NaN values", "had Inf values"), (EventKind.NAN_LOSS, {}))),
    LineKind("RESOURCE", ("No space left on device", "Too many open files", "Resource temporarily unavailable",
                      "Cannot allocate memory", "Disk quota exceeded"),
         _when(("No space left on device", "Too many open files", "Resource temporarily unavailable",
                "Cannot allocate memory", "Disk quota exceeded"), (EventKind.RESOURCE, {}))),
    LineKind("PREEMPTION", _PREEMPTED, _preempted, caseless=_PREEMPTED_ANY_CASE),
    LineKind("PREEMPTION (Slurm)", ("CANCELLED AT",), _slurm_cancelled),
    LineKind("CLUSTER_SPEC", ("TF_CONFIG",), _cluster_spec),
    LineKind("SERVER_STARTED", ("Started server with target",),
         _when(("Started server with target",), (EventKind.SERVER_STARTED, {}))),
    LineKind("PEER_CONNECTED (registered)", ("connected to coordination service",), _registered),
    LineKind("CLUSTER_CONNECTED", _JOINED, _when(_JOINED, (EventKind.CLUSTER_CONNECTED, {}))),
    LineKind("PROGRESS / NAN_LOSS (progress line)", (), _progress_line),
    LineKind("TF_ERROR (E line)", (), _tf_error),
)


def _literals() -> tuple[list[str], list[bool], list[tuple[int, ...]]]:
    ids: dict[tuple[str, bool], list[int]] = {}
    for r, row in enumerate(KINDS):
        for lit, c in [(x, False) for x in row.literals] + [(x, True) for x in row.caseless]:
            if re.search(r"\d", lit):
                raise ValueError(f"a line kind's literal may hold no digit (the prefilter reads shapes): {lit!r}")
            ids.setdefault((lit.lower() if c else lit, c), []).append(r)
    keys = list(ids)
    return [k[0] for k in keys], [k[1] for k in keys], [tuple(ids[k]) for k in keys]


LITERALS, CASELESS, _ROWS_OF_LITERAL = _literals()   # literal id -> the literal, whether any case, the rows it leads to


_PLAIN = re.compile(rb"(?:[^\\.^$*+?{}\[\]|()]|\\[^A-Za-z0-9])*")    # no operator; escapes of punctuation only


def _plain(expr: bytes) -> str | None:
    """The text a prefilter expression matches when it is a plain literal, else None."""
    if not _PLAIN.fullmatch(expr):
        return None
    return re.sub(rb"\\(.)", rb"\1", expr).decode()


def _patterns() -> tuple[list[tuple[str, bool]], list[int]]:
    """The prefilter patterns that stand for the table's literals: a literal that holds one of the structural
    prefilter's plain keywords (``taskfilter.EXPRESSIONS``; "Connection refused" holds "Connection refused", "Started
    server with target" holds "Started server") is found by that keyword -- a weaker but still necessary condition:
    no second pattern, no second match per line; the others are patterns of their own, numbered after the keywords.
    Returns (the patterns of their own, the pattern id of each literal)."""
    keywords = [(i, _plain(e)) for i, e in enumerate(EXPRESSIONS)]
    own: list[tuple[str, bool]] = []
    of_literal: list[int] = []
    for lit, c in zip(LITERALS, CASELESS):
        held = [(len(k), i) for i, k in keywords if k is not None and not c and k in lit]
        if held:
            of_literal.append(max(held)[1])        # the longest: the fewest lines its rows are tried on in vain
        else:
            of_literal.append(len(EXPRESSIONS) + len(own))
            own.append((lit, c))
    return own, of_literal


# The patterns the prefilter adds for the table (after the structural keywords), and the rows each structural pattern
# id (a keyword's, or len(EXPRESSIONS) + one of these) leads to.
PATTERNS, _PATTERN_OF = _patterns()
_ROWS_OF: dict[int, tuple[int, ...]] = {}
for _lit, _pid in enumerate(_PATTERN_OF):
    _ROWS_OF[_pid] = tuple(sorted(set(_ROWS_OF.get(_pid, ())) | set(_ROWS_OF_LITERAL[_lit])))
del _lit, _pid
_ALWAYS = tuple(r for r, row in enumerate(KINDS) if not row.literals and not row.caseless)
_TESTS = tuple(row.test for row in KINDS)
_ODD_LOWER = re.compile("[\u0130\u212a]")   # the only non-ASCII characters whose lower case holds ASCII letters
_PLANS: dict[tuple[int, ...], tuple] = {}


def classify(text: str) -> tuple[EventKind, dict] | None:
    """The event kind of one line of text (time stamp prefix removed, cleaned) and its typed fields, or None for lines
    that are not evidence of anything: every row, in order."""
    if not text or len(text) < 3:
        return None
    low = text.lower()
    for test in _TESTS:
        r = test(text, low)
        if r is not _NO:
            return r
    return None


def classify_hits(text: str, hits) -> tuple[EventKind, dict] | None:
    """As :func:`classify`, trying only the rows that ``hits`` lead to and the rows without literals. ``hits``: every
    structural prefilter pattern (ids: ``taskfilter.EXPRESSIONS``, then :data:`PATTERNS`) found on a raw line that
    holds ``text`` whole."""
    if not text or len(text) < 3:
        return None
    if not text.isascii() and _ODD_LOWER.search(text):
        return classify(text)      # a lower case that makes ASCII letters the prefilter's caseless match never saw
    key = tuple(hits)
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        rows = set(_ALWAYS)
        for i in key:
            rows.update(_ROWS_OF.get(i, ()))
        plan = _PLANS[key] = tuple(_TESTS[r] for r in sorted(rows))
    low = text.lower()
    for test in plan:
        r = test(text, low)
        if r is not _NO:
            return r
    return None
