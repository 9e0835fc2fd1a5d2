"""A task whose process holds a TF_CONFIG other than the one ``distdoctor run`` gave it (a wrapper changed it):
what is wrong with it (pure), and the detector's verdict when the job then never makes a step (time a parameter).
The real runs (a wrapper that corrupts one task's port or index) are in tests/test_run_tutorials.py."""
import json

from distdoctor.cluster.drift import tf_config_drift
from distdoctor.supervise.detect import CONFIG_WAIT_S, JobSnapshot, TaskSnapshot, assess

GIVEN = {"cluster": {"worker": ["localhost:100", "localhost:200"]}, "task": {"type": "worker", "index": 1}}


def _seen(**change):
    cfg = json.loads(json.dumps(GIVEN))
    for k, v in change.items():
        if k == "index":
            cfg["task"]["index"] = v
        else:
            cfg["cluster"]["worker"] = v
    return json.dumps(cfg)


def test_the_same_config_is_no_drift():
    assert tf_config_drift("worker:1", json.dumps(GIVEN), json.dumps(GIVEN)) is None
    # another key order, same content: nothing that matters differs
    assert tf_config_drift("worker:1", json.dumps(GIVEN), json.dumps(dict(reversed(list(GIVEN.items()))))) is None


def test_a_port_nobody_listens_on_is_named_with_the_right_one():
    p = tf_config_drift("worker:1", json.dumps(GIVEN), _seen(w=["localhost:107", "localhost:200"]))
    assert "worker:0 at localhost:107, where no task of the job listens" in p and "localhost:100" in p


def test_two_tasks_with_one_index():
    p = tf_config_drift("worker:1", json.dumps(GIVEN), _seen(index=0))
    assert "it says it is worker:0" in p and "two tasks claim" in p


def test_a_missing_task_and_bad_json():
    assert "lacks worker:1" in tf_config_drift("worker:1", json.dumps(GIVEN), _seen(w=["localhost:100"]))
    assert "not valid JSON" in tf_config_drift("worker:1", json.dumps(GIVEN), "{oops")


T0 = 1000.0


def _task(name, **kw):
    base = dict(task=name, alive=True, exit_code=None, state="sleeping", state_since=T0, has_agent=True,
                tf_loaded=True, in_call=None, call_since=None, calls=0, location="train.py:12 in <module>",
                in_tf_code=True, serving=False, user_thread_busy=False, last_progress_at=None, cpu_rate=0.01,
                started_at=T0)
    base.update(kw)
    return TaskSnapshot(**base)


def test_a_wrong_config_and_no_step_is_declared_after_the_wait():
    w1 = _task("worker:1", config_problem="it lists worker:0 at localhost:107, where no task of the job listens",
               config_since=T0 + 4)
    job = JobSnapshot(tasks=(_task("worker:0"), w1), step_intervals=(), started_at=T0)
    a = assess(job, T0 + 10)
    assert a.status == "suspect" and a.suspect == "worker:1" and "localhost:107" in a.reason
    a = assess(job, T0 + 4 + CONFIG_WAIT_S)
    assert a.status == "hung" and a.verdict.kind == "config" and a.verdict.culprits == ("worker:1",)


def test_a_job_that_steps_despite_the_changed_config_is_left_alone():
    """A script that rewrites TF_CONFIG consistently trains: its steps outweigh the note."""
    w1 = _task("worker:1", config_problem="it lists worker:0 at localhost:107", config_since=T0 + 4,
               last_progress_at=T0 + 60, calls=100)
    job = JobSnapshot(tasks=(_task("worker:0", last_progress_at=T0 + 60, calls=100), w1),
                      step_intervals=(0.1,) * 10, started_at=T0)
    assert assess(job, T0 + 61).status == "ok"
