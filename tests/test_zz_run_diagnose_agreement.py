"""``diagnose BUNDLE`` on every bundle the real-TensorFlow suites wrote gives that run's verdict.

The bundles are the ones :func:`conftest.dd_run` writes under ``test-output/runs/<name>`` (test_run_faults.py,
test_run_healthy.py, test_run_restarts_tf.py, ...). pytest runs test files in the order of their names, so this file
is named ``test_zz_...`` to run after every ``test_run_*.py`` of the same session; it collects the bundles when it
runs, not when it is collected, and skips with a reason when there are none (a session of the fast tests only). A
bundle left from an earlier session is checked too (the verdict it records is still the run's own), except one written
before runs recorded the shape of a hang they declared (``older_than_the_hang_record``).

The recorded bundles in ``tests/data/bundles/`` are checked always, without TensorFlow.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from agreement import (assert_diagnose_agrees, assert_read_order_does_not_matter, older_than_the_hang_record, read_later,
                       run_bundles)
from conftest import OUTPUT

RECORDED = Path(__file__).resolve().parent / "data" / "bundles"


def test_diagnose_gives_the_verdict_of_every_run_bundle_of_this_session(tmp_path):
    """Also with each task's log read a twentieth of a second before or after its peers' (which pipe the supervisor
    read first is the box's load)."""
    found = run_bundles(OUTPUT / "runs")
    bundles = [b for b in found if not older_than_the_hang_record(b)]
    if not bundles:
        pytest.skip(f"no run bundles under {OUTPUT / 'runs'}" + (" written by this distdoctor" if found else "")
                    + ": run the real-TensorFlow suites (-m tf) first")
    failures = []
    for b in bundles:
        try:
            assert_diagnose_agrees(b)
            assert_read_order_does_not_matter(b, tmp_path)
        except AssertionError as exc:
            failures.append(str(exc).splitlines()[0])
    assert not failures, f"{len(failures)} of {len(bundles)} bundles disagree:\n" + "\n".join(failures)


@pytest.mark.parametrize("bundle", run_bundles(RECORDED), ids=lambda p: p.name)
def test_diagnose_gives_the_verdict_of_a_recorded_bundle(bundle):
    assert_diagnose_agrees(bundle)


@pytest.mark.parametrize("bundle", run_bundles(RECORDED), ids=lambda p: p.name)
def test_which_task_s_pipe_was_read_first_does_not_change_the_verdict(bundle, tmp_path):
    """A supervisor reads its tasks' pipes in turn: on a loaded box, the task whose lines were read first within a
    tenth of a second is chance. ``diagnose`` must not follow it (CI: worker:0's copy of a collective shape mismatch
    read before worker:1's named worker:0, the line's writer, against the run's DD209 on worker:1)."""
    assert assert_read_order_does_not_matter(bundle, tmp_path) >= 2


def test_moving_a_log_s_time_stamps_moves_only_its_prefixes():
    line = "2026-11-29T13:38:31.404692+0000 E0000 00:00:1795959511.404576 at 2026-11-29T13:38:31.404692+0000 x"
    assert read_later(line, 0.05).startswith("2026-11-29T13:38:31.454692+0000 E0000 00:00:1795959511.404576 at 2026")
    assert read_later(line, -0.5).startswith("2026-11-29T13:38:30.904692+0000 ")
