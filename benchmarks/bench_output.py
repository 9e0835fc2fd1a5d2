"""Output throughput of ``distdoctor run``: this tree against a baseline tree, side by side in one run.

For each tree, ``--reps`` times: two tasks printing ``--lines`` plain lines each as fast as they can, and one
tqdm-like task redrawing one line with ``\\r`` (many MB without a newline). Reported (medians): the printer's own
time under ``run`` against its bare time, lines/s through the supervisor (all lines over the run's wall time,
``--no-report``), the lines kept in the logs, the supervisor's peak RSS on the ``\\r`` printer and whether its log
kept the bar's last state.

    python benchmarks/bench_output.py --base /work/wt-output-base --reps 3 --md benchmarks/RESULTS-output.md
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PRINTER = ("import sys, time\nt0 = time.perf_counter()\nw = sys.stdout.write\n"
           "for i in range(int(sys.argv[1])):\n    w(f'plain line {i} of the printer: some payload text here\\n')\n"
           "sys.stdout.flush()\nsys.stderr.write(f'ELAPSED {time.perf_counter() - t0:.4f}\\n')\n")
PROGRESS = ("import sys\nn = int(sys.argv[1])\nfor i in range(n + 1):\n"
            "    sys.stdout.write(f'\\rtraining: {i}/{n} |' + '#' * (i * 40 // n) + '|')\nsys.stdout.write('\\n')\n")


def _elapsed(text: str) -> float:
    return max(float(ln.split()[-1]) for ln in text.splitlines() if "ELAPSED" in ln)


def bare(lines: int) -> float:
    r = subprocess.run([sys.executable, "-c", PRINTER, str(lines)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, check=True)
    return _elapsed(r.stderr)


def bare_job(lines: int, tmp: str) -> float:
    """The same two tasks without distdoctor, as a user runs them: at once, each writing its log file."""
    procs = []
    for i in range(2):
        with open(os.path.join(tmp, f"bare-{i}.log"), "wb") as fh:
            procs.append(subprocess.Popen([sys.executable, "-c", PRINTER, str(lines)], stdout=fh,
                                          stderr=subprocess.PIPE, text=True))
    return max(_elapsed(p.communicate()[1]) for p in procs)


def under_run(tree: str, code: str, arg: str, workers: int, out: str) -> tuple[float, str, int]:
    env = {**os.environ, "PYTHONPATH": tree}
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "distdoctor", "run", "--workers", str(workers), "--no-report",
                          "--out", out, "--", sys.executable, "-c", code, arg],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    peak = 0
    stdout_parts = []
    import threading
    t = threading.Thread(target=lambda: stdout_parts.append(p.stdout.read()), daemon=True)
    t.start()
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as fh:
                peak = max(peak, next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM:")))
        except (OSError, StopIteration):
            pass
        time.sleep(0.02)
    t.join()
    return time.perf_counter() - t0, "".join(stdout_parts), peak


def one_rep(tree: str, lines: int, bar: int, rows: dict) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows["bare"].append(bare(lines))
        rows["bare_job"].append(bare_job(lines, tmp))
        wall, out, _ = under_run(tree, PRINTER, str(lines), 2, os.path.join(tmp, "a"))
        rows["task"].append(_elapsed(out))
        rows["lps"].append(2 * lines / wall)
        kept = 0
        for i in range(2):
            with open(os.path.join(tmp, "a", "logs", f"worker-{i}.log"), "rb") as fh:
                kept += sum(1 for ln in fh if b"plain line" in ln)
        rows["kept"].append(kept)
        wall, _, peak = under_run(tree, PROGRESS, str(bar), 1, os.path.join(tmp, "b"))
        rows["bar_s"].append(wall)
        rows["bar_rss"].append(peak / 1024)
        with open(os.path.join(tmp, "b", "logs", "worker-0.log"), "rb") as fh:
            rows["bar_last"].append(f"{bar}/{bar} |".encode() in fh.read())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the baseline tree (a worktree of main)")
    ap.add_argument("--tree", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--bar", type=int, default=400_000, help="drawings of the \\r bar (~75 bytes each)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--md", help="write the table here")
    a = ap.parse_args()
    trees = (("baseline", a.base), ("this tree", a.tree))
    res = {name: {k: [] for k in ("bare", "bare_job", "task", "lps", "kept", "bar_rss", "bar_last", "bar_s")}
           for name, _ in trees}
    for _ in range(a.reps):     # the trees in turn, rep by rep: the machine's noise falls on both
        for name, tree in trees:
            one_rep(tree, a.lines, a.bar, res[name])
    med = statistics.median
    out = [f"`{' '.join(sys.argv)}` ({a.reps} reps, medians; {os.cpu_count()} CPUs, shared)", "",
           "| tree | printer alone to /dev/null s | the two printers to their log files s | printer under run s | "
           "ratio to the two to files | ratio to /dev/null | lines/s through run | lines kept | "
           "\\r bar: run wall s | supervisor peak RSS MB | bar's last state in log |", "|" + "---|" * 11]
    for name, r in res.items():
        out.append(f"| {name} | {med(r['bare']):.2f} | {med(r['bare_job']):.2f} | {med(r['task']):.2f} | "
                   f"{med(r['task']) / med(r['bare_job']):.1f}x | {med(r['task']) / med(r['bare']):.1f}x | "
                   f"{med(r['lps']):,.0f} | {min(r['kept']):,} of {2 * a.lines:,} | {med(r['bar_s']):.1f} | "
                   f"{med(r['bar_rss']):.0f} | {all(r['bar_last'])} |")
    text = "\n".join(out) + "\n"
    print(text)
    if a.md:
        with open(a.md, "w") as fh:
            fh.write("# Output throughput of `distdoctor run` (issue 24, item 4)\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
