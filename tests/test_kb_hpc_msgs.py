"""The launch stack's own messages (kb/hpc_msgs.py): each is classified once, by the cause its text states.

Each log below holds a component's message (as its source prints it) among the lines that surround it in a real job,
including the generic lines that other signatures read differently (srun's "Unable to allocate resources", ssh's
failure as a network fault, a Bus error as a native crash); `distdoctor diagnose` must give the cause's category.
The fixture checks in test_signatures.py cover each signature alone.
"""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import PY, ROOT
from distdoctor.diagnose.logs.kb import SIGNATURES

MINE = [s for s in SIGNATURES if 1300 <= int(s.code[2:]) <= 1349]

CASES = [
    # Slurm src/common/slurm_errno.c: a request naming what the cluster does not have is the request's error
    ("slurm-invalid-account", "sbatch: error: Batch job submission failed: Invalid account or account/partition "
     "combination specified", "other"),
    ("slurm-gres-unsupported", "srun: error: Unable to allocate resources: Requested GRES option unsupported by "
     "configured SelectType plugin", "other"),
    ("slurm-step-gres", "srun: error: Unable to create step for job 1234: Invalid generic resource (gres) "
     "specification", "other"),
    # node_scheduler.c: the specific size reason outranks the generic "node configuration" wording beside it
    ("slurm-memory-too-large", "sbatch: error: Memory specification can not be satisfied\nsbatch: error: Batch job "
     "submission failed: Requested node configuration is not available", "resource_exhaustion"),
    # OpenSSH: the host answered and refused the key -- not a network fault
    ("ssh-auth-denied", "Checking ssh on all remote hosts.\nssh not successful for host node-1:\nroot@10.0.0.2: "
     "Permission denied (publickey,password).", "other"),
    # OpenSSH entropy.c: mpirun's ssh loads the environment's libcrypto; ORTE's daemon failure follows from it
    ("ssh-openssl", "  OpenSSL version mismatch. Built against 30000020, you have 30100010\n"
     "ORTE was unable to reliably start one or more daemons.", "version_mismatch"),
    # NCCL's /dev/shm segment cannot be sized, and the mapped page then faults with SIGBUS/BUS_ADRERR
    ("nccl-shm-sigbus", "host:1234:1290 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n"
     "host:1234:1290 [0] NCCL WARN Error: failed to extend /dev/shm/nccl-k3Yx2Q to 9637888 bytes\n"
     "[host:1234 :0:1290] Caught signal 7 (Bus error: nonexistent physical address)\nBus error (core dumped)",
     "resource_exhaustion"),
    # NCCL's SYSCHECK prints errno's text: EACCES on shm_open is a /dev/shm the user may not write, not a full one
    ("nccl-shm-permission", "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission "
     "denied\nnode08:27106:27302 [0] NCCL INFO include/shm.h:41 -> 2\nnode08:27106:27302 [0] include/shm.h:48 NCCL "
     "WARN Error while creating shared memory segment nccl-shm-recv-b7948f403864987a-0-3-0 (size 4460544)\n"
     "RuntimeError: NCCL error in ProcessGroupNCCL.cpp:290, unhandled system error", "other"),
    ("nccl-shm-full", "node08:27106:27302 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space "
     "left on device\nnode08:27106:27302 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment "
     "nccl-shm-recv-b7948f403864987a-0-3-0 (size 4460544)\nRuntimeError: NCCL error in ProcessGroupNCCL.cpp:290, "
     "unhandled system error", "resource_exhaustion"),
    # Open MPI opal/mca/pmix/base/help-pmix-base.txt
    ("ompi-pmix", "An unexpected version of PMIx was loaded:\n  Detected:  3.2.3\n  Expected:  4.2.1\nIt looks "
     "like MPI_INIT failed for some reason; your parallel process is likely to abort.", "version_mismatch"),
    # Open MPI orte/tools/orterun/help-orterun.txt: mpirun's own time limit ended the job
    ("ompi-timeout", "Epoch 7/10\nThe user-provided time limit for job execution has been reached:\n\n  Timeout: "
     "3600 seconds\n\nThe job will now be aborted.", "preemption"),
    # TensorFlow: the op is known but this build has no NCCL kernel (Windows)
    ("tf-nccl-kernel", "tensorflow.python.framework.errors_impl.InvalidArgumentError: No OpKernel was registered to "
     "support Op 'NcclAllReduce' used by {{node NcclAllReduce}} with these attrs: [reduction=\"sum\", "
     "shared_name=\"c1\", T=DT_FLOAT, num_devices=2]", "other"),
    # PSM/PSM2 print strerror(errno) of the adapter's context request: EBUSY is an adapter without a free context
    # (too many processes on the node), ENETDOWN a link or driver that is down -- one line, two causes
    ("psm-contexts", "[0] MPI startup(): Multi-threaded optimized library\n## node05.36041hfi_userinit_internal: "
     "assign_context command failed: Device or resource busy\n## node05.36041PSM2 can't open hfi unit: 0 (err=23)\n"
     "Abort(1091215) on node 3: Fatal error in PMPI_Init_thread: Other MPI error", "resource_exhaustion"),
    ("psm-link-down", "cn1381.23245ipath_userinit: assign_context command failed: Network is down\ncn1381.23245can't "
     "open /dev/ipath, network down (err=26)\nPSM was unable to open an endpoint. Please make sure that the network "
     "link is\nactive on the node and the hardware is functioning.", "network_unreachable"),
    # PBS's mom kills a job at the limits it asked for: the time limit is the scheduler's end of the job (as Slurm's
    # DUE TO TIME LIMIT), the memory limit its OOM kill; Torque's server and Moab say the same in their own words
    ("pbs-walltime", "Epoch 212/300\n=>> PBS: job killed: walltime 18035 exceeded limit 18000\nmpirun: killing job...",
     "preemption"),
    ("pbs-memory", "PBS Job Id: 10086535.dccn-l029.dccn.nl\nJob Name:   train\njob deleted\nJob deleted at request of "
     "root@dccn-l029.dccn.nl\njob 10086535 exceeded MEM usage hard limit (516 > 140)", "oom_host"),
    # LSF's termination reasons (IBM's TERM_* table), as the job's output mail prints them above its exit code
    ("lsf-run-limit", "Epoch 41/100\n------------------------------------------------------------\nTERM_RUNLIMIT: job "
     "killed after reaching LSF run time limit.\nExited with exit code 140.", "preemption"),
    ("lsf-memory-limit", "Epoch 3/100\nTERM_MEMLIMIT: job killed after reaching LSF memory usage limit.\nExited with "
     "exit code 130.", "oom_host"),
    ("lsf-preempted", "TERM_PREEMPT: job killed after preemption.\nExited with exit code 130.", "preemption"),
    ("lsf-cpu-limit", "TERM_CPULIMIT: job killed after reaching LSF CPU usage limit.\nExited with exit code 152.",
     "resource_exhaustion"),
]


def test_every_signature_names_its_source_and_a_fixture():
    assert 15 <= len(MINE) <= 40
    for s in MINE:
        assert s.source and "/" in s.source and s.fixture and s.component, s.code
        assert s.match(s.fixture), s.code


@pytest.mark.parametrize("name,text,category", CASES, ids=[c[0] for c in CASES])
def test_diagnose_names_the_cause_the_message_states(tmp_path, name, text, category):
    log = tmp_path / "worker-0.log"
    log.write_text("starting job\nEpoch 1/3\n" + text + "\n")
    out = subprocess.run([PY, "-m", "distdoctor", "diagnose", "--json", str(log)], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode in (0, 1, 3), out.stderr
    rc = json.loads(out.stdout)["root_cause"]
    assert rc["category"] == category, (rc["code"], rc["summary"])
