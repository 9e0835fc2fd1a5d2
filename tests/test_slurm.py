"""A real Slurm: ``sbatch deploy/sbatch.sh`` of a 2-task job, each task under ``distdoctor run --node``.

``scripts/slurm-local.sh start`` brings up munged, slurmctld and slurmd on this machine (root only);
the module skips with the reason when it cannot. The job script is the documented one,
``deploy/sbatch.sh``, with only the allocation shrunk to this one node on the command line
(``--nodes=1 --ntasks=2``: command-line options override ``#SBATCH`` lines) and the training
command given as its arguments: a real MultiWorkerMirroredStrategy trainer
(``tests/workers/trainer.py``) that can inject one fault. Every job holds /tmp/dd-tf.lock while it
runs, so only one TensorFlow job uses the machine's cores at a time.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import OUTPUT, PY, ROOT, WORKERS, requires_tf
from mesh_helpers import clean_env, free_port_pair

pytestmark = [requires_tf]
SLURM_LOCAL = ROOT / "scripts" / "slurm-local.sh"
SBATCH = ROOT / "deploy" / "sbatch.sh"
SLURM_DIR = Path(os.environ.get("DD_SLURM_DIR", "/tmp/dd-slurm"))
LOCK = os.environ.get("DD_TF_LOCK", "/tmp/dd-tf.lock")


def _slurm_env() -> dict[str, str]:
    return {**os.environ, "SLURM_CONF": str(SLURM_DIR / "slurm.conf"), "DD_SLURM_DIR": str(SLURM_DIR)}


@pytest.fixture(scope="module")
def slurm():
    """A running single-node Slurm; stopped again at the end when this module started it."""
    if os.geteuid() != 0:
        pytest.skip("a local Slurm needs root (scripts/slurm-local.sh starts munged, slurmctld, slurmd)")
    missing = [b for b in ("munged", "slurmctld", "slurmd", "sbatch", "flock") if shutil.which(b) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (scripts/setup.sh --test installs slurm-wlm and munge)")
    env = _slurm_env()
    was_up = subprocess.run([str(SLURM_LOCAL), "status"], env=env, capture_output=True).returncode == 0
    if not was_up:
        start = subprocess.run([str(SLURM_LOCAL), "start"], env=env, capture_output=True, text=True, timeout=60)
        if start.returncode != 0:
            pytest.skip(f"Slurm could not be started here: {start.stderr.strip()[-300:]}")
    yield env
    if not was_up:
        subprocess.run([str(SLURM_LOCAL), "stop"], env=env, timeout=60)


class Job:
    def __init__(self, name: str, rc: int, out: Path, ckpt: Path, env: dict[str, str], job_id: str) -> None:
        self.name, self.rc, self.out_path, self.ckpt, self.env, self.job_id = name, rc, out, ckpt, env, job_id

    def comment(self) -> str:
        """The job's Comment, as `scontrol show job` prints it (the job record is kept MinJobAge=600 s)."""
        assert self.job_id.isdigit(), f"no job id from sbatch --parsable: {self.job_id!r}"
        show = subprocess.run(["scontrol", "show", "job", self.job_id], env=self.env, capture_output=True,
                              text=True, timeout=30)
        assert show.returncode == 0, show.stderr
        lines = [x.strip() for x in show.stdout.splitlines() if x.strip().startswith("Comment=")]
        assert lines, f"no Comment in {show.stdout[:3000]}"
        return lines[0][len("Comment="):]

    @property
    def output(self) -> str:
        return self.out_path.read_text(errors="replace") if self.out_path.exists() else "(no job output)"

    def diagnosis(self, rank: int, name: str = "diagnosis.json") -> dict:
        path = self.ckpt / "distdoctor" / str(rank) / name
        assert path.exists(), f"{path} missing; job output:\n{self.output[-4000:]}"
        return json.loads(path.read_text())


def sbatch(env: dict[str, str], name: str, trainer_args: list[str], dd_args: list[str] = ()) -> Job:
    """Submit deploy/sbatch.sh with the trainer as its command and wait for the job to end."""
    base = OUTPUT / "slurm" / name
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    ckpt = base / "ckpt"
    job_env = clean_env(**{k: env[k] for k in ("SLURM_CONF",)})
    job_env.update(
        PATH=f"{Path(PY).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        PYTHONPATH=str(ROOT),  # this tree's distdoctor, in the job's tasks too
        CKPT=str(ckpt),
        DISTDOCTOR_TOKEN=f"slurm-test-{name}-" + "7c3e9a1b5d2f8e4a6c0b9d1f3e5a7c2b",
        DISTDOCTOR_ARGS=" ".join(["--failure-grace", "5", "--grace", "5", "--mesh-timeout", "60",
                                  "--port-base", str(free_port_pair()), *dd_args]),
    )
    out = base / "job.out"
    argv = ["sbatch", "--parsable", f"--job-name=dd-{name}", "--nodes=1", "--ntasks=2",
            "--ntasks-per-node=2", "--cpus-per-task=1", "--time=10", f"--output={out}", str(SBATCH),
            PY, str(WORKERS / "trainer.py"), *trainer_args]
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)   # as `flock LOCK`: one TensorFlow job on the machine's cores at a time
        proc = subprocess.run(argv, env=job_env, cwd=base, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        job_id = proc.stdout.strip().split(";")[0]
        try:
            rc = _wait_for(job_id, job_env, time.monotonic() + 600)
        except BaseException:
            subprocess.run(["scancel", job_id], env=job_env, timeout=30)  # leave no job behind
            raise
    return Job(name, rc, out, ckpt, job_env, job_id)


_ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL",
          "DEADLINE"}


def _wait_for(job_id: str, env: dict[str, str], deadline: float) -> int:
    """Wait for the job's end, reading its record twice a second: the job's exit code, 128 + the signal that ended
    it, or 1 for a job that ended otherwise (cancelled, timed out, node failure) -- nonzero whenever it failed.

    ``sbatch --wait`` looks only after 2, 10 and 42 s (its sleep grows fourfold up to 32 s), so every job here,
    10 to 25 s long, took 42 s to be seen ending; the record says the same thing at once."""
    while True:
        show = subprocess.run(["scontrol", "-o", "show", "job", job_id], env=env, capture_output=True, text=True,
                              timeout=30)
        fields = dict(f.split("=", 1) for f in show.stdout.split() if "=" in f)
        state = fields.get("JobState", "")
        if state in _ENDED:
            code, _, sig = fields.get("ExitCode", "1:0").partition(":")
            if int(code):
                return int(code)
            if int(sig or 0):
                return 128 + int(sig)
            return 0 if state == "COMPLETED" else 1
        if time.monotonic() > deadline:
            raise TimeoutError(f"slurm job {job_id} still {state or show.stderr.strip()!r} after 600 s")
        time.sleep(0.5)


def test_healthy_job_succeeds(slurm):
    job = sbatch(slurm, "healthy", ["--steps", "10", "--epochs", "2"])
    assert job.rc == 0, job.output[-4000:]
    diag = job.diagnosis(0)
    assert diag["status"] == "succeeded", json.dumps(diag["findings"], indent=1)
    assert set(diag["tasks"]) == {"worker:0", "worker:1"}
    # the other task holds the same, cluster-wide verdict; both supervisors printed it into the job output
    assert job.diagnosis(1)["status"] == "succeeded"
    assert job.output.count("All 2 tasks finished normally") >= 2, job.output[-3000:]
    # the cluster came from Slurm's variables: both tasks on this node, ports from --port-base upward
    check = job.diagnosis(0, "check.json")
    assert check["status"] == "ok" and check["mesh"]["complete"], check
    # the verdict where Slurm shows it: the collector wrote it into the job's Comment
    assert job.comment() == "distdoctor: status=succeeded tasks=2", job.output[-3000:]


def test_killed_worker_is_peer_crashed(slurm):
    job = sbatch(slurm, "sigkill", ["--steps", "30", "--epochs", "3", "--fault", "sigkill",
                                    "--fault-task", "worker:1", "--fault-step", "12"])
    assert job.rc != 0, job.output[-4000:]
    diag = job.diagnosis(0)
    rc = diag["root_cause"]
    assert diag["status"] == "failed" and rc["culprit"] == "worker:1", json.dumps(rc, indent=1)
    assert rc["category"] == "peer_crashed"
    assert diag["tasks"]["worker:1"]["signal"] == "SIGKILL"
    assert job.diagnosis(1)["root_cause"]["culprit"] == "worker:1"
    # `scontrol show job` says why, not "1 task failed": status, category, culprit, code, summary
    comment = job.comment()
    assert comment.startswith("distdoctor: status=failed category=peer_crashed culprit=worker:1 code=DD101: "), \
        comment
    assert "verdict written to job" in job.output


def test_killed_worker_restarts_inside_the_allocation_and_resumes(slurm):
    """--restarts 2: worker 1 is SIGKILLed once in epoch 2; both tasks restart in the same allocation, on the
    same ports, and the second attempt resumes from BackupAndRestore's epoch."""
    base = OUTPUT / "slurm" / "restart"
    backup, fired = base / "backup", base / "fired"
    job = sbatch(slurm, "restart", ["--steps", "20", "--epochs", "3", "--fault", "sigkill", "--fault-task", "worker:1",
                                    "--fault-epoch", "2", "--fault-step", "8", "--backup", str(backup),
                                    "--fault-once", str(fired)],
                 dd_args=["--restarts", "2", "--restart-delay", "1"])
    assert job.rc == 0, job.output[-6000:]
    diag = job.diagnosis(0)
    assert diag["status"] == "succeeded", json.dumps(diag.get("attempts"), indent=1)[-4000:]
    a = diag["attempts"]
    assert len(a) == 2 and [x["decision"] for x in a] == ["restart", "none"], json.dumps(a, indent=1)
    assert a[0]["root_cause"]["category"] == "peer_crashed" and a[0]["root_cause"]["culprit"] == "worker:1"
    # epoch 1 was saved; the kill came in epoch 2: attempt 2 starts at 0-based epoch 1 from the backup
    assert a[1]["resumed_from"]["epoch"] == 1, a[1]
    assert a[1]["resumed_from"]["checkpoint"] == str(backup), a[1]
    assert job.output.count("FAULT sigkill injected by worker:1") == 1, job.output[-3000:]
    # the other node's bundle holds the same ledger and its own first attempt, archived
    assert [x["decision"] for x in job.diagnosis(1)["attempts"]] == ["restart", "none"]
    assert (job.ckpt / "distdoctor" / "1" / "attempts" / "1" / "logs" / "worker-1.log").exists()


def test_deterministic_error_is_user_code_and_runs_once(slurm):
    job = sbatch(slurm, "exception", ["--steps", "30", "--epochs", "3", "--fault", "exception",
                                      "--fault-task", "worker:1", "--fault-step", "8"])
    assert job.rc != 0, job.output[-4000:]
    diag = job.diagnosis(0)
    rc = diag["root_cause"]
    assert rc["category"] == "user_code_error" and rc["culprit"] == "worker:1", json.dumps(rc, indent=1)
    # started once: a deterministic failure is not retried, in the allocation or by a requeue
    assert job.output.count("FAULT exception injected by worker:1") == 1, job.output[-3000:]
    assert "starting worker:1" in job.output and job.output.count("starting worker:1") == 1


def test_slurm_local_start_is_idempotent(slurm):
    pids = {f: (SLURM_DIR / f).read_text().strip() for f in ("slurmctld.pid", "slurmd.pid")}
    again = subprocess.run([str(SLURM_LOCAL), "start"], env=slurm, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "SLURM_CONF=" in again.stdout, again.stderr
    assert {f: (SLURM_DIR / f).read_text().strip() for f in pids} == pids   # the same daemons, not new ones
    status = subprocess.run([str(SLURM_LOCAL), "status"], env=slurm, capture_output=True, text=True, timeout=60)
    assert status.returncode == 0 and status.stdout.strip() in ("idle", "mixed", "allocated"), status.stdout
