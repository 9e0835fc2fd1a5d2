"""Shared fixtures: running ``distdoctor run`` on real TensorFlow test workers."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKERS = ROOT / "tests" / "workers"
PY = sys.executable
OUTPUT = ROOT / "test-output"


def tf_available() -> bool:
    try:
        import importlib.util
        return importlib.util.find_spec("tensorflow") is not None and importlib.util.find_spec("tf_keras") is not None
    except Exception:
        return False


requires_tf = pytest.mark.skipif(not tf_available(), reason="tensorflow-cpu and tf-keras are not installed")


@dataclass
class RunResult:
    rc: int
    diag: dict | None
    bundle: Path
    stdout: str
    stderr: str
    wall_s: float

    @property
    def root(self) -> dict:
        assert self.diag is not None, self.stderr[-2000:]
        return self.diag["root_cause"] or {}


def dd_run(name: str, dd_args: list[str], cmd: list[str], *, env: dict | None = None, timeout: float = 240) -> RunResult:
    bundle = OUTPUT / "runs" / name
    if bundle.exists():
        import shutil
        shutil.rmtree(bundle)
    full_env = dict(os.environ)
    full_env.update(env or {})
    argv = [PY, "-m", "distdoctor", "run", "--json", "--out", str(bundle), *dd_args, "--", *cmd]
    t0 = time.time()
    proc = subprocess.run(argv, capture_output=True, text=True, env=full_env, timeout=timeout)
    wall = time.time() - t0
    diag = None
    try:
        diag = json.loads(proc.stdout)
    except ValueError:
        pass
    return RunResult(proc.returncode, diag, bundle, proc.stdout, proc.stderr, wall)


def trainer(*args: str) -> list[str]:
    return [PY, str(WORKERS / "trainer.py"), *args]


CGROOT = Path("/sys/fs/cgroup/memory")


@pytest.fixture
def memory_cgroup():
    """A fresh cgroup v1 memory group limited to 900 MB, removed afterwards (root only)."""
    if os.geteuid() != 0 or not (CGROOT / "cgroup.procs").exists():
        pytest.skip("needs root and a cgroup v1 memory controller at /sys/fs/cgroup/memory")
    path = CGROOT / f"distdoctor-test-{uuid.uuid4().hex[:8]}"
    path.mkdir()
    (path / "memory.limit_in_bytes").write_text(str(900 * 1024 * 1024))
    try:
        yield path
    finally:
        for _ in range(50):
            try:
                path.rmdir()
                break
            except OSError:
                time.sleep(0.2)
