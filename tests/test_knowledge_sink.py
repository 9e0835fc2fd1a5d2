"""supervise/knowledge.py: the knowledge base reads each task's output as the task prints it (pure: events in,
events out, no processes). The real-TF counterpart is test_run_faults.py's
test_a_message_only_the_knowledge_base_knows_names_the_cause_in_a_live_run."""
from __future__ import annotations

from dataclasses import replace

import pytest

from distdoctor.diagnose.runlogs import refine_with_signatures
from distdoctor.model import Category, Diagnosis, Finding, Severity, Status
from distdoctor.supervise.knowledge import KnowledgeSink, stream_of
from distdoctor.supervise.runevents import AttemptStarted, Bus, OutputLine, Recognised

T0 = 1_790_000_000.0
LIB = "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory"


def _bus():
    bus, seen = Bus(), []
    sink = KnowledgeSink(bus.publish)
    bus.subscribe(sink)
    bus.subscribe(seen.append, Recognised)
    return bus, sink, seen


def test_a_known_cause_is_recognised_when_the_task_prints_it_once_per_task():
    bus, sink, seen = _bus()
    bus.publish(AttemptStarted(T0, 1, None))
    bus.publish(OutputLine(T0 + 1, "worker:0", "Epoch 1/3"))
    assert seen == []
    bus.publish(OutputLine(T0 + 2, "worker:1", "Traceback (most recent call last):"))
    bus.publish(OutputLine(T0 + 2.1, "worker:1", LIB))
    assert len(seen) == 1, seen
    r = seen[0]
    assert (r.task, r.category, r.ts) == ("worker:1", "version_mismatch", T0 + 2.1) and "libcudart" in r.text
    assert r.journal()["kind"] == "recognised" and "worker:1" in r.said()
    bus.publish(OutputLine(T0 + 3, "worker:1", LIB))            # the same cause again: said once
    bus.publish(OutputLine(T0 + 3, "worker:0", "a remote line", echo=False))
    assert len(seen) == 1


def test_context_and_symptom_lines_are_not_recognised_as_causes():
    bus, _, seen = _bus()
    for i, line in enumerate(["2026-11-26 10:00:00.1: W tensorflow/core/common_runtime/gpu/gpu_device.cc] "
                              "Cannot dlopen some GPU libraries.",
                              "INFO: Using MirroredStrategy with devices ('/job:worker/task:0',)",
                              "Epoch 2/3"]):
        bus.publish(OutputLine(T0 + i, "worker:0", line))
    assert seen == []


def test_the_attempts_reader_gives_the_verdict_and_a_new_attempt_starts_a_new_one():
    bus, sink, seen = _bus()
    bus.publish(AttemptStarted(T0, 1, None))
    bus.publish(OutputLine(T0 + 1, "worker:1", "Traceback (most recent call last):"))
    bus.publish(OutputLine(T0 + 1.1, "worker:1", LIB))
    reader = sink.take_reader()
    assert reader.streams == [stream_of("worker:1")] == ["worker-1.log"]
    bus.publish(OutputLine(T0 + 2, "worker:1", "late line"))   # after the verdict took the reader: ignored
    generic = Finding(code="DD104", category=Category.USER_CODE_ERROR, severity=Severity.ERROR, culprit="worker:1",
                      summary="worker:1 raised ImportError", at=T0 + 1.2)
    diag = Diagnosis(status=Status.FAILED, root_cause=generic, findings=(generic,), detected_at=T0 + 5)
    refined = refine_with_signatures(diag, reader=reader)
    assert (refined.root_cause.category, refined.root_cause.culprit) == (Category.VERSION_MISMATCH, "worker:1")
    assert any(a.category == Category.USER_CODE_ERROR for a in refined.root_cause.alternatives)
    bus.publish(AttemptStarted(T0 + 10, 2, 1))
    bus.publish(OutputLine(T0 + 11, "worker:1", LIB))
    assert [r.ts for r in seen] == [T0 + 1.1, T0 + 11]          # the new attempt's reader tells it again


def test_stream_of_names_the_launchers_log_files():
    assert stream_of("worker:1") == "worker-1.log" and stream_of("chief:0") == "chief-0.log"


# -- run's verdict takes what its reader recognised, over any generic reading of its own -------------------------

def _hit(code: str, writer: str, text: str, ts: float):
    from distdoctor.diagnose.logs import kb  # noqa: F401  (registers the signatures)
    from distdoctor.diagnose.logs.scan import Hit
    from distdoctor.diagnose.logs.signature import by_code
    return Hit(sig=by_code(code), stream=stream_of(writer), writer=writer, named=None, line_no=3, ts=ts, text=text)


def _generic(code: str, category: Category, culprit: str | None) -> Diagnosis:
    f = Finding(code=code, category=category, severity=Severity.ERROR, culprit=culprit,
                summary=f"{culprit} failed ({code})", at=T0 + 4)
    return Diagnosis(status=Status.FAILED, root_cause=f, findings=(f,), detected_at=T0 + 5)


HOROVOD = "HorovodVersionMismatchError: Framework tensorflow installed with version 2.3.0 but found version 2.4.1."
PER_REPLICA = "ValueError: Attempt to convert a value (PerReplica:{ 0: <tf.Tensor: shape=(64,)> }) to a Tensor."


@pytest.mark.parametrize("code,category", [("DD106", Category.OTHER), ("DD104", Category.USER_CODE_ERROR),
                                           ("DD111", Category.OTHER), ("DD100", Category.OTHER)])
@pytest.mark.parametrize("sig,line,want", [("DD723", HOROVOD, Category.VERSION_MISMATCH),
                                           ("DD1011", PER_REPLICA, Category.VERSION_MISMATCH)])
def test_a_recognised_cause_replaces_every_generic_reading(code, category, sig, line, want):
    """The reasoning over every line may settle elsewhere (here: nothing); the line recognised on the run's culprit
    is still the cause, the run's own reading its first alternative."""
    from distdoctor.diagnose.logs.conclusion import Verdict
    from distdoctor.diagnose.logs.verdict import decide
    nothing = Verdict(status=Status.UNKNOWN, category=Category.OTHER, culprit=None, confidence="low", code=None,
                      summary="", remedy="", root=None)
    hits = [_hit("DD860", "worker:1", "Traceback (most recent call last):", T0 + 3),
            _hit(sig, "worker:1", line, T0 + 3.5)]
    culprit = None if code == "DD100" else "worker:1"
    out = decide(nothing, _generic(code, category, culprit), source="run", detected_at=T0 + 5, hits=hits)
    rc = out.root_cause
    if code == "DD100" and sig == "DD1011":
        # a failure nobody placed needs a specific cause (rank 70 and up); DD1011 is 60
        assert rc.code == "DD100"
        return
    assert (rc.code, rc.category, rc.culprit) == (sig, want, "worker:1")
    assert rc.alternatives[0].category == category and rc.evidence[0].text == line


def test_a_cause_recognised_on_another_task_or_process_evidence_is_not_overruled():
    from distdoctor.diagnose.logs.conclusion import Verdict
    from distdoctor.diagnose.logs.verdict import decide
    nothing = Verdict(status=Status.UNKNOWN, category=Category.OTHER, culprit=None, confidence="low", code=None,
                      summary="", remedy="", root=None)
    on_peer = [_hit("DD723", "worker:0", HOROVOD, T0 + 3)]
    assert decide(nothing, _generic("DD106", Category.OTHER, "worker:1"), source="run", detected_at=T0,
                  hits=on_peer).root_cause.code == "DD106"
    mine = [_hit("DD723", "worker:1", HOROVOD, T0 + 3)]
    killed = _generic("DD101", Category.PEER_CRASHED, "worker:1")     # killed by SIGKILL: process evidence
    assert decide(nothing, killed, source="run", detected_at=T0, hits=mine).root_cause.code == "DD101"


def test_a_succeeded_run_explains_a_finished_peer_reported_as_crashed_at_the_teardown():
    """A real healthy run (tests/corpus/healthy-chief-pause-teardown): both tasks exited 0, and worker:0 printed the
    coordination service's "The tasks have crashed" about worker:1 after its own last step. The run's verdict stays
    succeeded; an info finding says what that line was. A line that names no finished peer adds nothing."""
    from pathlib import Path

    from distdoctor.diagnose.logs.formats import split_timestamp
    from distdoctor.model import TaskReport
    bus, sink, _ = _bus()
    bus.publish(AttemptStarted(T0, 1, None))
    last = {}
    for task in ("worker:0", "worker:1"):
        log = Path(__file__).parent / "corpus" / "healthy-chief-pause-teardown" / stream_of(task)
        ts = T0
        for raw in log.read_text().splitlines():
            at, line = split_timestamp(raw)
            ts = at if at is not None else ts
            bus.publish(OutputLine(ts, task, line))
            if "20/20" in line:
                last[task] = ts
    tasks = {t: TaskReport(exit_code=0, state="exited", last_progress_at=last[t], steps=60) for t in last}
    ok = Diagnosis(status=Status.SUCCEEDED, root_cause=None, findings=(), detected_at=T0, tasks=tasks)
    out = refine_with_signatures(ok, reader=sink.take_reader())
    assert out.status == Status.SUCCEEDED and out.root_cause is None
    (said,) = out.findings
    assert (said.code, said.severity, said.culprit) == ("DD601", Severity.INFO, "worker:1")
    assert "worker:1 finished first" in said.summary and "teardown, not a failure" in said.summary
    # the same report before worker:0's last step (a peer lost while it trained) is not explained away
    early = {**tasks, "worker:0": TaskReport(exit_code=0, state="exited", last_progress_at=said.at + 60, steps=60)}
    bus.publish(AttemptStarted(T0 + 100, 2, 1))
    report = (Path(__file__).parent / "corpus" / "healthy-chief-pause-teardown" / "worker-0.log").read_text()
    for raw in report.splitlines()[-3:]:
        bus.publish(OutputLine(said.at, "worker:0", split_timestamp(raw)[1]))
    reader = sink.take_reader()
    assert reader.verdict().culprit == "worker:1"        # the same reading, named the same peer ...
    again = refine_with_signatures(replace(ok, tasks=early), reader=reader)
    assert again.findings == ()                          # ... but before the reporter's last step: not explained
