"""``distdoctor run --node``: one supervisor per task, on real "hosts" (network namespaces).

Each host of the lab runs ``ip netns exec HOST distdoctor run --node -- python
trainer.py`` with a TF_CONFIG of the lab's addresses, as a scheduler would start
one pod per task. Real MultiWorkerMirroredStrategy training, real faults: a
worker kills itself with SIGKILL; a host is cut off the network by an iptables
rule inside its namespace. The verdict is read from the collector's bundle
(worker:0, as the cluster has no chief) and from every node's copy.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from conftest import OUTPUT, PY, ROOT, WORKERS, requires_tf
from mesh_helpers import clean_env, tf_config
from netns_lab import PORT, Lab, lab, sh  # noqa: F401 (lab is a fixture)

pytestmark = [pytest.mark.netns, requires_tf]
TOKEN = "node-test-token-7d1e-4b2a9c8e0f6d1a3b5c7e9f0a"


class Node:
    def __init__(self, lab: Lab, i: int, name: str, trainer_args: list[str], dd_args: list[str] = (),
                 token: str = TOKEN, script: str = "trainer.py") -> None:
        self.task = f"worker:{i}"
        self.out = OUTPUT / "node" / name / f"worker-{i}"
        if self.out.exists():
            import shutil
            shutil.rmtree(self.out)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        cluster = {"worker": [f"{a}:{PORT}" for a in lab.addresses]}
        env = clean_env(TF_CONFIG=tf_config(cluster, self.task), DISTDOCTOR_TOKEN=token, TF_USE_LEGACY_KERAS="1")
        cmd = ["ip", "netns", "exec", lab.hosts[i], PY, "-m", "distdoctor", "run", "--node", "--json",
               "--out", str(self.out), "--mesh-timeout", "30", "--failure-grace", "5", "--grace", "5", *dd_args,
               "--", PY, str(WORKERS / script), *trainer_args]
        self.stdout_path = self.out.parent / f"worker-{i}.stdout"
        self.stderr_path = self.out.parent / f"worker-{i}.stderr"
        self.proc = subprocess.Popen(cmd, stdout=open(self.stdout_path, "w"), stderr=open(self.stderr_path, "w"),
                                     cwd=ROOT, env=env, start_new_session=True)

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")[-3000:]

    def diagnosis(self, name: str = "diagnosis.json") -> dict:
        return json.loads((self.out / name).read_text())


def run_nodes(lab: Lab, name: str, trainer_args: list[str], dd_args: list[str] = (),
              script: str = "trainer.py") -> tuple[list[Node], list[int]]:
    """One ``run --node`` per host, each to its end; (nodes, exit statuses). Nothing is left running."""
    nodes = [Node(lab, i, name, trainer_args, dd_args, script=script) for i in range(len(lab.hosts))]
    try:
        return nodes, [n.wait(200) for n in nodes]
    finally:
        for n in nodes:
            n.kill()


def _wait_for(pred, timeout: float, what: str) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.parametrize("lab", [2], indirect=True)
def test_killed_worker_is_diagnosed_at_the_collector(lab):
    args = ["--steps", "30", "--epochs", "3", "--fault", "sigkill", "--fault-task", "worker:1", "--fault-step", "12"]
    (collector, member), rcs = run_nodes(lab, "sigkill", args)
    # the node exit status is the task's own: the scheduler sees what it would see without distdoctor
    assert rcs[1] == 128 + signal.SIGKILL, member.stderr
    assert rcs[0] != 0, collector.stderr
    diag = collector.diagnosis()
    rc = diag["root_cause"]
    assert diag["status"] == "failed" and rc["culprit"] == "worker:1", json.dumps(rc, indent=1)
    assert rc["category"] == "peer_crashed" and rc["code"] == "DD101"
    assert set(diag["tasks"]) == {"worker:0", "worker:1"}
    assert diag["tasks"]["worker:1"]["signal"] == "SIGKILL"
    # worker:0's symptoms are attached as consequences, worker:1's own lines were mirrored to the collector
    assert any("(consequence)" in e for e in rc["evidence"] if e.startswith("[worker:0")), rc["evidence"]
    mirrored = (collector.out / "logs" / "worker-1.log").read_text()
    assert "FAULT sigkill injected by worker:1" in mirrored
    # the preflight ran first and the collector advertised its side link in it
    check = json.loads((collector.out / "check.json").read_text())
    assert check["mesh"]["complete"] and check["status"] == "ok"
    # the member holds the cluster verdict (and its own, one-task view beside it)
    assert member.diagnosis()["root_cause"]["culprit"] == "worker:1"
    assert (member.out / "node-diagnosis.json").exists()
    assert (collector.out / "report.html").exists()


@pytest.mark.parametrize("lab", [2], indirect=True)
def test_exception_on_another_host_whose_task_cannot_exit_ends_the_job(lab):
    """worker:1 raises on its own host and its process cannot exit (a non-daemon thread never ends, as TensorFlow's
    teardown waiting for its peer does): its node's supervisor fails it a failure grace later, the collector names
    the exception from the mirrored lines, and both nodes end."""
    args = ["--steps", "30", "--epochs", "3", "--fault", "exception_stuck_exit", "--fault-task", "worker:1",
            "--fault-step", "12"]
    t0 = time.time()
    (collector, member), rcs = run_nodes(lab, "stuck-exit", args)
    wall = time.time() - t0
    diag = collector.diagnosis()
    rc = diag["root_cause"]
    assert (diag["status"], rc["category"], rc["culprit"]) == ("failed", "user_code_error", "worker:1"), \
        json.dumps(rc, indent=1)[:3000]
    assert any("ValueError: bad record in shard of worker:1" in e for e in rc["evidence"]), rc["evidence"]
    assert rcs[0] != 0 and rcs[1] != 0, (rcs, collector.stderr, member.stderr)
    assert diag["tasks"]["worker:1"]["uncaught_at"] is not None    # the agent's word reached the collector
    assert member.diagnosis()["root_cause"]["culprit"] == "worker:1"
    evs = [json.loads(x) for x in (member.out / "events.jsonl").read_text().splitlines() if x.strip()]
    assert any(e["kind"] == "fault" and "raised ValueError and has not exited" in e["text"] for e in evs), \
        [e for e in evs if e["kind"] == "fault"]
    assert wall < 120, wall     # not the 200 s the test waits for a node


@pytest.mark.parametrize("lab", [2], indirect=True)
def test_host_cut_off_the_network_is_a_lost_supervisor(lab):
    args = ["--steps", "400", "--epochs", "3"]
    nodes = [Node(lab, i, "cut", args, ["--peer-timeout", "5"]) for i in range(2)]
    collector, member = nodes
    try:
        def member_trains() -> bool:
            try:
                rows = (collector.out / "samples.jsonl").read_text().splitlines()
            except OSError:
                return False
            return any(json.loads(r)["task"] == "worker:1" and (json.loads(r)["calls"] or 0) >= 5 for r in rows)
            # calls: TF function calls counted by the task's agent on its own host, mirrored to the collector

        _wait_for(member_trains, 150, "worker:1 training, as seen by the collector")
        cut_at = time.time()
        for chain in ("INPUT", "OUTPUT"):
            sh("ip", "netns", "exec", lab.hosts[1], "iptables", "-A", chain, "!", "-o" if chain == "OUTPUT" else "-i",
               "lo", "-j", "DROP")
        rc0 = collector.wait(90)
        # a cut-off node keeps supervising alone; the scheduler ends it (SIGTERM is forwarded to its task)
        member.proc.send_signal(signal.SIGTERM)
        member.wait(60)
    finally:
        for n in nodes:
            n.kill()
    assert rc0 != 0, collector.stderr
    diag = collector.diagnosis()
    rc = diag["root_cause"]
    assert rc["code"] == "DD112" and rc["culprit"] == "worker:1", json.dumps(diag["findings"], indent=1)
    assert rc["category"] == "peer_unresponsive"
    assert rc["at"] is not None and cut_at - 3 <= rc["at"] <= cut_at + 3, (rc["at"], cut_at)
    assert "heartbeat" in rc["summary"] or "heartbeat" in " ".join(rc["evidence"])


@pytest.mark.parametrize("lab", [2], indirect=True)
def test_stalled_worker_on_another_host_is_a_hang_with_its_stack(lab):
    """Worker 1 deadlocks in a callback on its own host: the collector declares the hang from the
    mirrored samples, gets worker 1's stack from its node, and both tasks are stopped."""
    args = ["--steps", "30", "--epochs", "3", "--fault", "stall", "--fault-task", "worker:1", "--fault-step", "8"]
    (collector, member), rcs = run_nodes(lab, "stall", args, ["--hang-timeout", "8"])
    diag = collector.diagnosis()
    rc = diag["root_cause"]
    assert diag["status"] == "hung", json.dumps(diag["findings"], indent=1)[:3000]
    assert rc["category"] == "hang_stalled_worker" and rc["culprit"] == "worker:1", rc
    stack = diag["tasks"]["worker:1"]["stack"]
    assert "inject" in stack and "trainer.py" in stack, stack[:2000]
    # both tasks were stopped by their own supervisors (SIGTERM, then SIGKILL after --grace: a task
    # blocked in a collective may not get to act on SIGTERM); the scheduler sees that status
    assert set(rcs) <= {128 + signal.SIGTERM, 128 + signal.SIGKILL}, (rcs, collector.stderr, member.stderr)
    assert member.diagnosis()["status"] == "hung"


@pytest.mark.parametrize("lab", [2], indirect=True)
def test_chief_only_evaluation_on_its_own_host_is_a_pause_not_a_hang(lab):
    """worker:0 evaluates in Python for 22 s on its host while worker:1 waits in the all-reduce on another:
    the collector suspects a pause, never declares a hang, and the job succeeds on both nodes."""
    (collector, member), rcs = run_nodes(lab, "pause", ["--scenario", "eval_python", "--pause", "22"],
                                         script="healthy.py")
    assert rcs == [0, 0], (rcs, collector.stderr, member.stderr)
    diag = collector.diagnosis()
    assert diag["status"] == "succeeded", json.dumps(diag["findings"], indent=1)[:3000]
    f = [f for f in diag["findings"] if f["code"] == "DD211"]
    assert f and f[0]["culprit"] == "worker:0" and "computing" in f[0]["summary"], diag["findings"]
    evs = [json.loads(x) for x in (collector.out / "events.jsonl").read_text().splitlines() if x.strip()]
    assert not [e for e in evs if e["kind"] in ("hang_declared", "signal_sent")], evs
