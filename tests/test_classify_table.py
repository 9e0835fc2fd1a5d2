"""The line classifier's table (logs/linekinds.py) answers as the ordered classifier it replaced, line by line.

The reference below is the former ``logparse.classify`` as it was (an ordered list of tests), kept here only as the
reference. Over every line of every log of the corpora (tests/realworld, tests/probes, tests/corpus,
benchmarks/data) and of the three generated mixes, cleaned as the parser cleans it:

* the table tried whole (``classify``) answers as the reference;
* each row's literals are necessary: a row that answers a line holds one of its literals (so a row whose literals
  the prefilter did not find could not have answered), and the table tried by the raw line's literals
  (``classify_hits``, as the parser calls it: the text a piece of the raw line) answers as the reference;
* the joint Hyperscan pass (plain, by shape, each reader alone) hands each candidate line exactly the literals
  a plain search of its bytes finds;
* a task's scan with the prefilter's literals gives the same events as with every line classified the full way.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from distdoctor.diagnose.events import EventKind
from distdoctor.diagnose.logs import linekinds, prescan
from distdoctor.diagnose.logs.formats import _ABSL, _ABSL_CLOCK, _OLD_TF, _TASK_PATH, clean_line, split_timestamp
from distdoctor.diagnose.logs.progress import _EPOCH, _progress

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

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
_SHELL_CRASH = re.compile(r"^(?:.*?: line \d+: +\d+ )?(Segmentation fault|Aborted|Bus error|Illegal instruction|"
                          r"Floating point exception|Trace/breakpoint trap)(?: +\(core dumped\))?(?:\s.*)?$")


# TF reports ENOSPC, EDQUOT, EMFILE and ENFILE as RESOURCE_EXHAUSTED too: such a ResourceExhaustedError is no memory
_NOT_MEMORY = re.compile(r"No space left on device|Disk quota exceeded|Too many open files")

def reference(text: str) -> tuple[EventKind, dict] | None:
    """The former logparse.classify, unchanged: one line of text (timestamp prefix already removed).

    Returns the event kind and its typed fields, or None for lines that are
    not evidence of anything.
    """
    if not text or len(text) < 3:
        return None
    if text[0] == "E" and text.startswith("Epoch"):   # "Epoch 3/60" and nothing else: no other branch can match it
        m = _EPOCH.match(text.strip())
        if m:
            return EventKind.EPOCH, {"epoch": int(m.group(1)), "total": int(m.group(2))}
    for noise in _NOISE:
        if noise in text:
            return None
    if text.startswith("[distdoctor]"):
        return EventKind.DISTDOCTOR, {}
    for marker in _FROM_PEER:
        if marker in text:
            return EventKind.PEER_SYMPTOM, {}
    if ("Fatal Python error:" in text or "core dumped" in text or "*** SIG" in text or "Received signal" in text
            or ("received signal" in text.lower() and "SIG" in text) or "Caught signal" in text):
        return EventKind.FATAL_SIGNAL, {}
    if _SHELL_CRASH.match(text):
        return EventKind.FATAL_SIGNAL, {}
    if "Check failed:" in text or "CHECK failed" in text or (text[0] == "F" and _ABSL.match(text) is not None) \
            or (text[0].isdigit() and ": F " in text[:40] and _OLD_TF.match(text) is not None):
        return EventKind.CHECK_FAILED, {}
    low = text.lower()
    if ("out of memory: killed process" in low or "memory cgroup out of memory" in low or "oom-kill" in low
            or "oom_reaper" in low or "oom_kill event" in low or "oomkilled" in low or "oom killed" in low):
        return EventKind.OOM_KILLER, {}
    if "CUDA_ERROR_OUT_OF_MEMORY" in text or "CUDA out of memory" in text or ("OOM when allocating" in text and "GPU" in text):
        return EventKind.OOM_GPU, {}
    if "ResourceExhaustedError" in text and _NOT_MEMORY.search(text):
        return EventKind.RESOURCE, {}
    if "OOM when allocating" in text or "ResourceExhaustedError" in text or "std::bad_alloc" in text or text.startswith("MemoryError"):
        return EventKind.OOM_TENSOR, {}
    if ("Address already in use" in text or "Failed to add port to server" in text or "Could not start gRPC server" in text
            or "No address added out of total" in text):
        return EventKind.PORT_IN_USE, {}
    if "mismatch in the collective instance" in text:
        return EventKind.COLLECTIVE_MISMATCH, {}
    if ("but got type" in text and "Collective instance" in text and "expected type" in text
            and "Collective ops is aborted by" not in text):
        return EventKind.COLLECTIVE_MISMATCH, {}
    if "in _all_reduce_sum_fn" in text or "in all_reduce_sum_gradients" in text:
        return EventKind.GRADIENT_REDUCE, {}
    m = _WAITING.search(text)
    if m and m.group(1) == "0":
        return EventKind.PEER_CONNECTED, {}      # "Waiting for 0/2 tasks to connect.": every task has joined
    if m or "Example stragglers" in text:
        return EventKind.WAITING_FOR_TASKS, {}
    for marker in _CONFIG_ERRORS:
        if marker in text:
            return EventKind.TF_ERROR, {}
    if "is slow compared to the batch time" in text:
        return EventKind.TF_ERROR, {}   # Keras names this task's own callbacks as the slow part of each step
    if "Your input ran out of data" in text:
        return EventKind.TF_ERROR, {}   # a worker's data ended before its steps did (sharding imbalance)
    for symptom in _PEER_SYMPTOMS:
        if symptom in text:
            return EventKind.PEER_SYMPTOM, {}
    if "NCCL WARN" in text or "NCCL error" in text or "ncclSystemError" in text or "ncclInternalError" in text \
            or "ncclUnhandledCudaError" in text or "ncclRemoteError" in text:
        return EventKind.NCCL_ERROR, {}
    if "CUDA_ERROR" in text or "cudaError" in text or "CUDA error" in text:
        return EventKind.CUDA_ERROR, {}
    if "Invalid loss, terminating training" in text or "had NaN values" in text or "had Inf values" in text:
        return EventKind.NAN_LOSS, {}
    if ("No space left on device" in text or "Too many open files" in text or "Resource temporarily unavailable" in text
            or "Cannot allocate memory" in text or "Disk quota exceeded" in text):
        return EventKind.RESOURCE, {}
    if (("Received SIGTERM" in text or "SIGTERM received" in text or "was preempted" in low or "preemption notice" in low
         or "DUE TO PREEMPTION" in text or "termination notice" in low or "PreemptionCheckpointHandler" in text)
            and "e.g. preemption" not in text):
        return EventKind.PREEMPTION, {}
    if "CANCELLED AT" in text and "slurmstepd" in text:
        return EventKind.PREEMPTION, {}
    if "TF_CONFIG" in text and "cluster" in text and "{" in text:
        return EventKind.CLUSTER_SPEC, {}        # the task printed the cluster it believes in (before joining it)
    if "Started server with target" in text:
        return EventKind.SERVER_STARTED, {}
    if "connected to coordination service" in text and _TASK_PATH.search(text):
        # The coordination service (on its leader task only) registering a task, itself included:
        # "/job:worker/replica:0/task:1 has connected to coordination service. Incarnation: ..."
        return EventKind.PEER_CONNECTED, {}
    # This task joined the cluster. TF 2.21 prints, in order: every task's own coordination agent
    # "Coordination agent has successfully connected." (C++ INFO, hidden by TF_CPP_MIN_LOG_LEVEL>=1),
    # then, with Python INFO logging on, "Enabled multi-worker collective ops with available devices"
    # and "MultiWorkerMirroredStrategy with cluster_spec = ...".
    if ("Coordination agent has successfully connected" in text or "Enabled multi-worker collective ops" in text
            or "MultiWorkerMirroredStrategy with cluster_spec" in text
            or "has successfully connected to coordination service" in text):
        return EventKind.CLUSTER_CONNECTED, {}
    if text.startswith("Epoch"):
        m = _EPOCH.match(text.strip())
        if m:
            return EventKind.EPOCH, {"epoch": int(m.group(1)), "total": int(m.group(2))}
    if ("/" in text or "step" in low) and ("loss" in low or "step" in low or "[" in text or "━" in text):
        found = _progress(text)
        if found:
            return found
    if (text[0] == "E" and _ABSL.match(text) or _ABSL_CLOCK.match(text) and text[0] == "E") \
            or (text[0].isdigit() and ": E " in text[:40] and _OLD_TF.match(text)):
        return EventKind.TF_ERROR, {}
    return None



def _log_files() -> list[Path]:
    out = []
    for top in (ROOT / "tests" / "realworld", ROOT / "tests" / "probes", ROOT / "tests" / "corpus", ROOT / "benchmarks" / "data"):
        out += [p for p in sorted(top.rglob("*")) if p.is_file() and p.suffix not in (".json", ".md", ".py", ".tsv")]
    return out


def _read(p: Path) -> bytes:
    if p.suffix == ".gz":
        import gzip
        return gzip.open(p, "rb").read()
    return p.read_bytes()


@pytest.fixture(scope="module")
def bodies() -> list[tuple[str, bytes]]:
    import bench_diagnose
    import diagnose_mixes
    out = [(str(p.relative_to(ROOT)), _read(p)) for p in _log_files()]
    for content in ("progress", "info", "errors"):
        for index in (0, 5):   # the culprit and a peer
            out.append((f"mix {content} {index}", diagnose_mixes.mix_task_log(
                content, index, 8, 1_500_000, 5, bench_diagnose._fault_lines).encode()))
    return out


def _task_patterns():
    from distdoctor.diagnose.logs.taskfilter import EXPRESSIONS
    out = []
    for e in EXPRESSIONS:
        plain = linekinds._plain(e)
        out.append((plain.encode(), False) if plain is not None else re.compile(e, re.M))
    return out + [(x.encode(), c) for x, c in linekinds.PATTERNS]


_PATTERNS = _task_patterns()


def _hits(raw: bytes) -> list[int]:
    """The structural patterns in a raw line (ids: taskfilter.EXPRESSIONS, then linekinds.PATTERNS), by plain search:
    what Hyperscan reports, ASCII case folded for a caseless one."""
    low = raw.lower()
    return [i for i, p in enumerate(_PATTERNS)
            if (p[0] in (low if p[1] else raw) if isinstance(p, tuple) else p.search(raw) is not None)]


def _literals_in(text: str) -> set[str]:
    raw = text.encode()
    low = raw.lower()
    return {x for x, c in zip(linekinds.LITERALS, linekinds.CASELESS) if x.encode() in (low if c else raw)}


def _text(raw: str) -> str:
    """The text the parser classifies (TaskLogParser.feed)."""
    return split_timestamp(clean_line(raw), 2026)[1].strip()


def test_the_table_answers_as_the_ordered_classifier_on_every_line(bodies):
    n = hit_path = answered = 0
    kinds = set()
    rows = linekinds.KINDS
    for name, body in bodies:
        for raw_b in body.split(b"\n"):
            raw = raw_b.decode("utf-8", "replace")
            text = _text(raw)
            want = reference(text)
            n += 1
            assert repr(linekinds.classify(text)) == repr(want), (name, raw)   # repr: a loss of nan
            if want is not None:
                answered += 1
                kinds.add(want[0])
            if text and text in raw:       # as the parser: the prefilter's literals serve when the text is a piece
                hits = _hits(raw_b)
                assert repr(linekinds.classify_hits(text, hits)) == repr(want), (name, raw, hits)
                hit_path += 1
            # each row's literals are necessary for its test
            if len(text) >= 3:
                found = _literals_in(text)
                for row in rows:
                    if not row.literals and not row.caseless:
                        continue
                    if row.test(text, text.lower()) is not linekinds._NO:
                        assert found & (set(row.literals) | set(row.caseless)), (name, row.kind, text)
    print(n, hit_path, answered, len(kinds))
    assert n > 50_000 and hit_path > 0.9 * n
    assert answered > 10_000 and len(kinds) >= 20      # the corpora exercise most kinds


def test_rows_answer_what_the_reference_answers_on_crafted_lines():
    lines = ["Epoch 3/60", "I0000 00:00:1795280668.471203 2910 cuda_dnn.cc:8] Unable to register cuDNN factory",
             "[distdoctor] task worker:1 exited", "Collective ops is aborted by: OOM when allocating tensor on GPU",
             "Fatal Python error: Segmentation fault", "bash: line 1:  4242 Segmentation fault  (core dumped) python x",
             "Aborted (core dumped)", "F0000 00:00:1795280668.471203 2910 x.cc:1] Check failed: a == b",
             "2021-03-04 12:00:00.123456: F tensorflow/core/x.cc:1] boom", "Memory cgroup out of memory: Killed process 7",
             "OOM-KILL in pod", "ResourceExhaustedError: No space left on device",
             "OOM when allocating tensor with shape[10] on /job:worker/replica:0/task:0/device:GPU:0",
             "MemoryError", "std::bad_alloc", "Address already in use", "Waiting for 0/2 tasks to connect.",
             "Waiting for 1/2 tasks to connect.", "Example stragglers: /job:worker/task:1",
             "Unexpected task registered with task_name=/job:worker/task:5", "NCCL WARN Net/IB : timeout",
             "CUDA_ERROR_LAUNCH_FAILED", "Invalid loss, terminating training at batch 3",
             "Received SIGTERM, e.g. preemption", "The VM WAS PREEMPTED", "slurmstepd: *** JOB 1 CANCELLED AT 2024",
             "TF_CONFIG = {\"cluster\": {}}", "Started server with target: grpc://localhost:1",
             "/job:worker/replica:0/task:1 has connected to coordination service. Incarnation: 1",
             "Coordination agent has successfully connected.", "10/100 [==>....] - ETA: 1s - loss: 0.5",
             "E0000 00:00:1795280668.471203 2910 x.cc:1] whatever", "E1126 12:00:00.123456 2910 x.cc:1] whatever",
             "received signal 11 (SIGSEGV)", "oom_\u212aill event", "Connection reset by peer", "nothing at all"]
    for text in lines:
        want = reference(text)
        assert linekinds.classify(text) == want, text
        assert linekinds.classify_hits(text, _hits(text.encode())) == want, text
    assert reference("oom_\u212aill event") == (EventKind.OOM_KILLER, {})   # a lower case no ASCII search sees:
    assert linekinds.classify_hits("oom_\u212aill event", []) == (EventKind.OOM_KILLER, {})   # the full way


def test_the_joint_pass_hands_each_candidate_line_its_literals(bodies):
    joint = prescan.get()
    if joint is None:
        pytest.importorskip("hyperscan")
        prescan.Prescan()     # Hyperscan is here: the joint databases must build (raises why they do not)
    checked = 0
    for name, body in bodies:
        if not body.endswith(b"\n"):
            body += b"\n"
        plain = joint.scan(body)[1]
        by_shape = joint.scan(body, shapes=prescan.Shapes())[1]
        alone = joint.task_lines(body)
        assert [x[:2] for x in plain] == [x[:2] for x in alone]
        for cands in (plain, by_shape, alone):
            for ls, le, pids, cls in cands:
                assert cls is not None and sorted(set(cls)) == _hits(body[ls:le]), (name, body[ls:le])
                checked += 1
        # a spent prefilter pattern: the plain pass leaves the literals out and says so
        for _, _, _, cls in joint.scan(body, task_spent=frozenset({0}))[1]:
            assert cls is None
    assert checked > 10_000


def test_a_task_scan_with_the_literals_gives_the_events_of_the_full_classifier(bodies, monkeypatch):
    from distdoctor.diagnose import logparse
    from distdoctor.diagnose.logs.taskscan import TaskScanner

    if prescan.get() is None:
        pytest.skip("no Hyperscan here")

    joint = prescan.get()

    def scan_all():
        out = []
        for name, body in bodies:
            for together in (False, True):   # fed alone (its own pass), and as logsource feeds it (the joint pass)
                sc, shapes = TaskScanner("worker:0", year=2026), prescan.Shapes()
                for i in range(0, len(body), 1 << 16):
                    seg = body[i:i + (1 << 16)]
                    if together:
                        _, cands, markers = joint.scan(seg, frozenset(), frozenset(sc.spent), shapes)
                        sc.feed(seg, cands, markers)
                    else:
                        sc.feed(seg)
                sc.count_withheld(shapes.withheld)
                out.append(sc.close())
        return out
    calls = []
    real = logparse.classify_hits
    monkeypatch.setattr(logparse, "classify_hits", lambda text, hits: calls.append(1) or real(text, hits))
    fast = scan_all()
    assert len(calls) > 1000                  # the prefilter's literals were used
    monkeypatch.setattr(logparse, "classify_hits", lambda text, hits: linekinds.classify(text))
    full = scan_all()
    assert repr(fast) == repr(full)     # repr: a loss of nan
    assert sum(len(s.events) for s in fast) > 1000
