"""Benchmark of ``distdoctor check --mesh`` (not a test): how long the mesh takes as it grows.

    .venv/bin/python benchmarks/bench_mesh.py [--sizes 8,16,32,64] [--repeats 3]

For each size N, N real ``distdoctor check --mesh --json`` processes start on
loopback ports (all at once, as a scheduler would start them) and we read
each one's own timestamps from its JSON:

* **start-up**: process spawn -> its mesh check begins (Python, imports, the
  fingerprint and host checks). On a 2-core machine 64 interpreters starting
  together is the dominant cost and not the protocol's, so it is reported
  apart: median per task, and the spread from first to last start.
* **protocol**: the moment the *last* task's mesh check began -> the moment
  the last task had its verdict (every task holds every report by then); its
  phases (last task's probes settled, last task holding every report); and
  -> the last port released.

Median of ``--repeats`` runs per size. Then ``check`` start-up alone: wall
time of ``check --static`` and of ``check`` (host + environment, no mesh).
Prints Markdown.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "SLURM_", "DISTDOCTOR_"))}
    e["DISTDOCTOR_TOKEN"] = "bench"
    return e


def mesh_run(n: int, timeout: float) -> dict[str, float]:
    cluster = {"worker": [f"127.0.0.1:{p}" for p in free_ports(n)]}
    procs = []
    spawn = {}
    base = env()
    for i in range(n):
        cfg = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}})
        spawn[i] = time.time()
        procs.append(subprocess.Popen([PY, "-m", "distdoctor", "check", "--mesh", "--json", "--timeout", str(timeout),
                                       "--tf-config", cfg, "--argv", json.dumps([PY, "train.py"])],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=base))
    docs = []
    for i, p in enumerate(procs):
        out, err = p.communicate(timeout=timeout + 120)
        try:
            docs.append(json.loads(out)["mesh"])
        except (ValueError, KeyError, TypeError):
            raise SystemExit(f"task {i} gave no mesh result (rc {p.returncode}): {err[-500:]}")
    bad = [d["task"] for d in docs if not d["complete"] or any(x["outcome"] != "ok" for x in d["pairs"])]
    if bad:
        raise SystemExit(f"mesh of {n} not clean on {bad[:5]}")
    starts = [d["started_at"] for d in docs]
    last = max(starts)
    return {
        "startup_median": statistics.median(d["started_at"] - spawn[i] for i, d in enumerate(docs)),
        "start_spread": max(starts) - min(starts),
        "probed": max(d["probed_at"] for d in docs) - last,
        "exchanged": max(d["exchanged_at"] for d in docs) - last,
        "protocol": max(d["verdict_at"] for d in docs) - last,
        "released": max(d["released_at"] for d in docs) - max(starts),
        "pairs": sum(len(d["pairs"]) for d in docs[:1]) * n,
    }


def wall(args: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([PY, "-m", "distdoctor", "check", *args], capture_output=True, cwd=ROOT, env=env(), check=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="8,16,32,64")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=90.0)
    a = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; median of {a.repeats} runs\n")
    print("| tasks | directed pairs | **last start -> last verdict (s)** | of which: all probes settled "
          "| all reports in | -> last port released (s) | start-up per task, median (s) | first -> last start (s) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in [int(x) for x in a.sizes.split(",")]:
        runs = [mesh_run(n, a.timeout) for _ in range(a.repeats)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"| {n} | {n * (n - 1)} | **{med['protocol']:.2f}** | {med['probed']:.2f} | {med['exchanged']:.2f} "
              f"| {med['released']:.2f} | {med['startup_median']:.2f} | {med['start_spread']:.2f} |", flush=True)
    port = free_ports(1)[0]
    cfg = json.dumps({"cluster": {"worker": [f"127.0.0.1:{port}", "127.0.0.1:1"]}, "task": {"type": "worker", "index": 0}})
    print("\n| command | wall time, median of 5 (s) |\n|---|---:|")
    print(f"| `check --static` | {wall(['--static', '--tf-config', cfg], 5):.2f} |")
    print(f"| `check` (host + environment, no mesh) | {wall(['--tf-config', cfg], 5):.2f} |")
    t0 = time.perf_counter()
    subprocess.run([PY, "-c", "pass"], check=True)
    print(f"| `python -c pass` (interpreter alone) | {time.perf_counter() - t0:.2f} |")


if __name__ == "__main__":
    main()
