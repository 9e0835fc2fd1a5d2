"""Throughput of ``distdoctor diagnose`` on 1 GB of logs, with ``grep -c`` as the floor.

Generates 64 task logs of 16 MB each (TensorFlow absl INFO/WARNING lines, a
tf.keras ``verbose=1`` progress bar per epoch drawn with backspaces and
``\\r``, per-step user prints), with a fault buried in one task: worker:37 is
SIGKILLed at the end of its log and says nothing; its peers print
``Connection reset by peer``, ``stopped sending heartbeats`` naming it and an
``UnavailableError`` traceback. Then times ``distdoctor diagnose DIR --json``
(median of 3, peak RSS from ``/usr/bin/time -v`` or psutil) next to
``grep -c`` over the same files, prints a Markdown table and writes it, with
the command, to ``benchmarks/RESULTS-diagnose.md``.

    .venv/bin/python benchmarks/bench_diagnose.py [--tasks 64] [--mb 16] [--runs 3] [--keep DIR]
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


def generate(folder: str, tasks: int = 64, mb: int = 16, culprit: int = 37, content: str = "generated") -> list[str]:
    os.makedirs(folder, exist_ok=True)
    paths = []
    for i in range(tasks):
        path = os.path.join(folder, f"bench-worker-{i}.log")
        if content == "real":
            with open(path, "wb") as fh:
                fh.write(real_task_log(i, mb << 20, culprit))
        else:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(task_log(i, tasks, mb << 20, culprit))
        paths.append(path)
    return paths


def _timed(cmd: list[str]) -> tuple[float, int | None, int, str, float | None]:
    """(wall seconds, peak RSS bytes or None, exit code, stdout, CPU seconds user+sys or None).

    Peak RSS is the largest single process (GNU time's maximum resident set size
    covers the command and, separately, each of its children).
    """
    if os.path.exists("/usr/bin/time"):
        t = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
        dt = time.perf_counter() - t
        rss = None
        cpu = 0.0
        for line in p.stderr.splitlines():
            if "Maximum resident set size" in line:
                rss = int(line.rsplit(":", 1)[1]) * 1024
            if "User time (seconds)" in line or "System time (seconds)" in line:
                cpu += float(line.rsplit(":", 1)[1])
        return dt, rss, p.returncode, p.stdout, cpu
    t = time.perf_counter()
    peak, rc, out = _sample_tree(cmd, capture=True)
    return time.perf_counter() - t, peak, rc, out, None


def _sample_tree(cmd: list[str], capture: bool = False) -> tuple[int | None, int, str]:
    """Run ``cmd``; peak of the summed RSS of it and all its children (psutil, every 20 ms), exit code, stdout."""
    import psutil
    proc = psutil.Popen(cmd, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL, text=True)
    peak = 0
    chunks: list[str] = []
    reader = None
    if capture:  # drain stdout meanwhile, so a large JSON cannot fill the pipe and stall the command
        import threading
        reader = threading.Thread(target=lambda: chunks.append(proc.stdout.read()), daemon=True)
        reader.start()
    while proc.poll() is None:
        try:
            rss = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))
            peak = max(peak, rss)
        except psutil.Error:
            pass
        time.sleep(0.02)
    if reader is not None:
        reader.join()
    return peak or None, proc.returncode, "".join(chunks)


def _tree_peak(cmd: list[str]) -> int | None:
    """Peak of the summed RSS of the command and all its children."""
    try:
        return _sample_tree(cmd)[0]
    except ImportError:
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=64)
    ap.add_argument("--mb", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="generate into (or reuse) this folder and keep it")
    ap.add_argument("--content", choices=["generated", "real"], default="generated",
                    help="generated TF/Keras lines, or a real run's log (benchmarks/data) tiled to --mb per task")
    ap.add_argument("--no-write", action="store_true", help="do not write benchmarks/RESULTS-diagnose.md")
    args = ap.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="dd-bench-")
    try:
        if not (args.keep and os.path.isdir(folder) and len(os.listdir(folder)) == args.tasks):
            t = time.perf_counter()
            generate(folder, args.tasks, args.mb, content=args.content)
            print(f"generated {args.tasks} x {args.mb} MB in {time.perf_counter() - t:.1f} s into {folder}", file=sys.stderr)
        files = sorted(os.path.join(folder, f) for f in os.listdir(folder))
        total = sum(os.path.getsize(f) for f in files)
        exe = os.path.join(os.path.dirname(sys.executable), "distdoctor")
        dd_cmd = [exe if os.path.exists(exe) else sys.executable, *([] if os.path.exists(exe) else ["-m", "distdoctor"]),
                  "diagnose", folder, "--json"]
        grep_cmd = ["grep", "-c", "Connection reset by peer"] + files
        subprocess.run(["cat"] + files, stdout=subprocess.DEVNULL)  # warm the page cache for both
        rows = {}
        verdict = None
        load = os.getloadavg()[0]
        for name, cmd in (("grep -c (floor)", grep_cmd), ("distdoctor diagnose", dd_cmd)):
            times, rsss, cpus = [], [], []
            for _ in range(args.runs):
                dt, rss, rc, out, cpu = _timed(cmd)
                times.append(dt)
                if cpu is not None:
                    cpus.append(cpu)
                if rss:
                    rsss.append(rss)
                if name.startswith("distdoctor"):
                    if rc not in (0, 1, 3):
                        print(f"distdoctor exited {rc}", file=sys.stderr)
                    try:
                        d = json.loads(out)
                        rc_ = d.get("root_cause") or {}
                        verdict = (d.get("status"), rc_.get("category"), rc_.get("culprit"))
                    except ValueError:
                        verdict = ("unparsable output", None, None)
            rows[name] = (statistics.median(times), max(rsss) if rsss else None, times,
                          statistics.median(cpus) if cpus else None)
        tree = _tree_peak(dd_cmd)
        cpu = os.cpu_count()
        lines = [f"# `distdoctor diagnose` throughput", "",
                 f"{args.tasks} task logs x {args.mb} MB = {total / 1e9:.2f} GB of "
                 + ("a real run's log (benchmarks/data/real-mwms-worker-0.log.gz, tiled), " if args.content == "real"
                    else "generated TF/Keras lines, ") +
                 f"fault buried in worker:37; {cpu}-core machine (load average {load:.1f} at the start); "
                 f"median of {args.runs} runs, page cache warm.", "",
                 "| command | median wall s | MB/s | CPU s (user+sys) | peak RSS MB (largest process) | runs (s) |",
                 "|---|---:|---:|---:|---:|---|"]
        for name, (med, rss, times, cpu_s) in rows.items():
            lines.append(f"| {name} | {med:.2f} | {total / 1e6 / med:.0f} | "
                         + (f"{cpu_s:.2f}" if cpu_s is not None else "n/a") + " | "
                         + (f"{rss / 1e6:.0f}" if rss else "n/a") + " | " + ", ".join(f"{t:.2f}" for t in times) + " |")
        lines += ["", f"distdoctor's whole process tree (parent + pool) peaked at {tree / 1e6:.0f} MB RSS (psutil, summed)."
                  if tree else ""]
        lines += ["", f"verdict: status={verdict[0]}, category={verdict[1]}, culprit={verdict[2]}" if verdict else "",
                  "", "Command:", "", "```", "python benchmarks/bench_diagnose.py " +
                  f"--tasks {args.tasks} --mb {args.mb} --runs {args.runs} --content {args.content}", " ".join(["distdoctor", "diagnose", "DIR", "--json"]),
                  "```", ""]
        table = "\n".join(lines)
        print(table)
        if not args.no_write:
            name = "RESULTS-diagnose.md" if args.content == "generated" else "RESULTS-diagnose-real.md"
            with open(os.path.join(HERE, name), "w") as fh:
                fh.write(table)
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
