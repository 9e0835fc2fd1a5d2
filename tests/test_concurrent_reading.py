"""The tasks' readers of ``run`` scan their output at the same moment (every task prints its traceback as the job
fails): each thread's scan gets its own Hyperscan scratch space, so none fails and no line goes unread.

A database's own scratch serves one scan at a time; before each thread had its own, two tasks failing together made
one scan raise ``ScratchInUseError``, the supervisor's reader dropped that piece of output from its live reading (the
log kept it), and the run's verdict missed one task's traceback while ``diagnose`` of the bundle read it: the
keras-short tutorial test disagreed with itself about 1 run in 8 on this 2-core machine."""
from __future__ import annotations

import threading

import pytest

from distdoctor.diagnose.logs import prescan
from distdoctor.supervise.tracking import TaskTrack, candidate_line_numbers

BODY = (b"Epoch 1/3\n2/20 [>....] - ETA: 1s - loss: 0.31\n"
        b"E0000 00:00:1795861732.321090   31909 base_collective_executor.cc:252] BaseCollectiveExecutor::StartAbort "
        b"INTERNAL: Collective instance 122 expected type 0 and data_type 1 but got type 0 and data_type 9\n"
        b"Traceback (most recent call last):\n  File \"train.py\", line 32, in <module>\n"
        b"tensorflow.python.framework.errors_impl.InternalError: Graph execution error:\n" + b"plain line\n" * 50) * 400


def _together(fn, threads: int = 4, rounds: int = 25) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def work():
        start.wait()
        for _ in range(rounds):
            try:
                fn()
            except BaseException as exc:   # noqa: BLE001 -- collected, asserted below
                errors.append(exc)
    ts = [threading.Thread(target=work) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return errors


def test_candidate_lines_found_by_threads_at_once_are_every_threads():
    want = candidate_line_numbers(BODY)
    got: list[list[int]] = []
    errors = _together(lambda: got.append(candidate_line_numbers(BODY)))
    assert not errors, errors[:2]
    assert got and all(g == want for g in got)


def test_the_joint_prefilter_answers_threads_at_once():
    joint = prescan.get()
    if joint is None:
        pytest.skip("Hyperscan is not installed here: each scanner runs its own fallback")
    want = joint.task_lines(BODY, 0)
    got: list = []
    errors = _together(lambda: got.append(joint.task_lines(BODY, 0)))
    assert not errors, errors[:2]
    assert all(g == want for g in got)


def test_tasks_failing_together_are_each_read_whole_live():
    class Proc:
        started_at = 0.0
        alive = True
    text = BODY.decode()[:-1]
    single = TaskTrack("worker:9", Proc())
    single.on_chunk(1.0, text)
    want = [(e.kind, e.line_no) for e in single.events]
    tracks: list[TaskTrack] = []
    lock = threading.Lock()

    def one_task():
        with lock:
            t = TaskTrack(f"worker:{len(tracks)}", Proc())
            tracks.append(t)
        t.on_chunk(1.0, text)
    errors = _together(one_task, threads=4, rounds=3)
    assert not errors, errors[:2]
    assert want and len(tracks) == 12
    assert all([(e.kind, e.line_no) for e in t.events] == want for t in tracks)
