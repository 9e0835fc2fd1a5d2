"""TensorFlow's vocabulary (issue 25 item 4): the messages extracted from five releases' wheels by
scripts/tf_vocabulary.py, shipped in the package, looked up in log lines with the releases that print them."""
from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path

from distdoctor.diagnose.logs.tfvocab import disjoint, lookup, releases_of, vocabulary

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("tf_vocabulary", ROOT / "scripts" / "tf_vocabulary.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_shipped_vocabulary_covers_five_releases_and_every_component():
    msgs, releases = vocabulary()
    assert releases == ("1.15", "2.4", "2.10", "2.15", "2.21")
    assert len(msgs) > 1000
    comps = {m.component for m in msgs}
    assert {"collective", "coordination", "rpc", "session", "parameter_server", "memory"} <= comps
    assert all(set(m.releases) <= set(releases) and m.releases for m in msgs)


def test_a_message_is_found_in_a_line_with_its_values_filled_in_and_its_releases():
    line = ("2025-03-01 12:00:00.1: E tensorflow/core/distributed_runtime/coordination/coordination_service.cc:1234] "
            "The following tasks are unhealthy (stopped sending heartbeats):\n")
    found = lookup(line)
    assert found and found[0].component == "coordination" and found[0].releases == ("2.21",)
    # TF 2.15 said it otherwise: a release between 2.15 and 2.21 (not read) may print both wordings ...
    older = "Stopping coordination service as the following tasks are unhealthy (stopped sending heartbeats): x"
    (lo, hi), why = releases_of([older, line])
    assert lo < hi and len(why) == 2
    # ... but no release prints both a 1.15-only and a 2.21-only message (2.4 to 2.15, read, print neither)
    ancient = "E tensorflow/core/common_runtime/collective_param_resolver_local.cc] CompleteGroupResponse group_size " \
              "doesn't match task_name list"
    span, why = releases_of([ancient, line])
    assert disjoint(span, span) and [m.releases for m in why] == [("1.15",), ("2.21",)]
    # a format's values: "Saving checkpoints for %d into %s."
    assert any(m.component == "checkpoint" for m in lookup("INFO:tensorflow:Saving checkpoints for 400 into /tmp/m/model.ckpt."))
    assert not lookup("Epoch 3/10 - loss: 0.31") and releases_of(["hello world"])[0] == (-1, len(vocabulary()[1]))


def test_the_extractor_reads_library_pieces_in_order_and_python_messages(tmp_path):
    mod = _script()
    # a library's strings in the order of their source: a piece continuing a collective message is kept with it
    lib = (b"\x00_ZN10tensorflow3fooEv\x00Collective Op has group_size \x00, but that group has size \x00"
           b"Loss scale factor is too large\x00Socket closed\x00")
    got = mod._library_fragments(lib)
    assert got.get("Collective Op has group_size") == "collective"
    assert got.get("but that group has size") == "collective"
    assert "Loss scale factor is too large" not in got and "_ZN10tensorflow3fooEv" not in got
    assert got.get("Socket closed") == "rpc"
    src = ("def f(x):\n    if x:\n        raise ValueError('TF_CONFIG has no cluster spec: ' + x)\n"
           "    logging.warning('Coordinator %s lost its worker', x)\n    return 1\n")
    assert mod._python_messages(src) == {"TF_CONFIG has no cluster spec:", "Coordinator %s lost its worker"}
    # a wheel's name says its release; a whole (tiny) wheel is read end to end
    whl = tmp_path / "tensorflow_cpu-2.21.0-cp312-cp312-manylinux_2_27_x86_64.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("tensorflow/libtensorflow_framework.so.2", lib)
        z.writestr("tensorflow/python/distribute/x.py", src)
    rows = mod.build([str(whl)])
    assert ("Socket closed", ["2.21"], "rpc") in rows and len(rows) == 5


def _dd(*args):
    import os
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "distdoctor", *args], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_diagnose_says_when_two_tasks_print_messages_no_one_release_prints(tmp_path):
    import json
    (tmp_path / "worker-0.log").write_text(
        "2024-01-01 10:00:00.000001: E tensorflow/core/distributed_runtime/coordination/coordination_service.cc:1] "
        "The following tasks are unhealthy (stopped sending heartbeats):\n/job:worker/replica:0/task:1\n")
    (tmp_path / "worker-1.log").write_text(
        "2019-01-01 10:00:00.000001: E tensorflow/core/common_runtime/collective_param_resolver_local.cc:1] "
        "CompleteGroupResponse group_size doesn't match task_name list\n")
    diag = json.loads(_dd("diagnose", "--json", str(tmp_path)).stdout)
    note = next(n for n in diag["notes"] if "TensorFlow release" in n)
    assert note.startswith("worker:0 and worker:1 may run different TensorFlow releases") and "1.15" in note
    # one task alone, with one release's lines: no such note
    (tmp_path / "worker-1.log").unlink()
    diag = json.loads(_dd("diagnose", "--json", str(tmp_path)).stdout)
    assert not any("TensorFlow release" in n for n in diag["notes"])
