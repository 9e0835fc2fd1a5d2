"""A task's own progress while its peers wait, and what a pause becomes: pure units (time is a parameter).

Real-TF counterparts: tests/test_run_healthy.py (the healthy matrix) and tests/test_run_faults.py (stalls).
"""
from distdoctor.diagnose.observations import HangVerdict, JobObservation, Pause
from distdoctor.supervise.activity import CPU_BUSY, IO_MIN_BYTES, NET_MIN_BYTES, Activity
from distdoctor.supervise.probe import parse_ss

from test_engine import T, obs, run

SS = """\
0      0      127.0.0.1:35629 127.0.0.1:58944 users:(("python3",pid=3089,fd=5))
\t bbr wscale:10,10 rto:204 rtt:0.021/0.01 mss:32768 cwnd:10 bytes_received:100000 segs_out:2 segs_in:5
0      0      127.0.0.1:58944 127.0.0.1:35629 users:(("python3",pid=3089,fd=4),("python3",pid=3100,fd=4))
\t bbr wscale:10,10 rto:204 rtt:0.036/0.02 mss:47616 cwnd:13 bytes_sent:100000 bytes_acked:100001 segs_out:5
0      0      10.0.0.1:22 10.0.0.2:5000 users:(("sshd",pid=7,fd=3))
\t cubic bytes_acked:42 bytes_received:8
"""


def test_parse_ss_sums_sent_and_received_per_socket_and_owner():
    got = parse_ss(SS)
    assert got[3089] == {(5, "127.0.0.1:35629", "127.0.0.1:58944"): 100000,
                         (4, "127.0.0.1:58944", "127.0.0.1:35629"): 100000}
    assert got[3100] == {(4, "127.0.0.1:58944", "127.0.0.1:35629"): 100000}
    assert got[7] == {(3, "10.0.0.1:22", "10.0.0.2:5000"): 50}   # bytes_acked stands in for bytes_sent
    assert parse_ss("") == {}


def test_cpu_time_that_grows_is_progress_and_idle_waiting_is_not():
    a = Activity()
    for i in range(10):
        a.on_proc(100 + i * 0.5, 5.0 + i * 0.5 * 0.02, 0)   # 0.02 cores: a task blocked in a collective
    assert a.at is None
    for i in range(10, 20):
        a.on_proc(100 + i * 0.5, 5.0 + i * 0.5 * 0.9, 0)    # evaluation in Python
    assert a.at == 100 + 19 * 0.5 and a.how.startswith("computing") and CPU_BUSY < 0.9


def test_file_io_counts_above_a_floor():
    a = Activity()
    a.on_proc(1.0, 0.0, 10_000)
    a.on_proc(1.5, 0.0, 10_000 + 300)           # a log line
    assert a.at is None
    a.on_proc(2.0, 0.0, 10_300 + IO_MIN_BYTES)  # a checkpoint shard
    assert a.at == 2.0 and "files" in a.how


def test_network_bytes_count_after_a_baseline_and_closed_sockets_count_nothing():
    a = Activity()
    a.on_net(1.0, {("grpc",): 5_000_000})                     # the first look is the baseline
    assert a.at is None
    a.on_net(2.0, {("grpc",): 5_000_300})                     # a heartbeat
    assert a.at is None
    a.on_net(3.0, {("grpc",): 5_000_300, ("http",): NET_MIN_BYTES})  # a download opened a socket
    assert a.at == 3.0 and "network" in a.how
    a.on_net(4.0, {("grpc",): 5_000_300})                     # it closed
    assert a.at == 3.0
    a.on_step()                                               # a step: the next look is a new baseline
    a.on_net(5.0, {("grpc",): 9_000_000})
    assert a.at == 3.0


def test_a_poll_loop_cycling_through_the_same_stacks_stops_counting():
    a = Activity()
    loop = [(("train.py", 10, "wait_for_file"),), (("genericpath.py", 19, "exists"),)]
    for i in range(40):
        a.on_stack(10.0 + i, loop[i % 2])
    assert a.at == 11.0                      # the two places were new once
    a.on_stack(60.0, (("train.py", 12, "go_on"),))
    assert a.at == 60.0


def _pause(task="chief:0", since=T + 5, seconds=45.0, where="train.py:88 in evaluate", doing="computing (0.98 cores)"):
    return Pause(task=task, since=since, until=since + seconds, where=where, doing=doing, waiting=("worker:0",))


def test_a_pause_of_a_succeeded_job_is_a_warning_naming_task_place_length_and_share():
    d = run(obs("chief:0", ended_at=T + 100), obs("worker:0", ended_at=T + 100), source="run",
            pauses=(_pause(),), started_at=T, ended_at=T + 100)
    assert d["status"] == "succeeded" and d["root_cause"] is None
    f = [f for f in d["findings"] if f["code"] == "DD211"]
    assert len(f) == 1 and f[0]["severity"] == "warning" and f[0]["culprit"] == "chief:0"
    s = f[0]["summary"]
    assert "45.0 s" in s and "45 % of the run time" in s and "train.py:88 in evaluate" in s and "computing" in s


def test_recurring_pauses_of_one_task_make_it_a_straggler():
    ps = tuple(_pause(task="worker:1", since=T + 10 * i, seconds=12.0) for i in range(4))
    d = run(obs("worker:0"), obs("worker:1"), source="run", pauses=ps, started_at=T, ended_at=T + 200)
    f = [f for f in d["findings"] if f["code"] == "DD211"][0]
    assert f["category"] == "straggler_slow_worker" and "4 times" in f["summary"] and "straggler" in f["summary"]


def test_the_age_of_the_last_progress_is_never_negative():
    """A step that finished just after the last sample before the verdict once read "-5.0 s earlier"."""
    h = HangVerdict(kind="stalled_worker", declared_at=T + 30, since=T + 10, culprits=("worker:1",),
                    waiting=("worker:0",), reason="r")
    w0 = obs("worker:0", exit_code=None, ended_at=None, state="sleeping", last_progress_at=T + 35,
             in_tf_call="__inference_train_function_1")
    w1 = obs("worker:1", exit_code=None, ended_at=None, state="sleeping", last_progress_at=T + 10)
    d = run(w0, w1, source="run", hang=h)
    ev = " ".join(d["root_cause"]["evidence"])
    assert "-5.0 s" not in ev and "5.0 s after the hang was declared" in ev and "20.0 s earlier" in ev


def test_a_task_that_ran_fewer_steps_then_entered_another_collective_is_the_imbalance():
    """A custom loop over per-worker data: worker:1's data ends after 10 steps and it enters an end-of-epoch
    reduce; worker:0 waits in its 11th step. Every task waits idle: once a collective mismatch, no culprit."""
    h = HangVerdict(kind="collective_mismatch", declared_at=T + 30, since=T + 15, culprits=(),
                    waiting=("worker:0", "worker:1"), reason="every task waits")
    w0 = obs("worker:0", exit_code=None, ended_at=None, state="sleeping", step_calls=11,
             in_tf_call="__inference_train_step_300")
    w1 = obs("worker:1", exit_code=None, ended_at=None, state="sleeping", step_calls=10,
             in_tf_call="__inference_reduce_400")
    d = run(w0, w1, source="run", hang=h)
    r = d["root_cause"]
    assert (r["category"], r["culprit"]) == ("data_sharding_imbalance", "worker:1")
    assert "ran 10 steps" in r["summary"] and "__inference_reduce_400" in r["summary"]
    assert any("ran 11 steps" in e for e in r["evidence"]) and any("ran 10 steps" in e for e in r["evidence"])
    # equal counts stay a collective mismatch
    w1e = obs("worker:1", exit_code=None, ended_at=None, state="sleeping", step_calls=11,
              in_tf_call="__inference_reduce_400")
    assert run(w0, w1e, source="run", hang=h)["root_cause"]["category"] == "hang_collective_mismatch"


def test_the_pause_log_follows_a_suspicion_and_keeps_it_when_training_resumes():
    from types import SimpleNamespace as A
    from distdoctor.supervise.pauses import PauseLog
    log = PauseLog()
    log = log.suspect(A(suspect="chief:0", stalled_for=6.0, where=None, doing="", waiting=("worker:0",)), now=106.0)
    assert log.open.since == 100.0
    log = log.follow(A(status="suspect", suspect="chief:0", where="train.py:88 in evaluate", doing="computing (1.00 cores)",
                 waiting=("worker:0",)))
    assert log.still(A(stalled_for=30.0), now=130.0)            # no step since: not over
    log, p = log.clear(A(stalled_for=0.5), now=145.5)               # the job stepped at 145.0
    assert (p.since, p.until, p.seconds, p.where, p.doing) == (100.0, 145.0, 45.0, "train.py:88 in evaluate",
                                                                 "computing (1.00 cores)")
    log = log.suspect(A(suspect="chief:0", stalled_for=6.0, where=None, doing="", waiting=()), now=206.0)
    assert [x.seconds for x in log.all(now=210.0, hung=False)] == [45.0, 10.0]   # the job ended during one
    log = log.drop()
    assert [x.seconds for x in log.all(now=210.0, hung=True)] == [45.0]


def test_a_pause_is_described_by_what_its_task_did_most_not_by_what_moved_last():
    """A task writing a checkpoint also moves a heartbeat's bytes now and then (seen on a slow box: the save was
    reported as network traffic): the pause is what the suspect did in most turns."""
    from types import SimpleNamespace as A
    from distdoctor.supervise.pauses import PauseLog
    log = PauseLog().suspect(A(suspect="worker:0", stalled_for=6.0, where=None, doing="reading or writing files "
                               "(0.3 MiB since the last sample)", waiting=("worker:1",)), now=106.0)
    turn = lambda log, doing: log.follow(A(status="suspect", suspect="worker:0", where="train.py:9 in save",  # noqa
                                           doing=doing, waiting=("worker:1",)))
    for doing in ["reading or writing files (0.2 MiB since the last sample)", "sending or receiving over the network "
                  "(0.1 MiB since the last look)", "reading or writing files (0.4 MiB since the last sample)"]:
        log = turn(log, doing)
    log = turn(log, "sending or receiving over the network (0.1 MiB since the last look)")
    _, p = log.clear(A(stalled_for=0.5), now=130.0)
    assert p.doing == "reading or writing files (0.4 MiB since the last sample)"
    # a new suspicion starts afresh
    log = log.suspect(A(suspect="worker:0", stalled_for=6.0, where=None, doing="computing (0.90 cores)",
                        waiting=()), now=206.0)
    assert log.seen == (("computing", 1, "computing (0.90 cores)"),)


def test_a_pause_is_placed_where_its_task_was_seen_most_not_where_it_was_seen_last():
    """The last look at a task that wrote a checkpoint may come after the save returned, on the line that steps again
    (seen in a fresh-clone CI: a 22 s save placed at the training loop's ``train_step`` line): the pause is where the
    task was in most looks; of places seen equally often, the later."""
    from types import SimpleNamespace as A
    from distdoctor.supervise.pauses import PauseLog
    log = PauseLog().suspect(A(suspect="worker:0", stalled_for=6.0, where=None, doing="reading or writing files "
                               "(0.3 MiB since the last sample)", waiting=("worker:1",)), now=106.0)
    look = lambda log, where: log.follow(A(status="suspect", suspect="worker:0", where=where,  # noqa
                                           doing="reading or writing files (1.0 MiB since the last sample)",
                                           waiting=("worker:1",)))
    for where in ["train.py:94 in save"] * 3 + [None, "train.py:201 in <module>"]:
        log = look(log, where)
    _, p = log.clear(A(stalled_for=0.5), now=130.0)
    assert p.where == "train.py:94 in save"
    log = look(look(log.suspect(A(suspect="worker:0", stalled_for=6.0, where="train.py:50 in evaluate", doing="",
                                  waiting=()), now=206.0), "train.py:60 in <module>"), "train.py:50 in evaluate")
    assert log.open.where == "train.py:50 in evaluate"
    log = look(log, "train.py:60 in <module>")
    assert log.open.where == "train.py:60 in <module>"     # two looks each: the later place
