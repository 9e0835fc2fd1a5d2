"""Faults for the tutorial-shaped workers, chosen by the environment (``DD_FAULT``, ``DD_FAULT_TASK``).

The workers tutorial_keras.py, tutorial_ctl.py and tutorial_ps.py are written the way users write them after
TensorFlow's official distributed tutorials; this module is the only thing they share with the tests. It does
not import distdoctor. A fault is one of:

  kill9        the task SIGKILLs itself at the end of epoch 1 (as the OOM killer or a node loss would); a server
               task of a ParameterServerStrategy job, when the chief ends its epoch 1 (DD_FAULT_SYNC, a file)
  exception    the task raises ValueError at the end of epoch 1
  sleep        the task sleeps for ever at the end of epoch 1 (a stuck callback)
  short        the task's input pipeline is cut short (``dataset.take(DD_FAULT_ARG or 20)``)
  extra_numpy  the task computes with numpy for DD_FAULT_ARG (40) seconds at the end of epoch 1 (healthy)
  extra_eager  the task runs eager model calls for DD_FAULT_ARG (40) seconds at the end of epoch 1 (healthy)
  memory       the task allocates memory without end at the end of epoch 1 (a cgroup limit kills it)
  wrong_port   the task's TF_CONFIG names a port nobody listens on for its peer (applied before TF starts)
  same_index   the task's TF_CONFIG claims index 0 (two tasks with one index)

The task that suffers it is DD_FAULT_TASK (``worker:1`` by default).
"""
import json
import os
import signal
import time

FAULT = os.environ.get("DD_FAULT", "")
ARG = os.environ.get("DD_FAULT_ARG", "")


def me() -> str:
    cfg = json.loads(os.environ.get("TF_CONFIG", "{}") or "{}")
    t = cfg.get("task", {})
    return f"{t.get('type')}:{t.get('index')}"


MINE = bool(FAULT) and me() == os.environ.get("DD_FAULT_TASK", "worker:1")

if MINE and os.environ.get("DD_TEST_CGROUP"):
    # the faulty task runs under a memory limit (a container's, a Slurm step's): join the test's cgroup
    with open(os.path.join(os.environ["DD_TEST_CGROUP"], "cgroup.procs"), "w") as fh:
        fh.write(str(os.getpid()))


def corrupt_tf_config() -> None:
    """A wrapper's mistake, before TensorFlow reads TF_CONFIG."""
    if not MINE or FAULT not in ("wrong_port", "same_index"):
        return
    cfg = json.loads(os.environ["TF_CONFIG"])
    if FAULT == "same_index":
        cfg["task"]["index"] = 0
    else:
        jobs = cfg["cluster"]
        peer = next(j for j in ("chief", "worker") if j in jobs and jobs[j])
        i = 0 if peer != cfg["task"]["type"] or cfg["task"]["index"] != 0 else 1
        host, port = jobs[peer][i].rsplit(":", 1)
        jobs[peer][i] = f"{host}:{int(port) + 7}"
    os.environ["TF_CONFIG"] = json.dumps(cfg)


def shard(dataset):
    """The input pipeline of the faulty task holds fewer batches."""
    if MINE and FAULT == "short":
        return dataset.take(int(ARG or 20))
    return dataset


def server_fault() -> None:
    """A ParameterServerStrategy server task (ps, worker) with ``kill9``: SIGKILL once the chief ended epoch 1."""
    if not (MINE and FAULT == "kill9"):
        return

    def die():
        sync = os.environ.get("DD_FAULT_SYNC")
        end = time.time() + 300
        while sync and not os.path.exists(sync) and time.time() < end:
            time.sleep(0.2)
        if not sync:
            time.sleep(float(ARG or 15))
        os.kill(os.getpid(), signal.SIGKILL)

    import threading
    threading.Thread(target=die, daemon=True).start()


def epoch_end(epoch: int, model=None) -> None:
    """Called by the workers after each epoch (0-based); faults fire after the first."""
    if epoch == 0 and os.environ.get("DD_FAULT_SYNC") and me().startswith("chief"):
        open(os.environ["DD_FAULT_SYNC"], "w").close()   # a server task's fault waits for the first epoch's end
    if not MINE or epoch != 0:
        return
    print(f"{me()}: fault {FAULT}", flush=True)
    if FAULT == "kill9":
        os.kill(os.getpid(), signal.SIGKILL)
    elif FAULT == "exception":
        raise ValueError(f"corrupt record in the shard of {me()}")
    elif FAULT == "sleep":
        while True:
            time.sleep(3600)
    elif FAULT == "memory":
        hog = []
        while True:
            hog.append(bytearray(64 << 20))
            for i in range(0, len(hog[-1]), 4096):
                hog[-1][i] = 1
    elif FAULT == "extra_numpy":
        import numpy as np
        end = time.time() + float(ARG or 40)
        a = np.random.default_rng(0).random((300, 300))
        while time.time() < end:
            a = np.tanh(a @ a.T / 300.0)
        print(f"{me()}: extra work done", flush=True)
    elif FAULT == "extra_eager":
        import numpy as np
        end = time.time() + float(ARG or 40)
        x = np.zeros((64, 28, 28), "float32")
        while time.time() < end:
            model(x, training=False)
        print(f"{me()}: evaluation done", flush=True)
