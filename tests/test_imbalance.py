"""Tasks that ran different numbers of steps: data_sharding_imbalance, on hand-built observations (pure, fast).

The step counts are the agent's count of each task's step-function calls; ``step_calls_exact`` marks a count
sent as the task's Python code ended (its final count). Real-TF counterparts: tests/test_run_faults.py.
"""
from distdoctor.diagnose.observations import HangVerdict
from distdoctor.diagnose.hang_rules import left_the_loop, ran_fewer, step_counts
from distdoctor.diagnose.observations import JobObservation
from distdoctor.supervise.channel import AgentSample

from test_engine import T, obs, run, symptom

ABORT = "Collective ops is aborted by: Socket closed"


def test_a_task_that_left_the_loop_before_its_peer_failed_is_the_root_cause():
    """A custom loop over each worker's own dataset: worker:1's data ends after 26 steps, it exits 0, and
    worker:0's 27th all-reduce fails on the closed socket."""
    w1 = obs("worker:1", exit_code=0, ended_at=T + 10.0, steps=20, step_calls=26, step_calls_exact=True)
    w0 = obs("worker:0", exit_code=1, ended_at=T + 10.4, steps=20, step_calls=27, step_calls_exact=True,
             events=(symptom("worker:0", T + 10.3, ABORT),))
    d = run(w0, w1, source="run")
    r = d["root_cause"]
    assert d["status"] == "failed"
    assert (r["code"], r["category"], r["culprit"]) == ("DD204", "data_sharding_imbalance", "worker:1")
    assert "after 26 steps" in r["summary"] and "step 27" in r["summary"]
    assert r["evidence"][0].startswith("[worker:1") and "ran 26 steps" in r["evidence"][0]
    assert any(e.startswith("[worker:0") and "ran 27 steps" in e for e in r["evidence"])
    assert any("(consequence)" in e and ABORT in e for e in r["evidence"])


def test_equal_counts_with_a_failed_peer_are_not_an_imbalance():
    w1 = obs("worker:1", exit_code=0, ended_at=T + 10.0, step_calls=26, step_calls_exact=True)
    w0 = obs("worker:0", exit_code=1, ended_at=T + 10.4, step_calls=26, step_calls_exact=True,
             events=(symptom("worker:0", T + 10.3, ABORT),))
    d = run(w0, w1, source="run")
    assert d["root_cause"]["category"] != "data_sharding_imbalance"


def test_a_hung_peer_waiting_for_a_task_whose_training_code_ended_is_an_imbalance():
    """worker:1 left the loop; a non-daemon thread keeps its process alive, so the detector sees a stalled worker."""
    h = HangVerdict(kind="stalled_worker", declared_at=T + 25, since=T + 14, culprits=("worker:1",),
                    waiting=("worker:0",), reason="1 task(s) wait in a TensorFlow collective while worker:1 is idle")
    w1 = obs("worker:1", exit_code=-9, killed_by_supervisor=True, step_calls=26, step_calls_exact=True)
    w0 = obs("worker:0", exit_code=-9, killed_by_supervisor=True, step_calls=27, step_calls_exact=False)
    d = run(w0, w1, source="run", hang=h)
    r = d["root_cause"]
    assert d["status"] == "hung"
    assert (r["code"], r["category"], r["culprit"]) == ("DD204", "data_sharding_imbalance", "worker:1")
    assert "after 26 steps" in r["summary"]
    assert any("ran 27 steps (at least" in e for e in r["evidence"])
    assert not [f for f in d["findings"] if f["code"] == "DD201"]


def test_a_live_stall_with_the_same_counts_stays_a_stalled_worker():
    """A deadlocked callback after step 8: worker:1 entered 8 calls, worker:0 waits in its 9th -- the same
    pattern as leaving the loop, but its training code did not end, so it is a stall, not an imbalance."""
    h = HangVerdict(kind="stalled_worker", declared_at=T + 25, since=T + 14, culprits=("worker:1",),
                    waiting=("worker:0",), reason="r")
    w1 = obs("worker:1", exit_code=-9, killed_by_supervisor=True, step_calls=8, step_calls_exact=False)
    w0 = obs("worker:0", exit_code=-9, killed_by_supervisor=True, step_calls=9, step_calls_exact=False)
    d = run(w0, w1, source="run", hang=h)
    assert (d["status"], d["root_cause"]["code"], d["root_cause"]["culprit"]) == ("hung", "DD201", "worker:1")


def test_a_count_sampled_before_a_task_ended_never_makes_it_the_one_that_ran_fewer():
    """The 238-against-256 report: a periodic sample is a lower bound. Without the final count, nobody is blamed."""
    w0 = obs("worker:0", step_calls=600, step_calls_exact=True)
    w1 = obs("worker:1", step_calls=587, step_calls_exact=False)
    d = run(w0, w1, source="run")
    assert d["status"] == "succeeded"
    assert not [f for f in d["findings"] if f["category"] == "data_sharding_imbalance"]


def test_exact_counts_that_differ_in_a_succeeded_job_are_a_warning():
    d = run(obs("worker:0", step_calls=600, step_calls_exact=True),
            obs("worker:1", step_calls=400, step_calls_exact=True, ended_at=T + 15), source="run")
    assert d["status"] == "succeeded"
    imb = [f for f in d["findings"] if f["category"] == "data_sharding_imbalance"]
    assert imb and imb[0]["culprit"] == "worker:1" and imb[0]["severity"] == "warning" and "200 fewer" in imb[0]["summary"]


def test_step_counts_prefer_the_agents_per_function_count():
    job = JobObservation(tasks={"worker:0": obs("worker:0", steps=20, step_calls=27, step_calls_exact=True),
                                "worker:1": obs("worker:1", steps=20, step_calls=26, step_calls_exact=True)},
                         source="run")
    assert step_counts(job) == {"worker:0": (27, True), "worker:1": (26, True)}
    # without the agent's count on every task: progress-line steps, exact only for a task that exited 0
    job = JobObservation(tasks={"worker:0": obs("worker:0", steps=60, exit_code=1),
                                "worker:1": obs("worker:1", steps=30)}, source="run")
    assert step_counts(job) == {"worker:0": (60, False), "worker:1": (30, True)}


def test_ran_fewer_needs_an_exact_count_on_the_short_side():
    assert ran_fewer({"worker:0": (27, False), "worker:1": (26, True)}) == [("worker:1", 26, 27)]
    assert ran_fewer({"worker:0": (27, True), "worker:1": (26, False)}) == []
    assert ran_fewer({"worker:0": (600, True), "worker:1": (600, True)}) == []
    assert ran_fewer({"worker:0": (600, True), "worker:1": (595, True)}) == []   # under 2 %: progress-line coarseness
    assert ran_fewer({"worker:0": (5, True)}) == []


def test_left_the_loop_only_for_hangs_between_training_tasks():
    h = HangVerdict(kind="frozen", declared_at=T + 25, since=T + 14, culprits=("worker:1",), waiting=("worker:0",))
    job = JobObservation(tasks={"worker:0": obs("worker:0", step_calls=27), "worker:1": obs("worker:1", step_calls=26,
                                                                                           step_calls_exact=True)},
                         source="run", hang=h)
    assert left_the_loop(job) == []


def test_agent_sample_carries_the_step_function_count_and_the_final_flag():
    base = {"task": "worker:1", "pid": 7, "ts": T, "calls": 30}
    s = AgentSample.from_json({**base, "fn_calls": [["__inference_train_step", 26], ["__inference_reduce", 3]],
                               "final": True})
    assert (s.step_fn, s.step_calls, s.final) == ("__inference_train_step", 26, True)
    s = AgentSample.from_json(base)   # an older agent: no per-function counts
    assert (s.step_calls, s.final) == (None, False)
    s = AgentSample.from_json({**base, "fn_calls": [["x", "not a number"]]})
    assert s.step_calls is None


def test_a_task_that_failed_on_its_own_is_not_the_one_that_ran_out_of_data():
    """An exception at step 8 also ends the training code (a final count of 8 against the peer's 9): that is the
    exception, not an imbalance."""
    from distdoctor.diagnose.events import EventKind, LogEvent
    exc = LogEvent(task="worker:1", ts=T + 9.9, kind=EventKind.PY_EXCEPTION, text="ValueError: bad record",
                   frames=('File "train.py", line 3, in cb',))
    w1 = obs("worker:1", exit_code=1, ended_at=T + 10.0, step_calls=8, step_calls_exact=True, events=(exc,))
    w0 = obs("worker:0", exit_code=1, ended_at=T + 10.4, step_calls=9, step_calls_exact=True,
             events=(symptom("worker:0", T + 10.3, ABORT),))
    d = run(w0, w1, source="run")
    assert (d["root_cause"]["category"], d["root_cause"]["culprit"]) == ("user_code_error", "worker:1")
    assert not [f for f in d["findings"] if f["category"] == "data_sharding_imbalance"]


def test_a_shape_mismatch_between_two_tensors_is_named_by_the_step_counts():
    """worker:1's data ran out after 20 steps and it all-reduced a metric while worker:0 all-reduced step 21's
    gradients: TF says 'Shape mismatch in the collective instance' with two non-scalar shapes, which alone does
    not say who left; the step-function counts do."""
    from distdoctor.diagnose.events import EventKind, LogEvent
    text = ("BaseCollectiveExecutor::StartAbort INVALID_ARGUMENT: Shape mismatch in the collective instance 156. "
            "Op at device /job:worker/replica:0/task:1/device:CPU:0 expected shape [1] but another member in the "
            "group expected shape [545]. This is likely due to different input shapes at different members of "
            "the collective op.")
    mism = (LogEvent(task="worker:1", ts=T + 10.0, kind=EventKind.COLLECTIVE_MISMATCH, text=text),)
    w0 = obs("worker:0", exit_code=1, ended_at=T + 10.5, step_calls=21, events=mism)
    w1 = obs("worker:1", exit_code=1, ended_at=T + 10.4, step_calls=20, events=mism)
    r = run(w0, w1, source="run")["root_cause"]
    assert (r["code"], r["category"], r["culprit"]) == ("DD209", "data_sharding_imbalance", "worker:1")
    assert "20 steps against 21" in r["summary"]
    assert any("ran 20 steps" in e for e in r["evidence"]) and any("ran 21 steps" in e for e in r["evidence"])
    same = run(obs("worker:0", exit_code=1, step_calls=21, events=mism),
               obs("worker:1", exit_code=1, step_calls=21, events=mism), source="run")["root_cause"]
    assert same["category"] == "hang_collective_mismatch" and same["culprit"] is None
