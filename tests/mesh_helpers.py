"""Start ``distdoctor check --mesh`` tasks as real processes (optionally inside a network namespace)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
from distdoctor.cluster.local import pick_free_ports  # noqa: E402

TOKEN = "3f9c0e7a51d24b8c9e6f1a2b3c4d5e6f"   # 16 random bytes in hex: a strong enough token
OTHER_TOKEN = "b1e2d3c4f5a697887766554433221100"


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """``n`` distinct free ports (the project's own picker)."""
    return pick_free_ports(n, host)


def free_port_pair() -> int:
    """A base port B with B and B+1 free: a scheduler's layout gives a host's tasks port_base + local rank
    (SlurmClusterResolver, Open MPI), the real-launcher tests' --port-base. Drawn below the kernel's ephemeral
    range by the project's own picker (a CI run once saw DD508 when such a port came from the ephemeral range)."""
    return pick_free_ports(2, consecutive=True)[0]


def tf_config(cluster: dict, task: str) -> str:
    job, _, index = task.partition(":")
    return json.dumps({"cluster": cluster, "task": {"type": job, "index": int(index)}})


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "SLURM_", "DISTDOCTOR_", "NCCL_"))}
    env.update(extra)
    return env


@dataclass
class TaskRun:
    task: str
    proc: subprocess.Popen
    started: float
    rc: int | None = None
    doc: dict | None = None
    stderr: str = ""
    wall_s: float = 0.0

    def codes(self) -> dict[str, set]:
        """code -> culprits (and candidates) named by this task's verdict."""
        out: dict[str, set] = {}
        for f in (self.doc or {}).get("findings", []):
            out.setdefault(f["code"], set()).update([f["culprit"], *f.get("candidates", [])])
        return out

    def finding(self, code: str) -> dict:
        return next(f for f in self.doc["findings"] if f["code"] == code)


def start_task(cluster: dict, task: str, *, token: str = TOKEN, timeout: float = 5.0, env: dict | None = None,
               argv: list[str] | None = None, netns: str | None = None, extra: list[str] = ()) -> TaskRun:
    cmd = [PY, "-m", "distdoctor", "check", "--mesh", "--json", "--timeout", str(timeout),
           "--tf-config", tf_config(cluster, task), "--token", token, *extra]
    cmd += ["--argv", json.dumps(argv if argv is not None else [PY, "train.py", "--batch", "64"])]
    if netns:
        cmd = ["ip", "netns", "exec", netns, *cmd]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=clean_env(**(env or {})), start_new_session=True)
    return TaskRun(task, proc, time.monotonic())


def finish(runs: list[TaskRun], limit: float = 60.0) -> list[TaskRun]:
    """Wait for every task; kill (by process group) any that overstays ``limit``."""
    for r in runs:
        try:
            out, err = r.proc.communicate(timeout=max(limit - (time.monotonic() - r.started), 0.1))
        except subprocess.TimeoutExpired:
            os.killpg(r.proc.pid, 9)
            out, err = r.proc.communicate()
        r.rc, r.stderr, r.wall_s = r.proc.returncode, err, time.monotonic() - r.started
        try:
            r.doc = json.loads(out)
        except ValueError:
            r.doc = None
    return runs


def kill_all(runs: list[TaskRun]) -> None:
    for r in runs:
        if r.proc.poll() is None:
            try:
                os.killpg(r.proc.pid, 9)
            except ProcessLookupError:
                pass
            r.proc.wait()


def until(pred, timeout: float = 5.0) -> bool:
    """Whether ``pred()`` turned true within ``timeout`` seconds (polled every 20 ms)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return False
