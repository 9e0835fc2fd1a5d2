"""Content mixes for ``bench_diagnose.py --content progress|info|errors``: logs in which (nearly) every line is a
prefilter candidate, the worst case for a scanner that does per-line work on candidates.

The wording is TensorFlow's own (the strings of the installed wheel's ``libtensorflow_framework.so.2`` /
``libtensorflow_cc.so.2`` and its Python sources: the coordination service and agent, the gRPC server, the
collective executor, ``INFO:tensorflow:`` lines of ``collective_all_reduce_strategy.py``), Keras's progress bars
(``verbose=1`` drawn with ``\\b``/``\\r``, Keras 3's ``━`` bar, ``verbose=2`` epoch lines) and NCCL's
``NCCL_DEBUG=INFO`` chatter (``init.cc``/``bootstrap.cc`` messages). Every log ends with the same buried fault as
the other mixes: worker:``culprit`` is SIGKILLed and says nothing, its peers print the cascade.

* ``progress``: Keras progress bars and epoch lines, a few absl lines between epochs;
* ``info``: TF start-up and coordination-service lines, gRPC server lines, collective VLOGs, NCCL INFO chatter,
  ``INFO:tensorflow`` strategy lines (every one names a task, a device or the coordination service);
* ``errors``: error/warning lines that match knowledge-base signatures (cancelled rendezvous items, retried
  RecvBuf calls, NCCL WARNs, cuInit failures, OOM-looking allocator warnings, dataset warnings) among INFO lines.
* ``crashloop``: a crash-looping task's log (a pod restarted by its controller, the same log file appended to):
  TensorFlow's start-up block, the coordination service's connection attempts, and the same fatal error with its
  traceback, again and again -- every line a candidate, every error the same one.
"""
from __future__ import annotations

import random

T0 = 1795286218.0


def _absl(level: str, ts: float, tid: int, msg: str) -> str:
    return f"{level}0000 00:00:{ts:.6f} {tid:>8} {msg}\n"


def _task(t: int) -> str:
    return f"/job:worker/replica:0/task:{t}"


def _startup(index: int, tasks: int, ts: float, tid: int) -> list[str]:
    spec = ", ".join(f"'worker-{k}.dd-bench:2222'" for k in range(min(tasks, 8)))
    return [
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n",
        _absl("I", ts, tid, "port.cc:153] oneDNN custom operations are on. You may see slightly different numerical "
                            "results due to floating-point round-off errors from different computation orders. To turn "
                            "them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`."),
        _absl("I", ts, tid, "cpu_feature_guard.cc:227] This TensorFlow binary is optimized to use available CPU "
                            "instructions in performance-critical operations."),
        "To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow with the "
        "appropriate compiler flags.\n",
        f"INFO:tensorflow:Enabled multi-worker collective ops with available devices: ['{_task(index)}/device:CPU:0', "
        f"'{_task(index)}/device:GPU:0']\n",
        f"INFO:tensorflow:MultiWorkerMirroredStrategy with cluster_spec = {{'worker': [{spec}]}}, task_type = 'worker', "
        f"task_id = {index}, num_workers = {tasks}, local_devices = ('{_task(index)}/device:GPU:0',), "
        "communication = CommunicationImplementation.AUTO\n",
    ]


def _info_line(rng: random.Random, index: int, tasks: int, ts: float, tid: int, i: int) -> str:
    t = rng.randrange(tasks)
    r = rng.random()
    host = f"worker-{index}"
    if r < 0.12:
        return _absl("I", ts, tid, f"coordination_service.h:529] {_task(t)} has connected to coordination service. "
                                   f"Incarnation: {rng.getrandbits(63)}")
    if r < 0.18:
        return (_absl("I", ts, tid, f"coordination_service.cc:502] Waiting for {rng.randint(1, tasks)}/{tasks} tasks "
                                    "to connect.")
                + _absl("I", ts, tid, "coordination_service.cc:505] Example stragglers:") + f"{_task(t)}\n")
    if r < 0.24:
        return _absl("I", ts, tid, "coordination_service_agent.cc:245] Coordination agent has successfully connected.")
    if r < 0.30:
        return _absl("I", ts, tid, f"coordination_service.cc:1472] Barrier(WaitForAllTasks::{rng.getrandbits(62)}::0) "
                                   "has passed with status: OK")
    if r < 0.35:
        return _absl("I", ts, tid, f"grpc_server_lib.cc:467] Started server with target: grpc://{host}.dd-bench:2222")
    if r < 0.40:
        return _absl("I", ts, tid, "coordination_service.cc:221] Initializing CoordinationService")
    if r < 0.45:
        return _absl("I", ts, tid, f"gpu_device.cc:2020] Created device {_task(index)}/device:GPU:0 with 38366 MB "
                                   "memory:  -> device: 0, name: NVIDIA A100-SXM4-40GB, pci bus id: 0000:00:04.0, "
                                   "compute capability: 8.0")
    if r < 0.50:
        peers = ", ".join(f"{k} -> worker-{k}.dd-bench:2222" for k in range(min(tasks, 6)))
        return _absl("I", ts, tid, f"grpc_channel.cc:346] Initialize GrpcChannelCache for job worker -> {{{peers}}}")
    if r < 0.58:
        return _absl("I", ts, tid, f"collective_param_resolver_local.cc:709] CompleteInstanceLocal "
                                   f"{_task(index)}/device:GPU:0 instance_key: {i} group_key 1")
    if r < 0.64:
        return _absl("I", ts, tid, f"base_collective_executor.cc:500] Unblocking dependencies for collective "
                                   f"instance {i}")
    if r < 0.68:
        return _absl("I", ts, tid, f"collective_param_resolver_local.cc:247] CompleteGroupLocal group_key=1 "
                                   f"group_size={tasks} (current devices)=(,{_task(index)}/device:GPU:0) "
                                   "(number of devices pending)=1")
    # NCCL_DEBUG=INFO: "host:pid:tid [dev] NCCL INFO ..."
    pre = f"{host}:{40 + index}:{300 + rng.randrange(40)} [0] NCCL INFO "
    nccl = rng.choice((
        "Bootstrap : Using eth0:10.0.{a}.{b}<0>",
        "NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
        "cudaDriverVersion 12020",
        "NCCL version 2.18.3+cuda12.2",
        "NET/Socket : Using [0]eth0:10.0.{a}.{b}<0>",
        "Using network Socket",
        "Channel {c:02d}/02 :    0   1",
        "Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1",
        "Channel {c:02d}/0 : 0[4000] -> 1[4000] [send] via NET/Socket/0",
        "Connected all rings",
        "Connected all trees",
        "threadThresholds 8/8/64 | 16/8/64 | 512 | 512",
        "comm 0x55d4{b:04x} rank {r} nranks {n} cudaDev 0 busId 4000 - Init COMPLETE",
    ))
    return pre + nccl.format(a=index % 250, b=rng.randrange(250), c=rng.randrange(2), r=index, n=tasks) + "\n"


def _progress_epoch(rng: random.Random, steps: int, loss: float) -> str:
    parts = []
    width = 0
    for s in range(1, steps + 1):
        done = s * 30 // steps
        bar = "=" * max(0, done - 1) + (">" if done < 30 else "=") + "." * (30 - done)
        eta = max(0, (steps - s) // 60)
        text = f"{s:>4}/{steps} [{bar}] - ETA: {eta}s - loss: {loss:.4f} - accuracy: {1 - loss:.4f}" if s < steps else \
            f"{s:>4}/{steps} [{bar}] - 3s 13ms/step - loss: {loss:.4f} - accuracy: {1 - loss:.4f}"
        parts.append("\b" * width + "\r" + text)
        width = len(text)
        loss *= 0.999
    return "".join(parts) + "\n"


def _keras3_epoch(steps: int, loss: float) -> str:
    parts = []
    for s in range(1, steps + 1, 7):
        done = s * 20 // steps
        bar = "\u2501" * done + " " * (20 - done)
        parts.append(f"\r{s:>4}/{steps} {bar} {max(0, steps - s) // 40}s 12ms/step - accuracy: {1 - loss:.4f} - "
                     f"loss: {loss:.4f}")
        loss *= 0.995
    return "".join(parts) + f"\r{steps}/{steps} {'━' * 20} 3s 12ms/step - accuracy: {1 - loss:.4f} - loss: {loss:.4f}\n"


def _error_line(rng: random.Random, index: int, tasks: int, ts: float, tid: int, i: int) -> str:
    t = rng.randrange(tasks)
    r = rng.random()
    if r < 0.15:
        return _absl("W", ts, tid, f"local_rendezvous.cc:404] Local rendezvous recv item cancelled. Key hash: "
                                   f"{rng.getrandbits(62)}")
    if r < 0.25:
        return _absl("W", ts, tid, "dataset.cc:997] Input of GeneratorDatasetOp::Dataset will not be optimized because "
                                   "the dataset does not implement the AsGraphDefInternal() method needed to apply "
                                   "optimizations.")
    if r < 0.35:
        return _absl("E", ts, tid, "cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: Failed call to "
                                   "cuInit: UNKNOWN ERROR (303)")
    if r < 0.45:
        return _absl("W", ts, tid, f"cpu_allocator_impl.cc:83] Allocation of {rng.randint(10**8, 10**9)} exceeds 10% "
                                   "of free system memory.")
    if r < 0.55:
        return _absl("W", ts, tid, f"rpc_util.cc:{rng.randint(100, 300)}] RecvBuf from {_task(t)} failed, retrying: "
                                   "UNAVAILABLE: Socket closed")
    if r < 0.62:
        return (f"worker-{index}:{40 + index}:{300 + rng.randrange(40)} [0] NCCL WARN Call to connect returned "
                f"Connection refused, retrying\n")
    if r < 0.70:
        return _absl("W", ts, tid, "op_level_cost_estimator.cc:699] Error in PredictCost() for the op: op: "
                                   "\"CropAndResize\" attr { key: \"T\" value { type: DT_FLOAT } }")
    if r < 0.78:
        return _absl("E", ts, tid, f"coordination_service_agent.cc:332] Coordination agent is in ERROR: "
                                   f"UNAVAILABLE: failed to connect to all addresses; last error: UNKNOWN: "
                                   f"ipv4:10.0.0.{t}:2222: Failed to connect to remote host: Connection refused")
    if r < 0.86:
        return ("WARNING:tensorflow:Gradients do not exist for variables ['dense/kernel:0'] when minimizing the loss. "
                "If you're using `model.compile()`, did you forget to provide a `loss` argument?\n")
    if r < 0.93:
        return _absl("W", ts, tid, f"grpc_remote_master.cc:{rng.randint(100, 300)}] retrying RPC: Deadline Exceeded")
    return _absl("E", ts, tid, f"master_session.cc:{rng.randint(1000, 2000)}] CreateSession still waiting for "
                               f"response from worker: {_task(t)}")


def _crash_attempt(rng: random.Random, index: int, tasks: int, ts: float, tid: int, attempt: int) -> list[str]:
    """One attempt of a crash-looping task: start-up, a wait for its peers, the same fatal error and traceback."""
    out = _startup(index, tasks, ts, tid)
    out += [
        _absl("I", ts, tid, f"grpc_server_lib.cc:467] Started server with target: grpc://worker-{index}.dd-bench:2222"),
        _absl("I", ts, tid, "coordination_service_agent.cc:245] Coordination agent has successfully connected."),
        _absl("I", ts, tid, f"coordination_service.cc:502] Waiting for {tasks - 1}/{tasks} tasks to connect."),
        _absl("I", ts, tid, "coordination_service.cc:505] Example stragglers:"), f"{_task((index + 1) % tasks)}\n",
        _absl("E", ts, tid, f"coordination_service_agent.cc:332] Coordination agent is in ERROR: DEADLINE_EXCEEDED: "
                            f"Barrier timed out. Barrier_id: PjRT_Client_Connect. Timed out task names: "
                            f"{_task((index + 1) % tasks)}"),
        "Traceback (most recent call last):\n",
        '  File "/app/train.py", line 41, in <module>\n',
        "    strategy = tf.distribute.MultiWorkerMirroredStrategy()\n",
        '  File "/usr/local/lib/python3.11/site-packages/tensorflow/python/distribute/collective_all_reduce_strategy.py",'
        " line 191, in __init__\n",
        "    CollectiveAllReduceExtended(\n",
        "tensorflow.python.framework.errors_impl.DeadlineExceededError: Barrier timed out. Barrier_id: "
        f"PjRT_Client_Connect. Timed out task names: {_task((index + 1) % tasks)}\n",
    ]
    return out


def mix_task_log(content: str, index: int, tasks: int, size: int, culprit: int, fault_lines, seed: int = 0) -> str:
    """One task's log of mix ``content`` (``progress``, ``info``, ``errors``), about ``size`` bytes."""
    rng = random.Random(seed * 1000 + index + {"progress": 1, "info": 2, "errors": 3, "crashloop": 4}[content] * 100003)
    tid = 2000 + index
    ts = T0 + rng.random()
    out = _startup(index, tasks, ts, tid)
    total = sum(len(x) for x in out)
    limit = size - 4096
    epoch, loss, i = 0, 0.9, 0
    while total < limit:
        chunk: list[str] = []
        if content == "crashloop":
            epoch += 1
            ts += 10.0
            chunk += _crash_attempt(rng, index, tasks, ts, tid, epoch)
        elif content == "progress":
            epoch += 1
            chunk.append(f"Epoch {epoch}/100000\n")
            r = epoch % 3
            if r == 0:
                chunk.append(_progress_epoch(rng, 100, loss))
            elif r == 1:
                chunk.append(_keras3_epoch(300, loss))
            else:
                chunk.append(f"300/300 - 4s - loss: {loss:.4f} - accuracy: {1 - loss:.4f} - val_loss: {loss * 1.1:.4f} "
                             f"- val_accuracy: {1 - loss * 1.1:.4f} - 4s/epoch - 13ms/step\n")
            for _ in range(3):
                ts += 0.01
                i += 1
                chunk.append(_info_line(rng, index, tasks, ts, tid, i))
            loss *= 0.999
        else:
            for _ in range(64):
                ts += 0.001
                i += 1
                if content == "errors" and rng.random() < 0.6:
                    chunk.append(_error_line(rng, index, tasks, ts, tid, i))
                else:
                    chunk.append(_info_line(rng, index, tasks, ts, tid, i))
        out.extend(chunk)
        total += sum(len(c) for c in chunk)
    if index != culprit and culprit >= 0:
        out.append(fault_lines(index, culprit, ts))
    return "".join(out)
