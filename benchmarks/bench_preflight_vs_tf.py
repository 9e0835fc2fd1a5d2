"""Benchmark (not a test): each mesh fault, side by side -- TensorFlow alone vs ``distdoctor check --mesh``.

    flock /tmp/dd-tf.lock .venv/bin/python benchmarks/bench_preflight_vs_tf.py [--cases a,b] [--cap 60]

Answers: for each fault that ``check --mesh`` detects, how long does TensorFlow
alone take to say anything, does what it says name the task at fault, and does
it end at all?  Every case is built for real, the way tests/test_mesh.py and
tests/test_mesh_netns.py build it (and with their helpers, tests/mesh_helpers.py):

* ``dropped``   3 hosts (network namespaces of our own); an iptables rule on
                worker:1's host drops TCP to its port.
* ``localhost`` 3 hosts; worker:0's TF_CONFIG lists worker:1 at localhost
                (as the test does); ``localhost2``: the same in worker:2's.
* ``missing``   worker:2 of 3 never starts (loopback).
* ``lists``     worker:2's cluster list gives worker:1 another port (loopback).
* ``duplicate`` two processes both claim worker:1 (started first, 0.8 s ahead).
* ``port``      another process (a plain listening socket) holds worker:1's port.
* ``env``       worker:1 alone runs with TF_ENABLE_ONEDNN_OPTS=0 (other kernels,
                slightly other numerics), a variable TensorFlow does not compare.

(a) **TensorFlow alone**: every task runs a minimal MultiWorkerMirroredStrategy
job (tf-keras, TF_USE_LEGACY_KERAS=1: create the strategy, a two-layer model
under ``strategy.scope()``, ``fit`` 3 steps) as a plain process with the same
bad config and TF's default logging; we timestamp each output line as it is
read and kill the process groups at ``--cap`` seconds.  A *message* is a log
record at WARNING level or above (glog W/E/F, Python logging WARNING/ERROR),
a traceback or exception line, or a task exiting with an error status -- and
whose text (digits masked) does not also appear in a healthy run of the same
job, which runs first as the reference (TF prints a few warnings on every
start: the CUDA stub, tf.data).  TF's coordination service also prints, at
INFO level, "Waiting for k/N tasks to connect. Example stragglers: <task>";
it prints that on every healthy start too, so it does not count as a
message, but when it is the last progress line before the cap the table
says so and which tasks it names.  *Names the culprit*: a message's text
contains the culprit task's name (/job:worker/replica:0/task:K) or its
address (for ``port``: the holding process's pid; for the TF_CONFIG cases
also the bad entry itself).  gRPC's "Additional GRPC error information from
remote target /job:.../task:K" clause is left out of that match -- it only
says which peer a failed RPC went to, and every failed collective names its
neighbours that way -- and is reported apart.  "Points near it": the message
names something on the way (the task's port alone, the odd address).
Times are from the first spawn, so they include TensorFlow's start-up
(the healthy job trains and exits in about 6 s).  TF runs once per case,
three times where the first run ended within ``--cheap`` seconds: the first
message's time is then the median, the other cells describe the first run.

(b) **distdoctor**: ``distdoctor check --mesh --json --timeout T`` on every
task of the same config (same namespaces, env, launch order).  Verdict time:
first spawn -> last task's process exit (every task holds its verdict and
has released its port).  The finding must name the expected task with the
expected category on every task (for ``port``, a port_in_use finding that
names the holder's pid).  Median of ``--dd-repeats`` runs.

Needs root, ``ip`` and ``iptables`` for the three namespace cases (skipped
otherwise). Namespaces, their interfaces and rules are removed, and every
process started is killed by process group, even on failure or Ctrl-C.
Prints Markdown (details per case, then the table).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from mesh_helpers import PY, clean_env, finish, free_ports, kill_all, start_task  # noqa: E402
from netns_lab import make_lab, sh, why_not as netns_unavailable  # noqa: E402

NETNS_PORT = 2222

WORKER = r"""
import os
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
import numpy as np, tensorflow as tf, tf_keras as keras
strategy = tf.distribute.MultiWorkerMirroredStrategy()
with strategy.scope():
    model = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
rng = np.random.default_rng(0)
x = rng.normal(size=(64, 4)).astype("float32")
y = x.sum(axis=1, keepdims=True)
opts = tf.data.Options()
opts.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16).repeat().with_options(opts)
model.fit(ds, epochs=1, steps_per_epoch=3, verbose=2)
print("TRAINING DONE", flush=True)
"""


# --- network namespaces: the tests' own lab (tests/netns_lab.py) ----------------------------------
@contextlib.contextmanager
def lab(n: int):
    """A bridge namespace and ``n`` host namespaces on a random 10.201.x.0/24 that exists only inside them."""
    with make_lab(n) as built:
        yield built.hosts, built.addresses


# --- cases ---------------------------------------------------------------------------------------
@dataclass
class Proc:
    task: str                    # "worker:1"
    cluster: dict
    netns: str | None = None
    env: dict = field(default_factory=dict)
    delay: float = 0.0           # seconds after the previous process


@dataclass
class Layout:
    procs: list[Proc]
    code: str                    # distdoctor finding expected on every task
    category: str
    culprit: str                 # task name distdoctor must blame
    tf_culprit: dict[str, str]   # label -> regex: TF's output names the culprit
    tf_partial: dict[str, str] = field(default_factory=dict)  # label -> regex: points near it, not at it
    holder_pid: int | None = None


def names_task(index: int, address: str) -> dict[str, str]:
    """The task's name, or its full address."""
    return {f"task:{index}": rf"/job:worker(?:/replica:0)?/task:{index}\b",
            f"its address {address}": re.escape(address) + r"(?!\d)"}


def names_port(address: str) -> dict[str, str]:
    """Its port alone (loopback cases: every task has its own port), e.g. in '0.0.0.0:PORT'."""
    port = address.rsplit(":", 1)[1]
    return {f"its port {port}": rf":{port}(?!\d)"}


def loop_cluster(n: int) -> dict:
    return {"worker": [f"127.0.0.1:{p}" for p in free_ports(n)]}


@contextlib.contextmanager
def case_dropped():
    with lab(3) as (hosts, addrs):
        sh("ip", "netns", "exec", hosts[1], "iptables", "-A", "INPUT", "-p", "tcp", "--dport", str(NETNS_PORT),
           "-j", "DROP")
        cluster = {"worker": [f"{a}:{NETNS_PORT}" for a in addrs]}
        yield lambda: Layout([Proc(f"worker:{i}", cluster, hosts[i]) for i in range(3)], "DD502",
                             "firewall_or_port_blocked", "worker:1", names_task(1, cluster["worker"][1]))


def case_localhost(bad_task: int):
    @contextlib.contextmanager
    def factory():
        with lab(3) as (hosts, addrs):
            good = {"worker": [f"{a}:{NETNS_PORT}" for a in addrs]}
            bad = {"worker": [good["worker"][0], f"localhost:{NETNS_PORT}", good["worker"][2]]}
            # the culprit is bad_task's config: TF naming that task, or the bad entry itself
            pats = {**names_task(bad_task, good["worker"][bad_task]),
                    f"the bad entry localhost:{NETNS_PORT}": rf"localhost:{NETNS_PORT}(?!\d)"}
            yield lambda: Layout([Proc(f"worker:{i}", bad if i == bad_task else good, hosts[i]) for i in range(3)],
                                 "DD511", "config_tf_config", f"worker:{bad_task}", pats,
                                 {"task:1 (the peer listed at localhost)": r"/job:worker(?:/replica:0)?/task:1\b"})
    return factory


@contextlib.contextmanager
def case_missing():
    def make():
        c = loop_cluster(3)
        return Layout([Proc("worker:0", c), Proc("worker:1", c)], "DD506", "network_unreachable", "worker:2",
                      {**names_task(2, c["worker"][2]), **names_port(c["worker"][2])})
    yield make


@contextlib.contextmanager
def case_lists():
    def make():
        c = loop_cluster(3)
        odd = {"worker": [c["worker"][0], f"127.0.0.1:{free_ports(1)[0]}", c["worker"][2]]}
        return Layout([Proc("worker:0", c), Proc("worker:1", c), Proc("worker:2", odd)], "DD510",
                      "config_mismatch_across_workers", "worker:2",
                      {**names_task(2, c["worker"][2]), **names_port(c["worker"][2])},
                      {f"worker:2's odd entry for worker:1, {odd['worker'][1]}":
                       re.escape(odd["worker"][1]) + r"(?!\d)"})
    yield make


@contextlib.contextmanager
def case_duplicate():
    def make():
        c = loop_cluster(3)
        return Layout([Proc("worker:1", c), Proc("worker:1", c), Proc("worker:0", c, delay=0.8),
                       Proc("worker:2", c)], "DD518", "config_tf_config", "worker:1",
                      names_task(1, c["worker"][1]), names_port(c["worker"][1]))
    yield make


@contextlib.contextmanager
def case_port():
    holder = None
    try:
        def make():
            nonlocal holder
            if holder is not None:
                os.killpg(holder.pid, signal.SIGKILL)
                holder.wait()
            c = loop_cluster(3)
            port = int(c["worker"][1].rsplit(":", 1)[1])
            holder = subprocess.Popen([PY, "-c", "import socket, sys, time\ns = socket.socket()\n"
                                       f"s.bind(('0.0.0.0', {port}))\ns.listen()\nprint('up', flush=True)\n"
                                       "time.sleep(100000)"], stdout=subprocess.PIPE, text=True,
                                      start_new_session=True)
            holder.stdout.readline()
            return Layout([Proc(f"worker:{i}", c) for i in range(3)], "DD412", "port_in_use", "worker:1",
                          {f"the holder's pid {holder.pid}": rf"\b{holder.pid}\b"},
                          {**names_task(1, c["worker"][1]), **names_port(c["worker"][1])}, holder_pid=holder.pid)
        yield make
    finally:
        if holder is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(holder.pid, signal.SIGKILL)
            holder.wait()


@contextlib.contextmanager
def case_env():
    def make():
        c = loop_cluster(3)
        return Layout([Proc("worker:0", c), Proc("worker:1", c, env={"TF_ENABLE_ONEDNN_OPTS": "0"}),
                       Proc("worker:2", c)], "DD513", "version_mismatch", "worker:1",
                      {**names_task(1, c["worker"][1]), **names_port(c["worker"][1])},
                      {"TF_ENABLE_ONEDNN_OPTS": r"TF_ENABLE_ONEDNN_OPTS"})
    yield make


@contextlib.contextmanager
def case_healthy():
    def make():
        c = loop_cluster(3)
        return Layout([Proc(f"worker:{i}", c) for i in range(3)], "", "", "", {})
    yield make


CASES = {
    "dropped": ("1. port dropped by iptables on worker:1's host (netns)", case_dropped, True),
    "localhost": ("2. worker:0 lists worker:1 at localhost (netns)", case_localhost(0), True),
    "localhost2": ("2b. the same, in worker:2's TF_CONFIG instead (netns)", case_localhost(2), True),
    "missing": ("3. worker:2 never starts", case_missing, False),
    "lists": ("4. worker:2's cluster list differs (worker:1's port)", case_lists, False),
    "duplicate": ("5. two processes claim worker:1", case_duplicate, False),
    "port": ("6. worker:1's port held by another process", case_port, False),
    "env": ("7. worker:1 alone has TF_ENABLE_ONEDNN_OPTS=0", case_env, False),
}


# --- TensorFlow alone ----------------------------------------------------------------------------
GLOG = re.compile(r"^([IWEF])\d{4} [\d:]+\.\d+\s+\d+ ([^\]]+)\] ?(.*)$")
PYLOG = re.compile(r"^(WARNING|ERROR|CRITICAL|INFO|DEBUG):\s?(.*)$")
TRACEBACK = re.compile(r"^(Traceback \(most recent call last\)|Fatal Python error)")
EXCEPTION = re.compile(r"^[\w.]+(Error|Exception|Exit)\b:?")
WAITING = re.compile(r"Waiting for (\d+)/(\d+) tasks to connect")


@dataclass
class Record:
    t: float
    task: str
    level: str          # I/W/E/F, TB (traceback), EX (exception line), EXIT, OUT (plain output)
    lines: list[str]
    closed: bool = False

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def key(self) -> str:
        """Comparable across runs: no glog header, digits masked."""
        m = GLOG.match(self.lines[0])
        head = f"{m.group(1)} {m.group(2).split(':')[0]}] {m.group(3)}" if m else self.lines[0]
        return re.sub(r"\d+", "#", head)

    @property
    def problem_level(self) -> bool:
        return self.level in ("W", "E", "F", "TB", "EX", "EXIT", "WARNING", "ERROR", "CRITICAL")


@dataclass
class TfRun:
    records: list[Record]
    rcs: dict[str, int | None]   # per process label; None: killed at the cap
    ended_at: float | None        # all processes exited by then (None: hung at cap)
    last_output: float
    trained: list[str]            # processes that printed TRAINING DONE


def _start_record(line: str) -> str | None:
    m = GLOG.match(line)
    if m:
        return m.group(1)
    m = PYLOG.match(line)
    if m:
        return m.group(1)
    if TRACEBACK.match(line):
        return "TB"
    if EXCEPTION.match(line):
        return "EX"
    return None


def run_tf(layout: Layout, cap: float) -> TfRun:
    procs: list[tuple[str, subprocess.Popen]] = []
    raw: list[tuple[float, str, str]] = []
    lock = threading.Lock()
    seen: dict[str, int] = {}

    def reader(label: str, p: subprocess.Popen) -> None:
        for line in p.stdout:
            with lock:
                raw.append((time.monotonic() - t0, label, line.rstrip("\n")))

    threads = []
    t0 = time.monotonic()
    try:
        for spec in layout.procs:
            if spec.delay:
                time.sleep(spec.delay)
            seen[spec.task] = seen.get(spec.task, 0) + 1
            label = spec.task if seen[spec.task] == 1 else f"{spec.task} (2nd process)"
            job, _, index = spec.task.partition(":")
            env = clean_env(TF_CONFIG=json.dumps({"cluster": spec.cluster, "task": {"type": job, "index": int(index)}}),
                            TF_USE_LEGACY_KERAS="1", PYTHONUNBUFFERED="1", **spec.env)
            cmd = [PY, "-c", WORKER]
            if spec.netns:
                cmd = ["ip", "netns", "exec", spec.netns, *cmd]
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                                 env=env, start_new_session=True, errors="replace")
            procs.append((label, p))
            th = threading.Thread(target=reader, args=(label, p), daemon=True)
            th.start()
            threads.append(th)
        exits: dict[str, float] = {}
        while time.monotonic() - t0 < cap:
            for label, p in procs:
                if label not in exits and p.poll() is not None:
                    exits[label] = time.monotonic() - t0
            if len(exits) == len(procs):
                break
            time.sleep(0.05)
    finally:
        t_kill = time.monotonic() - t0
        for _, p in procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        for th in threads:
            th.join(5)
    rcs = {label: (p.returncode if label in exits else None) for label, p in procs}
    with lock:
        raw = [x for x in raw if x[0] < t_kill]  # not what tasks said while we killed the others
    records: list[Record] = []
    current: dict[str, Record] = {}
    for t, label, line in sorted(raw, key=lambda x: x[0]):
        level = _start_record(line)
        cur = current.get(label)
        if cur is not None and ((level is None and line.strip() and cur.level != "OUT")
                                or (level == "EX" and cur.level == "TB" and not cur.closed)):
            cur.lines.append(line)
            cur.closed = cur.closed or level == "EX"  # the exception ends a traceback
            continue
        rec = Record(t, label, level or "OUT", [line])
        records.append(rec)
        current[label] = rec
    for label, t in exits.items():
        if rcs[label]:
            records.append(Record(t, label, "EXIT", [f"{label} exited with status {rcs[label]}"]))
    records.sort(key=lambda r: r.t)
    trained = sorted({label for _, label, line in raw if line.startswith("TRAINING DONE")})
    return TfRun(records, rcs, max(exits.values()) if len(exits) == len(procs) else None,
                 max((t for t, _, _ in raw), default=0.0), trained)


def short(text: str, n: int = 90) -> str:
    """The record's first line (continuation lines joined with ' / ' when n > 120), glog header dropped."""
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    if lines[0].startswith("Traceback"):  # the exception, not the stack
        exc = next((x for x in reversed(lines) if EXCEPTION.match(x)), lines[-1])
        lines = [f"Traceback … {exc}", *lines[lines.index(exc) + 1:]] if exc in lines else [f"Traceback … {exc}"]
    line = lines[0] if n <= 120 else " / ".join(lines)
    m = GLOG.match(line)
    if m:
        line = f"{m.group(1)} {m.group(2).split(':')[0]}] {m.group(3)}"
    line = line.replace("|", "\\|").replace("`", "'")
    return line if len(line) <= n else line[:n - 1] + "…"


@dataclass
class TfVerdict:
    first: Record | None
    naming: Record | None                    # first message that names the culprit
    named: list[str]
    partial: Record | None                   # else the first that points near it
    partial_named: list[str]
    hint: tuple[Record, list[str]] | None    # last coordination "Waiting for k/N" (k > 0) and its stragglers
    run: TfRun
    rpc_target_only: Record | None = None    # the culprit task appears only as an RPC's peer, in this message
    layout: Layout | None = None


RPC_TARGET = re.compile(r"remote target (/job:\w+/replica:\d+/task:\d+)")


def _hits(patterns: dict[str, str], r: Record) -> list[str]:
    """What the message's own text names. gRPC's "Additional GRPC error information from remote target
    /job:.../task:K while calling ..." only says which peer an RPC went to (every failed collective names
    its ring neighbours that way), so that clause is left out here and reported apart."""
    text = RPC_TARGET.sub("remote target (peer)", r.text)
    return [label for label, rx in patterns.items() if re.search(rx, text)]


def snippet(patterns: dict[str, str], r: Record, before: int = 45, after: int = 20) -> str:
    """The words around the first hit, e.g. '…connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.2:2222: tcp…'."""
    text = " ".join(x.strip() for x in RPC_TARGET.sub("remote target (peer)", r.text).splitlines() if x.strip())
    m = next(filter(None, (re.search(rx, text) for rx in patterns.values())))
    out = text[max(m.start() - before, 0):m.end() + after]
    return ("…" if m.start() > before else "") + out.replace("|", "\\|").replace("`", "'") + "…"


def judge_tf(run: TfRun, layout: Layout, baseline: set[str]) -> TfVerdict:
    problems = [r for r in run.records if r.problem_level and r.key() not in baseline]
    first = problems[0] if problems else None
    naming = next((r for r in problems if _hits(layout.tf_culprit, r)), None)
    partial = None if naming else next((r for r in problems if _hits(layout.tf_partial, r)), None)
    hint = None
    waits = [r for r in run.records if WAITING.search(r.text)]
    if waits:
        last = waits[-1]
        if int(WAITING.search(last.text).group(1)) > 0:
            idx = run.records.index(last)
            follow = [x for x in run.records[idx + 1:] if x.task == last.task][:1]
            names = re.findall(r"/job:\w+/replica:\d+/task:\d+",
                               "\n".join(x.text for x in follow if "stragglers" in x.text))
            hint = (last, names)
    rpc_only = None
    if naming is None and layout.holder_pid is None and layout.culprit:
        mine = "/job:worker/replica:0/task:" + layout.culprit.split(":")[1]
        rpc_only = next((r for r in problems if mine in RPC_TARGET.findall(r.text)), None)
    return TfVerdict(first, naming, _hits(layout.tf_culprit, naming) if naming else [], partial,
                     _hits(layout.tf_partial, partial) if partial else [], hint, run, rpc_only, layout)


def tf_cells(vs: list[TfVerdict], cap: float) -> tuple[str, str, str]:
    """Table cells from the first run; the time to the first message is the median over all runs."""
    v = vs[0]
    if v.first:
        times = [x.first.t for x in vs if x.first]
        t = f"{statistics.median(times):.1f}" + (f" (median of {len(times)})" if len(times) > 1 else "")
        first = f"{t}: {v.first.task} `{short(v.first.text, 70)}`"
    else:
        first = "nothing" + (f" ({len(vs)} runs)" if len(vs) > 1 else "")
    if v.naming:
        names = f"**yes**, at {v.naming.t:.1f} s: {', '.join(v.named)} (said by {v.naming.task}: " \
                f"`{snippet(v.layout.tf_culprit, v.naming)}`)"
    elif v.partial:
        names = f"**no**; points near it at {v.partial.t:.1f} s: {', '.join(v.partial_named)} " \
                f"(said by {v.partial.task}: `{snippet(v.layout.tf_partial, v.partial)}`)"
    else:
        names = "**no**"
    if v.rpc_target_only:
        names += (f"; task:{v.layout.culprit.split(':')[1]} appears only as the peer of a failed RPC "
                  f"(\"from remote target …/task:{v.layout.culprit.split(':')[1]}\", said by {v.rpc_target_only.task})")
    if v.hint:
        rec, stragglers = v.hint
        names += (f"; the INFO start-up line \"Waiting for {WAITING.search(rec.text).group(0)[12:]}\" "
                  f"(at {rec.t:.1f} s, stragglers: {', '.join(s.split('/')[-1] for s in stragglers) or '?'}) "
                  f"is the last word")
    run = v.run
    rc = ", ".join(f"{k}={'killed' if c is None else c}" for k, c in run.rcs.items())
    if run.ended_at is None:
        alive = [k for k, c in run.rcs.items() if c is None]
        out = (f"**hung at cap ({cap:.0f} s)**: {', '.join(alive)} still running; "
               f"last output at {run.last_output:.1f} s")
        if len(alive) < len(run.rcs):
            out += f" ({', '.join(f'{k}={c}' for k, c in run.rcs.items() if c is not None)})"
    else:
        trained = f"trained: {', '.join(run.trained)}" if run.trained else "nobody trained"
        out = f"ended by {run.ended_at:.1f} s (exit: {rc}); {trained}"
    if len(vs) > 1:
        kinds = {(x.run.ended_at is None, len(x.run.trained), x.naming is not None, x.partial is not None)
                 for x in vs}
        out += f" [{len(vs)} runs, " + ("same outcome]" if len(kinds) == 1 else "outcomes differ, see details]")
    return first, names, out


# --- distdoctor ----------------------------------------------------------------------------------
def run_dd(layout: Layout, timeout: float) -> tuple[float, str, bool]:
    runs = []
    t0 = time.monotonic()
    try:
        for spec in layout.procs:
            if spec.delay:
                time.sleep(spec.delay)
            runs.append(start_task(spec.cluster, spec.task, timeout=timeout, env=spec.env, netns=spec.netns))
        finish(runs, timeout + 60)
    finally:
        kill_all(runs)
    wall = max(r.started + r.wall_s for r in runs) - t0
    good, notes = 0, []
    for r in runs:
        f = [x for x in (r.doc or {}).get("findings", []) if x["code"] == layout.code]
        ok = any(x["culprit"] == layout.culprit and x["category"] == layout.category for x in f)
        if ok and layout.holder_pid is not None:
            # port_in_use: this task (or a peer's report) must name the holding process
            ok = any(str(layout.holder_pid) in x["summary"] for x in r.doc["findings"] if x["category"] == "port_in_use")
        good += ok
        if not ok:
            got = sorted({(x["code"], x["culprit"], x["category"]) for x in (r.doc or {}).get("findings", [])
                          if x["code"].startswith("DD5") or x["code"] in ("DD412", "DD413")}, key=str)
            notes.append(f"{r.task}: rc {r.rc}, got {got or 'no mesh finding'}")
    return wall, "; ".join(notes), good == len(runs)


def dd_cell(layout: Layout, results: list[tuple[float, str, bool]]) -> tuple[str, str]:
    walls = [w for w, _, _ in results]
    n = len(layout.procs)
    all_ok = sum(ok for _, _, ok in results)
    cell = f"{layout.code} {layout.culprit} `{layout.category}`"
    if layout.holder_pid is not None:
        cell += " + holder pid"
    if all_ok == len(results):
        cell = f"**yes**, all {n} tasks, {len(results)}/{len(results)} runs: " + cell
    else:
        bad = next(note for _, note, ok in results if not ok)
        cell = f"**{all_ok}/{len(results)} runs** all tasks right ({cell}); e.g. {bad}"
    if len(walls) == 1:
        return f"{walls[0]:.1f}", cell
    return f"{statistics.median(walls):.1f} (median of {len(walls)}; {min(walls):.1f}–{max(walls):.1f})", cell


# --- main ----------------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, from: {', '.join(CASES)}")
    ap.add_argument("--cap", type=float, default=60.0, help="seconds TensorFlow alone may run per case")
    ap.add_argument("--tf-repeats", type=int, default=3,
                    help="TF runs per case, where cheap: extra runs only when the first ended by --cheap seconds")
    ap.add_argument("--cheap", type=float, default=20.0)
    ap.add_argument("--dd-timeout", type=float, default=4.0, help="check --mesh --timeout")
    ap.add_argument("--dd-repeats", type=int, default=3)
    a = ap.parse_args()
    names = [c.strip() for c in a.cases.split(",") if c.strip()]
    unknown = [c for c in names if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; choose from {list(CASES)}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks (kill, delete namespaces)
    why_not = netns_unavailable()
    t_start = time.monotonic()
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; TF cap {a.cap:.0f} s "
          f"(up to {a.tf_repeats} runs where the first ended within {a.cheap:.0f} s); "
          f"check --mesh --timeout {a.dd_timeout:g}, {a.dd_repeats} run(s) per case\n")

    with case_healthy() as make:
        ref = run_tf(make(), a.cap)
    baseline = {r.key() for r in ref.records if r.problem_level}
    print(f"healthy reference: TF trained on {len(ref.trained)}/3 tasks, all exited by {ref.ended_at or a.cap:.1f} s; "
          f"the {len(baseline)} warning/error lines it prints anyway are not counted as messages:")
    for k in sorted(baseline):
        print(f"  - `{k[:110]}`")
    print()
    rows = [("0. healthy (reference)", "nothing", "—",
             f"trained on {len(ref.trained)}/3 tasks, all exited by {ref.ended_at or a.cap:.1f} s", "—", "—")]
    for name in names:
        title, factory, needs_netns = CASES[name]
        if needs_netns and why_not:
            rows.append((title, f"skipped: {why_not}", "", "", "", ""))
            continue
        t_case = time.monotonic()
        with factory() as make:
            dd = [run_dd(make(), a.dd_timeout) for _ in range(a.dd_repeats)]
            layout = make()
            tfs = [judge_tf(run_tf(layout, a.cap), layout, baseline)]
            while len(tfs) < a.tf_repeats and tfs[0].run.ended_at is not None and tfs[0].run.ended_at <= a.cheap:
                layout = make()
                tfs.append(judge_tf(run_tf(layout, a.cap), layout, baseline))
        wall, cell = dd_cell(layout, dd)
        first, named, outcome = tf_cells(tfs, a.cap)
        rows.append((title, first, named, outcome, wall, cell))
        print(f"### {title}\n")
        for i, tf in enumerate(tfs):
            problems = [r for r in tf.run.records if r.problem_level and r.key() not in baseline]
            run = tf.run
            end = f"ended by {run.ended_at:.1f} s" if run.ended_at is not None else "hung at cap"
            print(f"TF run {i + 1}: {end}, exit {run.rcs}, trained {run.trained or 'nobody'}; "
                  f"{len(problems)} message(s), the first ones:")
            for r in problems[:4]:
                print(f"  - {r.t:5.1f} s {r.task}: `{short(r.text, 400)}`")
            for r in [r for r in run.records if r.level != "EXIT"][-2:]:
                print(f"  - (last output) {r.t:5.1f} s {r.task}: `{short(r.text, 150)}`")
        print(f"\ndistdoctor: {cell}; verdict {wall} s")
        print(f"(case took {time.monotonic() - t_case:.0f} s)\n", flush=True)

    print("| case | TF alone: first message after (s) | TF names the culprit? | TF outcome at cap "
          "| distdoctor check --mesh verdict (s) | distdoctor names culprit + category |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"\ntotal benchmark time {time.monotonic() - t_start:.0f} s")


if __name__ == "__main__":
    main()
