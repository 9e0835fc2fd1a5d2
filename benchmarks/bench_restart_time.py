"""How long a restart costs: from the failure to the first step of the next attempt.

    flock /tmp/dd-tf.lock .venv/bin/python benchmarks/bench_restart_time.py [--repeats 3] [--delays 0.5,5]

A real MultiWorkerMirroredStrategy job (tests/workers/trainer.py, Keras fit with
BackupAndRestore) whose worker:1 is SIGKILLed once, in epoch 2, under
``distdoctor run --restarts 1 --restart-delay D``. From the attempt ledger in
diagnosis.json, per run: the time from the kill to the first step of attempt 2,
beside what it is made of: the verdict and the stop of the survivors
(``disruption``), the backoff, and attempt 2's own start-up (process start to
first step); and the job's start-up on attempt 1 for comparison.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def one(delay: float, grace: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="dd-bench-restart-") as tmp:
        out = Path(tmp) / "bundle"
        argv = [PY, "-m", "distdoctor", "run", "--json", "--no-report", "--out", str(out), "--restarts", "1",
                "--restart-delay", str(delay), "--restart-delay-max", str(max(delay, 1)), "--failure-grace", str(grace),
                "--", PY, str(ROOT / "tests" / "workers" / "trainer.py"), "--fault", "sigkill", "--fault-epoch", "2",
                "--fault-step", "8", "--epochs", "3", "--steps", "20", "--backup", str(Path(tmp) / "backup"),
                "--fault-once", str(Path(tmp) / "fired")]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=ROOT)
        d = json.loads(p.stdout)
        a, g = d["attempts"], d["goodput"]["attempts"]
        if len(a) != 2 or d["status"] != "succeeded":
            raise SystemExit(f"unexpected run: {d['status']} with {len(a)} attempts")
        return {"to_next_step": g[0]["failure_to_next_step_s"], "disruption": g[0]["disruption_s"],
                "backoff": a[0]["backoff_s"], "restart_startup": g[1]["program_startup_s"],
                "first_startup": g[0]["program_startup_s"], "resumed_epoch": a[1]["resumed_from"]["epoch"],
                "ratio": d["goodput"]["ratio"]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--delays", default="0.5,5")
    ap.add_argument("--failure-grace", type=float, default=10.0)
    args = ap.parse_args()
    print("| --restart-delay | runs | failure -> next first step | disruption (verdict + stop) | backoff | "
          "restart start-up | job start-up (attempt 1) | resumed at epoch | goodput |")
    print("|---|---|---|---|---|---|---|---|---|")
    for delay in [float(x) for x in args.delays.split(",")]:
        rows = [one(delay, args.failure_grace) for _ in range(args.repeats)]

        def med(k):
            return statistics.median(r[k] for r in rows)
        print(f"| {delay:g} s | {len(rows)} | {med('to_next_step'):.1f} s | {med('disruption'):.1f} s | "
              f"{med('backoff'):.1f} s | {med('restart_startup'):.1f} s | {med('first_startup'):.1f} s | "
              f"{sorted({r['resumed_epoch'] + 1 for r in rows})} | {med('ratio'):.0%} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
