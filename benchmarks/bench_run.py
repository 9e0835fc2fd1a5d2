"""Benchmarks of ``distdoctor run`` (not tests): fault-to-verdict time and step-time overhead.

    .venv/bin/python benchmarks/bench_run.py [--repeats 5] [--faults sigkill,segv,...]

1. For each fault, the same job (tests/workers/trainer.py) runs twice, side by
   side: bare (TF_CONFIG written by hand, like users do) and under
   ``distdoctor run``. For the bare job we record when the healthy worker
   first says anything about the failure (an error line or a traceback) and
   whether what it says names the culprit task; for distdoctor, the verdict
   time (``detected_at``) and whether category and culprit are right.
   Times are measured from the fault line the trainer prints.
2. Overhead: examples/train_mwms.py with many steps, bare vs supervised,
   interleaved; median of the Keras per-epoch step time (epochs 2..N).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
sys.path.insert(0, str(ROOT))
from distdoctor.cluster.local import build_local_cluster  # noqa: E402

TRAINER = str(ROOT / "tests" / "workers" / "trainer.py")
EXPECT = {
    "sigkill": ("peer_crashed", "worker:1"), "segv": ("segfault_core_dump", "worker:1"),
    "abort": ("segfault_core_dump", "worker:1"), "exception": ("user_code_error", "worker:1"),
    "stall": ("hang_stalled_worker", "worker:1"), "stall_input": ("hang_stalled_worker", "worker:1"),
    "sigstop": ("peer_unresponsive", "worker:1"),
}
FAULT_RE = re.compile(r"FAULT (\w+) injected by \S+ at ([\d.]+)")
SAY_RE = re.compile(r"^(E\d{4}|F\d{4}|W\d{4} .*(abort|unhealthy|crash|Unavailable))|Traceback|Error:|heartbeat|aborted", re.I)


def bare(fault: str, limit: float) -> dict:
    cl = build_local_cluster(2)
    procs, lines = {}, {t: [] for t in cl.tasks}
    fault_at = [None]

    def read(task, p):
        for raw in p.stdout:
            now = time.time()
            lines[task].append((now, raw.rstrip()))
            m = FAULT_RE.search(raw)
            if m:
                fault_at[0] = float(m.group(2))

    for task in cl.tasks:
        env = dict(os.environ, TF_CONFIG=cl.tf_config(task))
        p = subprocess.Popen([PY, TRAINER, "--fault", fault], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
        procs[task] = p
        threading.Thread(target=read, args=(task, p), daemon=True).start()
    t_end = None
    while True:
        time.sleep(0.1)
        if fault_at[0] and time.time() - fault_at[0] > limit:
            break
        if all(p.poll() is not None for p in procs.values()):
            break
        if not fault_at[0] and time.time() - min(p_start for p_start in [time.time()]) > 300:
            break
    for p in procs.values():
        if p.poll() is None:
            os.killpg(p.pid, 9)
        p.wait()
    said = None
    names = False
    for ts, line in lines["worker:0"]:
        if fault_at[0] and ts >= fault_at[0] and SAY_RE.search(line):
            said = ts - fault_at[0]
            break
    if said is not None:
        names = any("task:1" in l for ts, l in lines["worker:0"] if ts >= fault_at[0])
    return {"said_after": said, "names_task": names, "fault_at": fault_at[0]}


def supervised(fault: str) -> dict:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "b"
        r = subprocess.run([PY, "-m", "distdoctor", "run", "--json", "--no-report", "--out", str(out), "--",
                            PY, TRAINER, "--fault", fault], capture_output=True, text=True)
        diag = json.loads(r.stdout)
        fault_at = None
        for log in (out / "logs").glob("*.log"):
            m = FAULT_RE.search(log.read_text(errors="replace"))
            if m:
                fault_at = float(m.group(2))
        rc = diag["root_cause"] or {}
        return {"verdict_after": diag["detected_at"] - fault_at if fault_at else None,
                "right": (rc.get("category"), rc.get("culprit")) == EXPECT[fault],
                "category": rc.get("category"), "culprit": rc.get("culprit")}


def _epoch_starts(lines: list[tuple[float, str]]) -> list[float]:
    return [ts for ts, l in lines if re.match(r"^Epoch \d+/\d+", l)]


class _AgentSink:
    """A datagram socket that reads and drops the bootstrap agent's samples (the agent alone, no supervisor)."""

    def __init__(self) -> None:
        import socket
        self.dir = tempfile.mkdtemp(prefix="dd-bench-")
        self.path = os.path.join(self.dir, "agent.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.2)
        self.stop = False
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while not self.stop:
            try:
                self.sock.recv(65536)
            except OSError:
                continue

    def close(self) -> None:
        self.stop = True
        self.thread.join(1)
        self.sock.close()
        os.unlink(self.path)
        os.rmdir(self.dir)


def step_times(supervise: bool, epochs: int, steps: int, agent_only: bool = False) -> list[float]:
    """Milliseconds per step of worker 0, per epoch (epoch 1, which traces the graph, left out).

    Measured from the wall-clock arrival of consecutive ``Epoch N/M`` lines, so
    both launches are timed the same way (Keras rounds its own epoch times).
    ``agent_only``: a bare launch with the bootstrap agent in each task (its samples
    read and dropped here), to tell the agent's cost from the supervisor's.
    """
    script = [PY, str(ROOT / "examples" / "train_mwms.py"), "--epochs", str(epochs), "--steps", str(steps)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if supervise:
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([PY, "-m", "distdoctor", "run", "--workers", "2", "--out", str(Path(d) / "b"),
                            "--no-report", "--no-live", "--"] + script, capture_output=True, text=True, env=env)
            from distdoctor.diagnose.logparse import split_timestamp
            lines = [split_timestamp(l.rstrip("\n")) for l in open(Path(d) / "b" / "logs" / "worker-0.log")]
    else:
        cl = build_local_cluster(2)
        sink = None
        if agent_only:
            from distdoctor.supervise.supervisor import BOOTSTRAP_DIR
            sink = _AgentSink()
            env = dict(env, PYTHONPATH=BOOTSTRAP_DIR, DISTDOCTOR_SOCK=sink.path, DISTDOCTOR_SAMPLE_S="0.5")
        procs = [subprocess.Popen(script, env=dict(env, TF_CONFIG=cl.tf_config(t), DISTDOCTOR_TASK=t),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for t in cl.tasks]
        lines = []

        def drain(p, keep):
            for raw in p.stdout:
                if keep:
                    lines.append((time.time(), raw.rstrip()))
        ts = [threading.Thread(target=drain, args=(p, i == 0)) for i, p in enumerate(procs)]
        for t in ts:
            t.start()
        for p in procs:
            p.wait()
        for t in ts:
            t.join()
        if sink is not None:
            sink.close()
    starts = _epoch_starts(lines)
    return [(b - a) * 1000 / steps for a, b in zip(starts[1:], starts[2:])]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--faults", default=",".join(EXPECT))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--limit", type=float, default=60.0, help="seconds to wait for bare TF to say something")
    ap.add_argument("--skip-faults", action="store_true")
    ap.add_argument("--skip-overhead", action="store_true")
    ap.add_argument("--agent-arm", action="store_true", help="also time a bare launch with the bootstrap agent alone")
    a = ap.parse_args()
    if not a.skip_faults:
        print("| fault | TF alone: first word after the fault | names the task? | distdoctor verdict after the fault | category/culprit right? |")
        print("|---|---|---|---|---|")
        for fault in a.faults.split(","):
            b = bare(fault, a.limit)
            s = supervised(fault)
            said = f"{b['said_after']:.1f} s" if b["said_after"] is not None else f"never (silent after {a.limit:.0f} s)"
            print(f"| {fault} | {said} | {'yes' if b['names_task'] else 'no'} | "
                  f"{s['verdict_after']:.2f} s | {'yes' if s['right'] else 'NO'} ({s['category']}, {s['culprit']}) |", flush=True)
    if not a.skip_overhead:
        bare_ms, agent_ms, dd_ms = [], [], []
        for i in range(a.repeats):  # interleaved, so drifts of the machine hit every arm alike
            bare_ms.append(statistics.median(step_times(False, 6, 300)))
            if a.agent_arm:
                agent_ms.append(statistics.median(step_times(False, 6, 300, agent_only=True)))
            dd_ms.append(statistics.median(step_times(True, 6, 300)))
        mb = statistics.median(bare_ms)
        print()
        print("| launch | median ms/step (runs) | ratio |")
        print("|---|---|---|")
        print(f"| bare (TF_CONFIG by hand) | {mb:.1f} ({', '.join(f'{x:.1f}' for x in bare_ms)}) | 1.00 |")
        for name, ms in (("bare + the bootstrap agent only", agent_ms), ("distdoctor run", dd_ms)):
            if ms:
                m = statistics.median(ms)
                print(f"| {name} | {m:.1f} ({', '.join(f'{x:.1f}' for x in ms)}) | {m / mb:.3f} |")


if __name__ == "__main__":
    main()
