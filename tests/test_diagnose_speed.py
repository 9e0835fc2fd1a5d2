"""`distdoctor diagnose` stays linear on logs in which every line is a prefilter candidate.

Not a benchmark (that is benchmarks/bench_diagnose.py --content mixes): these tests count the lines that reach the
expensive per-line Python paths -- the signature scanner's line reader and the structural parser -- on floods of
TensorFlow start-up, coordination-service and NCCL INFO lines, and check that the count does not grow with the log:
once a message has been read enough times, its further lines cost no Python work per line.
"""
from __future__ import annotations

import random
import time

import pytest
from pathlib import Path

from distdoctor.diagnose.command import diagnose_paths
from distdoctor.diagnose.logparse import TaskLogParser
from distdoctor.diagnose.logs import prescan
from distdoctor.diagnose.logs import scan as scan_mod
from distdoctor.diagnose.logsource import discover, scan_all

T0 = 1795286218.0


def _info_log(mb: float, task: int = 1, seed: int = 0) -> bytes:
    """TF 2.x INFO lines of a multi-worker job (wording of the coordination service, the gRPC server, the collective
    executor and NCCL_DEBUG=INFO), every one naming a task, a device or the coordination service."""
    rng = random.Random(seed)
    out, size, ts = [], 0, T0
    tpl = (
        "I0000 00:00:{ts:.6f}  {tid} coordination_service.h:529] /job:worker/replica:0/task:{t} has connected to "
        "coordination service. Incarnation: {inc}\n",
        "I0000 00:00:{ts:.6f}  {tid} coordination_service.cc:502] Waiting for {k}/8 tasks to connect.\n"
        "I0000 00:00:{ts:.6f}  {tid} coordination_service.cc:505] Example stragglers:\n/job:worker/replica:0/task:{t}\n",
        "I0000 00:00:{ts:.6f}  {tid} coordination_service_agent.cc:245] Coordination agent has successfully connected.\n",
        "I0000 00:00:{ts:.6f}  {tid} grpc_server_lib.cc:467] Started server with target: grpc://worker-{me}:2222\n",
        "I0000 00:00:{ts:.6f}  {tid} grpc_channel.cc:346] Initialize GrpcChannelCache for job worker -> "
        "{{0 -> worker-0:2222, 1 -> worker-1:2222}}\n",
        "I0000 00:00:{ts:.6f}  {tid} gpu_device.cc:2020] Created device /job:worker/replica:0/task:{me}/device:GPU:0 "
        "with 38366 MB memory:  -> device: 0, name: NVIDIA A100-SXM4-40GB, pci bus id: 0000:00:04.0\n",
        "worker-{me}:{pid}:{tid} [0] NCCL INFO comm 0x55d4{hx:04x} rank {me} nranks 8 cudaDev 0 busId 4000 - "
        "Init COMPLETE\n",
        "I0000 00:00:{ts:.6f}  {tid} base_collective_executor.cc:500] Unblocking dependencies for collective "
        "instance {inc}\n",
    )
    while size < mb * (1 << 20):
        ts += 0.001
        line = rng.choice(tpl).format(ts=ts, tid=2000 + task, t=rng.randrange(8), k=rng.randrange(8),
                                      inc=rng.getrandbits(60), me=task, pid=40 + task, hx=rng.randrange(1 << 16))
        out.append(line)
        size += len(line)
    out.append("E0000 00:00:%.6f  2400 coordination_service.cc:0] The following tasks are unhealthy (stopped "
               "sending heartbeats):\n/job:worker/replica:0/task:3\nThe tasks have crashed. Check the task logs for "
               "an earlier error to debug further.\n" % (ts + 9))
    return "".join(out).encode()


def _count_line_work(monkeypatch, folder) -> dict[str, int]:
    """Scan ``folder``; how many lines reached the signature scanner's line reader and the structural parser."""
    counts = {"sig_lines": 0, "parsed": 0}
    line, feed = scan_mod.Scanner._line, TaskLogParser.feed

    def counting_line(self, *a, **k):
        counts["sig_lines"] += 1
        return line(self, *a, **k)

    def counting_feed(self, *a, **k):
        counts["parsed"] += 1
        return feed(self, *a, **k)
    monkeypatch.setattr(scan_mod.Scanner, "_line", counting_line)
    monkeypatch.setattr(TaskLogParser, "feed", counting_feed)
    scans, _, hits, _ = scan_all(discover([str(folder)]), jobs=1)
    monkeypatch.undo()
    counts["lines"] = sum(s.lines for s in scans)
    counts["hits"] = len(hits)
    return counts


def test_per_line_work_does_not_grow_with_a_flood_of_info_lines(tmp_path, monkeypatch):
    small, big = tmp_path / "small", tmp_path / "big"
    small.mkdir()
    big.mkdir()
    (small / "worker-1.log").write_bytes(_info_log(1))
    (big / "worker-1.log").write_bytes(_info_log(6))
    a = _count_line_work(monkeypatch, small)
    b = _count_line_work(monkeypatch, big)
    assert b["lines"] > 5 * a["lines"] > 25_000          # six times the lines, every one a prefilter candidate
    # the signature scanner reads a line only while one of its signatures may still keep a hit (MAX_HITS_PER_SIG per signature)
    # or the line's shape has not been seen to match nothing; the structural parser reads each template 20 times
    assert b["sig_lines"] <= a["sig_lines"] + 50, (a, b)
    assert b["parsed"] <= a["parsed"] + 50, (a, b)
    assert b["sig_lines"] < 0.05 * b["lines"] and b["parsed"] < 0.02 * b["lines"], b
    assert b["hits"] == a["hits"]                        # the same evidence kept, however long the flood


def test_spent_patterns_leave_the_prefilter(tmp_path):
    """With Hyperscan, the patterns a flood has spent leave the next segments' pass: later segments of a 6 MB INFO
    flood report (almost) no candidate lines at all."""
    joint = prescan.get()
    if joint is None:
        pytest.skip("no Hyperscan here: each scanner skips spent lines one by one")
    (tmp_path / "worker-1.log").write_bytes(_info_log(6))
    seen: list[tuple[int, int]] = []
    orig = joint.scan

    def recording(body, sig_spent=frozenset(), task_spent=frozenset(), shapes=None):
        starts, lines, markers = orig(body, sig_spent, task_spent, shapes)
        seen.append((body.count(b"\n"), len(starts) + len(lines)))
        return starts, lines, markers
    joint.scan = recording
    try:
        scan_all(discover([str(tmp_path)]), jobs=1)
    finally:
        del joint.scan
    # the first segment: many lines are candidates (read by shape, a shape's lines past its budget are withheld)
    assert len(seen) >= 8 and seen[0][1] > 0.2 * seen[0][0], seen
    assert all(cands < 0.01 * lines for lines, cands in seen[3:]), seen


def test_a_20_mb_info_flood_is_diagnosed_well_within_time(tmp_path):
    for i in range(4):
        (tmp_path / f"worker-{i}.log").write_bytes(_info_log(5, task=i, seed=i))
    t = time.perf_counter()
    diag, _ = diagnose_paths([str(tmp_path)], jobs=1)
    took = time.perf_counter() - t
    assert diag.root_cause is not None     # the stopped heartbeats (or the stragglers) are read, whatever the flood
    assert took < 15, f"{took:.1f} s for 20 MB: per-line work is back in the common path"   # ~0.2 s when linear


@pytest.mark.parametrize("content", ["errors", "progress", "info"])
def test_reading_by_shape_finds_what_the_plain_pass_finds(tmp_path, monkeypatch, content):
    """The shape pass (distinct line shapes scanned once, a shape's lines past its budget withheld) gives the readers
    the same evidence as the plain pass: the same signature hits and the same structural events, steps and times."""
    if prescan.get() is None:
        pytest.skip("no Hyperscan here: no shape pass")
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from bench_diagnose import generate
    generate(str(tmp_path), tasks=3, mb=1.5, culprit=1, content=content)

    def read():
        scans, _, hits, facts = scan_all(discover([str(tmp_path)]), jobs=1)
        keep = [{k: v for k, v in vars(s).items() if k != "lines_skipped"} for s in scans]
        return keep, sorted(repr((h.sig.code, h.stream, h.writer, h.named, h.line_no, h.ts, h.text)) for h in hits), \
            [(f.name, f.lines, f.tail) for f in facts]
    by_shape = read()
    monkeypatch.setattr(prescan.Shapes, "worth_it", lambda self: False)
    plain = read()
    assert by_shape[1] and by_shape == plain


def test_the_error_mix_sends_few_lines_to_per_line_reading(tmp_path, monkeypatch):
    """A signature whose prefilter literal is common words ("connect to") hands every line holding them to its regex,
    one by one: gRPC's "failed to connect to all addresses" flood in the error mix then costs a fifth more CPU (session
    31: 127 -> 98 MB/s). The error mix's lines read one by one stay few (5.8 % when this test was written)."""
    if prescan.get() is None:
        pytest.skip("no Hyperscan here: another prefilter")
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from bench_diagnose import generate
    generate(str(tmp_path), tasks=2, mb=1.5, culprit=1, content="errors")
    work = _count_line_work(monkeypatch, tmp_path)
    assert work["sig_lines"] < 0.07 * work["lines"], work
