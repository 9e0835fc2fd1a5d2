"""Fixes to the supervisor found by measuring and reading (issue 11, item 7), each pinned by a test."""
from __future__ import annotations

from types import SimpleNamespace

from distdoctor.diagnose.events import EventKind
from distdoctor.diagnose.observations import OomEvidence
from distdoctor.supervise.observe import oom_kills_since
from distdoctor.supervise.tracking import TaskTrack


def test_the_events_of_a_chatty_task_stay_bounded_and_keep_first_fault_and_last_lines():
    t = TaskTrack("worker:0", SimpleNamespace(started_at=0.0))
    t.on_line(1.0, "Traceback (most recent call last):")
    t.on_line(1.0, '  File "train.py", line 3, in <module>')
    t.on_line(1.0, "ValueError: first")
    n = 0
    for i in range(6 * TaskTrack.MAX_EVENTS):
        n += len(t.on_line(2.0 + i, f"UnavailableError: Connection reset by peer {i}"))
    assert n >= 3 * TaskTrack.MAX_EVENTS, "the line must make events for this test to mean anything"
    assert len(t.events) < 2 * TaskTrack.MAX_EVENTS and t.dropped_events > 0
    assert any(e.kind == EventKind.PY_EXCEPTION and "first" in e.text for e in t.events)
    assert str(6 * TaskTrack.MAX_EVENTS - 1) in t.events[-1].text


def test_oom_kill_counter_counts_only_kills_since_distdoctor_started():
    before = OomEvidence(cgroup="/job", oom_kill_count=3)
    assert oom_kills_since(before, 3).oom_kill_count == 0        # 3 kills of earlier jobs: not this task's
    assert oom_kills_since(OomEvidence(cgroup="/job", oom_kill_count=4), 3).oom_kill_count == 1
    assert oom_kills_since(OomEvidence(cgroup="/job", oom_kill_count=None), 3).oom_kill_count is None


def test_live_steps_per_second_does_not_read_zero_while_steps_advance():
    """The counter moves every 0.5 s (agent samples), the view refreshes every 0.25 s: never 0/s."""
    import collections

    from distdoctor.supervise.liveadapter import window_rate
    hist = collections.deque()
    rates = []
    for i in range(200):
        now = i * 0.25
        steps = int(now / 0.5) * 10          # 20 steps/s, seen in jumps
        rates.append(window_rate(hist, now, steps))
    seen = [r for r in rates[8:] if r is not None]
    assert seen and min(seen) > 15 and max(seen) < 25
    assert len(hist) <= 45                   # the window keeps ~10 s of refreshes
    assert window_rate(hist, 50.25, 3) is None  # a restart resets the counter: no negative or stale rate


def test_timeline_does_not_paint_a_short_start_up_disk_sleep_as_frozen():
    from distdoctor.report.bundle import Sample
    from distdoctor.report.marks import task_spans as _spans
    from distdoctor.report.page import LaneMark, LanePhase as Phase, Mark

    def samples(states):
        return [Sample(ts=100.0 + 0.5 * i, task="worker:0", state=st) for i, st in enumerate(states)]

    marks = [LaneMark(Mark.START, 100.0, "start")]
    short = _spans(marks, samples(["running", "disk-sleep", "disk-sleep", "running", "sleeping"] * 3), False, False, None, 110.0)
    assert not any(s.phase == Phase.FROZEN for s in short)
    long_d = _spans(marks, samples(["running"] + ["disk-sleep"] * 10 + ["running"]), False, False, None, 110.0)
    assert any(s.phase == Phase.FROZEN and s.end - s.start >= 3 for s in long_d)
    sigstop = _spans(marks, samples(["running", "stopped", "running"]), False, False, None, 110.0)
    assert any(s.phase == Phase.FROZEN for s in sigstop)   # SIGSTOP is frozen however short


def test_the_share_outside_tensorflow_counts_only_the_samples_between_the_first_and_the_latest_step():
    """A straggler's share is that of its training: the end after its last step (saving, teardown) is time nobody
    waited for it (CI: a peer read 30 % busy from such time, and hid the straggler)."""
    from distdoctor.supervise.channel import AgentSample

    proc = SimpleNamespace(started_at=0.0, ended_at=None, returncode=None, argv=["python"], pid=1, last_output_at=None,
                           killed_by_supervisor=False, log_path=None, alive=True)
    t = TaskTrack("worker:0", proc)
    ts = [0.0]

    def sample(calls, busy):
        ts[0] += 0.5
        t.on_agent(AgentSample(task="worker:0", pid=1, ts=ts[0], calls=calls, in_call=None if busy else "train_fn",
                               call_since=None, steps=None, step_ts=None, loss=None, stack=(), location=None,
                               user_threads=(), tf_loaded=True))
    for _ in range(20):
        sample(0, busy=True)          # the set-up before TensorFlow's first call: never counted
    for c in range(1, 42):
        sample(c, busy=False)         # training: every sample in a step
    for _ in range(30):
        sample(41, busy=True)         # after the last step
    assert t.observation().outside_tf_fraction < 0.1
    t2 = TaskTrack("worker:1", proc)   # one call, too few samples between steps to bound: every sample counts
    t, ts[0] = t2, 0.0
    for _ in range(12):
        sample(1, busy=True)
    assert t2.observation().outside_tf_fraction == 1.0
