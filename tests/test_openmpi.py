"""A real Open MPI: ``deploy/mpirun.sh`` runs ``mpirun -np 2 distdoctor run --node -- COMMAND``.

Each rank takes its identity from ``OMPI_COMM_WORLD_*`` and hands its task the derived TF_CONFIG
(``worker:RANK``, ports from ``--port-base`` upward). The same cluster-wide verdict as under Slurm:
a healthy job succeeds; a SIGKILLed worker is ``peer_crashed`` with that worker as the culprit, on
both ranks' bundles; rank 0 prints the one-line verdict as its last line (``--tag-output`` tells the
ranks' lines apart). First around a TensorFlow-free task (``tests/workers/flaky.py``), then around
the real MultiWorkerMirroredStrategy trainer (``tests/workers/trainer.py``; ``tf``, holding
/tmp/dd-tf.lock, or ``$DD_TF_LOCK``, while mpirun runs). Skips when ``mpirun`` is not installed
(``scripts/setup.sh --test`` installs Debian's openmpi-bin).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import OUTPUT, PY, ROOT, WORKERS, requires_tf
from mesh_helpers import clean_env, free_port_pair

MPIRUN_SH = ROOT / "deploy" / "mpirun.sh"
LOCK = os.environ.get("DD_TF_LOCK", "/tmp/dd-tf.lock")
_TAG = re.compile(r"^\[\d+,(\d+)\]<stdout>:(.*)$")
_TRAILING_TAG = re.compile(r"\[\d+,\d+\]<stdout>:$")
pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None,
                                reason="mpirun not installed (scripts/setup.sh --test installs openmpi-bin)")


class MpiJob:
    def __init__(self, rc: int, stdout: str, stderr: str, ckpt: Path) -> None:
        self.rc, self.stdout, self.stderr, self.ckpt = rc, stdout, stderr, ckpt

    @property
    def output(self) -> str:
        return self.stdout[-5000:] + "\n--- stderr ---\n" + self.stderr[-3000:]

    def diagnosis(self, rank: int, name: str = "diagnosis.json") -> dict:
        path = self.ckpt / "distdoctor" / str(rank) / name
        assert path.exists(), f"{path} missing; output:\n{self.output}"
        return json.loads(path.read_text())

    def rank_lines(self, rank: int) -> list[str]:
        """Rank ``rank``'s stdout lines, without mpirun's ``[1,RANK]<stdout>:`` tag."""
        out = []
        for line in self.stdout.splitlines():
            m = _TAG.match(line)
            if m and int(m.group(1)) == rank:
                # Open MPI 4.1 tags a rank's last line at its end too: "[1,0]<stdout>:text[1,0]<stdout>:"
                out.append(_TRAILING_TAG.sub("", m.group(2)))
        return out


def mpirun(name: str, command: list[str], dd_args: list[str] = (), *, lock: bool = False,
           timeout: float = 300) -> MpiJob:
    base = OUTPUT / "openmpi" / name
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    ckpt = base / "ckpt"
    env = clean_env(
        PATH=f"{Path(PY).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        PYTHONPATH=str(ROOT),   # this tree's distdoctor, in every rank
        CKPT=str(ckpt), NP="2", DISTDOCTOR_TOKEN=f"mpi-test-{name}-" + "7c3e9a1b5d2f8e4a6c0b9d1f3e5a7c2b",
        DISTDOCTOR_ARGS=" ".join(["--no-report", "--failure-grace", "3", "--grace", "3", "--mesh-timeout", "30",
                                  "--port-base", str(free_port_pair()), *dd_args]),
        MPIRUN_ARGS="--oversubscribe --tag-output" + (" --allow-run-as-root" if os.geteuid() == 0 else ""),
    )
    env = {k: v for k, v in env.items() if not k.startswith(("OMPI_", "PMIX_"))}
    argv = [str(MPIRUN_SH), *command]
    if lock:
        argv = ["flock", LOCK, *argv]
    # mpirun --tag-output tags each piece of a rank's output it forwards, and a piece can end inside a multi-byte
    # character (one CI run met bytes that are not UTF-8 here): read as a terminal shows them, with a replacement mark
    proc = subprocess.Popen(argv, env=env, cwd=base, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, encoding="utf-8", errors="replace", start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_tree(proc.pid)   # mpirun and every rank: leave nothing behind
        out, err = proc.communicate()
        raise AssertionError(f"mpirun did not end within {timeout} s:\n{out[-3000:]}\n{err[-2000:]}")
    return MpiJob(proc.returncode, out, err, ckpt)


def _kill_tree(pid: int) -> None:
    """SIGKILL the process group of ``pid`` and of each of its descendants: Open MPI starts every rank in a process
    group of its own (and distdoctor each task in its own), so mpirun's group alone would leave the ranks behind."""
    import psutil
    try:
        procs = [psutil.Process(pid)] + psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        procs = []
    groups = set()
    for p in procs:
        try:
            groups.add(os.getpgid(p.pid))
        except ProcessLookupError:
            pass
    for g in groups:
        try:
            os.killpg(g, signal.SIGKILL)
        except ProcessLookupError:
            pass


def flaky(ckpt_dir: str, *args: str) -> list[str]:
    return [PY, str(WORKERS / "flaky.py"), "--ckpt", ckpt_dir, *args]


def test_healthy_job_succeeds_and_rank_0_says_so_last(tmp_path):
    job = mpirun("flaky-healthy", flaky(str(tmp_path / "state"), "--epochs", "3"))
    assert job.rc == 0, job.output
    for rank in (0, 1):
        diag = job.diagnosis(rank)
        assert diag["status"] == "succeeded", diag
        assert set(diag["tasks"]) == {"worker:0", "worker:1"}
    # the cluster came from OMPI_COMM_WORLD_*: both ranks on this host, ports from --port-base upward
    check = job.diagnosis(0, "check.json")
    assert check["status"] == "ok" and check["mesh"]["complete"], check
    lines = [x for x in job.rank_lines(0) if x.strip()]
    assert lines and lines[-1] == "distdoctor: status=succeeded tasks=2", lines[-5:]
    assert not any(x.startswith("distdoctor: status=") for x in job.rank_lines(1))   # rank 0 only


def test_killed_worker_is_peer_crashed_on_every_rank(tmp_path):
    # epoch 14 of 16: past the start-up check (a task that fails within 3 s on every node is a usage error)
    job = mpirun("flaky-sigkill", flaky(str(tmp_path / "state"), "--fault", "sigkill", "--fault-epoch", "14",
                                        "--epochs", "16"))
    assert job.rc != 0, job.output
    for rank in (0, 1):
        rc = job.diagnosis(rank)["root_cause"]
        assert rc["category"] == "peer_crashed" and rc["culprit"] == "worker:1", (rank, rc)
    assert job.diagnosis(0)["tasks"]["worker:1"]["signal"] == "SIGKILL"
    # mpirun ends the job when rank 1 exits 137; rank 1 waited for the collector, so rank 0's verdict is out
    lines = [x for x in job.rank_lines(0) if x.strip()]
    assert lines and lines[-1].startswith("distdoctor: status=failed category=peer_crashed culprit=worker:1 "
                                          "code=DD101: "), job.output


_SELF_KILL = """
import os, signal, time
rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
print(f"rank {rank} step 1", flush=True)
time.sleep(0.5)
if rank == 1:
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(30)
"""


def test_mpiruns_own_report_of_a_sigkilled_rank_names_that_rank(tmp_path):
    """Plain mpirun, no supervisor: Open MPI prints its abort notice ("Primary job terminated normally, but 1
    process returned a non-zero exit code") and then which rank died and how ("mpirun noticed that process rank 1
    ... exited on signal 9 (Killed)"). Reading that output, the second line is the root -- the same event in detail,
    not a crash caused by the first -- and a SIGKILL nothing in the log sent reads as the OOM killer (low)."""
    env = {k: v for k, v in clean_env().items() if not k.startswith(("OMPI_", "PMIX_"))}
    argv = ["mpirun", "--oversubscribe", "-np", "2", *(["--allow-run-as-root"] if os.geteuid() == 0 else []),
            PY, "-c", _SELF_KILL]
    p = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       start_new_session=True)
    log = tmp_path / "output.log"
    log.write_text(p.stdout + p.stderr)
    assert p.returncode != 0 and "exited on signal 9" in log.read_text(), log.read_text()
    d = subprocess.run([PY, "-m", "distdoctor", "diagnose", str(log), "--json"], capture_output=True, text=True,
                       timeout=120)
    rc = json.loads(d.stdout)["root_cause"]
    assert (rc["code"], rc["category"], rc["culprit"], rc["confidence"]) == ("DD730", "oom_host", "rank:1", "low"), rc
    assert "peer_crashed" in [a["category"] for a in rc["alternatives"]], rc["alternatives"]


@pytest.mark.tf
@requires_tf
def test_real_tf_healthy_job_succeeds():
    job = mpirun("tf-healthy", [PY, str(WORKERS / "trainer.py"), "--steps", "10", "--epochs", "2"], lock=True)
    assert job.rc == 0, job.output
    diag = job.diagnosis(0)
    assert diag["status"] == "succeeded", json.dumps(diag["findings"], indent=1)
    assert set(diag["tasks"]) == {"worker:0", "worker:1"} and job.diagnosis(1)["status"] == "succeeded"
    assert [x for x in job.rank_lines(0) if x.strip()][-1] == "distdoctor: status=succeeded tasks=2"


def test_a_rank_stuck_in_its_exit_teardown_does_not_hold_the_job():
    """Rank 0's code ends without an error but its process waits for ever at exit (as TensorFlow's tf.data
    destructors once did here, in a healthy real-TF mpirun job that then held mpirun for ever); rank 1 exits 0.
    Rank 0's supervisor stops it --exit-grace later, mpirun ends, and the job succeeded."""
    job = mpirun("stuck-at-exit", [PY, str(WORKERS / "stuck_at_exit.py"), "--stuck", "worker:0"], ["--exit-grace", "3"],
                 timeout=120)
    assert job.rc == 0, job.output
    diag = job.diagnosis(0)
    assert diag["status"] == "succeeded" and diag["tasks"]["worker:0"]["stopped_at_end"], json.dumps(diag)[:3000]
    assert any("sat in its exit teardown" in n for n in diag["notes"]), diag["notes"]
    assert [x for x in job.rank_lines(0) if x.strip()][-1] == "distdoctor: status=succeeded tasks=2"


@pytest.mark.tf
@requires_tf
def test_real_tf_killed_worker_is_peer_crashed():
    job = mpirun("tf-sigkill", [PY, str(WORKERS / "trainer.py"), "--steps", "30", "--epochs", "3", "--fault",
                                "sigkill", "--fault-task", "worker:1", "--fault-step", "12"], lock=True)
    assert job.rc != 0, job.output
    diag = job.diagnosis(0)
    rc = diag["root_cause"]
    assert diag["status"] == "failed" and rc["culprit"] == "worker:1" and rc["category"] == "peer_crashed", rc
    assert diag["tasks"]["worker:1"]["signal"] == "SIGKILL"
    assert job.diagnosis(1)["root_cause"]["culprit"] == "worker:1"
    last = [x for x in job.rank_lines(0) if x.strip()][-1]
    assert last.startswith("distdoctor: status=failed category=peer_crashed culprit=worker:1"), job.output


@pytest.mark.parametrize("code,tries", [(143, 3), (1, 1), (0, 1)])
def test_the_openmpi_policy_runs_mpirun_again_on_the_retryable_code_only(tmp_path, code, tries):
    """``distdoctor policy openmpi``: a real mpirun exits with its failing rank's status, and the snippet's loop
    runs it again on 143 (a transient verdict) only, up to its tries; 1 (deterministic) and 0 end it at once."""
    from distdoctor.supervise.schedpolicy import snippet
    script = tmp_path / "retry.sh"
    script.write_text(snippet("openmpi"))
    count = tmp_path / "tries"
    fake = tmp_path / "mpirun-line.sh"     # stands in for deploy/mpirun.sh: a real mpirun, rank 1 exits CODE
    root = " --allow-run-as-root" if os.geteuid() == 0 else ""
    fake.write_text(f"#!/bin/sh\necho try >> {count}\nexec mpirun -np 2 --oversubscribe{root} sh -c "
                    f"'if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then exit {code}; fi; exit 0'\n")
    fake.chmod(0o755)
    env = {**clean_env(), "MPIRUN": str(fake), "CKPT": str(tmp_path / "ckpt"), "MPIRUN_TRIES": "3"}
    p = subprocess.run(["bash", str(script), "python", "train.py"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == code, p.stderr[-2000:]
    assert count.read_text().count("try") == tries
    assert ("mpirun again" in p.stderr) == (tries > 1)
