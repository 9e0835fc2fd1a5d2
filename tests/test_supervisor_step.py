"""The supervisor's loop as one pure step, driven with plain numbers and an injected clock (no process, no TF).

The first tests call :func:`step` directly; the last ones run the supervisor's own loop (``Supervisor._loop``)
with a fake clock and scripted observations, and read what its sinks wrote (events.jsonl).
"""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from distdoctor.cluster.local import build_local_cluster
from distdoctor.diagnose.observations import HangVerdict
from distdoctor.supervise.detect import Assessment
from distdoctor.supervise.lifecycle import Phase
from distdoctor.supervise.runevents import (AttemptOver, HangDeclared, JudgeTaskRestart, Said,
                                            StallCleared, StallSuspected, StopTasks, TaskExited, TaskFailed, TaskLost,
                                            Turned)
from distdoctor.supervise.step import ExitingSeen, ExitSeen, LostSeen, Observed, Rules, RunState, step
from distdoctor.supervise.supervisor import TICK_S, RunConfig, Supervisor

W = ("worker:0", "worker:1")


def kinds(effects):
    return [type(e).__name__ for e in effects]


def suspect(stalled: float, threshold: float = 14.0, **kw) -> Assessment:
    return Assessment("suspect", threshold, stalled, suspect="worker:1", reason="worker:1 is outside TensorFlow "
                      "while worker:0 waits in a collective", where="train.py:40 in step", waiting=("worker:0",), **kw)


def hung(stalled: float, now: float) -> Assessment:
    v = HangVerdict("stalled_worker", now, now - stalled, culprits=("worker:1",), waiting=("worker:0",),
                    reason="worker:1 stalled")
    return Assessment("hung", 14.0, stalled, verdict=v, suspect="worker:1", reason="worker:1 stalled")


def ok(stalled: float) -> Assessment:
    return Assessment("ok", 14.0, stalled)


def test_a_stall_is_suspected_then_declared_a_hang_and_the_job_stopped():
    s = RunState(Rules())
    s, fx = step(s, 100.0, Observed(alive=W, assessment=ok(1.0)))
    assert kinds(fx) == ["Assessed", "Turned"] and s.banner is None
    s, fx = step(s, 106.0, Observed(alive=W, assessment=suspect(6.0)))
    sus = [e for e in fx if isinstance(e, StallSuspected)]
    assert len(sus) == 1 and sus[0].task == "worker:1" and s.banner.startswith("stall suspected: worker:1")
    assert sus[0].alert()[0] == "hang_suspected" and sus[0].alert()[1]["since"] == 100.0
    assert s.pauses.open.since == 100.0 and s.pauses.open.where == "train.py:40 in step"
    s, fx = step(s, 110.0, Observed(alive=W, assessment=suspect(10.0)))
    assert kinds(fx) == ["Assessed", "Turned"]               # the suspicion is named once
    s, fx = step(s, 114.0, Observed(alive=W, assessment=hung(14.0, 114.0), culprit_location="train.py:40"))
    assert kinds(fx)[1:] == ["HangDeclared", "RecordHang", "StopTasks", "AttemptOver"]
    hang = fx[1]
    assert isinstance(hang, HangDeclared) and hang.said() == "hang declared: worker:1 stalled"
    name, fields = hang.alert()
    assert (name, fields["code"], fields["culprit"], fields["first_failure"]) == \
        ("hang_declared", "DD201", "worker:1", "train.py:40")
    assert fx[3] == StopTasks("hang") and s.over
    assert s.phase == Phase.STOPPING and s.detected_at == 114.0 and s.hang.kind == "stalled_worker"
    assert s.banner == "HANG: worker:1 stalled" and s.pauses.open is None and not s.pauses.closed  # no pause


def test_a_hang_is_not_declared_after_a_fatal_failure_nor_by_a_node_that_is_not_the_collector():
    s, fx = step(RunState(Rules()), 50.0, Observed(alive=W, assessment=hung(14.0, 50.0), judges_hangs=False))
    assert not any(isinstance(e, HangDeclared) for e in fx) and not s.over


def test_a_crash_waits_the_failure_grace_then_stops_the_others():
    s = RunState(Rules(failure_grace=10.0))
    crash = ExitSeen("worker:1", -11, 199.5, "signal SIGSEGV", first_fault="Fatal Python error: Segmentation fault")
    s, fx = step(s, 200.0, Observed(alive=("worker:0",), exits=(crash,), assessment=ok(0.5)))
    assert kinds(fx)[:2] == ["TaskExited", "TaskFailed"]
    failed = fx[1]
    assert isinstance(failed, TaskFailed) and failed.fatal and failed.since == 199.5
    assert failed.alert()[1]["first_failure"] == "Fatal Python error: Segmentation fault"
    assert failed.journal()["kind"] == "fault" and "waiting up to 10 s" in failed.said()
    assert s.first_failure == (199.5, "worker:1") and s.detected_at == 200.0 and s.phase == Phase.FAILING
    assert s.banner == "worker:1 failed (signal SIGSEGV); the job cannot complete"
    s, fx = step(s, 209.75, Observed(alive=("worker:0",), assessment=hung(20.0, 209.75)))
    assert not any(isinstance(e, (HangDeclared, AttemptOver)) for e in fx)   # no hang once a task failed
    s, fx = step(s, 210.0, Observed(alive=("worker:0",)))
    assert [e for e in fx if isinstance(e, Said)][0].text == "stopping the tasks that are still running: worker:0"
    assert fx[-2:] == (StopTasks("failure"), AttemptOver()) and s.phase == Phase.STOPPING


def test_a_task_that_raised_but_cannot_exit_fails_a_failure_grace_after_it_raised():
    s = RunState(Rules(failure_grace=10.0))
    raised = ExitingSeen("worker:1", "ValueError", 100.0, first_fault="ValueError: bad record")
    s, fx = step(s, 109.5, Observed(alive=W, exiting=(raised,), assessment=ok(2.0)))
    assert not any(isinstance(e, (TaskFailed, StopTasks)) for e in fx) and s.first_failure is None  # it may still exit
    s, fx = step(s, 110.0, Observed(alive=W, exiting=(raised,), assessment=ok(2.5)))
    failed = [e for e in fx if isinstance(e, TaskFailed)]
    assert len(failed) == 1 and failed[0].fatal and failed[0].since == 100.0 and not any(isinstance(e, TaskExited)
                                                                                        for e in fx)
    assert failed[0].how == "raised ValueError and has not exited 10 s later"
    assert s.first_failure == (100.0, "worker:1") and s.phase == Phase.FAILING
    s, fx = step(s, 115.0, Observed(alive=W, exiting=(raised,)))
    assert not any(isinstance(e, TaskFailed) for e in fx)             # said once
    s, fx = step(s, 120.0, Observed(alive=W, exiting=(raised,)))
    assert fx[-2:] == (StopTasks("failure"), AttemptOver())         # then every task stops, the stuck one too
    # a ParameterServerStrategy worker: said, and the coordinator goes on
    s, fx = step(RunState(Rules(strategy="parameter_server")), 50.0,
                 Observed(alive=("chief:0", "worker:1"), exiting=(ExitingSeen("worker:1", "KeyError", 30.0),)))
    assert [e.fatal for e in fx if isinstance(e, TaskFailed)] == [False] and s.first_failure is None


def test_a_task_stopped_by_distdoctor_is_no_failure_and_a_clean_end_ends_the_attempt():
    s, fx = step(RunState(Rules()), 5.0, Observed(exits=(ExitSeen("worker:0", -15, 4.0, "signal SIGTERM", killed=True),
                                                         ExitSeen("worker:1", 0, 4.5, "exit code 0"))))
    assert [e.said() for e in fx if isinstance(e, TaskExited)] == [None, "worker:1 ended (exit code 0)"]
    assert not any(isinstance(e, TaskFailed) for e in fx) and fx[-1] == AttemptOver() and s.first_failure is None


def test_a_pause_that_clears_is_kept_as_a_pause():
    s = RunState(Rules())
    s, _ = step(s, 306.0, Observed(alive=W, assessment=suspect(6.0, doing="computing (1.00 cores)", pause=True)))
    assert s.banner.startswith("stall suspected")
    s, fx = step(s, 330.0, Observed(alive=W, assessment=ok(30.0)))      # no step since: the suspicion stands
    assert not any(isinstance(e, StallCleared) for e in fx) and s.banner.startswith("stall suspected")
    s, fx = step(s, 345.5, Observed(alive=W, assessment=ok(0.5)))       # the job stepped at 345.0
    cleared = [e for e in fx if isinstance(e, StallCleared)]
    assert len(cleared) == 1 and cleared[0].text == ("progress resumed after 45.0 s: worker:1 was computing "
                                                      "(1.00 cores) at train.py:40 in step")
    assert cleared[0].alert() == ("hang_cleared", {"summary": cleared[0].text})
    assert s.banner is None and s.pauses.open is None and [p.seconds for p in s.pauses.closed] == [45.0]
    assert isinstance(fx[-1], Turned) and fx[-1].banner is None


def test_a_signal_stops_every_task():
    s, fx = step(RunState(Rules(grace=3.0)), 7.0, Observed(alive=W, interrupted="SIGTERM"))
    assert fx[0].text == "received SIGTERM: stopping every task (SIGTERM, SIGKILL after 3 s)"
    assert fx[-2:] == (StopTasks("SIGTERM"), AttemptOver()) and s.detected_at == 7.0


def test_parameter_server_a_lost_worker_is_judged_alone_and_the_chief_ends_the_job():
    s = RunState(Rules(strategy="parameter_server"))
    tasks = ("chief:0", "ps:0", "worker:1")
    s, fx = step(s, 10.0, Observed(alive=tasks, exits=(ExitSeen("worker:0", -9, 9.8, "signal SIGKILL"),)))
    assert JudgeTaskRestart("worker:0", 10.0) in fx and s.first_failure is None
    assert [e for e in fx if isinstance(e, TaskFailed)][0].fatal is False
    s, fx = step(s, 20.0, Observed(alive=("ps:0", "worker:1"), exits=(ExitSeen("chief:0", 0, 19.9, "exit code 0"),)))
    assert s.chief_done_at == 20.0 and not s.over
    s, fx = step(s, 21.0, Observed(alive=("ps:0", "worker:1")))
    assert fx[-2:] == (StopTasks("chief finished"), AttemptOver())


def test_a_lost_node_is_a_fatal_failure_from_when_it_was_last_heard():
    s, fx = step(RunState(Rules()), 60.0, Observed(alive=("worker:0",), lost=(LostSeen("worker:1", 52.0, "no heartbeat for 8 s",
                                                                                      "10.0.0.2"),)))
    lost = [e for e in fx if isinstance(e, TaskLost)][0]
    assert lost.said() == "the supervisor of worker:1 (10.0.0.2) is lost: no heartbeat for 8 s"
    assert s.first_failure == (52.0, "worker:1") and s.detected_at == 60.0 and "node is lost" in s.banner


# -- the supervisor's own loop, on a fake clock ----------------------------------------------------------
class FakeClock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t, self.slept = t, []

    def now(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.t += s


def scripted(tmp_path, script):
    """A supervisor whose observations come from ``script(now)`` and whose stops are recorded."""
    clock = FakeClock()
    cfg = RunConfig(argv=["python", "train.py"], cluster=build_local_cluster(2, 0, False), out_dir=str(tmp_path),
                    clock=clock, failure_grace=2.0)
    sup = Supervisor(cfg)
    sup.observe = lambda now: script(now - 1000.0)
    stops = []
    sup.stop_all = lambda reason: stops.append((clock.now() - 1000.0, reason))
    sup.bundle.journal.open(str(tmp_path / "events.jsonl"))
    sup.state = RunState(sup._rules(), phase=Phase.RUNNING)
    return sup, clock, stops


def journal(tmp_path):
    return [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]


def test_the_loop_on_a_fake_clock_declares_a_hang_at_the_step_that_sees_it(tmp_path):
    def script(t):
        if t < 6.0:
            return Observed(alive=W, assessment=ok(t))
        if t < 14.0:
            return Observed(alive=W, assessment=suspect(t))
        return Observed(alive=W, assessment=hung(t, 1000.0 + t))

    sup, clock, stops = scripted(tmp_path, script)
    sup._record_hang = lambda: stops.append((clock.now() - 1000.0, "stacks"))
    sup._loop()
    assert clock.t == 1014.0 and set(clock.slept) == {TICK_S} and len(clock.slept) == 56   # 4 turns a second
    assert stops == [(14.0, "stacks"), (14.0, "hang")]
    assert sup.state.detected_at == 1014.0 and sup.state.phase == Phase.STOPPING
    lines = journal(tmp_path)
    assert [(e["kind"], e["ts"] - 1000.0) for e in lines] == [("stall_suspected", 6.0), ("hang_declared", 14.0)]


def test_the_loop_on_a_fake_clock_stops_the_others_a_failure_grace_after_a_crash(tmp_path):
    def script(t):
        if t == 3.0:
            return Observed(alive=("worker:0",), exits=(ExitSeen("worker:1", 1, 1002.9, "exit code 1"),))
        return Observed(alive=W if t < 3.0 else ("worker:0",), assessment=ok(0.1))

    sup, clock, stops = scripted(tmp_path, script)
    sup._loop()
    assert stops == [(5.0, "failure")] and clock.t == 1005.0     # failure_grace 2 s after it was seen
    lines = journal(tmp_path)
    assert [(e["kind"], e["task"]) for e in lines] == [("exit", "worker:1"), ("fault", "worker:1")]
    assert lines[0]["ts"] == 1002.9 and sup.state.first_failure == (1002.9, "worker:1")


def test_the_loop_on_a_fake_clock_keeps_a_pause_that_clears(tmp_path):
    def script(t):
        if t < 6.0:
            return Observed(alive=W, assessment=ok(t))
        if t < 20.0:
            return Observed(alive=W, assessment=suspect(t, pause=True))
        if t < 21.0:
            return Observed(alive=W, assessment=ok(t - 20.0))    # the job stepped again at 20
        return Observed(exits=(ExitSeen("worker:0", 0, 1021.0, "exit code 0"), ExitSeen("worker:1", 0, 1021.0,
                                                                                        "exit code 0")))

    sup, clock, stops = scripted(tmp_path, script)
    sup._loop()
    assert stops == [] and clock.t == 1021.0
    kinds_ts = [(e["kind"], e["ts"] - 1000.0) for e in journal(tmp_path)]
    assert kinds_ts == [("stall_suspected", 6.0), ("stall_cleared", 20.0), ("exit", 21.0), ("exit", 21.0)]
    assert [(p.since - 1000.0, p.seconds) for p in sup.state.pauses.closed] == [(0.0, 20.0)]
    obs = sup.observation()
    assert [p.seconds for p in obs.pauses] == [20.0] and obs.hang is None


def test_the_bundle_sink_archives_each_attempt_and_writes_diagnosis_json_once_per_attempt(tmp_path, monkeypatch):
    from dataclasses import replace
    from distdoctor.model import Diagnosis, Status
    from distdoctor.supervise import bundle
    from distdoctor.supervise.ledger import AttemptRecord
    from distdoctor.supervise.policy import Action
    from distdoctor.supervise.restarts import Restarts
    from distdoctor.supervise.runevents import AttemptDiagnosed, AttemptStarted, LedgerAmended

    writes = []
    real = bundle.write_json
    monkeypatch.setattr(bundle, "write_json", lambda path, data: (writes.append(path), real(path, data)))
    sink = bundle.BundleSink(str(tmp_path))
    (tmp_path / "logs").mkdir()
    sink(AttemptStarted(1.0, 1, None))
    sink.journal(Said("not journaled"))                            # said only: no line
    sink.journal(TaskExited(2.0, "worker:1", "signal SIGKILL", False))
    rec = AttemptRecord(number=1, started_at=1.0, ended_at=2.0, status="failed", root_cause=None,
                        decision=Action.RESTART, reason="a restart may fix it", backoff_s=0.2)
    restarts = Restarts(RunConfig(argv=[], cluster=build_local_cluster(2, 0, False), out_dir=str(tmp_path)),
                        None, [rec])
    restarts.notes.append("no checkpoint")
    engine = Diagnosis(status=Status.FAILED, root_cause=None, findings=(), detected_at=2.0, command="run",
                       notes=("from the engine",))
    sink(AttemptDiagnosed(restarts.annotate(engine)))
    d = json.loads((tmp_path / "diagnosis.json").read_text())
    assert d["notes"] == ["from the engine", "no checkpoint"] and [a["decision"] for a in d["attempts"]] == ["restart"]
    assert d["goodput"] is not None
    assert [json.loads(x)["kind"] for x in (tmp_path / "events.jsonl").read_text().splitlines()] == ["exit"]
    sink(AttemptStarted(3.0, 2, 1))                                # attempt 1's files move to attempts/1/
    assert (tmp_path / "attempts" / "1" / "events.jsonl").exists() and (tmp_path / "attempts" / "1" / "diagnosis.json").exists()
    assert not (tmp_path / "logs").exists() and (tmp_path / "events.jsonl").read_text() == ""
    sink(AttemptDiagnosed(replace(engine, attempts=(rec,))))
    sink(LedgerAmended((replace(rec, decision=Action.STOP, reason="SIGTERM during the backoff"),)))
    d = json.loads((tmp_path / "diagnosis.json").read_text())
    assert d["attempts"][0]["decision"] == "stop" and d["notes"] == ["from the engine"]
    assert Diagnosis.from_json(d).attempts[0].reason == "SIGTERM during the backoff"
    assert len(writes) == 3     # once per attempt, and once for the amended ledger


def test_tasks_whose_code_ended_but_whose_processes_do_not_exit_are_stopped_after_the_exit_grace():
    """Every live task ended its code without an error (the agent's last sample) and nothing failed: the job's work is
    done. Once the last of them has been idle in its exit teardown for --exit-grace, what is left is stopped."""
    rules = Rules(exit_grace=60.0)
    s, fx = step(RunState(rules), 100.0, Observed(alive=("worker:0",), lingering=(("worker:0", 90.0),)))
    assert "StopTasks" not in kinds(fx) and not s.over
    s, fx = step(s, 150.5, Observed(alive=("worker:0",), lingering=(("worker:0", 90.0),)))
    assert kinds(fx)[-3:] == ["Said", "StopTasks", "AttemptOver"] and fx[-2] == StopTasks("teardown")
    assert "worker:0 has not exited 60 s after its code ended" in fx[-3].text and s.teardown == (("worker:0", 90.0),)


@pytest.mark.parametrize("case", ["one still runs its code", "a failure", "a hang", "never", "peers may join",
                                  "a node that is not the collector"])
def test_the_exit_teardown_is_waited_out_unless_every_live_task_ended_its_code_cleanly(case):
    rules = Rules(exit_grace=0.0 if case == "never" else 60.0)
    o = Observed(alive=W, lingering=(("worker:0", 10.0),) + (() if case == "one still runs its code" else
                                                              (("worker:1", 10.0),)),
                 awaiting_peers=case == "peers may join", judges_hangs=case != "a node that is not the collector")
    s = RunState(rules)
    if case == "a failure":
        s = replace(s, first_failure=(5.0, "worker:1"))
    if case == "a hang":
        s = replace(s, hang=hung(14.0, 5.0).verdict)
    s, fx = step(s, 1000.0, o)
    assert not any(isinstance(e, StopTasks) and e.reason == "teardown" for e in fx), kinds(fx)
