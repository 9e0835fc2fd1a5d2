"""Priors and messages with more than one usual cause (distdoctor/diagnose/logs/priors.py, kb/ambiguous.py): what a
message means beyond its words, confidence caps for messages with two usual causes, and ranked alternatives with what
settles each."""
from __future__ import annotations

from pathlib import Path

import pytest

from logtext import diagnose_texts


def diagnose(text: str, tmp: Path):
    """The hand-written priors' and calibration's reading (``diagnose`` then re-ranks the alternatives by the learned
    reading: tests/test_learned.py)."""
    return diagnose_texts({"output.log": text}, tmp, learned=False)


@pytest.mark.parametrize("text", [
    "./run.sh: line 12:  8812 Killed                  python3 train.py --epochs 90\n",
    "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 5120 RUNNING AT gpu3\n=   EXIT CODE: 9\n",
    "mpirun noticed that process rank 2 with PID 7781 on node n12 exited on signal 9 (Killed).\n",
    # the Python launchers' return code -9 (DD1018)
    "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) local_rank: 0 (pid: 311) of binary: "
    "/usr/bin/python3\n",
    "[2025-01-09 10:00:34,590] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', "
    "'--local_rank=1'] exits with return code = -9\n",
])
def test_a_sigkill_with_no_sender_is_most_often_the_oom_killer(tmp_path, text):
    """The real corpus: 25 of the 27 cases with a SIGKILL line were the OOM killer; 7 of the 8 where no line sent it."""
    rc = diagnose(text, tmp_path).root_cause
    assert (rc.category.value, rc.confidence) == ("oom_host", "low"), rc
    assert "OOM killer" in rc.summary and "dmesg" in rc.remedy
    first = rc.alternatives[0]
    assert first.category.value == "peer_crashed" and "sacct" in first.settle


@pytest.mark.parametrize("text", [
    "  exitcode  : -11 (pid: 56213)\n  error_file: <N/A>\n  traceback : Signal 11 (SIGSEGV) received by PID 56213\n",
    "[ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py'] exits with return code = -6\n",
    "subprocess.CalledProcessError: Command '['python', 'train.py']' died with <Signals.SIGILL: 4>.\n",
])
def test_a_child_that_died_of_a_crash_signal_is_a_native_crash(tmp_path, text):
    rc = diagnose(text, tmp_path).root_cause
    assert rc.category.value == "segfault_core_dump", rc


@pytest.mark.parametrize("text", [
    "./run.sh: line 9:  4242 Bus error               (core dumped) python train.py\n",
    "subprocess.CalledProcessError: Command '['python', 'train.py']' died with <Signals.SIGBUS: 7>.\n",
    "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -7) local_rank: 0 (pid: 54) of binary: "
    "/usr/bin/python3\n",
    "mpirun noticed that process rank 1 with PID 911 on node n3 exited on signal 7 (Bus error).\n",
])
def test_a_sigbus_with_no_reason_is_most_often_shared_memory_that_ran_out(tmp_path, text):
    """The real corpus: all 7 cases with a SIGBUS line were a full /dev/shm (or a segment that could not be backed)."""
    rc = diagnose(text, tmp_path).root_cause
    assert (rc.category.value, rc.confidence) == ("resource_exhaustion", "low"), rc
    assert "/dev/shm" in rc.remedy and rc.alternatives[0].category.value == "segfault_core_dump", rc


def test_a_segfault_is_not_read_as_shared_memory(tmp_path):
    rc = diagnose("./run.sh: line 9:  4242 Segmentation fault      (core dumped) python train.py\n", tmp_path).root_cause
    assert rc.category.value == "segfault_core_dump", rc


def test_a_child_stopped_with_sigterm_or_sigint_is_not_a_crash(tmp_path):
    rc = diagnose("[ERROR] [launch.py:325:sigkill_handler] ['python', 'train.py'] exits with return code = -2\n",
                  tmp_path).root_cause
    assert rc is None or rc.category.value not in ("segfault_core_dump", "oom_host"), rc


def test_a_sigkill_whose_sender_is_in_the_log_is_that_sender(tmp_path):
    text = ("[ 812.1] Out of memory: Killed process 8812 (python3) total-vm:9000000kB, anon-rss:8000000kB\n"
            "./run.sh: line 12:  8812 Killed                  python3 train.py\n")
    rc = diagnose(text, tmp_path).root_cause
    assert rc.category.value == "oom_host" and rc.confidence == "high"


@pytest.mark.parametrize("text", ["slurmstepd: error: Exceeded step memory limit at some point.\n",
                                  "slurmstepd: Exceeded job memory limit at some point.\n"])
def test_slurm_memory_reached_at_some_point_is_no_confident_oom(tmp_path, text):
    d = diagnose(text, tmp_path)
    rc = d.root_cause
    assert rc.confidence == "low" and rc.category.value == "other" and d.status.value == "unknown"
    assert rc.alternatives[0].category.value == "oom_host"


@pytest.mark.parametrize("text", [
    "slurmstepd: error: Exceeded step memory limit at some point.\nsrun: error: n4: task 0: Out Of Memory\n",
    "slurmstepd: error: Job 771 exceeded memory limit (4200000 > 4194304), being killed\n"
    "slurmstepd: error: Exceeded job memory limit\n",
])
def test_slurm_memory_with_a_kill_is_the_oom(tmp_path, text):
    rc = diagnose(text, tmp_path).root_cause
    assert rc.category.value == "oom_host" and rc.confidence == "high"


@pytest.mark.parametrize("text, category", [
    ('Failed to pull image "registry.example.com/tf:2.15": rpc error: code = Unknown desc = Error response from daemon: '
     'Get "https://registry.example.com/v2/": dial tcp: lookup registry.example.com: no such host\n', "network_unreachable"),
    ('Failed to pull image "registry.example.com/tf:2.15-typo": rpc error: code = NotFound desc = failed to pull and '
     'unpack image: not found\n', "other"),
    ("ssh: Could not resolve hostname gpu-a:4: Name or service not known\n", "version_mismatch"),
    ("ssh: Could not resolve hostname gpu-a: Name or service not known\n", "network_unreachable"),
    ("$ pstack 4411\nThread 1 (process 4411):\n#0  0x00007f00aa in epoll_wait () from /lib64/libc.so.6\n",
     "hang_stalled_worker"),
    ("(gdb) bt\n#0  0x00007f00aa12 in memcpy () from /lib64/libc.so.6\n#1  0x00007f00bb in ncclSend ()\n",
     "segfault_core_dump"),
])
def test_what_a_message_means_beyond_its_words(tmp_path, text, category):
    assert diagnose(text, tmp_path).root_cause.category.value == category


@pytest.mark.parametrize("text, other", [
    ("mpirun noticed that process rank 0 with PID 311 on node a1 exited on signal 4 (Illegal instruction).\n",
     "segfault_core_dump"),
    ("slurmstepd: error: *** JOB 8812 ON n3 CANCELLED AT 2024-01-02T03:04:05 DUE TO TIME LIMIT ***\n",
     "hang_stalled_worker"),
    ("slurmstepd: error: *** STEP 8812.0 ON n3 CANCELLED AT 2024-01-02T03:04:05 ***\n", "hang_stalled_worker"),
])
def test_a_message_with_two_usual_causes_is_not_high_confidence(tmp_path, text, other):
    rc = diagnose(text, tmp_path).root_cause
    assert rc.confidence in ("medium", "low") and rc.alternatives[0].category.value == other, rc


def test_alternatives_are_ranked_distinct_and_settleable(tmp_path):
    """What ``diagnose`` prints: the learned reading's next most probable causes, each with what settles it."""
    text = ("E0314 09:12:44.518203 140213 coordination_service.cc:512] UNAVAILABLE: The following tasks are unhealthy "
            "(stopped sending heartbeats):\n/job:worker/replica:0/task:1\n")
    rc = diagnose_texts({"output.log": text}, tmp_path).root_cause
    cats = [a.category for a in rc.alternatives]
    assert 1 <= len(cats) <= 3 and len(set(cats)) == len(cats) and rc.category not in cats
    assert all(a.settle for a in rc.alternatives)
    assert "settle" in rc.to_json()["alternatives"][0]


