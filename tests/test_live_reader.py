"""The incremental reader: a task's output fed as it is printed gives the hits and the verdict of the same bytes read
after the fact, and a generic run diagnosis is refined from it (pure, no processes)."""
from __future__ import annotations

import random

from distdoctor.diagnose.logs.live import LiveReader, stamp
from distdoctor.diagnose.logs.reason import reason
from distdoctor.diagnose.logs.scan import scan_bytes
from distdoctor.diagnose.logsource import discover, scan_all
from distdoctor.diagnose.runlogs import read_logs, refine_with_signatures
from distdoctor.model import Category, Diagnosis, Finding, Severity, Status

T0 = 1795286218.0
SHM = "include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device"


def _lines(task: int, fail: bool) -> list[str]:
    out = [f"I0000 00:00:{T0 + 1:.6f}    2910 grpc_server_lib.cc:471] Started server with target: grpc://localhost:{2000 + task}",
           "Epoch 1/3", "100/100 [==============================] - 3s 13ms/step - loss: 0.5"]
    if fail:
        out += [SHM, "Traceback (most recent call last):", '  File "train.py", line 9, in <module>',
                "tensorflow.python.framework.errors_impl.InternalError: NCCL error: unhandled system error"]
    else:
        out += ["Epoch 2/3", "E0000 00:00:1795286230.000000    2910 coordination_service_agent.cc:1] "
                "Connection reset by peer"]
    return out


def _log(task: int, fail: bool) -> bytes:
    return "".join(f"{stamp(T0 + i)} {ln}\n" for i, ln in enumerate(_lines(task, fail))).encode()


def _key(h):
    return (h.sig.code, h.stream, h.writer, h.named, h.line_no, h.ts, h.text)


def test_chunks_of_any_size_give_the_hits_of_the_whole():
    data = _log(1, True) * 20
    whole, _ = scan_bytes("worker:1", data, "worker:1")
    rng = random.Random(7)
    r = LiveReader()
    got, pos = [], 0
    while pos < len(data):
        n = rng.randint(1, 90)
        got += r.feed("worker:1", data[pos:pos + n])
        pos += n
    got += r.close("worker:1")
    assert whole and [_key(h) for h in got] == [_key(h) for h in whole]


def test_a_cause_is_told_when_its_line_ends():
    r = LiveReader()
    assert r.feed("worker:1", (stamp(T0) + " " + SHM[:30]).encode()) == []   # the line is not finished yet
    new = r.feed("worker:1", (SHM[30:] + "\n").encode())
    assert new and {h.line_no for h in new} == {1} and all(h.writer == "worker:1" and h.ts == T0 for h in new)
    assert any(h.sig.rank >= 70 for h in new)


def test_lines_fed_live_read_as_the_log_file_holds_them(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    live = LiveReader()
    for task, fail in ((0, False), (1, True)):
        (logs / f"worker-{task}.log").write_bytes(_log(task, fail))
        for i, ln in enumerate(_lines(task, fail)):
            live.feed_line(f"worker:{task}", T0 + i, ln, stream=f"worker-{task}.log")
    after = read_logs(str(logs))
    assert sorted(map(_key, live.hits())) == sorted(map(_key, after.hits()))
    disc = discover([str(logs)])
    _, _, hits, facts = scan_all(disc, jobs=1)
    want = reason(hits, [f for f in facts if not f.binary])
    got = live.verdict()
    assert (got.category, got.culprit, got.code) == (want.category, want.culprit, want.code)
    assert got.culprit == "worker:1" and got.root is not None and got.root.text.endswith("No space left on device")


def test_a_generic_run_reading_is_named_by_the_signature_read_live():
    live = LiveReader()
    for task, fail in ((0, False), (1, True)):
        for i, ln in enumerate(_lines(task, fail)):
            live.feed_line(f"worker:{task}", T0 + i, ln)
    generic = Finding(code="DD104", category=Category.USER_CODE_ERROR, severity=Severity.ERROR, culprit="worker:1",
                      summary="worker:1 raised InternalError", at=T0 + 5)
    diag = Diagnosis(status=Status.FAILED, root_cause=generic, findings=(generic,), detected_at=T0 + 9)
    out = refine_with_signatures(diag, reader=live)
    shm = next(h for h in live.hits() if h.text.endswith("No space left on device") and h.sig.rank >= 70)
    assert out.root_cause.category == shm.sig.category != Category.USER_CODE_ERROR
    assert out.root_cause.culprit == "worker:1"
    assert any(a.category == Category.USER_CODE_ERROR for a in out.root_cause.alternatives)


def test_a_closed_stream_takes_no_more_output():
    r = LiveReader()
    r.feed("worker:0", b"partial")
    r.close("worker:0")
    try:
        r.feed("worker:0", b"more\n")
    except ValueError as exc:
        assert "new LiveReader" in str(exc)
    else:
        raise AssertionError("fed a closed stream")
