"""The task whose numbers differ from its peers' (issue 25 item 5): a spatial outlier names the culprit of an
imbalance the lines alone leave without one. Pure on constructed lines, and the real case it was made for."""
from __future__ import annotations

import sys
from pathlib import Path

from distdoctor.diagnose.logs.outliers import task_lines, value_outlier

sys.path.insert(0, str(Path(__file__).parent))
from casedirs import judge  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def test_the_one_task_whose_count_differs_is_named():
    lines = task_lines(b"[1,0]<stdout>:batches per epoch: 26\n[1,1]<stdout>:batches per epoch: 26\n"
                       b"[1,2]<stdout>:batches per epoch: 25\n[1,3]<stdout>:batches per epoch: 26\n"
                       b"[1,0]<stdout>:I am rank 0\n[1,1]<stdout>:I am rank 1\n[1,2]<stdout>:I am rank 2\n"
                       b"[1,3]<stdout>:I am rank 3\n", None)
    odd = value_outlier(lines)
    assert odd is not None and odd.task == "rank:2" and odd.value == "25" and odd.usual == "26" and odd.others == 3


def test_no_outlier_without_a_majority_or_with_every_task_different():
    two = task_lines(b"[1,0]<stdout>:steps 10\n[1,1]<stdout>:steps 9\n", None)
    assert value_outlier(two) is None                      # two tasks: which one is odd?
    ranks = b"".join(b"[1,%d]<stdout>:I am rank %d of 4\n" % (i, i) for i in range(4))
    assert value_outlier(task_lines(ranks, None)) is None  # every task differs: a rank number, not an outlier
    split = b"".join(b"[1,%d]<stdout>:samples %d\n" % (i, 100 if i < 2 else 90) for i in range(4))
    assert value_outlier(task_lines(split, None)) is None  # two against two


def test_a_prefix_behind_a_redrawn_progress_bar_still_names_its_task():
    got = task_lines(b"  0%|          | 0/4 [00:00<?, ?it/s][1,3]<stdout>:25\n", None)
    assert got == [("rank:3", b"25")]
    assert task_lines(b"plain line 3\n", "worker:1") == [("worker:1", b"plain line 3")]


def test_the_real_uneven_batches_case_names_the_rank_with_fewer():
    r = judge(ROOT / "tests" / "realworld" / "batch-2026-11-28" / "rw_018")
    assert r["got"] == "data_sharding_imbalance" and r["got_culprit"] == "rank:3"
