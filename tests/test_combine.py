"""How the signature verdict and the structural rules' diagnosis combine (diagnose/logs/verdict.py)."""
from __future__ import annotations

from distdoctor.diagnose.command import diagnose_paths

FINISHED = ("Epoch 1/2\n100/100 - 3s - loss: 0.5200\nEpoch 2/2\n100/100 - 3s - loss: 0.4100\n"
            "INFO:tensorflow:Loss for final step: 0.41.\n")
CUT = ("2018-11-12 15:46:11.527775: I tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:324] Started server "
       "with target: grpc://localhost:2223\n"
       'Traceback (most recent call last):\n  File "train.py", line 12, in <module>\n    main()\n'
       '  File "train.py", line 9, in main\n    model.fit(ds)\n[...]\n')


def _diag(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    diag, _ = diagnose_paths([str(tmp_path / n) for n in files], detected_at=0.0)
    return diag


def test_a_task_that_died_at_start_up_is_not_hidden_by_a_peer_that_finished(tmp_path):
    diag = _diag(tmp_path, {"worker-0.log": CUT, "worker-1.log": FINISHED})
    # (the cut traceback's category is the learned reading's: DD861 names no cause)
    assert (diag.status.value, diag.root_cause.code, diag.root_cause.culprit) == ("failed", "DD861", "worker:0")


def test_a_finished_job_with_a_peers_warning_stays_succeeded(tmp_path):
    diag = _diag(tmp_path, {"worker-0.log": FINISHED, "worker-1.log": "W tensorflow/core: some warning\n" + FINISHED})
    assert diag.status.value == "succeeded"
