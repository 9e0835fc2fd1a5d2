"""The bootstrap agent alone (no TensorFlow): a fake ``tensorflow.python.eager.context`` module."""
from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile

from distdoctor.supervise.supervisor import BOOTSTRAP_DIR


@contextlib.contextmanager
def agent_socket():
    """A Unix datagram socket the agent can send to: (socket, path); removed afterwards."""
    d = tempfile.mkdtemp(prefix="dd-agent-test-")
    path = os.path.join(d, "agent.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(0.2)
    try:
        yield sock, path
    finally:
        sock.close()
        os.unlink(path)
        os.rmdir(d)

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
    with agent_socket() as (sock, path):
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
    with agent_socket() as (sock, path):
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
    assert ["BackupAndRestore", "/tmp/dd-backup-here"] in samples[-1]["checkpoints"], samples[-1:]


FINAL_SCRIPT = """
import sys, types
mod = types.ModuleType("tensorflow.python.eager.context")
class Context:
    def call_function(self, name, *args):
        return name
mod.Context = Context
sys.modules["tensorflow.python.eager.context"] = mod
import time
time.sleep(0.3)                      # the agent's first sample hooks Context
for _ in range(5):
    Context().call_function(b"__inference_train_step_462")
for _ in range(2):                   # a retrace (an empty last batch): another concrete function, the same step
    Context().call_function(b"__inference_train_step_981")
Context().call_function(b"__inference_reduce_7")
"""


def test_agent_sends_its_final_counts_when_the_training_code_ends():
    """The periodic sample is up to a period old at exit (at a few ms per step: dozens of steps, the 238 against
    256 report); the sample sent as the main code ends carries the exact counts, per step function."""
    with agent_socket() as (sock, path):
        env = dict(os.environ, PYTHONPATH=BOOTSTRAP_DIR, DISTDOCTOR_SOCK=path, DISTDOCTOR_TASK="worker:1",
                   DISTDOCTOR_SAMPLE_S="0.2")
        proc = subprocess.Popen([sys.executable, "-c", FINAL_SCRIPT], env=env)
        proc.wait(20)
        samples = []
        while True:
            try:
                samples.append(json.loads(sock.recv(65536)))
            except socket.timeout:
                break
    final = [s for s in samples if s.get("final")]
    assert final, [(s["calls"], s.get("final")) for s in samples]
    last = final[-1]
    assert last["calls"] == 8
    assert dict(map(tuple, last["fn_calls"]))["__inference_train_step"] == 7
    from distdoctor.supervise.channel import AgentSample
    s = AgentSample.from_json(last)
    assert (s.step_fn, s.step_calls, s.final) == ("__inference_train_step", 7, True)
    assert not any(x.get("final") for x in samples[:-len(final)])


def _samples_of(code: str) -> list[dict]:
    with agent_socket() as (sock, path):
        env = dict(os.environ, PYTHONPATH=BOOTSTRAP_DIR, DISTDOCTOR_SOCK=path, DISTDOCTOR_TASK="worker:1",
                   DISTDOCTOR_SAMPLE_S="0.2")
        subprocess.run([sys.executable, "-c", code], env=env, timeout=20, capture_output=True)
        samples = []
        while True:
            try:
                samples.append(json.loads(sock.recv(65536)))
            except socket.timeout:
                return samples


def test_agent_says_when_the_code_ended_raising_and_only_the_exception_type_leaves_the_process():
    from distdoctor.supervise.channel import AgentSample
    t0 = __import__("time").time()
    raised = _samples_of("import time; time.sleep(0.3); raise ValueError('secret=hunter2 in a record')")
    told = [AgentSample.from_json(s).uncaught for s in raised if s.get("uncaught")]
    assert told and told[0][0] == "ValueError" and t0 < told[0][1] < t0 + 15
    assert not any("hunter2" in json.dumps(s) for s in raised)
    # a job that replaced sys.excepthook is still seen (the last exception, at the end of its code)
    hooked = _samples_of("import sys, time; sys.excepthook = lambda *a: None; time.sleep(0.3); raise KeyError('k')")
    assert [s["uncaught"][0] for s in hooked if s.get("uncaught")][:1] == ["KeyError"]
    # sys.exit and a clean end are not uncaught exceptions
    for code in ("import sys, time; time.sleep(0.3); sys.exit(3)", "import time; time.sleep(0.3)"):
        assert not [s for s in _samples_of(code) if s.get("uncaught")]
    assert AgentSample.from_json({"task": "w", "pid": 1, "ts": 1.0, "uncaught": "junk"}).uncaught is None
