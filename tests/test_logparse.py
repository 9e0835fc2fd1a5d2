"""The log parser and the byte-level scanner, on real TensorFlow 2.21 lines (pure, fast)."""
from __future__ import annotations

from pathlib import Path

import pytest

from distdoctor.diagnose.events import EventKind, unresolved_waits
from distdoctor.diagnose.logparse import (MAX_LINE, TaskLogParser, classify, clean_line, split_timestamp,
                                          step_time_of)
from distdoctor.diagnose.logs.taskscan import TaskScanner

CORPUS = Path(__file__).parent / "corpus"
SIGKILL_W0 = CORPUS / "sigkill-raw-logs" / "worker-0.log"   # real: TF 2.21, its peer SIGKILLed


CLASSIFIED = [
    ("E0000 00:00:1795286227.101340    2423 ring_alg.cc:291] Aborting RingReduce with UNAVAILABLE: recvmsg:Connection reset by peer", EventKind.PEER_SYMPTOM),
    ("W0000 00:00:1795286227.101800    2564 local_rendezvous.cc:412] Local rendezvous is aborting with status: UNAVAILABLE: Collective ops is aborted by: recvmsg:Connection reset by peer", EventKind.PEER_SYMPTOM),
    ("Additional GRPC error information from remote target /job:worker/replica:0/task:1 while calling /tensorflow.WorkerService/RecvBuf:", EventKind.PEER_SYMPTOM),
    ("E0000 00:00:1795286220.700548    2291 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)", None),
    ("I0000 00:00:1795286218.485230    2291 port.cc:153] oneDNN custom operations are on. You may see slightly different numerical results", None),
    ("W0000 00:00:1795286221.836522    2291 dataset.cc:997] Input of GeneratorDatasetOp::Dataset will not be optimized because the dataset does not implement the AsGraphDefInternal() method needed to apply optimizations.", None),
    ("Epoch 3/30", EventKind.EPOCH),
    ("200/200 - 2s - loss: 0.1231 - 2s/epoch - 9ms/step", EventKind.PROGRESS),
    ("200/200 [==============================] - 3s 13ms/step - loss: 0.7964", EventKind.PROGRESS),
    ("200/200 ━━━━━━━━━━━━━━━━━━━━ 2s 9ms/step - loss: 0.1231", EventKind.PROGRESS),
    ("     12/Unknown - 3s 9ms/step - loss: 0.5000", EventKind.PROGRESS),
    ("40/40 - 1s - loss: nan - 1s/epoch - 14ms/step", EventKind.NAN_LOSS),
    ("Batch 12: Invalid loss, terminating training", EventKind.NAN_LOSS),
    ("INFO:tensorflow:loss = 0.25, step = 400 (0.512 sec)", EventKind.PROGRESS),
    ("Fatal Python error: Segmentation fault", EventKind.FATAL_SIGNAL),
    ("*** SIGSEGV received at time=1795286227 on cpu 1 ***", EventKind.FATAL_SIGNAL),
    ("Segmentation fault (core dumped)", EventKind.FATAL_SIGNAL),
    ("./launch.sh: line 8:  2292 Aborted                 (core dumped) python train.py", EventKind.FATAL_SIGNAL),
    ("F0000 00:00:1795286227.1 2423 tensor_shape.cc:45] Check failed: d >= 0 (-1 vs. 0)", EventKind.CHECK_FAILED),
    ("[12345.678] Out of memory: Killed process 2292 (python) total-vm:9000000kB, anon-rss:8000000kB", EventKind.OOM_KILLER),
    ("slurmstepd: error: Detected 1 oom_kill event in StepId=4242.0. Some of the step tasks have been OOM Killed.", EventKind.OOM_KILLER),
    ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[8192,8192] and type float on /job:worker/replica:0/task:0/device:GPU:0", EventKind.OOM_GPU),
    ("E0000 00:00:1795290001.2 3101 chttp2_server.cc:1053] UNKNOWN:No address added out of total 1 resolved for '[::]:23452' {children:[UNKNOWN:Address already in use]}", EventKind.PORT_IN_USE),
    ("I0000 00:00:1795290011.0 3230 coordination_service.cc:612] Waiting for 1/2 tasks to connect.", EventKind.WAITING_FOR_TASKS),
    ("E0000 00:00:1.0 1 coordination_service.cc:0] The following tasks are unhealthy (stopped sending heartbeats):", EventKind.PEER_SYMPTOM),
    ("Collective ops is aborted by: OOM when allocating tensor with shape[10]", EventKind.PEER_SYMPTOM),
    ("W0000 00:00:1795287107.732564    7755 preemption_notifier.cc:90] SIGTERM caught at 2026-11-21T18:51:47.732561423+00:00", None),
    ("I0000 00:00:1.0 1 grpc_server_lib.cc:471] Started server with target: grpc://localhost:23451", EventKind.SERVER_STARTED),
    ("2021-03-04 12:00:00.123456: E tensorflow/core/common_runtime/base_collective_executor.cc:249] BaseCollectiveExecutor::StartAbort Unavailable: Socket closed", EventKind.PEER_SYMPTOM),
    ("2021-03-04 12:00:00.123456: E tensorflow/core/framework/op_kernel.cc:1 something odd", EventKind.TF_ERROR),
    ("WARNING:tensorflow:Your input ran out of data; interrupting training.", EventKind.TF_ERROR),
    ("hello world", None),
    # NCCL and CUDA failures (formats of NCCL 2.x and TF's cuda_driver.cc; no GPU here to record them on)
    ("gpu-node-2:2612:2720 [0] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer 10.0.0.1<45678>", EventKind.NCCL_ERROR),
    ("E0000 00:00:1795286227.0 2423 nccl_manager.cc:0] NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)", EventKind.NCCL_ERROR),
    ("gpu-node-2:2612:2720 [0] NCCL INFO Channel 00/02 :    0   1", None),
    ("E0000 00:00:1795286227.001340    2423 cuda_driver.cc:1000] failed to synchronize the stop event: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered", EventKind.CUDA_ERROR),
    ("2021-03-04 12:00:00.123456: E tensorflow/stream_executor/cuda/cuda_event.cc:29] Error polling for event status: failed to query event: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure", EventKind.CUDA_ERROR),
    # TF 2.21 with its INFO lines on (TF_CPP_MIN_LOG_LEVEL=0, Python logging at INFO), recorded:
    ("I0000 00:00:1795292762.054981    6189 coordination_service_agent.cc:245] Coordination agent has successfully connected.", EventKind.CLUSTER_CONNECTED),
    ("INFO:tensorflow:Enabled multi-worker collective ops with available devices: ['/job:worker/replica:0/task:0/device:CPU:0', '/job:worker/replica:0/task:1/device:CPU:0']", EventKind.CLUSTER_CONNECTED),
    ("INFO:tensorflow:MultiWorkerMirroredStrategy with cluster_spec = {'worker': ['localhost:43335', 'localhost:53945']}, task_type = 'worker', task_id = 0, num_workers = 2, local_devices = ('/job:worker/task:0/device:CPU:0',), communication = CommunicationImplementation.AUTO", EventKind.CLUSTER_CONNECTED),
    ("I0000 00:00:1795292761.879310    6321 coordination_service.h:529] /job:worker/replica:0/task:1 has connected to coordination service. Incarnation: 11380902754301459668", EventKind.PEER_CONNECTED),
    ("I0000 00:00:1795292762.053928    6320 coordination_service.cc:502] Waiting for 0/2 tasks to connect.", EventKind.PEER_CONNECTED),
    ("I0000 00:00:1795292761.879379    6321 coordination_service.cc:502] Waiting for 1/2 tasks to connect.", EventKind.WAITING_FOR_TASKS),
    ("I0000 00:00:1795292761.834415    6189 coordination_service.cc:221] Initializing CoordinationService", None),
    ("I0000 00:00:1795292762.055373    6320 coordination_service.cc:1472] Barrier(WaitForAllTasks::9858473600322637637::0) has passed with status: OK", None),
    ("INFO:tensorflow:Check health not enabled.", None),
    ('TF_CONFIG={"cluster": {"worker": ["host-a:2222", "host-b:2222"]}, "task": {"type": "worker", "index": 1}}', EventKind.CLUSTER_SPEC),
]


@pytest.mark.parametrize("line, kind", CLASSIFIED)
def test_classify_real_lines(line, kind):
    _, text = split_timestamp(line)
    found = classify(text)
    assert (found[0] if found else None) == kind


@pytest.mark.parametrize("line, ts, text_starts", [
    ("2026-11-21T18:03:04.120415+0000 Epoch 1/2", 1795284184.120415, "Epoch"),
    ("2026-11-21T18:03:04.120415123Z Epoch 1/2", 1795284184.120415, "Epoch"),
    ("E0000 00:00:1795286227.101340    2423 ring_alg.cc:291] x", 1795286227.10134, "E0000"),
    ("2021-03-04 12:00:00.500000: E tensorflow/core/x.cc:1] y", 1614859200.5, "2021"),
    ("no time here", None, "no time"),
    ("9999-99-99T99:99:99.1+0000 bad", None, "bad"),
])
def test_split_timestamp(line, ts, text_starts):
    got, text = split_timestamp(line)
    assert (got is None and ts is None) or abs(got - ts) < 1e-3
    assert text.startswith(text_starts)


def test_absl_clock_needs_a_year():
    line = "E1121 18:03:04.500000 2910 ring_alg.cc:291] x"
    assert split_timestamp(line)[0] is None
    assert abs(split_timestamp(line, 2026)[0] - 1795284184.5) < 1e-3


def test_step_time_and_clean_line():
    assert step_time_of("200/200 - 2s - loss: 0.1 - 2s/epoch - 9ms/step") == pytest.approx(0.009)
    assert step_time_of("INFO:tensorflow:global_step/sec: 50") == pytest.approx(0.02)
    assert clean_line("\x1b[31mE0000 x\x1b[0m\r\n") == "E0000 x"
    assert clean_line("  1/200 [..] - ETA: 3s\x08\x08\r 200/200 [==] - 3s 13ms/step\n") == " 200/200 [==] - 3s 13ms/step"
    assert clean_line("a\x00b") == "ab"
    assert len(clean_line("x" * (MAX_LINE * 2))) == MAX_LINE


def _parse_lines(path: Path, task="worker:0"):
    p = TaskLogParser(task)
    out = []
    for i, line in enumerate(path.read_text(errors="replace").splitlines(True), 1):
        out += p.feed(i, line)
    return out + p.close()


def test_real_sigkill_peer_log():
    evs = _parse_lines(SIGKILL_W0)
    symptoms = [e for e in evs if e.kind == EventKind.PEER_SYMPTOM]
    assert {e.peer for e in symptoms} == {None, "worker:1"}
    exc = [e for e in evs if e.frames]
    assert len(exc) == 1 and exc[0].text.startswith("tensorflow.python.framework.errors_impl.UnavailableError")
    assert any("train_mwms.py" in f for f in exc[0].frames)
    assert not any(e.kind == EventKind.PY_EXCEPTION for e in evs)  # a symptom, not a cause


def test_faulthandler_block_keeps_the_crashing_threads_frames():
    lines = ["Fatal Python error: Segmentation fault", "", "Thread 0x01 (most recent call first):",
             '  File "/x/threading.py", line 327 in wait', "", "Current thread 0x02 (most recent call first):",
             '  File "/app/ops.py", line 88 in decode', '  File "/app/train.py", line 58 in on_batch', "",
             "Extension modules: numpy (total: 1)", "after"]
    p = TaskLogParser("worker:1")
    evs = [e for i, ln in enumerate(lines, 1) for e in p.feed(i, ln)] + p.close()
    assert [e.kind for e in evs] == [EventKind.FATAL_SIGNAL]
    assert evs[0].frames == ('File "/app/ops.py", line 88 in decode', 'File "/app/train.py", line 58 in on_batch')


def test_traceback_survives_an_interleaved_cpp_line():
    lines = ["Traceback (most recent call last):", '  File "/app/train.py", line 3, in <module>',
             "W0000 00:00:1795286227.1 2564 local_rendezvous.cc:412] Local rendezvous is aborting with status: CANCELLED",
             '  File "/app/train.py", line 9, in main', "ValueError: bad shard index 7"]
    p = TaskLogParser("worker:0")
    evs = [e for i, ln in enumerate(lines, 1) for e in p.feed(i, ln)]
    assert [e.kind for e in evs] == [EventKind.PEER_SYMPTOM, EventKind.PY_EXCEPTION]
    assert evs[1].text == "ValueError: bad shard index 7" and evs[1].frames[-1].startswith("File")


def test_log_cut_inside_a_traceback():
    p = TaskLogParser("worker:0")
    p.feed(1, "Traceback (most recent call last):")
    p.feed(2, '  File "/app/train.py", line 3, in <module>')
    evs = p.close()
    assert evs[0].kind == EventKind.PY_EXCEPTION and "ends inside" in evs[0].text


def _scan(data: bytes, chunk: int, task="worker:0"):
    sc = TaskScanner(task)
    for i in range(0, len(data), chunk):
        sc.feed(data[i:i + chunk])
    return sc.close()


@pytest.mark.parametrize("chunk", [1, 7, 100, 4096, 1 << 22])
def test_scanner_matches_the_line_parser_at_any_chunking(chunk):
    data = SIGKILL_W0.read_bytes()
    want = [(e.kind, e.line_no, e.peer, e.text) for e in _parse_lines(SIGKILL_W0) if e.kind not in (EventKind.PROGRESS,)]
    got = _scan(data, chunk)
    assert [(e.kind, e.line_no, e.peer, e.text) for e in got.events if e.kind != EventKind.PROGRESS] == want
    assert got.steps == 400 and got.lines == 57 and got.recognized and not got.binary
    assert got.step_times == pytest.approx((0.013, 0.009))


def _keras_v1(epochs: int, steps: int, nan_from: int | None = None) -> bytes:
    out = []
    for e in range(1, epochs + 1):
        out.append(f"Epoch {e}/{epochs}\n")
        width = 0
        for s in range(1, steps + 1):
            loss = "nan" if nan_from is not None and e >= nan_from else f"{1.0 / (s + e):.4f}"
            text = f"{s:>3}/{steps} [{'=' * (s * 10 // steps)}{'.' * (10 - s * 10 // steps)}] - ETA: 1s - loss: {loss}"
            if s == steps:
                text = f"{s:>3}/{steps} [==========] - 1s 12ms/step - loss: {loss}"
            out.append("\b" * width + "\r" + text)
            width = len(text)
        out.append("\n")
        out.append(f"I0000 00:00:{1795286300 + e}.000000 77 ring_alg.cc:1] RingReduce done\n")
    return "".join(out).encode()


@pytest.mark.parametrize("chunk", [64, 1000, 1 << 20])
def test_keras_verbose1_progress_bars(chunk):
    got = _scan(_keras_v1(3, 50) + b"Epoch 4/4\n\r  7/50 [=>........] - ETA: 1s - loss: 0.1", chunk)
    assert got.steps == 3 * 50 + 7
    assert got.epoch == 4 and got.epochs_total == 4 and not got.completed
    assert got.step_times[:3] == pytest.approx((0.012, 0.012, 0.012))
    assert got.ends_midline


def test_keras_completed_and_nan():
    got = _scan(_keras_v1(3, 20, nan_from=2), 512)
    assert got.completed and got.steps == 60
    nans = [e for e in got.events if e.kind == EventKind.NAN_LOSS]
    assert nans and nans[0].step == 20 and nans[0].loss != nans[0].loss


def test_generic_step_prints_count_when_there_is_no_keras():
    data = "".join(f"step {i} loss={1 / i:.3f} lr=0.1\n" for i in range(1, 501)).encode()
    assert _scan(data, 1000).steps == 500


def test_huge_lines_nuls_crlf_and_binary():
    data = b"E0000 00:00:1795286227.1 1 x.cc:1] Socket closed\r\n" + b"\x00" * 10 + b"x" * (5 * MAX_LINE) + b"\r\n" + \
        b"Traceback (most recent call last):\r\n  File \"a.py\", line 1, in <module>\r\nValueError: boom\r\n"
    got = _scan(data, 4096)
    kinds = [e.kind for e in got.events]
    assert kinds == [EventKind.PEER_SYMPTOM, EventKind.PY_EXCEPTION]
    assert got.long_lines >= 1 and got.lines == 5
    assert _scan(bytes(range(256)) * 400, 4096).binary
    assert _scan(b"", 10).events == ()


def test_symptom_followed_by_the_peer_on_the_next_line():
    data = (b"I0000 00:00:1795290011.0 3230 coordination_service.cc:612] Waiting for 1/2 tasks to connect.\n"
            b"I0000 00:00:1795290011.0 3230 coordination_service.cc:616] Example stragglers:\n"
            b"/job:worker/replica:0/task:1\n")
    got = _scan(data, 30)
    assert [(e.kind, e.peer) for e in got.events][-1] == (EventKind.WAITING_FOR_TASKS, "worker:1")


@pytest.mark.parametrize("line, kind", [(ln, k) for ln, k in CLASSIFIED if k not in (None, EventKind.PROGRESS)])
def test_the_prefilter_lets_every_evidence_line_through(line, kind):
    filler = b"I0000 00:00:1795286218.1 1 collective_param_resolver_distributed.cc:1] Collective group 3 resolved\n" * 50
    got = _scan(filler + line.encode() + b"\n" + filler, 1 << 20)
    assert kind in [e.kind for e in got.events]


def test_a_flood_of_one_message_is_counted_not_parsed():
    flood = b"".join(b"E0000 00:00:%d.5 2291 grpc_util.cc:%d] UNAVAILABLE: Connection refused (attempt %d)\n" % (1795286218 + i, i % 50, i)
                     for i in range(5000))
    data = b"Epoch 1/1\n" + flood + b"Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nValueError: last\n"
    got = _scan(data, 1 << 16)
    assert got.lines_skipped == 5000 - TaskScanner.MAX_REPEATS
    assert got.events[-1].kind == EventKind.PY_EXCEPTION and got.events[-1].line_no == 5004
    assert got.last_ts == pytest.approx(1795286218 + 4999.5)


# -- joining the cluster -------------------------------------------------------------

# worker:0 of a real TF 2.21 run with INFO lines on (TF_CPP_MIN_LOG_LEVEL=0, Python logging at INFO), launched
# by hand; worker:0 hosts the coordination service, and here worker:1 registered first.
LEADER_WITH_PY_INFO = """\
I0000 00:00:1795292761.834415    6189 coordination_service.cc:221] Initializing CoordinationService
I0000 00:00:1795292761.860393    6189 grpc_server_lib.cc:467] Started server with target: grpc://localhost:43335
I0000 00:00:1795292761.879310    6321 coordination_service.h:529] /job:worker/replica:0/task:1 has connected to coordination service. Incarnation: 11380902754301459668
I0000 00:00:1795292761.879379    6321 coordination_service.cc:502] Waiting for 1/2 tasks to connect.
I0000 00:00:1795292761.879389    6321 coordination_service.cc:505] Example stragglers:
/job:worker/replica:0/task:0
I0000 00:00:1795292762.053837    6320 coordination_service.h:529] /job:worker/replica:0/task:0 has connected to coordination service. Incarnation: 2159121782597480358
I0000 00:00:1795292762.053928    6320 coordination_service.cc:502] Waiting for 0/2 tasks to connect.
I0000 00:00:1795292762.054981    6189 coordination_service_agent.cc:245] Coordination agent has successfully connected.
I0000 00:00:1795292762.055373    6320 coordination_service.cc:1472] Barrier(WaitForAllTasks::9858473600322637637::0) has passed with status: OK
INFO:tensorflow:Enabled multi-worker collective ops with available devices: ['/job:worker/replica:0/task:0/device:CPU:0', '/job:worker/replica:0/task:1/device:CPU:0']
INFO:tensorflow:Using MirroredStrategy with devices ('/job:worker/task:0/device:CPU:0',)
INFO:tensorflow:Check health not enabled.
INFO:tensorflow:MultiWorkerMirroredStrategy with cluster_spec = {'worker': ['localhost:43335', 'localhost:53945']}, task_type = 'worker', task_id = 0, num_workers = 2, local_devices = ('/job:worker/task:0/device:CPU:0',), communication = CommunicationImplementation.AUTO
Epoch 1/1
3/3 - 1s - loss: 1.2848 - 600ms/epoch - 200ms/step
"""


def _line_events(text: str, task: str):
    p = TaskLogParser(task)
    evs = [e for n, line in enumerate(text.splitlines(), start=1) for e in p.feed(n, line)]
    return evs + p.close()


def test_the_coordination_leaders_lines_say_who_joined():
    for evs in (_line_events(LEADER_WITH_PY_INFO, "worker:0"), list(_scan(LEADER_WITH_PY_INFO.encode(), 97).events)):
        joins = [e for e in evs if e.kind == EventKind.CLUSTER_CONNECTED]
        # The first line that says this task joined is its own coordination agent's; the Python INFO lines follow.
        assert "Coordination agent has successfully connected" in joins[0].text
        assert joins[0].ts == pytest.approx(1795292762.054981)
        assert ["Enabled multi-worker" in e.text or "cluster_spec" in e.text for e in joins[1:]] == [True, True]
        # The leader registering a task (itself too) is no join of this task: it names the one that joined.
        assert [e.peer for e in evs if e.kind == EventKind.PEER_CONNECTED] == ["worker:1", "worker:0", None]
        # The start-up wait was answered: no straggler.
        assert any(e.kind == EventKind.WAITING_FOR_TASKS for e in evs) and unresolved_waits(evs) == []


@pytest.mark.parametrize("task, log", [("worker:0", "worker-0.log"), ("worker:1", "worker-1.log")])
def test_every_task_of_a_recorded_run_joins_once(task, log):
    # `distdoctor run` with TF_CPP_MIN_LOG_LEVEL=0, tests/workers/trainer.py; worker:0 is the coordination leader.
    data = (CORPUS / "healthy-tf-info" / "logs" / log).read_bytes()
    for evs in (_line_events(data.decode(), task), list(_scan(data, 1000, task).events), list(_scan(data, 1 << 20, task).events)):
        joins = [e for e in evs if e.kind == EventKind.CLUSTER_CONNECTED]
        assert len(joins) == 1 and joins[0].text.endswith("coordination_service_agent.cc:245] Coordination agent has successfully connected.")
        assert joins[0].task == task and joins[0].ts is not None
        peers = [e.peer for e in evs if e.kind == EventKind.PEER_CONNECTED]
        assert peers == (["worker:0", "worker:1", None] if task == "worker:0" else [])
        assert unresolved_waits(evs) == []


def test_a_startup_straggler_that_connected_is_not_a_straggler():
    # Real: worker:0 names worker:1 as a straggler 16 ms before it connects; worker:1 later stalls.
    evs = _line_events((CORPUS / "stall-tf-info" / "worker-0.log").read_text(), "worker:0")
    assert [e.peer for e in evs if e.kind == EventKind.WAITING_FOR_TASKS][-1] == "worker:1"
    assert unresolved_waits(evs) == []
    # A peer that never starts is waited for until the end (hand-made from the same lines).
    evs = _line_events((CORPUS / "peer-never-starts" / "worker-0.log").read_text(), "worker:0")
    assert {e.peer for e in unresolved_waits(evs)} >= {"worker:1"}
    # ... unless its own log shows that it joined.
    assert not [e for e in unresolved_waits(evs, frozenset({"worker:1"})) if e.peer]


def test_tf_21_default_log_level_prints_no_join_line():
    # With TF_CPP_MIN_LOG_LEVEL=1 (what tests/workers/trainer.py, examples/ and most guides set) TF 2.21 prints
    # nothing when a task joins: the recorded runs then have no connect event, and none is invented.
    evs = _line_events((CORPUS / "healthy" / "worker-0.log").read_text(), "worker:0")
    assert not [e for e in evs if e.kind in (EventKind.CLUSTER_CONNECTED, EventKind.PEER_CONNECTED, EventKind.SERVER_STARTED)]


def test_non_utf8_bytes_do_not_hide_evidence():
    # A latin-1 path in a traceback and stray invalid bytes: the lines are still read, with U+FFFD for what is not UTF-8.
    data = (b"Epoch 1/2\n10/10 - 1s - loss: 0.5 - 1s/epoch - 100ms/step\nEpoch 2/2\n\xff\xfe garbage \xc3\n"
            b"Traceback (most recent call last):\n  File \"/home/j\xf6rg/train.py\", line 3, in <module>\n"
            b"ValueError: bad value \xe9\n")
    for chunk in (7, 1 << 20):
        got = _scan(data, chunk)
        exc = [e for e in got.events if e.kind == EventKind.PY_EXCEPTION]
        assert exc and exc[0].text.startswith("ValueError: bad value") and "\ufffd" in exc[0].text
        assert "j\ufffdrg/train.py" in exc[0].frames[0] and exc[0].line_no == 7
        assert got.steps == 10 and not got.binary
