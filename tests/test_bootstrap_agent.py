"""The bootstrap agent alone (no TensorFlow): a fake ``tensorflow.python.eager.context`` module."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile

from distdoctor.supervise.supervisor import BOOTSTRAP_DIR

# The module appears in sys.modules before its Context class exists, as during a real import.
SCRIPT = """
import sys, time, types
mod = types.ModuleType("tensorflow.python.eager.context")
sys.modules["tensorflow.python.eager.context"] = mod
time.sleep(0.4)                      # the agent samples (and tries to hook) meanwhile
class Context:
    def call_function(self, name, *args):
        return name
mod.Context = Context
time.sleep(0.4)
for _ in range(3):
    Context().call_function(b"__inference_train_function_1")
time.sleep(0.4)
"""


def test_agent_hooks_tensorflow_once_its_context_class_exists():
    d = tempfile.mkdtemp(prefix="dd-agent-test-")
    path = os.path.join(d, "agent.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(0.2)
    try:
        env = dict(os.environ, PYTHONPATH=BOOTSTRAP_DIR, DISTDOCTOR_SOCK=path, DISTDOCTOR_TASK="worker:0",
                   DISTDOCTOR_SAMPLE_S="0.05")
        proc = subprocess.Popen([sys.executable, "-c", SCRIPT], env=env)
        samples = []
        while proc.poll() is None or samples == []:
            try:
                samples.append(json.loads(sock.recv(65536)))
            except socket.timeout:
                if proc.poll() is not None:
                    break
        proc.wait(10)
    finally:
        sock.close()
        os.unlink(path)
        os.rmdir(d)
    assert samples, "the agent sent nothing"
    assert max(s["calls"] for s in samples) == 3, [s["calls"] for s in samples]


CKPT_SCRIPT = """
import time
from tf_keras.src.callbacks import BackupAndRestore
BackupAndRestore("/tmp/dd-backup-here")
time.sleep(0.4)
"""


def test_agent_reports_where_the_job_checkpoints(tmp_path):
    """A fake tf_keras whose BackupAndRestore is wrapped as its module is imported."""
    pkg = tmp_path / "tf_keras" / "src"
    pkg.mkdir(parents=True)
    (tmp_path / "tf_keras" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "callbacks.py").write_text("class BackupAndRestore:\n    def __init__(self, backup_dir):\n"
                                      "        self.backup_dir = backup_dir\n")
    path = str(tmp_path / "agent.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(0.2)
    try:
        env = dict(os.environ, PYTHONPATH=BOOTSTRAP_DIR + os.pathsep + str(tmp_path), DISTDOCTOR_SOCK=path,
                   DISTDOCTOR_TASK="worker:0", DISTDOCTOR_SAMPLE_S="0.05")
        proc = subprocess.Popen([sys.executable, "-c", CKPT_SCRIPT], env=env)
        samples = []
        while proc.poll() is None:
            try:
                samples.append(json.loads(sock.recv(65536)))
            except socket.timeout:
                pass
        proc.wait(10)
    finally:
        sock.close()
    assert ["BackupAndRestore", "/tmp/dd-backup-here"] in samples[-1]["checkpoints"], samples[-1:]
