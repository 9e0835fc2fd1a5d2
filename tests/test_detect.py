"""Pure unit tests of the hang detector: time is a parameter."""
from dataclasses import replace

import pytest

from distdoctor.supervise.detect import JobSnapshot, TaskSnapshot, assess, stall_threshold

T0 = 1000.0


def task(name, **kw):
    base = dict(task=name, alive=True, exit_code=None, state="sleeping", state_since=T0, has_agent=True,
                tf_loaded=True, in_call="__inference_train_function_1", call_since=T0 + 5, calls=50,
                location="train.py:10 in main", in_tf_code=True, serving=False, user_thread_busy=False,
                last_progress_at=T0 + 5, cpu_rate=0.01, started_at=T0)
    base.update(kw)
    return TaskSnapshot(**base)


def job(*tasks, intervals=(0.05,) * 20, hang_timeout=None):
    return JobSnapshot(tasks=tuple(tasks), step_intervals=intervals, started_at=T0, hang_timeout=hang_timeout)


def test_threshold_adapts_and_is_clamped():
    assert stall_threshold((), None) == 20.0
    assert stall_threshold((0.01,) * 5, None) == 10.0
    assert stall_threshold((1.5,) * 5, None) == 15.0
    assert stall_threshold((30.0,), None) == 20.0
    assert stall_threshold((0.01,), 42.0) == 42.0


def test_stalled_worker_idle_outside_tf():
    w0 = task("worker:0")
    w1 = task("worker:1", in_call=None, in_tf_code=False, location="train.py:93 in inject")
    a = assess(job(w0, w1), T0 + 5 + 10.5)
    assert a.status == "hung" and a.verdict.kind == "stalled_worker" and a.verdict.culprits == ("worker:1",)
    assert a.verdict.waiting == ("worker:0",)


def test_suspect_before_threshold():
    w0 = task("worker:0")
    w1 = task("worker:1", in_call=None, in_tf_code=False)
    a = assess(job(w0, w1), T0 + 5 + 6)
    assert a.status == "suspect" and a.suspect == "worker:1"


def test_a_computing_culprit_is_a_pause_never_declared_by_default():
    """Chief-only evaluation in Python while the worker waits in the next step's all-reduce."""
    w0 = task("worker:0")
    w1 = task("worker:1", in_call=None, in_tf_code=False, cpu_rate=1.0, location="train.py:40 in evaluate")
    for after in (6, 15, 41, 600, 3600):
        a = assess(job(w0, w1), T0 + 5 + after)
        assert a.status == "suspect" and a.pause and a.suspect == "worker:1" and a.verdict is None
    assert "computing (1.00 cores)" in a.reason and "a pause, not a stall" in a.reason
    assert a.where == "train.py:40 in evaluate"


@pytest.mark.parametrize("how", ["sending or receiving over the network (0.5 MiB since the last look)",
                                 "reading or writing files (3.0 MiB since the last sample)",
                                 "running through new code"])
def test_an_idle_culprit_whose_io_network_or_stack_moves_is_a_pause(how):
    """A slow download (little CPU, bytes keep arriving), a checkpoint written to slow storage."""
    w0 = task("worker:0")
    now = T0 + 5 + 300
    w1 = task("worker:1", in_call=None, in_tf_code=False, cpu_rate=0.02, own_progress_at=now - 2, activity=how)
    a = assess(job(w0, w1), now)
    assert a.status == "suspect" and a.pause and how in a.reason


def test_a_pause_that_stops_moving_becomes_a_stall_after_the_threshold():
    w0 = task("worker:0")
    moved = T0 + 5 + 100
    w1 = task("worker:1", in_call=None, in_tf_code=False, own_progress_at=moved, activity="running through new code")
    assert assess(job(w0, w1), moved + 9.5).status == "suspect"
    a = assess(job(w0, w1), moved + 10.5)
    assert a.status == "hung" and a.verdict.kind == "stalled_worker" and a.verdict.culprits == ("worker:1",)


def test_hang_timeout_bounds_every_pause():
    w1 = task("worker:1", in_call=None, in_tf_code=False, cpu_rate=1.0)
    assert assess(job(task("worker:0"), w1, hang_timeout=60), T0 + 5 + 59).status == "suspect"
    a = assess(job(task("worker:0"), w1, hang_timeout=60), T0 + 5 + 61)
    assert a.status == "hung" and "--hang-timeout 60" in a.reason


def test_a_busy_input_thread_that_still_reads_is_a_pause():
    now = T0 + 5 + 100
    slow = task("worker:1", user_thread_busy=True, own_progress_at=now - 1, activity="reading or writing files (1.0 MiB since the last sample)")
    a = assess(job(task("worker:0"), slow), now)
    assert a.status == "suspect" and a.pause and a.suspect == "worker:1"


def test_suspected_within_ten_seconds_whatever_the_threshold():
    w1 = task("worker:1", in_call=None, in_tf_code=False)
    assert stall_threshold((5.0,) * 5, None) == 20.0
    assert assess(job(task("worker:0"), w1, intervals=(5.0,) * 5), T0 + 5 + 6.9).status == "ok"
    a = assess(job(task("worker:0"), w1, intervals=(5.0,) * 5), T0 + 5 + 7.0)
    assert a.status == "suspect" and a.suspect == "worker:1"


def test_pause_with_nobody_waiting_is_not_a_hang():
    w0 = task("worker:0", in_call=None, in_tf_code=False)
    w1 = task("worker:1", in_call=None, in_tf_code=False)
    assert assess(job(w0, w1), T0 + 500).status == "ok"


def test_computing_in_tf_is_not_a_hang():
    w0 = task("worker:0", cpu_rate=1.5)
    w1 = task("worker:1", cpu_rate=1.5)
    assert assess(job(w0, w1), T0 + 500).status == "ok"


def test_all_waiting_idle_is_mismatch():
    a = assess(job(task("worker:0"), task("worker:1")), T0 + 5 + 11)
    assert a.status == "hung" and a.verdict.kind == "collective_mismatch"


def test_mismatch_names_the_odd_one_out_of_three():
    ws = [task("worker:0"), task("worker:1"), task("worker:2", calls=49)]
    a = assess(job(*ws), T0 + 5 + 11)
    assert a.verdict.kind == "collective_mismatch" and a.verdict.culprits == ("worker:2",)


def test_input_thread_busy_is_stalled_worker():
    a = assess(job(task("worker:0"), task("worker:1", user_thread_busy=True)), T0 + 5 + 11)
    assert a.verdict.kind == "stalled_worker" and a.verdict.culprits == ("worker:1",)


def test_peer_exited_early_is_imbalance():
    done = task("worker:1", alive=False, exit_code=0)
    a = assess(job(task("worker:0"), done), T0 + 5 + 11)
    assert a.verdict.kind == "peer_exited" and a.verdict.culprits == ("worker:1",)


@pytest.mark.parametrize("state,after,hung", [("stopped", 3.5, True), ("stopped", 1.0, False),
                                               ("disk-sleep", 12.0, True), ("disk-sleep", 5.0, False)])
def test_frozen(state, after, hung):
    w1 = task("worker:1", state=state, state_since=T0 + 5, in_call=None)
    a = assess(job(task("worker:0"), w1), T0 + 5 + after)
    assert (a.status == "hung") == hung
    if hung:
        assert a.verdict.kind == "frozen" and a.verdict.culprits == ("worker:1",)


def test_first_call_gets_startup_allowance():
    ws = [task("worker:0", calls=0), task("worker:1", calls=0, in_call=None, in_tf_code=False)]
    assert assess(job(*ws, intervals=()), T0 + 5 + 30).status == "suspect"


def test_hang_timeout_overrides():
    w1 = task("worker:1", in_call=None, in_tf_code=False)
    assert assess(job(task("worker:0"), w1, hang_timeout=60), T0 + 5 + 30).status == "suspect"
    assert assess(job(task("worker:0"), w1, hang_timeout=60), T0 + 5 + 61).status == "hung"


def test_serving_tasks_are_ignored():
    ps = task("ps:0", serving=True, in_call=None)
    w = task("worker:0", serving=True, in_call=None)
    assert assess(job(ps, w), T0 + 500).status == "ok"


def test_lone_coordinator_waiting_on_servers_is_not_a_mismatch():
    chief = task("chief:0")
    servers = [task("worker:0", serving=True, in_call=None), task("ps:0", serving=True, in_call=None)]
    assert assess(job(chief, *servers), T0 + 500).status == "ok"


def test_a_silent_agent_is_not_taken_as_waiting_in_a_collective():
    """Both workers finished training; worker:0 then blocks in TensorFlow's shutdown holding the GIL, so
    its agent's last sample (mid-step, "in a TF function") goes stale: not a peer_exited hang."""
    done = task("worker:1", alive=False, exit_code=0)
    now = T0 + 5 + 25
    stale = task("worker:0", agent_ts=T0 + 5)
    assert assess(job(stale, done), now).status == "ok"
    fresh = task("worker:0", agent_ts=now - 0.4)
    a = assess(job(fresh, done), now)
    assert a.status == "hung" and a.verdict.kind == "peer_exited"


def test_a_silent_agent_can_still_be_the_culprit_others_wait_for():
    w0 = task("worker:0", agent_ts=T0 + 15)
    w1 = task("worker:1", in_call=None, in_tf_code=False, location="ext.py:3 in spin", agent_ts=T0 + 5)
    a = assess(job(w0, w1), T0 + 5 + 10.5)
    assert a.status == "hung" and a.verdict.culprits == ("worker:1",) and "agent has been silent" in a.reason


def test_a_suspect_that_worked_a_moment_ago_but_not_now_is_no_pause():
    """A deadlocked worker's input threads fill their prefetch buffers for a few seconds after its main thread
    stops: at the suspicion (7 s) that is over, and the suspect is named as doing nothing, not as a pause."""
    last = T0 + 5
    w1 = task("worker:1", in_call=None, in_tf_code=False, last_progress_at=last, own_progress_at=last + 3,
              activity="computing (0.32 cores)")
    a = assess(job(task("worker:0", last_progress_at=last), w1), last + 7.5)
    assert a.status == "suspect" and not a.pause and "a pause" not in a.reason and "done nothing" in a.reason


def test_the_jobs_end_is_not_a_peer_that_finished_early():
    """worker:1 ran its last step and exited 0; worker:0 ran as many and sits in TensorFlow's shutdown (outside any
    step function) waiting for the coordination service: the job's end, no suspicion, no pause warning."""
    done = task("worker:1", alive=False, exit_code=0, calls=60)
    shutting = task("worker:0", in_call=None, in_tf_code=True, calls=60, location="train.py:40 in <module>")
    for after in (8, 30, 120):
        assert assess(job(shutting, done), T0 + 5 + after).status == "ok"
    # inside a step function while its peer is gone: it waits in a collective the peer will never join
    stuck = task("worker:0", calls=61)
    assert assess(job(stuck, done), T0 + 5 + 30).verdict.kind == "peer_exited"


def test_a_peer_that_left_by_os_exit_is_the_jobs_end_not_a_peer_that_finished_early():
    """worker:1 ends its script with ``os._exit(0)`` (a usual cure for TensorFlow's hang at exit): no last sample, so
    its count of TF calls is a period old (81 of its 84). worker:0, outside any step function, in TensorFlow's
    teardown, waits for the coordination service: the job's end. The fresh-clone CI of session 19 saw this
    declared a hang and the finished chief stopped."""
    left = task("worker:1", alive=False, exit_code=0, calls=81)
    for chief in (task("worker:0", in_call=None, calls=84, ended=True),      # its code ended: in the teardown
                  task("worker:0", in_call=None, calls=84)):                 # or still in it, outside a step
        for after in (8, 30, 120):
            assert assess(job(chief, left), T0 + 5 + after).status == "ok", (chief, after)
    # the exited peer's count is exact (its last sample came at its exit) and smaller: it ran fewer steps
    exact = task("worker:1", alive=False, exit_code=0, calls=81, ended=True)
    a = assess(job(task("worker:0", in_call=None, calls=84), exact), T0 + 5 + 30)
    assert a.status == "hung" and a.verdict.kind == "peer_exited"
    # inside a step function: waiting in a collective for the peer who left, however it left
    a = assess(job(task("worker:0", calls=84), left), T0 + 5 + 30)
    assert a.status == "hung" and a.verdict.kind == "peer_exited"


def test_a_peer_that_woke_a_moment_sooner_from_a_shared_pause_waits_for_nobody_stalled():
    """Every worker sleeps 22 s at the same step (a callback); worker:1 woke 1 s sooner and entered the next
    all-reduce. worker:0 has stood still for 21 s, past the threshold, yet nobody has waited on it yet: no
    suspicion, and never a hang -- the fresh-clone CI of session 20 saw this suspected, and with a wider gap
    it was declared and the healthy job stopped. A peer that has waited long enough makes it a stall again."""
    last = T0 + 5
    sleeper = task("worker:0", in_call=None, in_tf_code=False, location="train.py:180 in pause_point",
                   last_progress_at=last, own_progress_at=last)
    for gap in (0.5, 1.0, 3.0):
        now = last + 21.5
        woke = task("worker:1", call_since=now - gap, last_progress_at=last)
        assert assess(job(sleeper, woke), now).status == "ok", gap
    # woken 8 s sooner: suspected (it waits), not declared before it has waited the threshold itself
    now = last + 21.5
    a = assess(job(sleeper, task("worker:1", call_since=now - 8)), now)
    assert a.status == "suspect" and a.suspect == "worker:0" and a.verdict is None
    # a real stall: the peer has waited since the last step
    a = assess(job(sleeper, task("worker:1", call_since=last)), now)
    assert a.status == "hung" and a.verdict.culprits == ("worker:0",)


def test_a_start_up_pause_is_not_bounded_by_the_hang_timeout_before_the_first_step():
    """--hang-timeout 8: before any step, worker:0 still builds its model (computing, outside the collective) while
    worker:1 waits in its first one. Start-up on a loaded node is slow; the fresh-clone CI of session 21 saw this
    declared at 8 s and the job stopped. It gets the start-up allowance a stall gets; after the first step the
    user's bound holds."""
    building = task("worker:0", in_call=None, in_tf_code=True, cpu_rate=0.3, calls=0, last_progress_at=None,
                    location="trainer.py:73 in <module>")
    waiting = task("worker:1", calls=0, call_since=T0, last_progress_at=None)
    for after in (9, 30, 59):
        a = assess(job(building, waiting, hang_timeout=8), T0 + after)
        assert a.status == "suspect" and a.pause and a.verdict is None, (after, a)
    assert assess(job(building, waiting, hang_timeout=8), T0 + 61).status == "hung"
    # once a step was made, --hang-timeout bounds every pause as documented
    a = assess(job(replace(building, calls=5, last_progress_at=T0 + 5), replace(waiting, calls=5, call_since=T0 + 5,
                                                                              last_progress_at=T0 + 5),
                   hang_timeout=8), T0 + 5 + 9)
    assert a.status == "hung" and a.verdict.culprits == ("worker:0",)


# worker:1's main thread as py-spy and the agent saw it while worker:0 computed in an epoch-end callback: Keras'
# ``reset_metrics`` at the next epoch reads a SyncOnReadVariable across replicas, an eager all-reduce that TensorFlow
# runs on a thread pool (tf_keras 2.21 under MultiWorkerMirroredStrategy; a real run of tests/workers/tutorial_keras.py)
_SITE = "/venv/lib/python3.11/site-packages/"
_LIB = "/usr/lib/python3.11/"
EAGER_ALLREDUCE_WAIT = (
    ("/home/u/tutorial_keras.py", 32, "<module>"),
    (_SITE + "tf_keras/src/engine/training.py", 1792, "fit"),
    (_SITE + "tf_keras/src/engine/training.py", 2718, "reset_metrics"),
    (_SITE + "tensorflow/python/distribute/values.py", 1423, "_get_cross_replica"),
    (_SITE + "tensorflow/python/distribute/cross_device_ops.py", 1226, "reduce_implementation"),
    (_SITE + "tensorflow/python/distribute/cross_device_ops.py", 1208, "_all_reduce_per_replica_values"),
    (_LIB + "multiprocessing/pool.py", 367, "map"),
    (_LIB + "multiprocessing/pool.py", 768, "get"),
    (_LIB + "multiprocessing/pool.py", 765, "wait"),
    (_LIB + "threading.py", 629, "wait"),
    (_LIB + "threading.py", 327, "wait"),
)


def test_an_eager_all_reduce_on_tensorflows_thread_pool_is_waiting_in_tensorflow():
    from distdoctor.supervise.tracking import in_tf_code
    assert in_tf_code(EAGER_ALLREDUCE_WAIT)
    assert in_tf_code(EAGER_ALLREDUCE_WAIT[:4])                      # innermost frame TensorFlow's: as before
    # the user's own thread pool, or TensorFlow code that merely waits on a lock outside its collective layer: not
    user_pool = EAGER_ALLREDUCE_WAIT[:1] + (("/home/u/prefetch.py", 9, "load"),) + EAGER_ALLREDUCE_WAIT[6:]
    assert not in_tf_code(user_pool)
    coordinator = EAGER_ALLREDUCE_WAIT[:1] + (
        (_SITE + "tensorflow/python/distribute/coordinator/cluster_coordinator.py", 1, "join"),) + \
        EAGER_ALLREDUCE_WAIT[9:]
    assert not in_tf_code(coordinator)
    assert not in_tf_code(()) and not in_tf_code(EAGER_ALLREDUCE_WAIT[:1])


def test_a_peer_in_an_eager_all_reduce_waits_for_a_stuck_chief():
    """worker:0 sleeps in its epoch-end callback; worker:1 waits in Keras' eager metrics all-reduce: a stall of
    worker:0, declared once worker:0 did nothing for the threshold (before, neither task counted as waiting)."""
    from distdoctor.supervise.tracking import in_tf_code
    now = T0 + 60
    w0 = task("worker:0", in_call=None, in_tf_code=False, location="cb.py:5 in on_epoch_end", last_progress_at=T0 + 5)
    w1 = task("worker:1", in_call=None, in_tf_code=in_tf_code(EAGER_ALLREDUCE_WAIT), last_progress_at=T0 + 5)
    a = assess(job(w0, w1), now)
    assert a.status == "hung" and a.verdict.culprits == ("worker:0",) and a.verdict.waiting == ("worker:1",), a
