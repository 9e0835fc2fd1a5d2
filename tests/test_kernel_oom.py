"""A kernel OOM-killer record is evidence about a job only when its pid or its time is the job's.

Pure checks of :mod:`distdoctor.diagnose.logs.kernel_oom`, then ``diagnose`` end to end on the recorded foreign OOM
run (tests/corpus/oom-dmesg-foreign: worker:1, pid 2674, killed in a memory cgroup; ``dmesg -T`` beside the logs)
with its kernel lines moved to another time or another pid, as a user's ``dmesg`` holds them.
"""
from __future__ import annotations

import calendar
import shutil
from pathlib import Path

import pytest

from distdoctor.diagnose.command import diagnose_paths
from distdoctor.diagnose.logs.kernel_oom import Relation, pid_of, relation, time_of

CASE = Path(__file__).resolve().parent / "corpus" / "oom-dmesg-foreign"
T = float(calendar.timegm((2026, 11, 23, 17, 40, 56, 0, 0, 0)))
SPAN = (T - 5, T + 2)


@pytest.mark.parametrize("line,pid", [
    ("[123.4] Out of memory: Killed process 4242 (python) total-vm:2kB", 4242),
    ("[123.4] Out of memory: Kill process 11930 (python3) score 931 or sacrifice child", 11930),
    ("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),task=python,pid=2674,uid=0", 2674),
    ("[1.0] oom_reaper: reaped process 48213 (python), now anon-rss:0kB", 48213),
    ("[1.0] python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0", None),
])
def test_the_pid_of_a_kernel_line(line, pid):
    assert pid_of(line) == pid


@pytest.mark.parametrize("line,year,at", [
    ("[Mon Nov 23 17:40:56 2026] Memory cgroup out of memory: Killed process 2674 (python)", None, T),
    ("2026-11-23T18:40:56+01:00 node kernel: Out of memory: Killed process 1 (python)", None, T),
    ("2026-11-23T17:40:56.123Z node kernel: Out of memory: Killed process 1 (python)", None, T),
    ("Nov 23 17:40:56 node kernel: Out of memory: Killed process 1 (python)", 2026, T),
    ("Nov 23 17:40:56 node kernel: Out of memory: Killed process 1 (python)", None, None),
    ("[1203344.117702] Out of memory: Killed process 48213 (python)", 2026, None),
])
def test_the_time_of_a_kernel_line(line, year, at):
    assert time_of(line, year) == at


@pytest.mark.parametrize("line,pids,span,expected", [
    ("[9.9] Out of memory: Killed process 2674 (python)", {2674: "worker:1"}, None, (Relation.BELONGS, "worker:1")),
    ("[Mon Nov 23 17:40:56 2026] Out of memory: Killed process 99 (python)", {}, SPAN, (Relation.BELONGS, None)),
    # 53 minutes before the job: another kill
    ("[Mon Nov 23 16:47:56 2026] Out of memory: Killed process 99 (python)", {}, SPAN, (Relation.UNRELATED, None)),
    # the node's local time one hour off the logs' UTC: cannot tell
    ("[Mon Nov 23 18:40:57 2026] Out of memory: Killed process 99 (python)", {}, SPAN, (Relation.UNCHECKED, None)),
    ("[9.9] Out of memory: Killed process 99 (python)", {2674: "worker:1"}, SPAN, (Relation.UNRELATED, None)),
    ("[9.9] Out of memory: Killed process 99 (python)", {}, SPAN, (Relation.UNCHECKED, None)),
    ("[9.9] Out of memory: Killed process 99 (python)", {}, None, (Relation.UNCHECKED, None)),
])
def test_relation_to_the_job(line, pids, span, expected):
    assert relation(line, pids, span) == expected


def _case(tmp_path: Path, *, stamp: str | None = None, pid: str | None = None, shell_line: bool = True) -> Path:
    """The recorded case with its dmesg's time replaced by ``stamp`` and its pid by ``pid``; without the shell's
    ``line 1:  2674 Killed`` (the one line in the logs that names worker:1's pid) when not ``shell_line``."""
    out = tmp_path / "case"
    out.mkdir()
    shutil.copy(CASE / "worker-0.log", out)
    w1 = (CASE / "worker-1.log").read_text().splitlines(keepends=True)
    (out / "worker-1.log").write_text("".join(ln for ln in w1 if shell_line or ("Killed" not in ln
                                                                                 and "allocating" not in ln)))
    dmesg = (CASE / "dmesg.txt").read_text()
    if stamp is not None:
        dmesg = dmesg.replace("[Mon Nov 23 17:40:56 2026]", stamp)
    if pid is not None:
        dmesg = dmesg.replace("2674", pid)
    (out / "dmesg.txt").write_text(dmesg)
    return out


def _reading(path: Path):
    d, _ = diagnose_paths([str(path)])
    r = d.root_cause
    return d.status.value, r.category.value, r.culprit, r.confidence, [a.category.value for a in r.alternatives]


def test_a_kill_in_the_jobs_time_is_the_oom(tmp_path):
    status, cat, culprit, _, _ = _reading(_case(tmp_path))
    assert (status, cat, culprit) == ("failed", "oom_host", "worker:1")


def test_an_oom_kill_53_minutes_before_the_job_does_not_make_a_sigkill_an_oom(tmp_path):
    status, cat, culprit, _, alts = _reading(_case(tmp_path, stamp="[Mon Nov 23 16:47:31 2026]", pid="31337",
                                                   shell_line=False))
    assert (status, culprit) == ("failed", "worker:1") and cat != "oom_host"
    assert "oom_host" in alts   # a SIGKILL is still most often an OOM: said as an alternative, not as the cause


def test_a_kill_of_another_pid_is_not_the_tasks(tmp_path):
    # boot-time stamps: no time to check, but the shell names worker:1's pid, and the kernel killed another
    status, cat, culprit, _, _ = _reading(_case(tmp_path, stamp="[1203344.117702]", pid="31337"))
    assert (status, culprit) == ("failed", "worker:1") and cat != "oom_host"


def test_a_kill_of_the_tasks_pid_is_the_oom_whatever_its_time(tmp_path):
    status, cat, culprit, _, _ = _reading(_case(tmp_path, stamp="[1203344.117702]"))
    assert (status, cat, culprit) == ("failed", "oom_host", "worker:1")


def test_a_kill_that_cannot_be_checked_is_never_high_confidence(tmp_path):
    status, cat, culprit, confidence, _ = _reading(_case(tmp_path, stamp="[1203344.117702]", pid="31337",
                                                         shell_line=False))
    assert status == "failed" and confidence != "high"
