"""Never call a healthy job hung: real MultiWorkerMirroredStrategy jobs that pause the way real jobs do.

Each job (tests/workers/healthy.py, which does not import distdoctor) runs under ``distdoctor run --workers 2``
and must end ``succeeded``, exit 0, with no hang declared and no signal sent by distdoctor. A pause in which one
task works while its peer waits in the all-reduce is suspected early (an event naming it), cleared when training
resumes, and kept as a DD211 warning that names the task, where it was and what it was doing. The stall faults
beside them stay hangs: tests/test_run_faults.py. Figures over repeated runs: benchmarks/bench_false_alarms.py.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import PY, WORKERS, dd_run, requires_tf

pytestmark = [pytest.mark.tf, requires_tf]
PAUSE_S = "22"   # above every default stall threshold (10-20 s): the old detector stopped each of these


def healthy(scenario: str) -> list[str]:
    return [PY, str(WORKERS / "healthy.py"), "--scenario", scenario, "--pause", PAUSE_S]


def events(bundle: Path) -> list[dict]:
    return [json.loads(line) for line in (bundle / "events.jsonl").read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def slow_url():
    """A slow HTTP server on loopback (tests/workers/slow_server.py), ended afterwards."""
    proc = subprocess.Popen([PY, str(WORKERS / "slow_server.py")], stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.kill()
        proc.wait()


# scenario, the task that pauses the job (None: nobody waits on anybody), words of what it was doing
PAUSES = [
    ("eval_python", "worker:0", "computing", "eval_python"),
    ("download", "worker:0", "network", "download"),
    ("save", "worker:0", "files", "save"),
    ("trace", "worker:0", "computing", None),
    ("cache", "worker:1", "computing", None),
]


def _assert_healthy(r, name: str) -> list[dict]:
    assert r.diag is not None, r.stderr[-3000:]
    evs = events(r.bundle)
    kinds = [e["kind"] for e in evs]
    assert (r.rc, r.diag["status"]) == (0, "succeeded"), (name, json.dumps(r.diag["findings"], indent=1)[:3000])
    assert "hang_declared" not in kinds and "signal_sent" not in kinds, evs
    assert not [f for f in r.diag["findings"] if f["severity"] == "error"]
    assert all(t["exit_code"] == 0 for t in r.diag["tasks"].values())
    return evs


@pytest.mark.parametrize("scenario,task,doing,where", PAUSES, ids=[p[0] for p in PAUSES])
def test_a_pause_while_the_peer_waits_is_not_a_hang(scenario, task, doing, where, request):
    env = {"DD_SLOW_URL": request.getfixturevalue("slow_url")} if scenario == "download" else None
    r = dd_run(f"healthy-{scenario}", [], healthy(scenario), env=env, timeout=300)
    evs = _assert_healthy(r, scenario)
    # suspected early, naming the task; cleared when training resumed. (On a loaded box the start-up can hold a
    # peer in its first collective too -- a model built late, at <module> -- and is then a pause of its own.)
    sus = [e for e in evs if e["kind"] == "stall_suspected" and e["task"] == task]
    clr = [e for e in evs if e["kind"] == "stall_cleared" and e["task"] == task]
    assert sus and "a pause, not a stall" in sus[-1]["text"], evs
    assert clr and clr[-1]["ts"] > sus[-1]["ts"], evs
    # the pause is a warning: which task, where, how long, what it did, its share of the run
    f = [f for f in r.diag["findings"] if f["code"] == "DD211" and f["culprit"] == task]
    assert len(f) == 1 and f[0]["severity"] == "warning", r.diag["findings"]
    s = f[0]["summary"]
    # what it did is what moved last: throttled writes with a flush each also burn ~0.2 cores (seen on a quiet box)
    assert (doing in s or (scenario == "save" and "computing" in s)) and "% of the run time" in s \
        and "healthy.py:" in s, s
    if where:
        assert f"in {where}" in s, s
    seconds = float(s.split("for ", 1)[1].split(" s", 1)[0])
    # a trace lasts as long as this machine takes to build the graph (10.7 s on a quiet box): not the --pause
    assert (5 if scenario == "trace" else 12) <= seconds <= 120, s


def test_every_worker_sleeping_is_not_even_suspected():
    r = dd_run("healthy-sleep_all", [], healthy("sleep_all"), timeout=300)
    evs = _assert_healthy(r, "sleep_all")
    assert not [e for e in evs if e["kind"] == "stall_suspected"], evs


def test_a_slow_input_pipeline_on_one_worker_is_a_straggler():
    r = dd_run("healthy-slow_input", [], healthy("slow_input"), timeout=300)
    _assert_healthy(r, "slow_input")
    # the slow reader named a straggler; on a loaded box worker:0's start-up (the strategy's construction) can also
    # hold worker:1 in its first collective long enough to be kept as a pause of its own (DD211): another finding
    f = [f for f in r.diag["findings"] if f["category"] == "straggler_slow_worker" and f["code"] != "DD211"]
    assert f and f[0]["culprit"] == "worker:1" and f[0]["severity"] == "warning", r.diag["findings"]


def test_keras_fit_with_validation():
    r = dd_run("healthy-fit_val", [], healthy("fit_val"), timeout=300)
    _assert_healthy(r, "fit_val")
    log = (r.bundle / "logs" / "worker-0.log").read_text()
    assert "val_loss" in log
