"""Synthetic run bundles for report tests: what `distdoctor run` writes, without TensorFlow.

``make_bundle(dir, n_tasks, scenario)`` writes a bundle folder for one of three
stories, with deterministic times:

* ``healthy``: every task connects, trains 3 epochs and exits 0;
* ``stall``: worker:1 stops in its input pipeline; its peers wait in the
  collective; distdoctor suspects a stall, declares a hang and stops them all;
* ``oom``: worker:1's memory grows until the kernel kills it (SIGKILL); its
  peers report the lost peer and exit 1.

Logs carry the traps real logs carry (ANSI colours, ``<`` and ``&``).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
from typing import Any

from distdoctor.model import format_clock

__all__ = ["make_bundle", "write_bundle", "bundle_records", "T0", "SCENARIOS"]

T0 = 1795284000.0          # 2026-11-21, a fixed start so outputs are reproducible
SCENARIOS = ("healthy", "stall", "oom")
SAMPLE_S = 0.5
STEP_S = 0.1               # healthy step time
STEPS_PER_EPOCH = 100


def _stamp(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f+0000")


def _ev(task: str | None, ts: float, text: str, consequence: bool = False) -> str:
    return f"[{task or 'job'} {format_clock(ts)}]{' (consequence)' if consequence else ''} {text}"


class _Task:
    def __init__(self, name: str, start: float) -> None:
        self.name = name
        self.start = start
        self.lines: list[str] = []
        self.samples: list[dict] = []
        self.events: list[dict] = []

    def log(self, ts: float, text: str) -> None:
        self.lines.append(f"{_stamp(ts)} {text}")

    def event(self, ts: float, kind: str, text: str) -> None:
        self.events.append({"ts": round(ts, 3), "task": self.name, "kind": kind, "text": text})


def bundle_records(n_tasks: int, scenario: str) -> dict[str, Any]:
    """The bundle's contents as Python objects: diagnosis, samples, events, logs."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; expected one of {SCENARIOS}")
    culprit = "worker:1" if n_tasks > 1 else "worker:0"
    stop_at = T0 + 20.0            # when the culprit stops stepping (stall) / is killed (oom)
    tasks = [_Task(f"worker:{i}", T0 + 0.013 * i) for i in range(n_tasks)]
    hang_at = T0 + 40.0
    job_events: list[dict] = []
    for idx, t in enumerate(tasks):
        is_culprit = t.name == culprit
        t.event(t.start, "start", f"pid {4000 + idx}: python train.py")
        t.log(t.start + 0.2, "\x1b[33mI1121 18:00:00.200000 4000 port.cc:153] oneDNN custom operations are on\x1b[0m")
        connected = t.start + 2.5 + 0.01 * idx
        t.log(connected - 0.1, f"I1121 18:00:02 grpc_server_lib.cc:467] Started server with target: grpc://localhost:{20000 + idx}")
        t.log(connected, "I1121 18:00:02 collective_all_reduce_strategy.cc:394] Enabled multi-worker collective ops "
                         "with available devices: ['/job:worker/replica:0/task:0/device:CPU:0']")
        t.event(connected, "connected", "Enabled multi-worker collective ops with available devices")
        first = T0 + 6.0 + 0.005 * idx
        t.event(first, "first_step", "first training step completed")
        t.log(first - 0.5, "Epoch 1/3")
        # Per-task step time: a slight spread, as real workers show.
        step_s = STEP_S * (1.0 + 0.02 * (idx % 5))
        end_train = first + 3 * STEPS_PER_EPOCH * step_s
        if scenario == "healthy":
            last_step_at = end_train
        elif scenario == "stall" and not is_culprit:
            last_step_at = stop_at + 0.15   # peers finish the step in flight, then wait for the culprit
        else:
            last_step_at = stop_at
        if scenario == "healthy":
            ends = end_train + 1.0
        elif scenario == "stall":
            ends = hang_at + 1.0 + 0.01 * idx
        else:
            ends = stop_at + 0.3 if is_culprit else stop_at + 8.0 + 0.02 * idx

        def steps_at(ts: float) -> int:
            if ts < first:
                return 0
            return min(int((min(ts, last_step_at) - first) / step_s) + 1, 3 * STEPS_PER_EPOCH)

        # progress lines, one per 20 steps; an epoch line at each epoch boundary
        done = 0
        ts = first
        while ts <= min(last_step_at, ends):
            s = steps_at(ts)
            epoch, in_epoch = divmod(s - 1, STEPS_PER_EPOCH)
            if in_epoch == 0 and epoch > 0 and s != done:
                t.log(ts - 0.01, f"Epoch {epoch + 1}/3")
            if s != done and (in_epoch + 1) % 20 == 0:
                t.log(ts, f"\x1b[1m{in_epoch + 1}/{STEPS_PER_EPOCH}\x1b[0m [==============>...] - ETA: 1s - loss: {0.9 / (s + 1) ** 0.3:.4f}")
            done = s
            ts += step_s
        # samples
        ts = t.start + 0.25
        cpu = 0.0
        while ts < ends:
            s = steps_at(ts)
            stalled = scenario == "stall" and ts > last_step_at
            rss = 350e6 + 2e5 * s
            if scenario == "oom" and is_culprit:
                rss = 400e6 + max(0.0, ts - first) * 5e8   # grows ~500 MB/s until killed
            busy = 1.6 if ts > first and not stalled else 0.05
            if scenario == "stall" and is_culprit and stalled:
                busy = 1.0  # spinning in Python (its input pipeline)
            cpu += busy * SAMPLE_S
            where = None
            in_call = None
            location = None
            if ts > first:
                where, in_call = "tf", "__inference_train_function_2411"
            if stalled and is_culprit:
                where, in_call, location = "python", None, "train.py:88 in slow_input_fn"
            t.samples.append({"ts": round(ts, 3), "task": t.name, "state": "running" if busy > 0.5 else "sleeping",
                              "rss": int(rss), "cpu": round(cpu, 3), "calls": s, "steps": s, "in_call": in_call,
                              "where": where, "location": location})
            ts += SAMPLE_S
        # endings
        if scenario == "healthy":
            t.log(ends - 0.2, f"{STEPS_PER_EPOCH}/{STEPS_PER_EPOCH} [==============================] - 3s 30ms/step - loss: 0.0912")
            t.log(ends - 0.1, "saved model to /tmp/model & checkpoints <ok>")
            t.event(ends, "exit", "exit code 0")
        elif scenario == "stall":
            t.event(hang_at + 0.1, "signal_sent", "SIGTERM (hang)")
            t.event(ends, "exit", "signal SIGTERM")
        else:
            if is_culprit:
                t.log(ends - 0.1, "Killed")
                t.event(ends, "exit", "signal SIGKILL")
                t.event(ends + 0.5, "fault", f"{t.name} failed (signal SIGKILL)")
            else:
                sym = ends - 7.0
                t.log(sym, "W1121 18:00:20 coordination_service_agent.cc:512] /job:worker/replica:0/task:1 "
                           "stopped sending heartbeats: Socket closed <grpc> & more")
                t.log(sym + 1, "Traceback (most recent call last):")
                t.log(sym + 1, '  File "train.py", line 120, in <module>')
                t.log(sym + 1, "    model.fit(ds, epochs=3)")
                t.log(sym + 1.01, "tensorflow.python.framework.errors_impl.UnavailableError: Collective ops is aborted by: "
                                  "The tasks have crashed: /job:worker/replica:0/task:1")
                t.event(ends, "exit", "exit code 1")
        t.ends = ends
        t.last_step_at = last_step_at
        t.steps = steps_at(ends)

    if scenario == "stall":
        job_events.append({"ts": T0 + 32.0, "task": culprit, "kind": "stall_suspected",
                           "text": f"{culprit} made no step for 12 s while its peers wait in a collective"})
        job_events.append({"ts": hang_at, "task": culprit, "kind": "hang_declared",
                           "text": f"{culprit} stuck in Python code (train.py:88 in slow_input_fn); peers wait in all-reduce"})

    diag_tasks = {}
    for t in tasks:
        is_culprit = t.name == culprit
        if scenario == "healthy":
            code, sig, stack = 0, None, ""
        elif scenario == "stall":
            code, sig = None, "SIGTERM"
            stack = ('Thread 4000 (idle): "MainThread"\n    slow_input_fn (train.py:88)\n    gen (train.py:61)\n'
                     if is_culprit else 'Thread 4001 (active): "MainThread"\n    _call (tensorflow/python/eager/polymorphic_function.py:905)\n'
                     "    <module> (train.py:120)\n")
        else:
            code, sig = (None, "SIGKILL") if is_culprit else (1, None)
            stack = ""
        diag_tasks[t.name] = {"exit_code": code, "signal": sig, "state": "exited", "last_progress_at": round(t.last_step_at, 3),
                              "stack": stack, "steps": t.steps, "pid": 4000 + tasks.index(t),
                              "log": f"logs/{t.name.replace(':', '-')}.log",
                              "peak_rss_bytes": max(s["rss"] for s in t.samples)}

    if scenario == "healthy":
        status, root, findings = "succeeded", None, []
    elif scenario == "stall":
        status = "hung"
        root = {"code": "DD201", "category": "hang_stalled_worker", "culprit": culprit, "severity": "error",
                "summary": f"{culprit} stopped making progress in its own Python code (train.py:88 in slow_input_fn) "
                           f"while its {n_tasks - 1} peers wait for it in a collective all-reduce.",
                "evidence": [_ev(culprit, stop_at, "step 138 done; then no step for 20 s"),
                             _ev(culprit, hang_at, "py-spy: slow_input_fn (train.py:88) <- gen (train.py:61)"),
                             _ev("worker:0" if culprit != "worker:0" else None, hang_at,
                                 "waiting in __inference_train_function_2411 (collective all-reduce)", True)],
                "remedy": "Look at slow_input_fn (train.py:88): it blocks the step on this worker only. "
                          "Make the input pipeline non-blocking, or shard data so no worker waits on I/O.",
                "at": stop_at}
        findings = [root]
    else:
        status = "failed"
        root = {"code": "DD103", "category": "oom_host", "culprit": culprit, "severity": "error",
                "summary": f"{culprit} was killed by the kernel OOM killer (SIGKILL) after its memory grew to 7.0 GiB; "
                           "its peers then failed with UnavailableError.",
                "evidence": [_ev(culprit, stop_at, "RSS grew from 0.4 GiB to 7.0 GiB in 14 s"),
                             _ev(culprit, stop_at + 0.3, "killed by SIGKILL; kernel: Out of memory: Killed process 4001 (python)"),
                             _ev("worker:0" if culprit != "worker:0" else None, stop_at + 2,
                                 "UnavailableError: Collective ops is aborted by: The tasks have crashed: /job:worker/replica:0/task:1",
                                 True)],
                "remedy": "Reduce the per-worker batch size or the shuffle/prefetch buffers, or give the task more memory.",
                "at": stop_at}
        findings = [root, {"code": "DD101", "category": "peer_crashed", "culprit": culprit, "severity": "warning",
                           "summary": f"{n_tasks - 1} task(s) failed because {culprit} died.",
                           "evidence": [], "remedy": "Fix the root cause on the culprit.", "at": stop_at + 1}]
    diagnosis = {"schema_version": 1, "command": "run", "status": status, "root_cause": root, "findings": findings,
                 "detected_at": (hang_at if scenario == "stall" else max(t.ends for t in tasks)),
                 "tasks": diag_tasks, "notes": [f"synthetic {scenario} bundle with {n_tasks} task(s)"]}
    samples = sorted((s for t in tasks for s in t.samples), key=lambda s: s["ts"])
    events = sorted([e for t in tasks for e in t.events] + job_events, key=lambda e: e["ts"])
    logs = {t.name.replace(":", "-") + ".log": t.lines for t in tasks}
    return {"diagnosis": diagnosis, "samples": samples, "events": events, "logs": logs}


def write_bundle(dir: str, rec: dict[str, Any], parts: tuple[str, ...] = ("diagnosis", "samples", "events", "logs")) -> str:
    """Write bundle records (as from :func:`bundle_records`, maybe edited) into ``dir``; only ``parts``."""
    os.makedirs(os.path.join(dir, "logs"), exist_ok=True)
    if "diagnosis" in parts:
        with open(os.path.join(dir, "diagnosis.json"), "w") as fh:
            json.dump(rec["diagnosis"], fh, indent=1)
    if "samples" in parts:
        with open(os.path.join(dir, "samples.jsonl"), "w") as fh:
            fh.writelines(json.dumps(s) + "\n" for s in rec["samples"])
    if "events" in parts:
        with open(os.path.join(dir, "events.jsonl"), "w") as fh:
            fh.writelines(json.dumps(e) + "\n" for e in rec["events"])
    if "logs" in parts:
        for name, lines in rec["logs"].items():
            with open(os.path.join(dir, "logs", name), "w") as fh:
                fh.writelines(line + "\n" for line in lines)
    return dir


def make_bundle(dir: str, n_tasks: int, scenario: str) -> str:
    """Write a synthetic bundle into ``dir`` (created) and return its path."""
    return write_bundle(dir, bundle_records(n_tasks, scenario))


RESTART_GAP = 100.0        # attempt 2 of a restarted bundle starts this long after attempt 1


def _shift(rec: dict[str, Any], by: float) -> dict[str, Any]:
    """The same records ``by`` seconds later (samples, events, log prefixes, the diagnosis' times)."""
    def stamp(line: str) -> str:
        ts = _dt.datetime.strptime(line[:31], "%Y-%m-%dT%H:%M:%S.%f+0000").replace(tzinfo=_dt.timezone.utc).timestamp()
        return _stamp(ts + by) + line[31:]
    diag = json.loads(json.dumps(rec["diagnosis"]))
    diag["detected_at"] += by
    for t in diag["tasks"].values():
        if t.get("last_progress_at") is not None:
            t["last_progress_at"] += by
    return {"diagnosis": diag, "samples": [dict(s, ts=s["ts"] + by) for s in rec["samples"]],
            "events": [dict(e, ts=e["ts"] + by) for e in rec["events"]],
            "logs": {name: [stamp(line) for line in lines] for name, lines in rec["logs"].items()}}


def make_restarted_bundle(dir: str, n_tasks: int) -> str:
    """A run restarted once, as ``run --restarts 1`` leaves it: attempt 1 (worker:1 OOM-killed) in
    ``attempts/1/``, attempt 2 (healthy, ``RESTART_GAP`` s later) at the top level, the ledger in diagnosis.json."""
    first, second = bundle_records(n_tasks, "oom"), _shift(bundle_records(n_tasks, "healthy"), RESTART_GAP)
    write_bundle(os.path.join(dir, "attempts", "1"), first)
    second["events"].insert(0, {"ts": T0 + RESTART_GAP - 0.5, "task": None, "kind": "attempt", "text": "attempt 2 starts"})
    end1 = max(e["ts"] for e in first["events"])
    end2 = max(e["ts"] for e in second["events"])
    second["diagnosis"]["attempts"] = [
        {"number": 1, "started_at": T0, "ended_at": end1, "status": "failed", "root_cause": first["diagnosis"]["root_cause"],
         "decision": "restart", "reason": "oom_host on worker:1: a first OOM gets one restart", "backoff_s": 10.0,
         "resumed_from": {"epoch": 0, "step": None, "checkpoint": None}, "restart_class": "transient"},
        {"number": 2, "started_at": T0 + RESTART_GAP - 0.5, "ended_at": end2, "status": "succeeded", "root_cause": None,
         "decision": "none", "reason": "the job succeeded", "backoff_s": 0.0,
         "resumed_from": {"epoch": 0, "step": None, "checkpoint": None}}]
    second["diagnosis"]["goodput"] = {"wall_s": end2 - T0, "productive_s": 30.0, "ratio": round(30.0 / (end2 - T0), 4),
                                      "badput": {"program_startup_s": 12.0, "wasted_progress_s": 14.0,
                                                 "disruption_s": 1.0, "backoff_s": 10.0}}
    return write_bundle(dir, second)
