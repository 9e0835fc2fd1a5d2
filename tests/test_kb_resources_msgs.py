"""Accelerator and host memory, preemption, NVSwitch, NCCL network plugin, Slurm GRES and Gloo interface messages as the
components word them (kb/resources_msgs.py, DD1390-DD1439).

Each log below holds a component's own message among the lines that surround it in a real job, including the generic
lines other signatures read differently (a Traceback read as the code's error, a SIGTERM read on its own, a CUDA error
read as a failed GPU initialisation, a Dask KilledWorker that only says workers died); `diagnose` must name what the
component's message means. The fixture checks in test_signatures.py cover each signature alone.
"""
from __future__ import annotations

import pytest

from distdoctor.diagnose.command import diagnose_paths
from distdoctor.diagnose.logs.kb import SIGNATURES
from distdoctor.diagnose.logs.signature import Role

MINE = [s for s in SIGNATURES if 1390 <= int(s.code[2:]) <= 1439]

_TB = "Traceback (most recent call last):\n  File \"train.py\", line 31, in <module>\n    {}\n"
CASES = [
    # XLA:TPU compiler (E1000) inside a JAX traceback: the Traceback alone reads as the code's error
    ("tpu-hbm-compile", _TB.format("state = train_step(state, batch)") + "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: "
     "XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 35.83G of 31.25G hbm. Exceeded hbm "
     "capacity by 4.59G.", "oom_gpu", "DD1390"),
    # Dask: the client's KilledWorker alone says the workers died (not the code's error), whoever raised it
    ("dask-killedworker", _TB.format("result = fut.result()") + "distributed.scheduler.KilledWorker: Attempted to run "
     "task 'fit-0' on 4 different workers, but all those workers died while running it. The last worker that attempt "
     "to run the task was tcp://10.0.0.9:41211.", "peer_crashed", "DD1398"),
    # Dask: a worker killed by SIGKILL with no memory line: no line sent it, so most often the OOM killer (priors)
    ("dask-signal-9", "distributed.nanny - INFO - Worker process 9911 was killed by signal 9\n"
     "distributed.nanny - WARNING - Restarting worker", "oom_host", "DD1397"),
    # AWS NTH: the spot notice, then the training process is terminated
    ("spot-itn-then-sigterm", "2024/02/10 08:58:01 INF Node successfully cordoned and drained "
     "node_name=ip-10-0-12-7.ec2.internal reason=\"Spot ITN received. Instance will be interrupted at "
     "2024-02-10T09:00:00Z \\n\"\nTerminated", "preemption", "DD1401"),
    # CUDA 802 on an NVSwitch node whose Fabric Manager is not running: not a GPU that merely failed to initialise
    ("cuda-802", "E0000 00:00:1718000000.123456   4411 cuda_driver.cc:152] failed call to cuInit: "
     "CUDA_ERROR_SYSTEM_NOT_READY: system not yet initialized\nW0000 00:00:1718000000.124000   4411 "
     "gpu_device.cc:2344] Cannot dlopen some GPU libraries.", "other", "DD1404"),
    # NCCL: the benign plugin line before the warning that NCCL_NET's network is not there
    ("nccl-net-not-found", "n1:5121:5121 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal "
     "network plugin.\nn1:5121:5121 [0] NCCL WARN Error: network IB not found.\nn1:5121:5121 [0] NCCL INFO "
     "init.cc:1588 -> 5", "other", "DD1409"),
    # Gloo inside torch's init_process_group traceback
    ("gloo-bind", _TB.format("dist.init_process_group('gloo')") + "RuntimeError: [enforce fail at "
     "../third_party/gloo/gloo/transport/tcp/device.cc:91] bind_rv == 0. Unable to find address for worker-2; bind(2) "
     "for 10.3.0.12 failed with: Cannot assign requested address", "network_unreachable", "DD1414"),
    # aws-ofi-nccl refuses EFA for an old libfabric; NCCL then cannot find the network NCCL_NET names
    ("ofi-old-libfabric", "n1:4411:4502 [0] nccl_net_ofi_query_provider_capabilities:651 NCCL WARN NET/OFI EFA provider "
     "requires at least libfabric version 1.22.0.\nn1:4411:4411 [0] NCCL WARN Error: network AWS Libfabric not found.",
     "version_mismatch", "DD1420"),
    # PyTorch on ROCm inside the training step's traceback
    ("hip-oom", _TB.format("loss.backward()") + "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. "
     "GPU 3 has a total capacity of 191.98 GiB of which 1.12 GiB is free.", "oom_gpu", "DD1417"),
    # joblib/loky in a task's traceback: the exit codes on the next line say SIGKILL, loky's own reading is memory
    ("loky-sigkill", _TB.format("Parallel(n_jobs=16)(delayed(f)(x) for x in xs)") + "joblib.externals.loky."
     "process_executor.TerminatedWorkerError: A worker process managed by the executor was unexpectedly terminated. "
     "This could be caused by a segmentation fault while calling the function or by an excessive memory usage causing "
     "the Operating System to kill the worker.\n\nThe exit codes of the workers are {SIGKILL(-9), SIGKILL(-9)}",
     "oom_host", "DD1425"),
    # the kubelet's graceful shutdown, then the container's SIGTERM
    ("kubelet-shutdown", "I0311 02:14:09.482911    1187 nodeshutdown_manager_linux.go:265] \"Shutdown manager detected "
     "new shutdown event, isNodeShuttingDownNow\" event=true\nTerminated", "preemption", "DD1403"),
    # a cloud VM's ACPI power button (Compute Engine's preemption notice is an ACPI soft-off), the worker polling for it
    ("acpi-power-key", "Jan 30 10:33:00Z vm-4 start-worker 2024/01/30 10:33:00 polling for termination-time\n"
     "Jan 30 10:33:08Z vm-4 systemd-logind Power key pressed.", "preemption", "DD1468"),
    ("skypilot-preempted", "(job pid=9021) I 05-04 00:52:46 controller.py:100] The cluster is preempted.\n"
     "(job pid=9021) I 05-04 00:52:46 spot_state.py:99] === Recovering... ===", "preemption", "DD1469"),
    ("submitit-preempted", "submitit WARNING (2022-07-12 04:18:45,881) - Caught signal SIGHUP on node0293: this job is "
     "preempted.\nsubmitit WARNING (2022-07-12 04:18:45,882) - Bypassing signal SIGTERM", "preemption", "DD1469"),
    ("hyphenated", "Run failed: PreemptionError: Nodes of this job got pre-empted. Check the run's logs.", "preemption",
     "DD1469"),
    # Python's MemoryError re-raised wrapped in another exception's message
    ("memoryerror-wrapped", "[ worker 10.0.0.20 ] : Exception: MemoryError()", "oom_host", "DD863"),
]


def test_every_signature_names_its_source_and_a_fixture():
    assert 20 <= len(MINE) <= 50
    for s in MINE:
        assert s.source and "/" in s.source and s.fixture and s.component and s.versions, s.code
        assert s.match(s.fixture), s.code
        if s.role is Role.CAUSE:
            assert 40 <= s.rank <= 90, s.code


def test_warnings_and_benign_lines_are_not_causes():
    quiet = {s.code for s in MINE if s.role in (Role.CONTEXT, Role.BENIGN)}
    assert {"DD1394", "DD1396", "DD1406", "DD1407", "DD1408", "DD1416"} <= quiet
    assert all(s.rank < 70 for s in MINE if s.role is not Role.CAUSE)


def test_a_cancelled_node_shutdown_is_not_a_shutdown():
    sig = next(s for s in MINE if s.code == "DD1403")
    assert sig.match('"Shutdown manager detected new shutdown event" event="shutdown"')
    assert not sig.match('"Shutdown manager detected new shutdown event" event="cancelled"')
    assert not sig.match('"Shutdown manager detected new shutdown event, isNodeShuttingDownNow" event=false')


def test_the_workers_memory_restart_explains_the_clients_killedworker(tmp_path):
    """The client's log ends in KilledWorker (workers died); a worker's log says the nanny restarted it over its
    memory budget: the job ran out of host memory on that worker."""
    (tmp_path / "client.log").write_text(_TB.format("result = fut.result()") + "distributed.scheduler.KilledWorker: "
                                         "Attempted to run task 'fit-0' on 4 different workers, but all those workers "
                                         "died while running it. The last worker that attempt to run the task was "
                                         "tcp://10.0.0.9:41211.\n")
    (tmp_path / "worker-1.log").write_text("distributed.nanny.memory - WARNING - Worker tcp://10.0.0.9:33211 (pid=771) "
                                           "exceeded 95% memory budget. Restarting...\ndistributed.nanny - WARNING - "
                                           "Restarting worker\n")
    diag, _ = diagnose_paths([str(tmp_path / "client.log"), str(tmp_path / "worker-1.log")], detected_at=0.0)
    rc = diag.root_cause
    assert (rc.category.value, rc.code) == ("oom_host", "DD1395"), rc.summary


_KNOWN: dict[str, str] = {}   # (loky-sigkill was one: verdict._reads_the_exception now reads the message under it)


@pytest.mark.parametrize("name,text,category,code", [
    pytest.param(*c, id=c[0], marks=pytest.mark.xfail(reason=_KNOWN[c[0]], strict=True)) if c[0] in _KNOWN
    else pytest.param(*c, id=c[0]) for c in CASES])
def test_diagnose_names_what_the_component_says(tmp_path, name, text, category, code):
    log = tmp_path / "worker-0.log"
    log.write_text("starting job\n" + text + "\n")
    diag, _ = diagnose_paths([str(log)], detected_at=0.0)
    rc = diag.root_cause
    assert (rc.category.value, rc.code) == (category, code), rc.summary


@pytest.mark.parametrize("line", [
    "This can happen when a (1) raylet crashes unexpectedly (OOM, preempted node, etc.)",
    'File "/usr/lib/python3/dist-packages/tensorflow/python/tpu/preempted_hook.py", line 87, in run',
    "W1120 13:39:39.796293 preempted_hook.py:91] TPUPollingThread found TPU tpuv3-5 in state READY",
    "INFO: checking whether the job was preempted before restarting",
    "Failed to send RPC to coordination service. Either the leader task was preempted/died/restarted unexpectedly",
    "the leader task was preempted/died/restarted unexpectedly or this task is experiencing network issues",
])
def test_preemption_mentioned_is_not_preemption_said(line):
    from distdoctor.diagnose.logs.scan import scan_bytes
    assert "DD1469" not in {h.sig.code for h in scan_bytes("w.log", (line + "\n").encode())[0]}
