"""``distdoctor diagnose`` on the raw logs of real jobs that distdoctor did NOT supervise.

Most users come with a job that already failed and the raw stdout/stderr of its tasks. Each case here runs a real
2-worker MultiWorkerMirroredStrategy job (tests/workers/trainer.py, which does not import distdoctor) with a plain
launcher written below -- one ``subprocess.Popen`` per task, its own TF_CONFIG on free loopback ports, stdout and
stderr into ``<dir>/worker-N.log``, each task in its own session/process group -- injects one real fault from
outside (or through the trainer's fault flags), ends the job the way a user would, and diagnoses the logs with
``diagnose_paths`` (and the command line for one case).

What the user has, per case (the choice of what is "fair" to give diagnose):

- sigkill: worker:1 SIGKILLed by the test (``os.kill``) in epoch 3; the per-task logs only (no shell line: the task
  was started directly, so nothing prints "Killed").
- exception: worker:1 raises ``ValueError`` in a Keras callback at step 3; the logs.
- sigstop: worker:1 SIGSTOPped by the test in epoch 3; worker:0's coordination service reports it after ~10 s
  (TF 2.21: "The following tasks are unhealthy (stopped sending heartbeats): /job:worker/replica:0/task:1") and
  exits; the launcher waits a bounded time for the rest, then SIGKILLs the process groups as a user's timeout
  would. Verdict: failed, peer_crashed, worker:1 -- the same as TF's own "The tasks have crashed": a task
  SIGKILLed between two collectives is reported the same way (seen here: the srun-label sigkill run sometimes
  fails on "Connection reset by peer" at once, sometimes on missed heartbeats after ~10 s), so logs cannot say
  "frozen" (peer_unresponsive needs the process state that `distdoctor run` reads from /proc).
- oom: worker:1 under a cgroup v1 memory limit allocates until the kernel kills it. The raw log of an OOM-killed
  process just stops. A user started each task with a shell (``bash -c 'python ...'``, as a run script per host
  does), so the shell's job-control line ("bash: line 1: PID Killed ...") ends worker:1's log; and the user
  attaches the kernel's record (``dmesg -T`` lines of this kill, as every OOM how-to says to collect) as
  ``dmesg.txt`` beside the logs. A second case diagnoses the logs WITHOUT dmesg: "Killed" alone says SIGKILL
  from outside, so peer_crashed on worker:1 is the honest verdict there.
- ps: ParameterServerStrategy (tests/workers/ps_trainer.py, chief + 2 workers + 1 ps): ps:0 SIGKILLed -> the chief
  fails, peer_crashed on ps:0; worker:1 SIGKILLed -> the coordinator finishes without it: succeeded, a warning.
  The serving tasks never end by themselves: the launcher kills them once the chief has ended.
- combined: the sigkill and exception jobs again, with both tasks' output in ONE stream as ``srun --label`` prints
  it (``0: `` / ``1: `` prefixes in order of arrival; the launcher reads both pipes). Same verdicts; the culprit is
  named as the stream names it: srun's task 1, ``rank:1`` (TF's /job:worker/replica:0/task:1).

Set DD_FOREIGN_KEEP=DIR to keep each run's logs under DIR/<case> (that is how tests/corpus/*-foreign was recorded).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import PY, ROOT, WORKERS, requires_tf
from distdoctor.cluster.local import pick_free_ports

pytestmark = [pytest.mark.tf, requires_tf]

TRAINER = str(WORKERS / "trainer.py")


class Job:
    """A plain launcher: one process per task, as a user's own script (or a scheduler without distdoctor) starts them."""

    def __init__(self, folder: Path, trainer_args: list[str], *, tasks: tuple[str, ...] = ("worker:0", "worker:1"),
                 combined: bool = False, shell: bool = False, env: dict[str, str] | None = None,
                 script: str = TRAINER) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.tasks = list(tasks)
        ports = iter(pick_free_ports(len(tasks)))
        cluster: dict[str, list[str]] = {}
        for t in tasks:
            cluster.setdefault(t.split(":")[0], []).append(f"127.0.0.1:{next(ports)}")
        self.procs: list[subprocess.Popen] = []
        self.lines: list[list[str]] = [[] for _ in tasks]
        self.combined = combined
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._files = []
        self._stream = open(folder / "console.txt", "w") if combined else None
        for i, t in enumerate(tasks):
            kind, index = t.split(":")
            tf_config = json.dumps({"cluster": cluster, "task": {"type": kind, "index": int(index)}})
            e = dict(os.environ, TF_CONFIG=tf_config, TF_USE_LEGACY_KERAS="1", PYTHONUNBUFFERED="1", **(env or {}))
            e.pop("PYTHONPATH", None)   # the trainer does not import distdoctor
            argv = [PY, script, *trainer_args]
            if shell:   # the shell forks (two commands), waits, and reports a child killed by a signal
                argv = ["bash", "-c", " ".join(argv) + "; exit $?"]
            if combined:
                p = subprocess.Popen(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True, cwd=str(folder))
                t = threading.Thread(target=self._pump, args=(i, p.stdout), daemon=True)
                t.start()
                self._threads.append(t)
            else:
                fh = open(folder / f"{kind}-{index}.log", "w")
                self._files.append(fh)
                p = subprocess.Popen(argv, env=e, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True,
                                     cwd=str(folder))
            self.procs.append(p)

    def _pump(self, i: int, pipe) -> None:
        for raw in iter(pipe.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self._lock:
                self.lines[i].append(line)
                self._stream.write(f"{i}: {line}\n")
                self._stream.flush()

    def text(self, i: int) -> str:
        if self.combined:
            with self._lock:
                return "\n".join(self.lines[i])
        try:
            return (self.folder / f"{self.tasks[i].replace(':', '-')}.log").read_text(errors="replace")
        except OSError:
            return ""

    def wait_for(self, i: int, pattern: str, timeout: float = 120.0) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if re.search(pattern, self.text(i)):
                return
            if all(p.poll() is not None for p in self.procs):
                break
            time.sleep(0.05)
        raise AssertionError(f"{self.tasks[i]} never printed {pattern!r}:\n" + self.text(i)[-3000:])

    def python_pid(self, i: int) -> int:
        """The trainer's pid (the child of the shell when started through bash)."""
        p = self.procs[i]
        for _ in range(200):
            try:
                kids = Path(f"/proc/{p.pid}/task/{p.pid}/children").read_text().split()
            except OSError:
                kids = []
            try:
                cmdline = Path(f"/proc/{p.pid}/cmdline").read_bytes()
            except OSError:
                cmdline = b""
            if cmdline and not cmdline.startswith(b"bash"):
                return p.pid
            if kids:
                return int(kids[0])
            time.sleep(0.05)
        return p.pid

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for every task to end; True when they all did."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if all(p.poll() is not None for p in self.procs):
                return True
            time.sleep(0.1)
        return False

    def settle(self, i: int, timeout: float = 60.0, grace: float = 5.0) -> None:
        """Wait until task ``i`` ends, or printed its final Python error and had ``grace`` s to end (TF's
        coordination service may hold a failed task at exit, waiting for the lost peer: a user kills it)."""
        deadline = time.time() + timeout
        while time.time() < deadline and self.procs[i].poll() is None:
            if re.search(r"^\w+(?:\.\w+)*(?:Error|Exception): ", self.text(i), re.M):
                deadline = min(deadline, time.time() + grace)
            time.sleep(0.1)

    def kill_all(self) -> None:
        """SIGKILL every task's process group (a user's Ctrl-C/timeout, and the cleanup: no orphans)."""
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        for t in self._threads:
            t.join(timeout=10)
        for fh in self._files:
            fh.close()
        if self._stream:
            self._stream.close()

    def logs(self) -> Path:
        return self.folder / "console.txt" if self.combined else self.folder


def _keep(name: str, folder: Path) -> None:
    keep = os.environ.get("DD_FOREIGN_KEEP")
    if keep:
        dst = Path(keep) / name
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(folder, dst)


def _diagnose(path: Path) -> dict:
    from distdoctor.diagnose.command import diagnose_paths
    diag, _ = diagnose_paths([str(path)], jobs=1, detected_at=0.0)
    return json.loads(json.dumps(diag.to_json()))


def _check(d: dict, status: str, category: str, culprit: str, quote_from: str) -> None:
    rc = d["root_cause"] or {}
    assert (d["status"], rc.get("category"), rc.get("culprit")) == (status, category, culprit), \
        json.dumps(d, indent=1)[:4000]
    # the evidence quotes a line of the culprit's own log, and that line is really in it
    mine = [e for e in rc["evidence"] if e.startswith(f"[{culprit} ")]
    assert mine, rc["evidence"]
    if quote_from:
        text = quote_from
        quoted = [re.sub(r"^\[[^\]]+\] ", "", e).replace(" (consequence)", "").strip() for e in mine]
        assert any(q and q[:60] in text for q in quoted), (quoted, text[-2000:])


# -- the cases ----------------------------------------------------------------------------------------------------

LONG = ["--steps", "10", "--epochs", "400"]   # long enough that the test's fault lands mid-training


def _run_sigkill(folder: Path, combined: bool) -> tuple[Job, str]:
    job = Job(folder, LONG, combined=combined)
    try:
        job.wait_for(1, r"Epoch 3/")
        os.kill(job.python_pid(1), signal.SIGKILL)
        job.settle(0)
        culprit_text = job.text(1)
    finally:
        job.kill_all()
    return job, culprit_text


def _run_exception(folder: Path, combined: bool, fault: str = "exception") -> tuple[Job, str]:
    """worker:1 raises at step 3 (``fault``: the trainer's exception fault, or another one that raises); both tasks
    are let end by themselves."""
    job = Job(folder, ["--fault", fault, "--fault-step", "3", "--steps", "10", "--epochs", "3"], combined=combined)
    try:
        job.settle(1, timeout=90)
        job.settle(0, timeout=30)
        culprit_text = job.text(1)
    finally:
        job.kill_all()
    return job, culprit_text


@pytest.mark.parametrize("combined", [False, True], ids=["per-task-logs", "srun-label-stream"])
def test_sigkilled_worker_is_peer_crashed(tmp_path, combined):
    name = "sigkill-combined" if combined else "sigkill"
    job, text = _run_sigkill(tmp_path / name, combined)
    _keep(name, job.folder)
    _check(_diagnose(job.logs()), "failed", "peer_crashed", "rank:1" if combined else "worker:1", text)
    if not combined:   # the healthy worker's failure is quoted as a consequence
        rc = _diagnose(job.logs())["root_cause"]
        assert any(e.startswith("[worker:0") for e in rc["evidence"]), rc["evidence"]


@pytest.mark.parametrize("combined", [False, True], ids=["per-task-logs", "srun-label-stream"])
def test_exception_is_user_code_error(tmp_path, combined):
    name = "exception-combined" if combined else "exception"
    job, text = _run_exception(tmp_path / name, combined)
    _keep(name, job.folder)
    d = _diagnose(job.logs())
    _check(d, "failed", "user_code_error", "rank:1" if combined else "worker:1", text)
    assert any("ValueError: bad record in shard of worker:1" in e for e in d["root_cause"]["evidence"])


def test_a_shard_on_a_file_system_tensorflow_lacks_is_named_with_its_remedy(tmp_path):
    """worker:1 reads a shard from s3:// (TensorFlow's own UnimplementedError, as TF 2.21 words it): the task that
    raised is worker:1, the cause the environment (TF 2.21 has no s3 file system of its own: tensorflow-io serves it),
    and the remedy the file-system signature's (DD1459: tensorflow-io), not a bare "fix the exception"."""
    job, text = _run_exception(tmp_path / "remote-path", False, fault="remote_path")
    _keep("remote-path", job.folder)
    assert "File system scheme 's3' not implemented" in text
    d = _diagnose(job.logs())
    _check(d, "failed", "version_mismatch", "worker:1", text)
    remedy = d["root_cause"]["remedy"]
    assert d["root_cause"]["code"] == "DD1459" and "tensorflow-io" in remedy, (d["root_cause"]["code"], remedy)


def test_exception_via_command_line(tmp_path):
    """The same diagnosis through ``python -m distdoctor diagnose DIR --json``, as the README shows."""
    job, text = _run_exception(tmp_path / "exception-cli", False)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([PY, "-m", "distdoctor", "diagnose", str(job.logs()), "--json"], capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == 1, p.stderr[-2000:]
    d = json.loads(p.stdout)
    _check(d, "failed", "user_code_error", "worker:1", text)


def test_frozen_worker_then_user_kills_the_job(tmp_path):
    folder = tmp_path / "sigstop"
    job = Job(folder, LONG)
    try:
        job.wait_for(1, r"Epoch 3/")
        os.kill(job.python_pid(1), signal.SIGSTOP)
        # worker:0 learns it from missing heartbeats after ~10 s and fails; a user's timeout (bounded here: 60 s
        # for worker:0 to end) ends the rest with SIGKILL to the process groups
        job.settle(0)
        assert job.procs[1].poll() is None, "the frozen worker cannot end by itself"
        text = job.text(1)
    finally:
        job.kill_all()
    _keep("sigstop", folder)
    w0 = job.text(0)
    assert "stopped sending heartbeats" in w0, w0[-3000:]
    # What the logs show: worker:1's log stops mid-epoch with no error; worker:0 fails ~10 s later with TF's
    # "The following tasks are unhealthy (stopped sending heartbeats): /job:worker/replica:0/task:1 / The tasks
    # have crashed" (UnavailableError). The job FAILED (not hung: no task waits at the end), worker:1 is the
    # culprit. Frozen or dead? A SIGKILLed task's peers usually see "Connection reset"/"Socket closed" at once,
    # but one killed between collectives (or a lost node) is reported by missed heartbeats alone, exactly like
    # this; so from logs an expert says what TF says -- worker:1 was lost (peer_crashed) -- and cannot say frozen
    # (peer_unresponsive needs the process state, which `distdoctor run` has).
    d = _diagnose(folder)
    _check(d, "failed", "peer_crashed", "worker:1", text)
    assert any("stopped sending heartbeats" in e for e in d["root_cause"]["evidence"]), d["root_cause"]["evidence"]


def test_frozen_worker_killed_by_the_user_before_tf_noticed(tmp_path):
    """The user gives up 3 s after worker:1 froze, before TF's ~10 s heartbeat timeout: no task printed an error,
    both logs just stop mid-epoch. An expert can say the job was stuck (both stopped progressing together) but not
    which task: the verdict must not invent a culprit or a crash."""
    folder = tmp_path / "sigstop-early"
    job = Job(folder, LONG)
    try:
        job.wait_for(1, r"Epoch 3/")
        os.kill(job.python_pid(1), signal.SIGSTOP)
        time.sleep(3)
        assert all(p.poll() is None for p in job.procs)
    finally:
        job.kill_all()
    _keep("sigstop-early", folder)
    d = _diagnose(folder)
    rc = d["root_cause"] or {}
    assert d["status"] in ("hung", "unknown") and rc.get("culprit") is None, json.dumps(d, indent=1)[:4000]
    assert rc.get("category") not in ("peer_crashed", "user_code_error", "oom_host"), json.dumps(d, indent=1)[:4000]



def _dmesg_lines() -> list[str]:
    try:
        return subprocess.run(["dmesg", "-T"], capture_output=True, text=True, timeout=20).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        return []


def test_oom_killed_worker(tmp_path, memory_cgroup):
    folder = tmp_path / "oom"
    job = Job(folder, ["--fault", "oom", "--fault-step", "3", "--steps", "10", "--epochs", "3"], shell=True,
              env={"DD_TEST_CGROUP": str(memory_cgroup)})
    try:
        job.wait_for(1, r"Killed", timeout=90)
        job.settle(0)
        text = job.text(1)
    finally:
        job.kill_all()
    _keep("oom-no-dmesg", folder)
    assert re.search(r"line \d+: +\d+ Killed", text), text[-2000:]
    # the kernel's record of THIS kill (the ring buffer may wrap: pick the lines by cgroup name and pid, not position)
    pid = re.search(r"line \d+: +(\d+) Killed", text).group(1)
    kernel = [ln for ln in _dmesg_lines() if memory_cgroup.name in ln or re.search(rf"\b(?:process |pid=){pid}\b", ln)]
    if not kernel:
        pytest.skip("dmesg shows no OOM record (no permission to read the kernel log?)")
    # without the kernel's record: "Killed" says SIGKILL from outside, nothing more
    d = _diagnose(folder)
    _check(d, "failed", "peer_crashed", "worker:1", text)
    (folder / "dmesg.txt").write_text("\n".join(kernel) + "\n")
    _keep("oom", folder)
    d = _diagnose(folder)
    rc = d["root_cause"]
    assert (d["status"], rc["category"], rc["culprit"]) == ("failed", "oom_host", "worker:1"), json.dumps(d)[:4000]
    assert any("Killed" in e for e in rc["evidence"] if e.startswith("[worker:1")), rc["evidence"]
    assert any(re.search(r"(?i)oom|killed process", e) for e in rc["evidence"] if e.startswith("[job")), rc["evidence"]


# -- ParameterServerStrategy: chief + 2 workers + 1 ps (tests/workers/ps_trainer.py); workers and ps serve forever,
# so the launcher (like a user) ends them once the chief has ended.

PS_TASKS = ("chief:0", "worker:0", "worker:1", "ps:0")


def _run_ps(folder: Path, kill: str, epochs: int) -> Job:
    job = Job(folder, ["--epochs", str(epochs), "--steps", "20"], tasks=PS_TASKS, script=str(WORKERS / "ps_trainer.py"))
    try:
        job.wait_for(0, r"Epoch 2/")
        os.kill(job.python_pid(job.tasks.index(kill)), signal.SIGKILL)
        job.settle(0, timeout=120)
    finally:
        job.kill_all()
    return job


def test_ps_strategy_lost_ps_fails_the_job(tmp_path):
    job = _run_ps(tmp_path / "ps-kill-ps", "ps:0", 200)
    _keep("ps-kill-ps", job.folder)
    assert job.procs[0].returncode not in (0, None), job.text(0)[-3000:]
    _check(_diagnose(job.folder), "failed", "peer_crashed", "ps:0", job.text(3))


def test_ps_strategy_survives_a_lost_worker(tmp_path):
    """The ClusterCoordinator reschedules a lost worker's closures: the chief finishes, a warning names worker:1."""
    job = _run_ps(tmp_path / "ps-kill-worker", "worker:1", 8)
    _keep("ps-kill-worker", job.folder)
    assert job.procs[0].returncode == 0, job.text(0)[-3000:]
    d = _diagnose(job.folder)
    assert d["status"] == "succeeded", json.dumps(d, indent=1)[:4000]
    lost = [f for f in d["findings"] if f["culprit"] == "worker:1"]
    assert lost and all(f["severity"] == "warning" for f in lost), d["findings"]
