"""Messages the HPC launch stack prints, mined from its own source and classified once by cause (codes DD1300-DD1349).

Issue 25: knowledge comes from the stack's source, never from one rule per case. Each signature below is a message
block (or one family of them) of a component's own message catalogue, classified by the cause the text itself states:

* Open MPI (open-mpi/ompi v4.1.x): the launcher's help files orte/mca/plm/{rsh,base}/help-plm-*.txt,
  orte/runtime/help-orte-runtime.txt, orte/mca/ess/base/help-ess-base.txt, opal/mca/pmix/base/help-pmix-base.txt and
  the shared-memory help files (opal/mca/shmem/*/help-opal-shmem-*.txt, opal/mca/btl/vader/help-btl-vader.txt);
* Slurm (SchedMD/slurm): the reasons slurmctld gives for refusing a request (src/common/slurm_errno.c, the
  err_msg strings of src/slurmctld/node_scheduler.c) as srun ("Unable to allocate resources: %s") and sbatch
  ("Batch job submission failed: %s") print them. A request the cluster can never grant (an unknown account,
  partition or QOS, an option the cluster's plugins do not offer, a time limit over the partition's) is a
  configuration error of the request: ``other``, above the generic wrappers "Unable to allocate resources" (DD826)
  and "Unable to create step for job" (DD844); a request larger than any node (memory, disk, cores) stays
  ``resource_exhaustion`` and outranks all three;
* OpenSSH (openssh/openssh-portable): an authentication refusal is a key/account set-up problem, not an unreachable
  host (so it outranks DD718's network reading of ssh failures); a client linked to another OpenSSL than its own is a
  version mismatch;
* the kernel's SIGBUS code BUS_ADRERR ("nonexistent physical address"): a page of a mapped file or shared-memory
  segment has no backing (a full /dev/shm, a truncated file) -- an exhausted resource, not a crash of the code
  (it outranks the generic "Bus error" reading of DD764);
* NCCL (NVIDIA/nccl src/os/linux.cc): the shared-memory transport's failures to create, size or map its /dev/shm
  segment (DD710 holds the older "Error while creating shared memory segment" wording);
* TensorFlow: NCCL ops known to the graph but without a kernel in this build (Windows and CPU-only builds have no
  NCCL kernels): a platform limitation, not a version skew (it outranks DD695).

* Open MPI's mpirun (orte/tools/orterun/help-orterun.txt): its own time limit, its memory and heartbeat sensors, a
  daemon lost while running, PMIx's server socket path; and ompi/mca/pml/base/pml_base_select.c: processes that
  chose different point-to-point layers (nodes with different network stacks or MCA settings);
* Horovod's runner (horovod/runner): the launch checks that horovod.py did not hold yet (common interfaces, the
  driver's message digest, the elastic discovery script).
"""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

OMPI = "openmpi"
OMPI41 = "open-mpi/ompi (v4.1.x) "
SLURM = "slurm"
SSH = "openssh"

# -- Open MPI: launching the daemons (plm rsh/base, ess) ---------------------------------------------------------------
add("DD1300", "ompi-orted-not-found", C.VERSION_MISMATCH, R.CAUSE,
    ('was not able to find the executable "orted"',),
    "Open MPI cannot find its daemon (orted) on this node: the installation is missing or not on PATH", rank=76,
    remedy="Install the same Open MPI at the same path on every node, or pass `--prefix` to mpirun (or set PATH and "
    "LD_LIBRARY_PATH for non-interactive shells) so the remote node finds orted.",
    component=OMPI, versions="<=4.1 (ORTE)",
    source=OMPI41 + "orte/mca/plm/rsh/help-plm-rsh.txt (no-local-orted) / orte/mca/ess/base/help-ess-base.txt "
    "(ess-base:execv-error)",
    fixture='The rsh PLS component was not able to find the executable "orted" in')
add("DD1301", "ompi-rsh-agent-missing", C.OTHER, R.CAUSE,
    ('The value of the MCA parameter "plm_rsh_agent" was set to a path',),
    "mpirun's remote-shell agent (plm_rsh_agent) names a program that does not exist", rank=74,
    remedy="Unset plm_rsh_agent (OMPI_MCA_plm_rsh_agent) or point it to an existing ssh/rsh.",
    component=OMPI, versions="<=4.1 (ORTE)", source=OMPI41 + "orte/mca/plm/rsh/help-plm-rsh.txt (agent-not-found)",
    fixture='The value of the MCA parameter "plm_rsh_agent" was set to a path')
add("DD1302", "ompi-no-launch-agent", C.VERSION_MISMATCH, R.CAUSE, ("No available launching agents were found",),
    "mpirun found no way to start processes on other nodes (no ssh/rsh installed, no resource manager)", rank=72,
    remedy="Install an ssh client on the launch node (containers often lack one) or run inside an allocation of a "
    "resource manager Open MPI was built for (Slurm, PBS, LSF).",
    component=OMPI, versions="<=4.1 (ORTE)", source=OMPI41 + "orte/mca/plm/base/help-plm-base.txt (no-available-pls)",
    fixture="No available launching agents were found.")
add("DD1303", "ompi-daemon-no-node", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE, ("A daemon has no recorded node",),
    "A node's own hostname differs from its name in the allocation or hostfile", rank=72,
    remedy="Use the names the nodes report (`hostname`) in the hostfile/allocation, or make the nodes' hostnames "
    "match the names the resource manager uses.",
    component=OMPI, versions="<=4.1 (ORTE)", source=OMPI41 + "orte/mca/plm/base/help-plm-base.txt "
    "(daemon-no-assigned-node)", fixture="A daemon has no recorded node:")
add("DD1304", "ompi-direct-launch-aprun", C.VERSION_MISMATCH, R.CAUSE,
    ('appears to have been direct launched using "aprun"',),
    "Open MPI was started by aprun but was built without ALPS (PMI) support", rank=80,
    remedy="Start the job with mpirun, or use an Open MPI built --with-alps / --with-pmi for this Cray system.",
    component=OMPI, versions="<=4.1", source=OMPI41 + "orte/mca/ess/base/help-ess-base.txt (alps-error / "
    "alps-error2)", fixture='The application appears to have been direct launched using "aprun",')

# -- Open MPI: run time (orte runtime, pmix) ---------------------------------------------------------------------------
add("DD1305", "ompi-no-username", C.OTHER, R.CAUSE, ("Open MPI was unable to obtain the username",),
    "Open MPI cannot look up the user (LDAP/NIS failure or a uid without a passwd entry, common in containers)",
    rank=70, remedy="Make the uid resolvable on every node (a passwd entry in the container, a working LDAP/NIS).",
    component=OMPI, versions="<=4.1 (ORTE)", source=OMPI41 + "orte/runtime/help-orte-runtime.txt "
    "(orte:session:dir:nopwname)",
    fixture="Open MPI was unable to obtain the username in order to create a path")
add("DD1306", "ompi-session-dir-prohibited", C.OTHER, R.CAUSE,
    ("The specified location for the temporary directories required by Open MPI",),
    "Open MPI's session directory is on a location the site prohibits", rank=65,
    remedy="Point TMPDIR (or --tmpdir / orte_tmpdir_base) to a node-local directory the site allows.",
    component=OMPI, versions="<=4.1 (ORTE)", source=OMPI41 + "orte/runtime/help-orte-runtime.txt "
    "(orte:session:dir:prohibited)",
    fixture="The specified location for the temporary directories required by Open MPI")
add("DD1307", "ompi-compression-mismatch", C.VERSION_MISMATCH, R.CAUSE,
    ("A compressed message was received by the Open MPI run time system",),
    "Nodes differ in Open MPI's compression support (one has libz, another not)", rank=80,
    remedy="Install the same Open MPI build and its compression library (libz) on every node.",
    component=OMPI, versions="<=4.1 (ORTE)", source=OMPI41 + "orte/runtime/help-orte-runtime.txt "
    "(failed-to-uncompress)", fixture="A compressed message was received by the Open MPI run time system")
add("DD1308", "ompi-pmix-version", C.VERSION_MISMATCH, R.CAUSE,
    ("An unexpected version of PMIx was loaded", "A version of PMIx was detected that is too old"),
    "Open MPI loaded another PMIx library than the one it was built against", rank=82,
    remedy="Build Open MPI against the PMIx the resource manager uses (--with-pmix=<the same path as Slurm's>) and "
    "keep that library first on LD_LIBRARY_PATH on every node.",
    component=OMPI, versions="4.x", source=OMPI41 + "opal/mca/pmix/base/help-pmix-base.txt (incorrect-pmix / "
    "old-pmix)", fixture="An unexpected version of PMIx was loaded:")

# -- Open MPI: shared memory -------------------------------------------------------------------------------------------
add("DD1309", "ompi-shm-target-full", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("It appears as if there is not enough space for",),
    "The file system holding Open MPI's shared-memory backing file is full", rank=82,
    remedy="Give the node more room where the session directory lives (/dev/shm or /tmp: a container's --shm-size, "
    "the tmpfs size), or point TMPDIR to a larger node-local file system.",
    component=OMPI, versions="all", source=OMPI41 + "opal/mca/shmem/mmap/help-opal-shmem-mmap.txt (target full)",
    fixture="It appears as if there is not enough space for /dev/shm/vader_segment.node1.0 (the shared-memory "
            "backing")
add("DD1310", "ompi-shm-syscall-failed", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("A system call failed during shared memory initialization",
     "A system call failed during vader shared memory BTL initialization"),
    "A system call (open, ftruncate, mmap) failed while Open MPI set up shared memory", rank=60,
    remedy="Usually a small or full /dev/shm (containers: --shm-size or --ipc=host) or a session directory without "
    "room; the 'Error:' line below names the errno.",
    component=OMPI, versions="all", source=OMPI41 + "opal/mca/shmem/{mmap,posix}/help-opal-shmem-*.txt / "
    "opal/mca/btl/vader/help-btl-vader.txt (sys call fail)",
    fixture="A system call failed during shared memory initialization that should")
add("DD1311", "ompi-shm-warnings", C.OTHER, R.BENIGN,
    ("Open MPI will create a shared memory backing file in a", "Open MPI failed to open the /dev/knem device",
     "Open MPI was compiled with support for one version of the"),
    "Open MPI warns about its shared-memory set-up (backing file on NFS, knem unavailable) and carries on", rank=0,
    remedy="Harmless for correctness (slower shared-memory transfers); silence with the MCA parameter the warning names.",
    component=OMPI, versions="all", source=OMPI41 + "opal/mca/shmem/mmap/help-opal-shmem-mmap.txt (mmap on nfs) / "
    "opal/mca/btl/vader/help-btl-vader.txt (knem permission denied / knem fail open / knem ABI mismatch)",
    fixture="WARNING: Open MPI will create a shared memory backing file in a")

# -- Slurm: why slurmctld refused the request ---------------------------------------------------------------------------
add("DD1315", "slurm-request-invalid", C.OTHER, R.CAUSE,
    ("Invalid account or account/partition combination specified",
     "Invalid partition name specified", "Requested time limit is invalid",
     "Requested GRES option unsupported by configured SelectType plugin",
     "Invalid generic resource (gres) specification", "Invalid GRES specification (with and without type",
     "Invalid qos specification", "Invalid feature specification", "Node feature requirements can not",
     "Time limit specification required, but not provided"),
    "Slurm rejected the request: it names something this cluster does not have or allow", rank=76,
    remedy="The request does not fit the cluster's configuration (account, partition, QOS, GRES option, feature, "
    "time limit): check it against `sacctmgr show assoc user=$USER`, `sinfo -o '%P %l %G %f'` and the site's "
    "documentation, and name the partition/QOS/account the GPUs belong to.",
    component=SLURM, versions="all", source="SchedMD/slurm src/common/slurm_errno.c (ESLURM_INVALID_ACCOUNT, ESLURM_INVALID_PARTITION_NAME, ESLURM_INVALID_TIME_LIMIT, "
    "ESLURM_UNSUPPORTED_GRES, ESLURM_INVALID_GRES, ESLURM_INVALID_QOS, ESLURM_INVALID_FEATURE, ...) / "
    "src/slurmctld/node_scheduler.c, as src/srun/allocate.c and sbatch print them",
    fixture="sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified")
add("DD1319", "slurm-node-config-unavailable", C.OTHER, R.CAUSE, ("Requested node configuration is not available",),
    "Slurm found no node in the partition that matches the request (which part does not match, it does not say)",
    rank=68,   # below the reasons that name what does not match (DD1315, DD1316): medium confidence alone
    remedy="Compare the request with the partition's nodes (`sinfo -p <partition> -o '%P %c %m %G %f'`): a GPU type "
    "or feature the default partition lacks (name the partition with -p), or more cores/memory/GPUs per node than "
    "its nodes have (ask for less).", component=SLURM, versions="all",
    source="SchedMD/slurm src/common/slurm_errno.c (ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE), as srun and sbatch "
    "print it", fixture="sbatch: error: Batch job submission failed: Requested node configuration is not available")
add("DD1316", "slurm-request-exceeds-nodes", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("Memory specification can not be satisfied", "Temporary disk specification can not be",
     "Socket, core and/or thread specification"),
    "The job asks for more memory, disk or cores per node than any node has", rank=78,
    remedy="Ask for what the nodes have (`sinfo -o '%P %m %d %z'`: RealMemory, TmpDisk, sockets:cores:threads), "
    "e.g. --mem below RealMemory.",
    component=SLURM, versions="all", source="SchedMD/slurm src/slurmctld/node_scheduler.c (err_msg of the node "
    "size checks)", fixture="sbatch: error: Memory specification can not be satisfied")
add("DD1317", "slurm-ports-busy", C.RESOURCE_EXHAUSTION, R.CAUSE, ("Required ports are in use",),
    "Slurm's pool of MPI reserved ports (MpiParams=ports) is exhausted", rank=62,
    remedy="Too many steps hold reserved ports at once: run fewer concurrent steps, or ask the admins to widen "
    "MpiParams=ports.", component=SLURM, versions="all",
    source="SchedMD/slurm src/common/slurm_errno.c (ESLURM_PORTS_BUSY)",
    fixture="srun: error: Unable to create step for job 1234: Required ports are in use")
add("DD1318", "slurm-partition-unavailable", C.OTHER, R.CAUSE,
    ("Required partition not available (inactive or drain)", "Requested partition configuration not available now"),
    "The partition the job needs is down, inactive or draining", rank=76,
    remedy="The partition is not taking jobs now (maintenance, drain): wait, or submit to another partition "
    "(`sinfo -s`).", component=SLURM, versions="all",
    source="SchedMD/slurm src/common/slurm_errno.c (ESLURM_PARTITION_NOT_AVAIL / "
    "ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE)",
    fixture="srun: error: Unable to allocate resources: Required partition not available (inactive or drain)")

# -- OpenSSH (the launchers' remote shell) -------------------------------------------------------------------------------
add("DD1320", "ssh-auth-denied", C.OTHER, R.CAUSE,
    ("Permission denied (publickey", "Permission denied, please try again.", "Too many authentication failures"),
    "ssh reached the node but the login was refused (key or account set-up)", rank=84,
    remedy="The host answered; the key was not accepted: install the launch node's public key in the remote user's "
    "~/.ssh/authorized_keys (right user, right port, permissions 600/700), and check `ssh -v <host> true` by hand.",
    component=SSH, versions="all", source="openssh/openssh-portable sshconnect2.c (userauth: 'Permission denied "
    "(%s).', userauth_passwd: 'Permission denied, please try again.') / sshd auth.c ('Too many authentication "
    "failures')", fixture="root@10.0.0.2: Permission denied (publickey,password).")
add("DD1321", "ssh-openssl-mismatch", C.VERSION_MISMATCH, R.CAUSE, ("OpenSSL version mismatch. Built against",),
    "The ssh client loads another OpenSSL than it was built against (an environment's libcrypto shadows the "
    "system's)", rank=86,
    remedy="The launcher's ssh picked up a libcrypto from the active environment (conda, a module): run it with the "
    "system libraries (drop that directory from LD_LIBRARY_PATH, or set plm_rsh_agent to a wrapper that does).",
    component=SSH, versions="all", source="openssh/openssh-portable entropy.c (seed_rng)",
    fixture="OpenSSL version mismatch. Built against 30000020, you have 30100010")

# -- the kernel: SIGBUS with BUS_ADRERR ----------------------------------------------------------------------------------
add("DD1322", "sigbus-no-backing", C.RESOURCE_EXHAUSTION, R.CAUSE, ("nonexistent physical address",),
    "SIGBUS on a mapped page without backing: a full /dev/shm (or a truncated mapped file)", rank=84,
    ignore_case=True,
    remedy="Shared-memory users (NCCL, DataLoader workers, MPI) map segments in /dev/shm; a page that cannot be "
    "backed raises SIGBUS. Give the container a larger /dev/shm (`--shm-size`, `--ipc=host`, a memory-backed "
    "emptyDir) or free it; if a mapped data file was truncated, stop rewriting it while it is read.",
    component="kernel", versions="all", source="torvalds/linux include/uapi/asm-generic/siginfo.h (BUS_ADRERR: "
    "'non-existent physical address'), as signal handlers print it (UCX, glibc psiginfo)",
    fixture="[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)")

# -- NCCL: the shared-memory transport's segment in /dev/shm ------------------------------------------------------------
add("DD1323", "nccl-shm-segment-failed", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("Error: failed to extend", "Could not map", "failed to create shared memory file"),
    "NCCL could not create, size or map its shared-memory segment in /dev/shm", rank=84,
    regex=r"Error: failed to extend \S+ to \d+ bytes|Could not map \S*/dev/shm|Could not map \S+ size \d+|"
    r"Error: failed to create shared memory file",
    remedy="/dev/shm is too small or full (Docker's default is 64 MB): start the container with --shm-size=1g or "
    "--ipc=host (Kubernetes: a memory-backed emptyDir at /dev/shm), or set NCCL_SHM_DISABLE=1.",
    component="nccl", versions="all (src/misc/shmutils.cc up to 2.2x, src/os/linux.cc in the newest)",
    source="NVIDIA/nccl src/misc/shmutils.cc / src/os/linux.cc (ncclShmOpen: 'Error: failed to extend %s to %ld "
    "bytes', 'Could not map %s size %zi')",
    fixture="NCCL WARN Error: failed to extend /dev/shm/nccl-k3Yx2Q to 9637888 bytes")

# NCCL's system-call checks print the call and errno's text ("Call to %s failed : %s", SYSCHECK in src/include/checks.h):
# the errno says which cause -- ENOSPC a full /dev/shm (DD710), EACCES a path the job's user may not write
add("DD1334", "nccl-syscall-permission-denied", C.OTHER, R.CAUSE, ("failed : Permission denied", "failed: Permission denied"),
    "NCCL's system call was refused permission (EACCES): a node's /dev/shm (or a device file) that the job's user may "
    "not write", rank=86,
    regex=r"Call to \w+ failed ?: Permission denied",
    remedy="The call named on the line was denied access: /dev/shm must be writable by every user (mode 1777, like "
    "/tmp) -- fix the node's or container's mount (a --tmpfs or emptyDir without the sticky world-writable mode), or "
    "run as the user that owns it; NCCL_SHM_DISABLE=1 avoids /dev/shm. For a device file, check the node's udev "
    "rules and the container's device list.",
    component="nccl", versions="all", source="NVIDIA/nccl src/include/checks.h (SYSCHECK: 'Call to %s failed : %s', "
    "strerror(errno)); include/shm.h / src/misc/shmutils.cc (shm_open)",
    fixture="node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied")

# -- TensorFlow: NCCL ops without kernels in this build ----------------------------------------------------------------
add("DD1324", "tf-nccl-kernel-missing", C.OTHER, R.CAUSE, ("No OpKernel was registered to support Op 'Nccl",),
    "This TensorFlow build has no NCCL kernels (Windows, CPU-only or ROCm builds without NCCL)", rank=78,
    remedy="Use a cross-device reduction that does not need NCCL: MirroredStrategy(cross_device_ops="
    "tf.distribute.HierarchicalCopyAllReduce()) or ReductionToOneDevice, or CommunicationImplementation.RING for "
    "MultiWorkerMirroredStrategy; or run on a Linux CUDA build.",
    component="tensorflow", versions="all", source="tensorflow/tensorflow tensorflow/core/kernels/nccl_ops.cc "
    "(kernels compiled only with GOOGLE_CUDA/TENSORFLOW_USE_ROCM and NCCL) / core/framework/op_kernel.cc ('No "
    "OpKernel was registered to support Op ')",
    fixture="No OpKernel was registered to support Op 'NcclAllReduce' used by {{node NcclAllReduce}} with these "
            "attrs: [reduction=\"sum\", shared_name=\"c1\", T=DT_FLOAT, num_devices=2]")

# -- Open MPI: mpirun's own verdicts on the running job (help-orterun.txt) --------------------------------------------
add("DD1325", "ompi-mpirun-timeout", C.PREEMPTION, R.CAUSE,
    ("The user-provided time limit for job execution has been reached",),
    "mpirun ended the job at its time limit (--timeout / MPIEXEC_TIMEOUT)", rank=82,
    remedy="The job ran longer than the limit mpirun was given: raise --timeout (MPIEXEC_TIMEOUT), or find why it "
    "is slower than expected (a hang shows as no progress before the limit).",
    component=OMPI, versions="all", source=OMPI41 + "orte/tools/orterun/help-orterun.txt (orterun:timeout)",
    fixture="The user-provided time limit for job execution has been reached:")
add("DD1326", "ompi-proc-mem-exceeded", C.OOM_HOST, R.CAUSE, ("A process exceeded memory limits",),
    "Open MPI's memory sensor killed a process over its memory limit", rank=88,
    remedy="The process used more memory than the limit set for it (orte_sensor / the allocation): give it more "
    "memory or use less (smaller batches per process, fewer processes per node).",
    component=OMPI, versions="<=4.1 (ORTE)", source=OMPI41 + "orte/tools/orterun/help-orterun.txt "
    "(orterun:proc-mem-exceeded)", fixture="A process exceeded memory limits:")
add("DD1327", "ompi-proc-heartbeat-failed", C.PEER_UNRESPONSIVE, R.CAUSE,
    ("failed to receive scheduled heartbeat communications from a remote",),
    "mpirun stopped receiving a remote process's heartbeats", rank=60,
    remedy="The process (or its node) froze or the network to it failed: look at that node (load, swap, dmesg) "
    "and its last output.", component=OMPI, versions="<=4.1 (ORTE)",
    source=OMPI41 + "orte/tools/orterun/help-orterun.txt (orterun:proc-heartbeat-failed)",
    fixture="mpirun failed to receive scheduled heartbeat communications from a remote process:")
add("DD1328", "ompi-proc-stalled", C.HANG_STALLED_WORKER, R.CAUSE,
    ("One or more processes appear to have stalled - a monitored file",),
    "Open MPI's file sensor saw a process stop writing its monitored file", rank=55,
    remedy="The process stopped making progress: take its stack (py-spy dump, gdb) to see where it waits.",
    component=OMPI, versions="<=4.1 (ORTE)", source=OMPI41 + "orte/tools/orterun/help-orterun.txt "
    "(orterun:proc-stalled)", fixture="One or more processes appear to have stalled - a monitored file")
add("DD1329", "ompi-daemon-died-running", C.PEER_CRASHED, R.CAUSE,
    ("has detected that a required daemon terminated during execution",),
    "An Open MPI daemon (one node's) died while the job ran: that node failed or was cleaned up", rank=50,
    remedy="A node's orted died: look at that node (rebooted, OOM-killed daemon, the scheduler ended it); the "
    "processes on it went with it.", component=OMPI, versions="<=4.1 (ORTE)",
    source=OMPI41 + "orte/tools/orterun/help-orterun.txt (orterun:daemon-died-during-execution)",
    fixture="mpirun has detected that a required daemon terminated during execution")
add("DD1330", "ompi-pmix-server-path", C.OTHER, R.CAUSE, ("The call to pmix_init_server() failed",),
    "mpirun's PMIx server could not create its socket: the session directory's path is too long", rank=80,
    remedy="Unix socket paths are limited to ~100 characters: set TMPDIR to something short (/tmp) or shorten the "
    "host name.", component=OMPI, versions="4.x", source=OMPI41 + "orte/tools/orterun/help-orterun.txt "
    "(orterun:pmix-failed)", fixture="The call to pmix_init_server() failed. This may be due to your")

# -- Horovod: horovodrun's launch checks ---------------------------------------------------------------------------------
HVD = "horovod/horovod "
add("DD1331", "hvd-no-common-interface", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("Unable to find a set of common task-to-task communication interfaces",
     "Cannot find an IPv4 address of the common interface"),
    "horovodrun found no network interface that routes between all hosts", rank=76,
    remedy="The hosts share no interface that reaches every other host (different names, a firewall between "
    "them): name the interface with --network-interface (NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME the same) and make "
    "sure every host reaches the others on it.", component="horovod", versions=">=0.16",
    source=HVD + "horovod/runner/driver/driver_service.py (_run_probe) / horovod/runner/util/network.py "
    "(get_driver_ip)", fixture="Exception: Unable to find a set of common task-to-task communication interfaces: "
    "[(0, {'lo': [('127.0.0.1', 12345)]}), (1, {'eth0': [('10.0.0.2', 23456)]})]")
add("DD1332", "hvd-service-digest", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("Security error: digest did not match the message",),
    "horovodrun's services received a message signed with another key (another run, or another Horovod)", rank=72,
    remedy="A process from another horovodrun (a leftover task, a second job on the same ports) or another Horovod "
    "version answered: stop the leftover processes and run one Horovod version on every host.",
    component="horovod", versions="all", source=HVD + "horovod/runner/common/util/network.py (BasicService)",
    fixture="Exception: Security error: digest did not match the message.")
add("DD1333", "hvd-discovery-script-failed", C.USER_CODE_ERROR, R.CAUSE, ("Failed to execute discovery script:",),
    "Elastic Horovod's host discovery script failed", rank=72,
    remedy="Run the --host-discovery-script by hand: it must be executable and print one 'host:slots' per line, "
    "exit 0.", component="horovod", versions=">=0.20 (elastic)",
    source=HVD + "horovod/runner/elastic/discovery.py (HostDiscoveryScript.find_available_hosts_and_slots)",
    fixture="RuntimeError: Failed to execute discovery script: ./discover_hosts.sh. Exit code: 126")

# -- PSM / PSM2 (Intel True Scale and Omni-Path), under Open MPI's, MPICH's and Intel MPI's PSM transports ------------
_PSM = ("intel/opa-psm2 psm_hal_gen1/opa_proto.c and the older infinipath-psm ipath/ipath_proto.c "
        "('assign_context command failed: %s', strerror(errno)); ipath_proto.c's \"can't open /dev/ipath, network down\"")
add("DD1335", "psm-no-free-hardware-context", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("assign_context command failed: Device or resource busy",),
    "The Omni-Path / True Scale adapter had no free hardware context for this process (EBUSY): more processes (or "
    "endpoints per process) on the node than the adapter has contexts", rank=84,
    remedy="Each process (each of its virtual interfaces or endpoints) takes a hardware context on the node's HFI: run "
    "fewer processes per node, let processes share contexts (PSM2_SHAREDCONTEXTS=1, or fewer VCIs/endpoints per "
    "process), or free the contexts another job still holds on the node (`hfi1stats`, `opainfo`).",
    component="psm2", versions="all", source=_PSM,
    fixture="node05.36041hfi_userinit_internal: assign_context command failed: Device or resource busy")
add("DD1336", "psm-link-down", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("assign_context command failed: Network is down", "network down (err=", "Driver initialization failure on /dev/ipath",
     "Please make sure that the network link is"),
    "PSM could not open the node's InfiniPath / Omni-Path adapter: its link is down or its driver failed to "
    "initialise", rank=82,
    remedy="The interconnect is not usable on this node: check its link and driver (`ipath_control -i`, `opainfo`, "
    "`ibstat`), take the node out of the job's node list until it is repaired, or run over another transport.",
    component="psm2", versions="all", source=_PSM + "; Open MPI's help-mtl-psm.txt ('PSM was unable to open an "
    "endpoint. Please make sure that the network link is active on the node and the hardware is functioning.')",
    fixture="cn1381.23245can't open /dev/ipath, network down (err=26)")

# -- PBS (OpenPBS / PBS Pro, Torque) and Moab: the job's limits enforced --------------------------------------------
_PBS = ("openpbs/openpbs src/resmom/mom_main.c (\"=>> PBS: job killed: %s\", the limit's \"walltime %ld exceeded limit "
        "%ld\", \"mem ...\", \"vmem ...\", \"cput ...\"); adaptivecomputing/torque src/server messages "
        "(msg_momjoboverwalltimelimit \"Job exceeded its walltime limit. Job was aborted\", msg_momjobovermemlimit, "
        "msg_momjobovercputlimit)")
add("DD1337", "pbs-walltime-exceeded", C.PREEMPTION, R.CAUSE,
    ("PBS: job killed: walltime", "PBS: job killed: cput", "Job exceeded its walltime limit",
     "Job exceeded its cpu time limit"),
    "PBS killed the job at its wall-time (or CPU-time) limit", rank=88,
    remedy="The job ran into the time it asked for (`#PBS -l walltime=`): ask for more time, or checkpoint and resume "
    "so that a job cut at its limit goes on in the next one (a job that stopped progressing long before its limit "
    "hung: its last step's time in the log says which).",
    component="pbs", versions="all (OpenPBS/PBS Pro, Torque)", source=_PBS,
    fixture="=>> PBS: job killed: walltime 259217 exceeded limit 259200")
add("DD1338", "pbs-memory-limit-exceeded", C.OOM_HOST, R.CAUSE,
    ("PBS: job killed: mem", "PBS: job killed: vmem", "PBS: job killed: pvmem", "Job exceeded a memory resource limit",
     "exceeded MEM usage hard limit"),
    "PBS (or Moab) killed the job because its memory went over the limit it asked for", rank=88,
    remedy="The job used more memory than it requested (`#PBS -l mem=` / `pmem` / `vmem`): request more, or lower what "
    "each process holds (batch size, data per worker, fewer processes per node).",
    component="pbs", versions="all (OpenPBS/PBS Pro, Torque; Moab's resource-limit enforcement)",
    source=_PBS + "; Moab Workload Manager resource-limit policy (\"job %s exceeded MEM usage hard limit (%d > %d)\")",
    fixture="job 3132467 exceeded MEM usage hard limit (2528 > 1126)")
add("DD1339", "ompi-pml-mismatch", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE, ("selected pml", "but peer"),
    "Open MPI's processes chose different point-to-point layers (PML): the nodes differ in their network stacks "
    "or MCA settings", rank=80, regex=r"selected pml \S+, but peer .* selected pml \S+",
    remedy="Every process must select the same PML: install the same Open MPI build and network libraries (UCX, "
    "PSM2, libfabric) on every node, and pass the same MCA settings everywhere (e.g. `--mca pml ucx` or `--mca pml "
    "ob1` on the mpirun line, not in one node's environment).",
    component=OMPI, versions="all", source="open-mpi/ompi ompi/mca/pml/base/pml_base_select.c "
    "(mca_pml_base_pml_check_selected: \"%s selected pml %s, but peer %s on %s selected pml %s\")",
    fixture="[node-a:08972] [[26813,1],24] selected pml cm, but peer [[26813,2],0] on node-b selected pml ob1")

# -- IBM Spectrum LSF: the termination reasons bacct/bhist/bjobs and the job's output mail print ("TERM_RUNLIMIT: job
# killed after reaching LSF run time limit."), each keyword a fact of IBM's table, read as PBS's and Slurm's are
_LSF = ("IBM Spectrum LSF, \"Termination reasons displayed by bacct, bhist, and bjobs\" (the TERM_* keywords; "
        "lsbatch.h maps them to the JOB_FINISH integers)")
add("DD1463", "lsf-run-limit", C.PREEMPTION, R.CAUSE, ("TERM_RUNLIMIT", "TERM_DEADLINE", "TERM_WINDOW"),
    "LSF killed the job at its run-time limit (or its deadline, or when its queue's run window closed)",
    regex=r"\bTERM_(?:RUNLIMIT|DEADLINE|WINDOW)\b", rank=88,
    remedy="The job ran into the time it asked for (`bsub -W`) or its queue's limit: ask for more, or checkpoint and "
    "resume so that a job cut at its limit goes on in the next one (a job that stopped progressing long before its "
    "limit hung: its last step's time in the log says which).",
    component="lsf", versions="all", source=_LSF,
    fixture="TERM_RUNLIMIT: job killed after reaching LSF run time limit.")
add("DD1464", "lsf-memory-limit", C.OOM_HOST, R.CAUSE, ("TERM_MEMLIMIT", "TERM_SWAP"),
    "LSF killed the job because its memory (or swap) went over the limit", regex=r"\bTERM_(?:MEMLIMIT|SWAP(?:LIMIT)?)\b",
    rank=88, remedy="The job used more memory than its limit (`bsub -M`, `-R rusage[mem=...]`): request more, or lower "
    "what each process holds (batch size, data per worker, fewer processes per host).",
    component="lsf", versions="all", source=_LSF,
    fixture="TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.")
add("DD1465", "lsf-preempted", C.PREEMPTION, R.CAUSE, ("TERM_PREEMPT", "TERM_RC", "TERM_REQUEUE_RC"),
    "LSF killed the job to preempt it (or because the cloud reclaimed its resource-connector host)",
    regex=r"\bTERM_(?:PREEMPT|RC|REQUEUE_RC)\b", rank=88,
    remedy="The job was preempted: resubmit it (`bsub -r` reruns it) and resume from the last checkpoint; a "
    "non-preemptable queue keeps it running.",
    component="lsf", versions="all", source=_LSF, fixture="TERM_PREEMPT: job killed after preemption.")
add("DD1466", "lsf-killed-by-request", C.PREEMPTION, R.CAUSE,
    ("TERM_OWNER", "TERM_ADMIN", "TERM_FORCE_OWNER", "TERM_FORCE_ADMIN", "TERM_REQUEUE_OWNER", "TERM_REQUEUE_ADMIN",
     "TERM_BUCKET_KILL"),
    "LSF killed the job at its owner's or an administrator's request (bkill, brequeue)",
    regex=r"\bTERM_(?:FORCE_|REQUEUE_)?(?:OWNER|ADMIN)\b|\bTERM_BUCKET_KILL\b", rank=70,
    remedy="The job was killed from outside (`bkill`): if a person killed it because it had stopped progressing, the "
    "hang is the cause (its last step's time in the log says when); otherwise resubmit and resume from the last "
    "checkpoint.", component="lsf", versions="all", source=_LSF, fixture="TERM_OWNER: job killed by owner.")
add("DD1467", "lsf-resource-limit", C.RESOURCE_EXHAUSTION, R.CAUSE, ("TERM_CPULIMIT", "TERM_PROCESSLIMIT", "TERM_THREADLIMIT"),
    "LSF killed the job at its CPU-time, process or thread limit",
    regex=r"\bTERM_(?:CPULIMIT|PROCESSLIMIT|THREADLIMIT)\b", rank=85,
    remedy="The job went over a limit LSF enforces (`bsub -c`, `-p`, `-T`, or the queue's): request more, or start "
    "fewer processes and threads (input pipeline workers, intra/inter-op threads) per task.",
    component="lsf", versions="all", source=_LSF,
    fixture="TERM_CPULIMIT: job killed after reaching LSF CPU usage limit.")
