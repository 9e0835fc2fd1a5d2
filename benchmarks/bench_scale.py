"""Benchmark of ``run --node`` at scale (not a test): the real collector against N simulated nodes.

    .venv/bin/python benchmarks/bench_scale.py [--sizes 2,16,64,256] [--faults kill,stall,lost]
                                               [--steady 10] [--browser]

No TensorFlow. For each size N and each fault:

* the **collector** is the real one: the supervisor from :func:`~distdoctor.supervise.node.node_supervisor` for
  ``worker:0`` with the real :class:`~distdoctor.supervise.sidelink.LinkHub`, the hang detector and
  the rule engine, in its own process (``--role collector``), exactly what ``run --node`` runs after
  its preflight. Its own task is a real process (``--role task``) that plays a training task: it
  sends agent samples over the real Unix-datagram channel, and is sampled with psutil;
* the other N-1 **nodes** are simulated in one asyncio process (``--role nodes``): each opens its
  own TCP link with the real HMAC handshake and sends what a node supervisor sends, at the same
  rates: ``start``, a process sample every 0.25 s, an agent sample every 0.5 s, a log line every
  second, a heartbeat every second; it obeys ``stop``/``signal``/``stacks`` and says ``bye`` after
  the ``final`` verdict;
* after every node has linked and ``--steady`` seconds of training have passed (the collector's CPU
  and memory are measured over that window), the fault is injected on the last task, ``worker:N-1``:
  **kill** (its exit with SIGKILL), **stall** (it sits in a callback outside TensorFlow while every
  other task waits in the collective; ``--hang-timeout 5``), **lost** (its node falls silent: no
  heartbeat, nothing; ``--peer-timeout 5``);
* **fault -> verdict** is the collector's ``detected_at`` minus the injection time (the verdict's
  category and culprit are checked); **-> diagnosis** is when ``diagnosis.json`` was written (after
  ``--failure-grace 1`` and every task stopped); the bundle's size and the time to write
  ``report.html`` are read after;
* ``--browser`` opens each report in headless Chromium and reads the page's own load time.

Prints Markdown.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve()
TOKEN = "bench-scale-token-5d0c8e2f7a914b36"
STEP_S = 0.1             # simulated step time
STALL_FILE = "/sim/trainer.py"
EXPECT = {"kill": ("peer_crashed", "DD101"), "stall": ("hang_stalled_worker", None), "lost": ("peer_unresponsive", "DD112")}


# --- the simulated training task: the same schedule for the local task and the simulated nodes ---------------
def read_control(path: str) -> dict:
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def agent_sample(task: str, pid: int, t0: float, now: float, fault: str | None, fault_at: float | None,
                 culprit: str) -> dict:
    """What the bootstrap agent of a training task says at ``now``."""
    stalled = fault == "stall" and fault_at is not None and now >= fault_at
    until = fault_at if stalled else now
    calls = int((until - t0) / STEP_S) + 1
    if stalled and task == culprit:
        return {"task": task, "pid": pid, "ts": now, "calls": calls, "in_call": None, "call_since": None,
                "steps": None, "step_ts": None, "loss": None, "stack": [[STALL_FILE, 93, "inject"]],
                "location": [STALL_FILE, 93, "inject"], "user_threads": [], "tf_loaded": True}
    return {"task": task, "pid": pid, "ts": now, "calls": calls, "in_call": "__inference_train_function_914",
            "call_since": fault_at if stalled else now - 0.01, "steps": None, "step_ts": None, "loss": None,
            "stack": [["/sim/tensorflow/python/eager/execute.py", 53, "quick_execute"]], "location": None,
            "user_threads": [], "tf_loaded": True}


def cpu_seconds(t0: float, now: float, fault: str | None, fault_at: float | None) -> float:
    """0.8 cores while training; nothing once stalled (waiting in a collective uses no CPU)."""
    if fault == "stall" and fault_at is not None and now >= fault_at:
        now = fault_at
    return 0.8 * max(0.0, now - t0)


def role_task(args) -> None:
    """The collector's own task: plays a training task on the real agent channel (no TensorFlow)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path, me, t0 = os.environ["DISTDOCTOR_SOCK"], os.environ["DISTDOCTOR_TASK"], time.time()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print(f"{me}: simulated training starts", flush=True)
    while True:
        ctl = read_control(args.control)
        s = agent_sample(me, os.getpid(), t0, time.time(), ctl.get("fault"), ctl.get("fault_at"), ctl.get("culprit", ""))
        try:
            sock.sendto(json.dumps(s).encode(), path)
        except OSError:
            pass
        time.sleep(0.5)


# --- the simulated nodes --------------------------------------------------------------------------------------
class SimNode:
    def __init__(self, task: str, pid: int, control: str, stats: dict) -> None:
        self.task, self.pid, self.control, self.stats = task, pid, control, stats
        self.writer = None
        self.sealer = None
        self.ended = False
        self.silent = False
        self.final = asyncio.Event()

    def send(self, msg: dict) -> None:
        from distdoctor.preflight.wire import Kind
        if self.writer is not None and not self.writer.is_closing() and not self.silent:
            self.writer.write(self.sealer.seal(Kind.LINK, msg))
            self.stats["sent"] += 1

    def exit(self, rc: int, killed: bool, at: float | None = None) -> None:
        if not self.ended:
            self.ended = True
            self.send({"t": "exit", "ended_at": at or time.time(), "rc": rc, "killed": killed, "oom": None})

    async def run(self, host: str, port: int) -> None:
        from distdoctor.preflight.wire import LINK_MAGIC, Opener, Peer, ProtocolError, Sealer, client_handshake, decode_json
        for attempt in range(50):   # a hub at its cap of unauthenticated connections says "busy": again
            reader, writer = await asyncio.open_connection(host, port)
            hs = await client_handshake(reader, writer, TOKEN.encode(), Peer(self.task, os.urandom(6).hex()), 10.0,
                                        magic=LINK_MAGIC)
            if hs.failure is None or not hs.retry:
                break
            writer.close()
            await asyncio.sleep(0.05 * (1 + attempt))
        if hs.failure is not None:
            raise RuntimeError(f"{self.task}: handshake failed: {hs.detail}")
        self.writer, self.sealer = writer, Sealer(hs.keys[0])
        opener = Opener(hs.keys[1])
        self.stats["linked"] += 1
        t0 = time.time()
        self.send({"t": "start", "pid": self.pid, "started_at": t0, "argv": ["python", "train.py"], "host": "sim"})

        async def listen() -> None:
            try:
                while True:
                    _kind, body = await opener.read(reader)
                    msg = decode_json(body)
                    t = msg.get("t")
                    if t == "stop":
                        self.exit(-15, True)
                    elif t == "signal":
                        self.exit(-int(msg.get("sig", 9)), True)
                    elif t == "stacks":
                        self.send({"t": "stack", "text": f'  File "{STALL_FILE}", line 93, in inject'})
                    elif t == "final":
                        self.final.set()
                        return
            except (EOFError, ConnectionError, OSError, ValueError, ProtocolError):
                self.final.set()

        listener = asyncio.ensure_future(listen())
        tick = 0
        while not self.final.is_set():
            now = time.time()
            ctl = read_control_cached(self.control)
            fault, fault_at, culprit = ctl.get("fault"), ctl.get("fault_at"), ctl.get("culprit")
            mine = self.task == culprit and fault_at is not None and now >= fault_at
            if mine and fault == "kill":
                self.send({"t": "line", "ts": fault_at, "text": f"FAULT kill injected by {self.task}"})
                self.exit(-9, False, fault_at)
            if mine and fault == "lost":
                self.silent = True
            stalled = fault == "stall" and fault_at is not None and now >= fault_at
            if not self.ended:
                if tick % 4 == 0:
                    self.send({"t": "hb", "sent": now})
                    if not stalled:   # a stalled job prints nothing
                        self.send({"t": "line", "ts": now, "text": f"{int((now - t0) / STEP_S)}/300 - loss: 0.1234"})
                if tick % 2 == 0:
                    self.send({"t": "agent", "s": agent_sample(self.task, self.pid, t0, now, fault, fault_at, culprit)})
                self.send({"t": "proc", "ts": now, "limit": 8 << 30, "oom": None,
                           "s": {"ts": now, "pid": self.pid, "state": "sleeping", "rss_bytes": 600 << 20,
                                 "cpu_seconds": cpu_seconds(t0, now, fault, fault_at), "cgroup": None,
                                 "num_threads": 40}})
            elif not self.silent and tick % 4 == 0:
                self.send({"t": "hb", "sent": now})
            wait = 0.25
            if fault_at is not None and now < fault_at:   # inject on time, not at the next tick
                wait = min(wait, max(0.0, fault_at - now))
            try:
                await asyncio.wait_for(self.final.wait(), wait)
            except asyncio.TimeoutError:
                pass
            tick += 1
        if not self.silent:
            self.send({"t": "bye"})
        try:
            await writer.drain()
        except (ConnectionError, OSError):
            pass
        listener.cancel()
        writer.close()


_CTL_CACHE: dict = {"at": 0.0, "value": {}}


def read_control_cached(path: str) -> dict:
    now = time.monotonic()
    if now - _CTL_CACHE["at"] > 0.1:
        _CTL_CACHE["at"], _CTL_CACHE["value"] = now, read_control(path)
    return _CTL_CACHE["value"]


def role_nodes(args) -> None:
    stats = {"linked": 0, "sent": 0}

    async def main() -> None:
        nodes = [SimNode(f"worker:{i}", 100000 + i, args.control, stats) for i in range(1, args.n)]
        status_path = args.control + ".nodes"

        async def report() -> None:
            while True:
                with open(status_path + ".tmp", "w") as fh:
                    json.dump(stats, fh)
                os.replace(status_path + ".tmp", status_path)
                await asyncio.sleep(0.25)

        reporter = asyncio.ensure_future(report())
        results = await asyncio.gather(*(n.run("127.0.0.1", args.port) for n in nodes), return_exceptions=True)
        reporter.cancel()
        errors = [r for r in results if isinstance(r, Exception)]
        if errors:
            print(f"{len(errors)} simulated nodes failed: {errors[0]!r}", file=sys.stderr)

    asyncio.run(main())


# --- the real collector ---------------------------------------------------------------------------------------
def role_collector(args) -> None:
    from distdoctor.report.command import write_report
    from distdoctor.supervise.node import NodeCluster, node_supervisor
    from distdoctor.supervise.sidelink import LinkHub
    from distdoctor.supervise.supervisor import RunConfig

    tasks = tuple(f"worker:{i}" for i in range(args.n))
    me = "worker:0"
    hub = LinkHub(TOKEN, me, port=args.port, host="127.0.0.1", hosts={t: "127.0.0.1" for t in tasks})
    hub.start()
    tf_config = json.dumps({"cluster": {"worker": [f"127.0.0.1:{20000 + i}" for i in range(args.n)]},
                            "task": {"type": "worker", "index": 0}})
    argv = [sys.executable, "-S", "-I", str(HERE), "--role", "task", "--control", args.control]
    cfg = RunConfig(argv=argv, cluster=NodeCluster(me, tasks, "multi_worker_mirrored", tf_config), out_dir=args.out,
                    hang_timeout=args.hang_timeout, grace=2.0, failure_grace=args.failure_grace, stream=None)
    sup = node_supervisor(cfg, collector=me, hub=hub, client=None, peer_timeout=args.peer_timeout, expected=tasks)
    hub.attach(sup.role.on_peer)
    diag, _job = sup.run()
    written = time.time()
    data = diag.to_json()
    hub.broadcast({"t": "final", "diagnosis": data, "bundle": args.out, "host": socket.gethostname()})
    hub.flush(5.0)
    t = time.time()
    write_report(args.out)
    report_s = time.time() - t
    hub.close()
    with open(os.path.join(args.out, "bench.json"), "w") as fh:
        json.dump({"written_at": written, "report_s": report_s}, fh)


# --- the driver -----------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def one_run(n: int, fault: str, out_root: Path, steady: float, browser: bool) -> dict:
    import psutil
    out = out_root / f"n{n}-{fault}"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    control = str(out_root / f"control-n{n}-{fault}.json")
    with open(control, "w") as fh:
        json.dump({}, fh)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "DISTDOCTOR_", "SLURM_"))}
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    common = ["--n", str(n), "--port", str(port), "--control", control]
    coll = subprocess.Popen([sys.executable, str(HERE), "--role", "collector", *common, "--out", str(out),
                             "--hang-timeout", "5", "--peer-timeout", "5", "--failure-grace", "1"],
                            env=env, stdout=subprocess.DEVNULL, stderr=open(out_root / f"collector-n{n}-{fault}.err", "w"))
    time.sleep(1.0)   # the hub binds first, as in run --node (nodes retry anyway)
    nodes = subprocess.Popen([sys.executable, str(HERE), "--role", "nodes", *common], env=env,
                             stdout=subprocess.DEVNULL, stderr=open(out_root / f"nodes-n{n}-{fault}.err", "w"))
    row: dict = {"n": n, "fault": fault}
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            st = read_control(control + ".nodes")
            if st.get("linked", 0) >= n - 1:
                break
            if coll.poll() is not None or nodes.poll() is not None:
                raise RuntimeError("a bench process ended early")
            time.sleep(0.2)
        else:
            raise RuntimeError(f"only {read_control(control + '.nodes').get('linked')} of {n - 1} nodes linked")
        row["link_all_s"] = time.time()
        pc = psutil.Process(coll.pid)
        time.sleep(2.0)   # every track adopted, samples flowing
        c0, w0, s0 = pc.cpu_times(), time.time(), read_control(control + ".nodes").get("sent", 0)
        rss = []
        while time.time() - w0 < steady:
            rss.append(pc.memory_info().rss)
            time.sleep(0.5)
        c1, w1, s1 = pc.cpu_times(), time.time(), read_control(control + ".nodes").get("sent", 0)
        row["cpu_pct"] = 100 * ((c1.user + c1.system) - (c0.user + c0.system)) / (w1 - w0)
        row["msgs_per_s"] = (s1 - s0) / (w1 - w0)
        row["rss_mb"] = max(rss) / 2**20
        fault_at = time.time() + 0.3
        with open(control + ".tmp", "w") as fh:
            json.dump({"fault": fault, "fault_at": fault_at, "culprit": f"worker:{n - 1}"}, fh)
        os.replace(control + ".tmp", control)
        coll.wait(180)
        nodes.wait(30)
        diag = json.loads((out / "diagnosis.json").read_text())
        bench = json.loads((out / "bench.json").read_text())
        rc = diag.get("root_cause") or {}
        cat, code = EXPECT[fault]
        row["verdict_s"] = (diag["detected_at"] or 0) - fault_at
        row["diagnosis_s"] = bench["written_at"] - fault_at
        row["right"] = rc.get("category") == cat and rc.get("culprit") == f"worker:{n - 1}" and (code is None or rc.get("code") == code)
        row["verdict"] = f"{rc.get('category')} {rc.get('culprit')}"
        row["bundle_mb"] = dir_size(out) / 2**20
        row["report_mb"] = (out / "report.html").stat().st_size / 2**20
        row["report_s"] = bench["report_s"]
        if browser:
            sys.path.insert(0, str(ROOT / "tests"))
            from browser import load_in_browser
            r = load_in_browser(str(out / "report.html"))
            row["browser_load_ms"] = r.load_ms
            row["browser_wall_s"] = r.wall_s
            row["lanes"] = len(r.lanes)
            row["lane_tasks"] = len(r.tasks)
    finally:
        for p in (nodes, coll):
            if p.poll() is None:
                p.kill()
                p.wait()
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--role", choices=["driver", "collector", "nodes", "task"], default="driver")
    p.add_argument("--sizes", default="2,16,64,256")
    p.add_argument("--faults", default="kill,stall,lost")
    p.add_argument("--steady", type=float, default=10.0)
    p.add_argument("--browser", action="store_true")
    p.add_argument("--out", default=str(ROOT / "test-output" / "bench-scale"))
    p.add_argument("--n", type=int, default=2)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--control", default="")
    p.add_argument("--hang-timeout", type=float, default=5.0)
    p.add_argument("--peer-timeout", type=float, default=5.0)
    p.add_argument("--failure-grace", type=float, default=1.0)
    args = p.parse_args()
    if args.role == "task":
        return role_task(args)
    if args.role == "nodes":
        return role_nodes(args)
    if args.role == "collector":
        return role_collector(args)
    out_root = Path(args.out)
    out_root.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in [int(x) for x in args.sizes.split(",")]:
        for fault in args.faults.split(","):
            row = one_run(n, fault, out_root, args.steady, args.browser)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    print("| tasks | fault | fault → verdict | → diagnosis written | right? | collector CPU (steady) | "
          "collector peak RSS | messages/s in | bundle | report.html (write) | Chromium load (lanes/tasks) |")
    print("|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        load = (f"{r['browser_load_ms']:.0f} ms ({r['lanes']}/{r['lane_tasks']})" if r.get("browser_load_ms") is not None
                else "-")
        print(f"| {r['n']} | {r['fault']} | {r['verdict_s']:.2f} s | {r['diagnosis_s']:.2f} s | "
              f"{'yes' if r['right'] else 'NO: ' + r['verdict']} | {r['cpu_pct']:.0f} % | {r['rss_mb']:.0f} MB | "
              f"{r['msgs_per_s']:.0f} | {r['bundle_mb']:.1f} MB | {r['report_mb']:.1f} MB ({r['report_s']:.1f} s) | {load} |")


if __name__ == "__main__":
    main()
