"""supervise/knowledge.py: the knowledge base reads each task's output as the task prints it (pure: events in,
events out, no processes). The real-TF counterpart is test_run_faults.py's
test_a_message_only_the_knowledge_base_knows_names_the_cause_in_a_live_run."""
from __future__ import annotations

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
