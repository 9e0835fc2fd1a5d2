"""False alarms of `distdoctor run` on healthy jobs, and how fast it names real stalls — beside a baseline.

    .venv/bin/python benchmarks/bench_false_alarms.py [--reps N] [--baseline REV|none] [--pause S] [--out FILE]

One run, interleaved job by job: the healthy matrix (tests/workers/healthy.py: chief-only evaluation in
Python, a slow download, a large checkpoint to slow storage, a long trace, a dataset cache fill, every worker
sleeping, a slow input pipeline, Keras fit with validation; and the tutorial-shaped jobs of tests/workers/tutorial_*.py
with 40 s of chief-only work at an epoch's end: the custom loop with numpy or eager model calls, Keras fit with numpy) and the stall faults (tests/workers/trainer.py: a
deadlock on a lock, sleeping forever, SIGSTOP), each under this tree's `distdoctor run --workers 2` and under the
baseline revision's (a git worktree of REV, default the commit before the own-progress detector). Real
TensorFlow, real processes, nothing mocked. Reports, per side:

* declared hangs per healthy job (goal 0), healthy jobs that ended `succeeded`, and signals distdoctor sent;
* for each real stall, seconds from the fault to its first naming (a `stall_suspected` event naming the culprit,
  or the verdict) and to the verdict (goal: named within 10 s), medians over the reps.

Needs TensorFlow (scripts/setup.sh). Slow: about a minute per job.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKERS = ROOT / "tests" / "workers"
PY = sys.executable
HEALTHY = ["eval_python", "download", "save", "trace", "cache", "sleep_all", "slow_input", "fit_val"]
# healthy jobs in the shapes of TensorFlow's official tutorials (tests/workers/tutorial_*.py): the chief alone does
# 40 s of extra work at the end of epoch 1 (numpy; eager model calls) while worker:1 waits in the all-reduce
TUTORIALS = {
    "ctl_chief_numpy": ("tutorial_ctl.py", {"DD_FAULT": "extra_numpy", "DD_FAULT_TASK": "worker:0", "DD_FAULT_ARG": "40"}),
    "ctl_chief_eager": ("tutorial_ctl.py", {"DD_FAULT": "extra_eager", "DD_FAULT_TASK": "worker:0", "DD_FAULT_ARG": "40"}),
    "keras_chief_numpy": ("tutorial_keras.py", {"DD_FAULT": "extra_numpy", "DD_FAULT_TASK": "worker:0",
                                                "DD_FAULT_ARG": "40"}),
}
# name, worker script and its args, its environment, the culprit, the line the fault prints first (its time is the
# fault's); the first three by default, the tutorial-shaped ones when named (--stalls)
STALLS = [("deadlock", ["trainer.py", "--fault", "stall"], {}, "worker:1", "stuck in a callback"),
          ("sleep_forever", ["trainer.py", "--fault", "sleep"], {}, "worker:1", "sleeping forever"),
          ("sigstop", ["trainer.py", "--fault", "sigstop"], {}, "worker:1", "FAULT sigstop"),
          # Keras fit (the multi_worker_with_keras shape): worker:1 sleeps in an epoch-end callback while worker:0
          # waits in Keras' eager metrics all-reduce at the next epoch's start
          ("keras_sleep", ["tutorial_keras.py"], {"DD_FAULT": "sleep"}, "worker:1", "fault sleep")]
DEFAULT_STALLS = ["deadlock", "sleep_forever", "sigstop"]
BASELINE_REV = "7abd731"   # main before issue 17: progress was the job's steps only


def _ts(line: str) -> float:
    return dt.datetime.strptime(line.split(" ", 1)[0], "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def run_job(side: str, pythonpath: str, out: Path, cmd: list[str], env: dict, timeout: float = 420) -> dict:
    if out.exists():
        shutil.rmtree(out)
    full = dict(os.environ, **env, PYTHONPATH=pythonpath)
    argv = [PY, "-m", "distdoctor", "run", "--json", "--no-live", "--out", str(out), "--", *cmd]
    t0 = time.time()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env=full, timeout=timeout, cwd=pythonpath)
        rc = p.returncode
        diag = json.loads(p.stdout) if p.stdout.strip().startswith("{") else None
    except subprocess.TimeoutExpired:
        rc, diag = None, None
    evs = []
    try:
        evs = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines() if x.strip()]
    except OSError:
        pass
    return {"side": side, "rc": rc, "diag": diag, "events": evs, "wall": time.time() - t0, "out": out}


def healthy_row(r: dict) -> dict:
    kinds = [e["kind"] for e in r["events"]]
    status = r["diag"]["status"] if r["diag"] else "no diagnosis"
    pauses = [float(f["summary"].split("paused the job for ")[1].split()[0]) for f in (r["diag"] or {}).get("findings", ())
              if "paused the job for " in f.get("summary", "")]
    return {"declared": "hang_declared" in kinds, "succeeded": status == "succeeded" and r["rc"] == 0,
            "signals": kinds.count("signal_sent"), "status": status, "longest_pause_s": max(pauses, default=None)}


def stall_row(r: dict, culprit: str, marker: str) -> dict:
    t_fault = None
    try:
        # the log's physical lines: a Keras bar's \r redraws stay inside one (read_text would make them lines)
        for line in (r["out"] / "logs" / "worker-1.log").read_bytes().decode("utf-8", "replace").split("\n"):
            if marker in line:
                t_fault = _ts(line)
                break
    except OSError:
        pass
    named = [e["ts"] for e in r["events"] if e["kind"] in ("stall_suspected", "hang_declared") and e["task"] == culprit]
    d = r["diag"] or {}
    root = d.get("root_cause") or {}
    verdict_at = d.get("detected_at")
    if root.get("culprit") == culprit and verdict_at is not None:
        named.append(verdict_at)
    ok = root.get("culprit") == culprit
    return {"right": ok, "status": d.get("status"), "category": root.get("category"),
            "named_s": (min(named) - t_fault) if named and t_fault else None,
            "verdict_s": (verdict_at - t_fault) if verdict_at and t_fault and ok else None}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--baseline", default=BASELINE_REV, help="git revision to compare with, or 'none'")
    ap.add_argument("--pause", default="22")
    ap.add_argument("--only", nargs="*", default=None, help="healthy scenarios to run (default: all; none: only stalls)")
    ap.add_argument("--no-stalls", action="store_true", help="run the healthy matrix only")
    ap.add_argument("--stalls", nargs="*", default=DEFAULT_STALLS, choices=[n for n, *_ in STALLS],
                    help="stall scenarios to run (default: %(default)s)")
    ap.add_argument("--job-timeout", type=float, default=420,
                    help="seconds a job may run (a detector that never declares a stall runs into it: 'not named')")
    ap.add_argument("--out", default=None, help="also write the markdown table to this file")
    a = ap.parse_args()
    stall_set = [] if a.no_stalls else [x for x in STALLS if x[0] in a.stalls]
    scenarios = HEALTHY + list(TUTORIALS) if a.only is None else a.only
    work = Path(tempfile.mkdtemp(prefix="dd-falsealarms-"))
    sides = [("this tree", str(ROOT))]
    if a.baseline != "none":
        base = work / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), a.baseline],
                       check=True, capture_output=True)
        sides.append((f"baseline {a.baseline}", str(base)))
    server = subprocess.Popen([PY, str(WORKERS / "slow_server.py")], stdout=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{int(server.stdout.readline())}/"
    healthy: dict[str, list] = {s: [] for s, _ in sides}
    stalls: dict[str, dict[str, list]] = {s: {n: [] for n, *_ in stall_set} for s, _ in sides}
    try:
        for rep in range(a.reps):
            for sc in scenarios:
                for side, path in sides:
                    if sc in TUTORIALS:
                        script, env = TUTORIALS[sc]
                        cmd = [PY, str(WORKERS / script)]
                    else:
                        cmd, env = [PY, str(WORKERS / "healthy.py"), "--scenario", sc, "--pause", a.pause], {}
                    r = run_job(side, path, work / "runs" / f"{side[:4]}-{sc}-{rep}", cmd, {"DD_SLOW_URL": url, **env})
                    row = healthy_row(r) | {"scenario": sc}
                    healthy[side].append(row)
                    print(f"[{side}] healthy {sc}: {row}", flush=True)
            for name, (script, *args), env, culprit, marker in stall_set:
                for side, path in sides:
                    r = run_job(side, path, work / "runs" / f"{side[:4]}-{name}-{rep}",
                                [PY, str(WORKERS / script), *args], env, timeout=a.job_timeout)
                    row = stall_row(r, culprit, marker)
                    stalls[side][name].append(row)
                    print(f"[{side}] stall {name}: {row}", flush=True)
    finally:
        server.kill()
        server.wait()
        if a.baseline != "none":
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(work / "baseline")],
                           capture_output=True)
    lines = [f"`benchmarks/bench_false_alarms.py --reps {a.reps}` ({time.strftime('%Y-%m-%d')}, "
             f"{os.cpu_count()} cores; pause {a.pause} s, every default stall threshold is 10-20 s)", "",
             "| detector | healthy jobs | declared hangs per healthy job | ended succeeded | signals sent |",
             "|---|---|---|---|---|"]
    for side, _ in sides:
        rows = healthy[side]
        n = len(rows)
        if not n:
            continue
        lines.append(f"| {side} | {n} | {sum(r['declared'] for r in rows)}/{n} = "
                     f"{sum(r['declared'] for r in rows) / max(1, n):.2f} | {sum(r['succeeded'] for r in rows)}/{n} | "
                     f"{sum(r['signals'] for r in rows)} |")
    lines += ["", "| detector | stall | right culprit | named after (median s) | verdict after (median s) |",
              "|---|---|---|---|---|"]
    for side, _ in sides:
        for name, *_ in stall_set:
            rows = stalls[side][name]
            med = lambda k: (f"{statistics.median(v):.1f}" if (v := [r[k] for r in rows if r[k] is not None]) else "—")
            lines.append(f"| {side} | {name} | {sum(r['right'] for r in rows)}/{len(rows)} | {med('named_s')} | "
                         f"{med('verdict_s')} |")
    lines += ["", "Per healthy scenario (declared hangs, this tree / baseline):"]
    for sc in scenarios:
        cells = []
        for side, _ in sides:
            rows = [r for r in healthy[side] if r["scenario"] == sc]
            told = [r["longest_pause_s"] for r in rows]
            cells.append(f"{sum(r['declared'] for r in rows)}/{len(rows)} ({', '.join(sorted({r['status'] for r in rows}))}; "
                         f"longest pause reported: {', '.join('none' if t is None else f'{t:.1f} s' for t in told)})")
        lines.append(f"- {sc}: " + " / ".join(cells))
    text = "\n".join(lines)
    print("\n" + text)
    if a.out:
        Path(a.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
