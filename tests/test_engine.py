"""The root-cause policy and the rules, on hand-built observations (pure, fast)."""
import signal

from distdoctor.diagnose.engine import diagnose
from distdoctor.diagnose.events import EventKind, LogEvent
from distdoctor.diagnose.observations import HangVerdict, JobObservation, MemorySample, OomEvidence, TaskObservation

T = 1_700_000_000.0


def obs(name, **kw):
    base = dict(task=name, pid=100, started_at=T, ended_at=T + 20, exit_code=0, state="exited")
    base.update(kw)
    return TaskObservation(**base)


def symptom(task, ts, text="Collective ops is aborted by: recvmsg:Connection reset by peer", peer=None):
    return LogEvent(task=task, ts=ts, kind=EventKind.PEER_SYMPTOM, text=text, peer=peer)


def run(*tasks, **kw):
    job = JobObservation(tasks={t.task: t for t in tasks}, **kw)
    return diagnose(job, detected_at=T + 30).to_json()


def test_sigkill_is_root_and_peer_symptoms_are_consequences():
    w0 = obs("worker:0", exit_code=1, ended_at=T + 11, events=(symptom("worker:0", T + 10.5),))
    w1 = obs("worker:1", exit_code=-signal.SIGKILL, signal=signal.SIGKILL, ended_at=T + 10)
    d = run(w0, w1)
    assert d["status"] == "failed"
    assert (d["root_cause"]["category"], d["root_cause"]["culprit"]) == ("peer_crashed", "worker:1")
    assert any("(consequence)" in e and e.startswith("[worker:0") for e in d["root_cause"]["evidence"])


def test_a_sigbus_names_shared_memory_first():
    w1 = obs("worker:1", exit_code=-signal.SIGBUS, signal=signal.SIGBUS, ended_at=T + 10)
    d = run(obs("worker:0", exit_code=1, ended_at=T + 10.2), w1)
    rc = d["root_cause"]
    assert (rc["code"], rc["culprit"]) == ("DD102", "worker:1"), rc
    assert "/dev/shm" in rc["summary"] and rc["remedy"].startswith("Check /dev/shm"), rc
    w1 = obs("worker:1", exit_code=-signal.SIGSEGV, signal=signal.SIGSEGV, ended_at=T + 10)
    assert "/dev/shm" not in run(obs("worker:0", exit_code=1, ended_at=T + 10.2), w1)["root_cause"]["summary"]


def test_a_sigbus_with_its_dev_shm_full_or_tiny_is_the_exhausted_shared_memory():
    def verdict(shm):
        w1 = obs("worker:1", exit_code=-signal.SIGBUS, signal=signal.SIGBUS, ended_at=T + 10, shm=shm)
        return run(obs("worker:0", exit_code=1, ended_at=T + 10.2), w1)["root_cause"]
    full = verdict((16 << 30, 16 << 30))                # a large /dev/shm, seen full
    assert (full["code"], full["category"], full["culprit"]) == ("DD113", "resource_exhaustion", "worker:1"), full
    assert "100 % full" in full["summary"]
    tiny = verdict((10 << 20, 64 << 20))                # Docker's default 64 MiB, seen a sixth full
    assert tiny["code"] == "DD113" and "too small" in tiny["summary"], tiny
    assert verdict((1 << 30, 16 << 30))["code"] == "DD102"   # a large one, far from full: a native crash
    assert verdict(None)["code"] == "DD102"                  # nothing seen (diagnose on logs alone)


def test_oom_beats_bare_sigkill():
    w1 = obs("worker:1", exit_code=-9, signal=9, ended_at=T + 10,
             oom=OomEvidence(cgroup="/x", limit_bytes=1 << 30, max_usage_bytes=1 << 30, failcnt=30, oom_kill_count=1))
    d = run(obs("worker:0", exit_code=1, ended_at=T + 10.2), w1)
    assert (d["root_cause"]["category"], d["root_cause"]["culprit"]) == ("oom_host", "worker:1")


def test_rss_near_limit_alone_is_not_proof_of_oom():
    w1 = obs("worker:1", exit_code=-9, signal=9, ended_at=T + 10,
             memory=(MemorySample(T + 9, 950 << 20, 1 << 30),))
    d = run(obs("worker:0"), w1)
    assert d["root_cause"]["category"] == "peer_crashed"
    assert any(f["category"] == "resource_exhaustion" and f["severity"] == "warning" for f in d["findings"])


def test_first_failure_wins_over_later_exception():
    exc = LogEvent(task="worker:0", ts=T + 30, kind=EventKind.PY_EXCEPTION, text="ValueError: later")
    w0 = obs("worker:0", exit_code=1, ended_at=T + 31, events=(exc,))
    w1 = obs("worker:1", exit_code=-11, signal=11, ended_at=T + 10)
    d = run(w0, w1)
    assert (d["root_cause"]["category"], d["root_cause"]["culprit"]) == ("segfault_core_dump", "worker:1")


def test_no_culprit_invented():
    w0 = obs("worker:0", exit_code=1, events=(symptom("worker:0", T + 5),))
    w1 = obs("worker:1", exit_code=1, events=(symptom("worker:1", T + 5),))
    d = run(w0, w1)
    assert d["status"] == "failed" and d["root_cause"]["culprit"] is None
    assert set(d["root_cause"]["candidates"]) == {"worker:0", "worker:1"}


def test_logs_naming_a_silent_peer():
    w0 = obs("worker:0", exit_code=None, ended_at=None, events=(
        symptom("worker:0", T + 5, "The following tasks are unhealthy (stopped sending heartbeats): /job:worker/replica:0/task:1", peer="worker:1"),))
    w1 = obs("worker:1", exit_code=None, ended_at=None)
    d = run(w0, w1, source="logs")
    assert (d["root_cause"]["category"], d["root_cause"]["culprit"]) == ("peer_crashed", "worker:1")


def test_hang_verdict():
    h = HangVerdict(kind="stalled_worker", declared_at=T + 40, since=T + 20, culprits=("worker:1",), waiting=("worker:0",), reason="r")
    d = run(obs("worker:0", exit_code=-15, killed_by_supervisor=True), obs("worker:1", exit_code=-15, killed_by_supervisor=True), hang=h)
    assert d["status"] == "hung" and d["root_cause"]["category"] == "hang_stalled_worker"


def test_parameter_server_survives_lost_worker():
    chief = obs("chief:0", exit_code=0)
    w1 = obs("worker:1", exit_code=-9, signal=9, ended_at=T + 5)
    others = [obs("worker:0", exit_code=-15, killed_by_supervisor=True), obs("ps:0", exit_code=-15, killed_by_supervisor=True)]
    d = run(chief, w1, *others, strategy="parameter_server")
    assert d["status"] == "succeeded" and d["root_cause"] is None
    assert any(f["culprit"] == "worker:1" and f["severity"] == "warning" for f in d["findings"])


def test_imbalance_from_step_counts():
    d = run(obs("worker:0", steps=60), obs("worker:1", steps=30, ended_at=T + 10))
    f = [f for f in d["findings"] if f["category"] == "data_sharding_imbalance"]
    assert f and f[0]["culprit"] == "worker:1"


def test_straggler_warning():
    d = run(obs("worker:0", outside_tf_fraction=0.05), obs("worker:1", outside_tf_fraction=0.7))
    assert d["status"] == "succeeded"
    f = [f for f in d["findings"] if f["category"] == "straggler_slow_worker"]
    assert f and f[0]["culprit"] == "worker:1"


def test_nan_loss():
    ev = LogEvent(task="worker:0", ts=T + 3, kind=EventKind.NAN_LOSS, text="10/30 - loss: nan", step=10, loss=float("nan"))
    d = run(obs("worker:0", events=(ev,)), obs("worker:1"))
    f = [f for f in d["findings"] if f["category"] == "numerical_divergence"]
    assert f and "step 10" in f[0]["summary"]


def test_hang_after_an_exception_is_the_exception():
    exc = LogEvent(task="worker:1", ts=T + 21, kind=EventKind.PY_EXCEPTION, text="ValueError: bad record",
                   frames=('File "train.py", line 3, in cb',))
    h = HangVerdict(kind="stalled_worker", declared_at=T + 31, since=T + 20.5, culprits=("worker:1",), waiting=("worker:0",), reason="r")
    w0 = obs("worker:0", exit_code=-15, killed_by_supervisor=True)
    w1 = obs("worker:1", exit_code=-15, killed_by_supervisor=True, events=(exc,))
    d = run(w0, w1, hang=h)
    assert d["status"] == "failed"
    assert (d["root_cause"]["category"], d["root_cause"]["culprit"]) == ("user_code_error", "worker:1")


def test_a_task_that_finished_training_is_not_blamed_for_shutdown_noise():
    done = tuple(LogEvent(task="worker:1", ts=T + i, kind=k, text=t, line_no=i, step=st, total=tot, epoch=ep)
                 for i, (k, t, st, tot, ep) in enumerate([(EventKind.EPOCH, "Epoch 2/2", None, 2, 2),
                                                          (EventKind.PROGRESS, "30/30 - loss: 0.2", 30, 30, None)], 1))
    w0 = obs("worker:0", exit_code=None, ended_at=None, events=(
        symptom("worker:0", T + 9, "The following tasks are unhealthy (stopped sending heartbeats): /job:worker/replica:0/task:1", peer="worker:1"),))
    w1 = obs("worker:1", exit_code=None, ended_at=None, events=done)
    d = run(w0, w1, source="logs")
    assert not any(f["code"] == "DD107" for f in d["findings"])


def _connect_failure(task, ts, addr, line_no=10, peer="worker:1"):
    first = LogEvent(task=task, ts=ts, kind=EventKind.PEER_SYMPTOM, line_no=line_no,
                     text=f"E0000 00:00:{ts:.6f} 1 ring_alg.cc:291] Aborting RingReduce with UNAVAILABLE: failed to "
                          f"connect to all addresses; last error: UNKNOWN: ipv4:{addr}: Failed to connect to remote "
                          "host: Connection refused")
    named = LogEvent(task=task, ts=ts, kind=EventKind.PEER_SYMPTOM, line_no=line_no + 1, peer=peer,
                     text=f"Additional GRPC error information from remote target /job:worker/replica:0/task:"
                          f"{peer.split(':')[1]} while calling /tensorflow.WorkerService/RecvBuf:")
    return (first, named)


def _heard(task, ts):
    return (symptom(task, ts, "E0000 ring_alg.cc:291] Aborting RingReduce with UNAVAILABLE: Collective ops is "
                              "aborted by: failed to connect to all addresses"),)


def test_one_task_that_cannot_reach_a_live_peer_is_the_odd_config():
    w0 = obs("worker:0", exit_code=None, ended_at=None, events=_heard("worker:0", T + 10.1))
    w1 = obs("worker:1", exit_code=None, ended_at=None, events=_heard("worker:1", T + 10.1))
    w2 = obs("worker:2", exit_code=None, ended_at=None, events=_connect_failure("worker:2", T + 10, "10.0.0.2:46511"))
    d = run(w0, w1, w2, source="logs")
    rc = d["root_cause"]
    assert (rc["code"], rc["category"], rc["culprit"]) == ("DD158", "config_mismatch_across_workers", "worker:2")
    assert "10.0.0.2:46511" in rc["summary"] and "DD107" not in [f["code"] for f in d["findings"]]


def test_a_peer_nobody_reaches_or_that_never_heard_the_abort_is_not_a_config_mismatch():
    # two tasks fail first-hand to the same address: the peer is unreachable, not one config odd
    w0 = obs("worker:0", exit_code=None, ended_at=None, events=_connect_failure("worker:0", T + 10, "10.0.0.2:2222"))
    w1 = obs("worker:1", exit_code=None, ended_at=None, events=_heard("worker:1", T + 10.1))
    w2 = obs("worker:2", exit_code=None, ended_at=None, events=_connect_failure("worker:2", T + 10, "10.0.0.2:2222"))
    assert "DD158" not in [f["code"] for f in run(w0, w1, w2, source="logs")["findings"]]
    # the peer's log never received the abort (it was gone): not this rule either
    w1_silent = obs("worker:1", exit_code=None, ended_at=None)
    w0_ok = obs("worker:0", exit_code=None, ended_at=None, events=_heard("worker:0", T + 10.1))
    assert "DD158" not in [f["code"] for f in run(w0_ok, w1_silent, w2, source="logs")["findings"]]


# -- issue 10 item 7: bugs found by reading ------------------------------------------------------------------------

def test_a_hang_is_explained_only_by_its_own_culprits_exception():
    """worker:0 printed an exception while worker:1 was the stalled one: the hang is worker:1's, not worker:0's error."""
    exc = LogEvent(task="worker:0", ts=T + 25, kind=EventKind.PY_EXCEPTION, text="ValueError: bad record",
                   frames=('File "train.py", line 3, in cb',))
    h = HangVerdict(kind="stalled_worker", declared_at=T + 31, since=T + 20.5, culprits=("worker:1",), waiting=("worker:0",), reason="r")
    w0 = obs("worker:0", exit_code=-15, killed_by_supervisor=True, events=(exc,))
    w1 = obs("worker:1", exit_code=-15, killed_by_supervisor=True)
    d = run(w0, w1, hang=h)
    assert d["status"] == "hung" and d["root_cause"]["culprit"] == "worker:1"


def test_collective_mismatch_of_two_tasks_names_the_one_behind():
    h = HangVerdict(kind="collective_mismatch", declared_at=T + 31, since=T + 20, culprits=(), waiting=("worker:0", "worker:1"), reason="r")
    d = run(obs("worker:0", exit_code=-15, killed_by_supervisor=True, steps=40),
            obs("worker:1", exit_code=-15, killed_by_supervisor=True, steps=32), hang=h)
    assert d["root_cause"]["code"] == "DD202" and d["root_cause"]["culprit"] == "worker:1"
    d = run(obs("worker:0", exit_code=-15, killed_by_supervisor=True, steps=40),
            obs("worker:1", exit_code=-15, killed_by_supervisor=True, steps=40), hang=h)
    assert d["root_cause"]["culprit"] is None and set(d["root_cause"]["candidates"]) == {"worker:0", "worker:1"}


def test_a_task_stopped_by_the_supervisor_keeps_its_own_earlier_failure():
    """worker:1 raised first (and lingered); the supervisor stopped it when worker:0 then died of the cascade."""
    exc = LogEvent(task="worker:1", ts=T + 5, kind=EventKind.PY_EXCEPTION, text="KeyError: 'label'",
                   frames=('File "train.py", line 9, in parse',))
    w0 = obs("worker:0", exit_code=1, ended_at=T + 8)
    w1 = obs("worker:1", exit_code=-15, ended_at=T + 9, killed_by_supervisor=True, events=(exc,))
    d = run(w0, w1)
    assert (d["root_cause"]["category"], d["root_cause"]["culprit"]) == ("user_code_error", "worker:1")


def test_a_last_line_that_only_says_done_is_not_the_end_of_training():
    from distdoctor.diagnose.from_logs import _CLOSING
    for line in ("step 10 done", "batch 4 complete", "upload completed"):
        assert not _CLOSING.search(line), line
    for line in ("Training finished.", "final loss 0.12", "INFO:tensorflow:Loss for final step: 3.3"):
        assert _CLOSING.search(line), line


def test_a_frozen_task_fails_the_job_rather_than_hanging_it():
    """SIGSTOP (or a stuck host): the verdict came from the hang detector, but the job failed on a frozen peer."""
    h = HangVerdict(kind="frozen", declared_at=T + 40, since=T + 20, culprits=("worker:1",), waiting=("worker:0",), reason="r")
    w1 = obs("worker:1", exit_code=-15, killed_by_supervisor=True, state="stopped", state_since=T + 20)
    d = run(obs("worker:0", exit_code=-15, killed_by_supervisor=True), w1, hang=h)
    assert (d["root_cause"]["category"], d["root_cause"]["culprit"]) == ("peer_unresponsive", "worker:1")
    assert d["status"] == "failed"


def test_a_job_whose_tasks_all_exit_zero_is_never_failed():
    """E.g. unequal per-worker data: TF stops every worker at the shortest input, and every task exits 0;
    peers' complaints at shutdown or an imbalance finding are warnings, the job succeeded."""
    w0 = obs("worker:0", steps=256, events=(symptom("worker:0", T + 19, "The following tasks are unhealthy "
                                                     "(stopped sending heartbeats): /job:worker/replica:0/task:1", peer="worker:1"),))
    w1 = obs("worker:1", steps=238)
    d = run(w0, w1, source="run")
    assert d["status"] == "succeeded" and d["root_cause"] is None
    assert all(f["severity"] != "error" for f in d["findings"])
    imb = [f for f in d["findings"] if f["category"] == "data_sharding_imbalance"]
    assert imb and imb[0]["culprit"] == "worker:1" and "18 fewer" in imb[0]["summary"]
