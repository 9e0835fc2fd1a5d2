"""Throughput of ``distdoctor diagnose`` on many task logs, with ``grep -c`` as the floor, in the same run.

``--content``:

* ``generated`` (default, 64 x 16 MB): TensorFlow absl INFO/WARNING lines, a tf.keras ``verbose=1`` progress bar
  per epoch drawn with backspaces and ``\\r``, per-step user prints;
* ``real``: a real run's log (benchmarks/data/real-mwms-worker-0.log.gz) tiled;
* ``progress``, ``info``, ``errors``, ``crashloop`` (``mixes`` for all four; 64 x 4 MB): logs in which every line is a prefilter
  candidate -- Keras progress bars and epoch lines; TF start-up, coordination-service, gRPC server and
  ``NCCL_DEBUG=INFO`` lines; error/warning lines that match signatures; a crash-looping task's repeated start-up
  and fatal error (see ``diagnose_mixes.py``).

A fault is buried in one task in every content: worker:37 is SIGKILLed at the end of its log and says nothing; its
peers print ``Connection reset by peer``, ``stopped sending heartbeats`` naming it and an ``UnavailableError``
traceback. Times ``distdoctor diagnose DIR --json`` (the CLI, a subprocess) and ``grep -c`` over the same files,
interleaved, median of ``--runs``; reports MB/s, the ratio to grep and the peak RSS of the largest process
(``resource.getrusage(RUSAGE_CHILDREN)`` in a wrapper process); prints a Markdown table and writes it, with the
command, to ``benchmarks/RESULTS-diagnose*.md``.

    nice -n 10 .venv/bin/python benchmarks/bench_diagnose.py --content mixes [--tasks 64] [--mb 4] [--runs 3] [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
T0 = 1795286218.0

_INFO = [
    "collective_param_resolver_distributed.cc:{n}] Collective group {g} instance {i} resolved with 64 members on /job:worker/replica:0/task:{t}/device:CPU:0",
    "ring_alg.cc:{n}] RingReduce: instance {i} subdiv 0 rank {t} done in {ms} us",
    "device_resolver_distributed.cc:{n}] Device attributes for /job:worker/replica:0/task:{t}/device:CPU:0 cached",
    "base_collective_executor.cc:{n}] BaseCollectiveExecutor::ExecuteAsync instance {i} key {g}:{i}",
    "step_stats_collector.cc:{n}] Collected step stats for step_id {i} (graph function train_function_747)",
    "cpu_allocator_impl.cc:{n}] Allocation of {b} exceeds 10% of free system memory.",
]
_WARN = [
    "dataset.cc:997] Input of GeneratorDatasetOp::Dataset will not be optimized because the dataset does not implement the AsGraphDefInternal() method needed to apply optimizations.",
    "local_rendezvous.cc:404] Local rendezvous recv item cancelled. Key hash: {i}",
]


def _absl(level: str, ts: float, tid: int, msg: str) -> str:
    return f"{level}0000 00:00:{ts:.6f} {tid:>8} {msg}\n"


def _progress_epoch(rng: random.Random, steps: int, loss: float) -> str:
    parts = []
    width = 0
    for s in range(1, steps + 1):
        done = s * 30 // steps
        bar = "=" * max(0, done - 1) + (">" if done < 30 else "=") + "." * (30 - done)
        eta = max(0, (steps - s) // 60)
        text = f"{s:>4}/{steps} [{bar}] - ETA: {eta}s - loss: {loss:.4f}" if s < steps else \
            f"{s:>4}/{steps} [{bar}] - 3s 13ms/step - loss: {loss:.4f}"
        parts.append("\b" * width + "\r" + text)
        width = len(text)
        loss *= 0.999
    return "".join(parts) + "\n"


def task_log(index: int, tasks: int, size: int, culprit: int, seed: int = 0) -> str:
    """One task's log, about ``size`` bytes; worker:``culprit`` dies silently, its peers then fail."""
    rng = random.Random(seed * 1000 + index)
    tid = 2000 + index
    ts = T0 + rng.random()
    out = [
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n",
        _absl("I", ts, tid, "port.cc:153] oneDNN custom operations are on. You may see slightly different numerical results due to floating-point round-off errors from different computation orders. To turn them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`."),
        _absl("E", ts + 0.2, tid, "cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)"),
        _absl("I", ts + 0.5, tid, f"grpc_server_lib.cc:471] Started server with target: grpc://localhost:{23450 + index}"),
        _absl("I", ts + 1.0, tid, "coordination_service_agent.cc:371] Coordination agent has successfully connected."),
        _absl("I", ts + 1.1, tid, "collective_all_reduce_strategy.cc:0] Enabled multi-worker collective ops with available devices: ['/job:worker/replica:0/task:%d/device:CPU:0']" % index),
    ]
    n = len(out)
    total = sum(len(x) for x in out)
    limit = size - 2048
    epoch = 0
    step = 0
    loss = 0.9
    epochs = 10_000
    i = 0
    while total < limit:
        epoch += 1
        chunk = [f"Epoch {epoch}/{epochs}\n", _progress_epoch(rng, 200, loss)]
        for _ in range(60):
            ts += 0.01
            i += 1
            r = rng.random()
            if r < 0.55:
                msg = rng.choice(_INFO).format(n=rng.randint(100, 900), g=rng.randint(1, 99), i=i, t=index,
                                               ms=rng.randint(50, 900), b=rng.randint(10**6, 10**8))
                chunk.append(_absl("I", ts, tid, msg))
            elif r < 0.6:
                chunk.append(_absl("W", ts, tid, rng.choice(_WARN).format(i=rng.randint(10**9, 10**10))))
            else:
                step += 1
                chunk.append(f"step {step} loss={loss:.4f} lr=0.001 examples/sec={rng.uniform(900, 1100):.1f}\n")
        loss *= 0.98
        for c in chunk:
            out.append(c)
            total += len(c)
        n += len(chunk)
    if index != culprit and culprit >= 0:
        out.append(_fault_lines(index, culprit, ts))
    return "".join(out)


def _fault_lines(index: int, culprit: int, ts: float) -> str:
    tid = 2400 + index
    peer = f"/job:worker/replica:0/task:{culprit}"
    grpc = (f"Additional GRPC error information from remote target {peer} while calling /tensorflow.WorkerService/RecvBuf:\n"
            ':UNKNOWN:Error received from peer  {grpc_status:14, grpc_message:"recvmsg:Connection reset by peer"}\n')
    return "".join([
        _absl("E", ts + 0.1, tid, "ring_alg.cc:291] Aborting RingReduce with UNAVAILABLE: recvmsg:Connection reset by peer"), grpc,
        _absl("E", ts + 0.1, tid, "base_collective_executor.cc:252] BaseCollectiveExecutor::StartAbort UNAVAILABLE: recvmsg:Connection reset by peer"), grpc,
        _absl("E", ts + 9.0, tid, f"coordination_service.cc:0] The following tasks are unhealthy (stopped sending heartbeats):\n{peer}\nThe tasks have crashed. Check the task logs for an earlier error to debug further."),
        "Traceback (most recent call last):\n",
        '  File "/app/train.py", line 46, in <module>\n    main()\n',
        '  File "/app/train.py", line 41, in main\n    history = model.fit(dataset, epochs=args.epochs, steps_per_epoch=args.steps, verbose=1)\n',
        "tensorflow.python.framework.errors_impl.UnavailableError: Graph execution error:\n\n",
        "Collective ops is aborted by: recvmsg:Connection reset by peer\n", grpc,
        "The error could be from a previous operation. Restart your program to reset.\n",
        "\t [[{{node CollectiveReduceV2}}]] [Op:__inference_train_function_747]\n",
    ])


REAL_SEED = os.path.join(HERE, "data", "real-mwms-worker-0.log.gz")


def real_task_log(index: int, size: int, culprit: int) -> bytes:
    """``size`` bytes of a real run's log (worker 0 of examples/train_mwms.py under `distdoctor run`, TF 2.21 with
    TF_CPP_MIN_LOG_LEVEL=0 and collective VLOGs: what a person debugging a hang turns on), then the fault."""
    import gzip
    seed = gzip.open(REAL_SEED, "rb").read()
    reps = max(1, size // len(seed))
    body = seed * reps + seed[: max(0, size - reps * len(seed))].rpartition(b"\n")[0] + b"\n"
    if index != culprit and culprit >= 0:
        body += _fault_lines(index, culprit, T0 + 3600).encode()
    return body


MIXES = ("progress", "info", "errors", "crashloop")


def generate(folder: str, tasks: int = 64, mb: float = 16, culprit: int = 37, content: str = "generated") -> list[str]:
    os.makedirs(folder, exist_ok=True)
    paths = []
    size = int(mb * (1 << 20))
    for i in range(tasks):
        path = os.path.join(folder, f"bench-worker-{i}.log")
        if content == "real":
            with open(path, "wb") as fh:
                fh.write(real_task_log(i, size, culprit))
        elif content in MIXES:
            from diagnose_mixes import mix_task_log
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(mix_task_log(content, i, tasks, size, culprit, _fault_lines))
        else:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(task_log(i, tasks, size, culprit))
        paths.append(path)
    return paths


_WRAP = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
dt = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
json.dump({"wall": dt, "rss": ru.ru_maxrss * 1024, "cpu": ru.ru_utime + ru.ru_stime, "rc": p.returncode,
           "out": p.stdout.decode("utf-8", "replace")}, sys.stdout)
"""


def _timed(cmd: list[str], tree: str | None = None) -> tuple[float, int | None, int, str, float | None]:
    """(wall seconds, peak RSS bytes, exit code, stdout, CPU seconds user+sys) of one run of ``cmd``.

    A fresh wrapper process runs the command and reads ``resource.getrusage(RUSAGE_CHILDREN)``: the peak RSS is
    that of the largest single process among the command and its descendants (the scanning pool's workers), the
    CPU time their sum. The wall time is measured around the command alone, inside the wrapper. The command runs
    as installed, its bytecode cached (PYTHONDONTWRITEBYTECODE, set in some sandboxes, would make every run compile
    the package's sources again: ~0.1 s of start-up that no installed copy pays).
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if tree is not None:   # --baseline: the same CLI importing another checkout's package
        env["PYTHONPATH"] = tree
    p = subprocess.run([sys.executable, "-c", _WRAP, *cmd], capture_output=True, text=True, env=env)
    d = json.loads(p.stdout)
    return d["wall"], d["rss"], d["rc"], d["out"], d["cpu"]


def _dd_cmd(folder: str) -> list[str]:
    exe = os.path.join(os.path.dirname(sys.executable), "distdoctor")
    return [exe if os.path.exists(exe) else sys.executable, *([] if os.path.exists(exe) else ["-m", "distdoctor"]),
            "diagnose", folder, "--json"]


def _verdict(out: str) -> tuple:
    try:
        d = json.loads(out)
    except ValueError:
        return ("unparsable output", None, None)
    rc_ = d.get("root_cause") or {}
    return (d.get("status"), rc_.get("category"), rc_.get("culprit"))


def measure(folder: str, runs: int, baseline: str | None = None) -> dict:
    """grep -c and distdoctor diagnose over ``folder`` (and the ``baseline`` checkout's), interleaved run by run (so
    drifting load hits all of them)."""
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder))
    total = sum(os.path.getsize(f) for f in files)
    dd_cmd = _dd_cmd(folder)
    grep_cmd = ["grep", "-c", "Connection reset by peer"] + files
    subprocess.run(["cat"] + files, stdout=subprocess.DEVNULL)  # warm the page cache for both
    res = {"grep": {"t": [], "rss": [], "cpu": []}, "dd": {"t": [], "rss": [], "cpu": []}}
    cmds = [("grep", grep_cmd, None), ("dd", dd_cmd, None)]
    if baseline:
        res["base"] = {"t": [], "rss": [], "cpu": []}
        cmds.append(("base", dd_cmd, baseline))
    verdict, bad_rc = None, None
    out = {}
    for _ in range(runs):
        for key, cmd, tree in cmds:
            dt, rss, rc, text, cpu = _timed(cmd, tree)
            if key == "base":
                out["base_verdict"] = _verdict(text)
            res[key]["t"].append(dt)
            res[key]["rss"].append(rss or 0)
            res[key]["cpu"].append(cpu or 0.0)
            if key == "dd":
                verdict = _verdict(text)
                if rc not in (0, 1, 3):
                    bad_rc = rc
    out.update({"bytes": total, "files": len(files), "verdict": verdict, "bad_rc": bad_rc})
    for key, r in res.items():
        out[key] = {"median": statistics.median(r["t"]), "runs": r["t"], "rss": max(r["rss"]),
                    "cpu": statistics.median(r["cpu"])}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=64)
    ap.add_argument("--mb", type=float, default=None, help="MB per task log (default 16 for generated, else 4)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="generate into (or reuse) this folder (one sub-folder per content) and keep it")
    ap.add_argument("--content", default="generated",
                    help="comma-separated: generated (older synthetic TF/Keras mix), real (a real run's log, "
                         "benchmarks/data, tiled), progress, info, errors (every line a prefilter candidate: Keras "
                         "progress, TF start-up/coordination/NCCL INFO lines, error/warning lines that match "
                         "signatures), or mixes for the last three")
    ap.add_argument("--no-write", action="store_true", help="do not write benchmarks/RESULTS-diagnose*.md")
    ap.add_argument("--baseline", metavar="TREE", help="also time the same CLI importing the package from TREE (another "
                    "checkout, e.g. main), interleaved run by run with this one")
    args = ap.parse_args()
    contents = []
    for c in args.content.split(","):
        contents += list(MIXES) if c == "mixes" else [c]
    bad = [c for c in contents if c not in ("generated", "real") + MIXES]
    if bad:
        ap.error(f"unknown --content {bad[0]!r}: choose from generated, real, progress, info, errors, crashloop, mixes")
    root = args.keep or tempfile.mkdtemp(prefix="dd-bench-")
    load = os.getloadavg()[0]
    rows = []
    try:
        for content in contents:
            mb = args.mb if args.mb is not None else (16 if content == "generated" else 4)
            folder = os.path.join(root, f"{content}-{args.tasks}x{mb:g}")
            if not (os.path.isdir(folder) and len(os.listdir(folder)) == args.tasks):
                t = time.perf_counter()
                generate(folder, args.tasks, mb, content=content)
                print(f"generated {args.tasks} x {mb:g} MB of {content} in {time.perf_counter() - t:.1f} s into {folder}",
                      file=sys.stderr)
            m = measure(folder, args.runs, args.baseline)
            m["content"], m["mb"] = content, mb
            if m["bad_rc"] is not None:
                print(f"distdoctor exited {m['bad_rc']} on {content}", file=sys.stderr)
            rows.append(m)
            print(f"{content}: {m['bytes'] / 1e6 / m['dd']['median']:.0f} MB/s "
                  f"(grep {m['bytes'] / 1e6 / m['grep']['median']:.0f} MB/s), peak RSS {m['dd']['rss'] / 1e6:.0f} MB, "
                  f"verdict {m['verdict']}"
                  + (f"; baseline {m['bytes'] / 1e6 / m['base']['median']:.0f} MB/s, peak RSS {m['base']['rss'] / 1e6:.0f} MB, "
                     f"verdict {m['base_verdict']}" if "base" in m else ""), file=sys.stderr)
        table = _table(rows, args, load)
        print(table)
        if not args.no_write:
            name = ("RESULTS-diagnose.md" if contents == ["generated"] else
                    "RESULTS-diagnose-real.md" if contents == ["real"] else "RESULTS-diagnose-mixes.md")
            with open(os.path.join(HERE, name), "w") as fh:
                fh.write(table)
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def _table(rows: list[dict], args, load: float) -> str:
    cpu = os.cpu_count()
    lines = ["# `distdoctor diagnose` throughput", "",
             f"A noisy {cpu}-core box shared with other work (load average {load:.1f} at the start), run under "
             f"`nice -n 10`; median of {args.runs} runs, `grep -c` and `distdoctor diagnose DIR --json` interleaved "
             "run by run, page cache warm, bytecode cached. Peak RSS is the largest single process "
             "(resource.getrusage of the children). A SIGKILLed worker:37 is buried in every content.", "",
             "| content | size | `grep -c` s | `distdoctor diagnose` s (runs) | MB/s | × grep | CPU s | peak RSS MB | verdict |",
             "|---|---:|---:|---|---:|---:|---:|---:|---|"]
    for m in rows:
        dd, gr = m["dd"], m["grep"]
        v = m["verdict"] or (None, None, None)
        lines.append(f"| {m['content']} | {m['files']} × {m['mb']:g} MB = {m['bytes'] / 1e6:.0f} MB | {gr['median']:.2f} | "
                     f"{dd['median']:.2f} ({', '.join(f'{t:.2f}' for t in dd['runs'])}) | "
                     f"**{m['bytes'] / 1e6 / dd['median']:.0f}** | {dd['median'] / gr['median']:.1f} | {dd['cpu']:.2f} | "
                     f"{dd['rss'] / 1e6:.0f} | {v[0]}, {v[1]}, {v[2]} |")
        if "base" in m:
            b, bv = m["base"], m["base_verdict"]
            lines.append(f"| {m['content']}, baseline `{args.baseline}` | | | {b['median']:.2f} "
                         f"({', '.join(f'{t:.2f}' for t in b['runs'])}) | **{m['bytes'] / 1e6 / b['median']:.0f}** | "
                         f"{b['median'] / gr['median']:.1f} | {b['cpu']:.2f} | {b['rss'] / 1e6:.0f} | {bv[0]}, {bv[1]}, {bv[2]} |")
    if len(rows) > 1:
        slow = min(rows, key=lambda m: m["bytes"] / m["dd"]["median"])
        lines += ["", f"Slowest: {slow['content']}, {slow['bytes'] / 1e6 / slow['dd']['median']:.0f} MB/s."]
    lines += ["", "Command:", "", "```",
              f"nice -n 10 python benchmarks/bench_diagnose.py --tasks {args.tasks}"
              + (f" --mb {args.mb:g}" if args.mb is not None else "") + f" --runs {args.runs} --content {args.content}" + (f" --baseline {args.baseline}" if args.baseline else ""),
              "```", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
