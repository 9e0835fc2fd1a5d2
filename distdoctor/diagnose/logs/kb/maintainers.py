"""Messages the components' maintainers explain in their own troubleshooting pages (codes DD1200-DD1239).

Each signature is one (message -> cause -> remedy) entry of a maintainers' guide that the rest of the knowledge base
did not recognise, or recognised with a cause the guide contradicts (then the entry here is the more specific one
and outranks the generic signature): Horovod's docs/troubleshooting.rst, Open MPI's FAQ (open-mpi/ompi-www
faq/*.inc) and its docs/launching-apps/troubleshooting.rst, and Slurm's doc/html/troubleshoot.shtml and faq.shtml
(NCCL's troubleshooting pages and TensorFlow's distributed-training guides quote no message the knowledge base
lacks, see the NCCL note below). The category is the cause the guide states; the fixture is the message as the guide
quotes it; ``source`` names the page and its section.
"""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

HVD_DOC = "horovod/horovod docs/troubleshooting.rst"
OMPI_FAQ = "open-mpi/ompi-www faq"
OMPI_DOC = "open-mpi/ompi docs/launching-apps/troubleshooting.rst"
SLURM_FAQ = "SchedMD/slurm doc/html/faq.shtml"
SLURM_TS = "SchedMD/slurm doc/html/troubleshoot.shtml"

# -- Horovod: installation (pip install horovod builds against TF, MPI and NCCL) -----------------------------------------
add("DD1200", "hvd-install-tensorflow-not-importable", C.VERSION_MISMATCH, R.CAUSE,
    ("error: import tensorflow failed, is it installed?",),
    "Horovod's build could not import TensorFlow", rank=70,
    remedy="Install TensorFlow into the same environment before installing Horovod. If the import fails on a missing "
    "libcuda.so.1 (a container built on a machine without GPUs), register the CUDA stub drivers for the build "
    "(`ldconfig /usr/local/cuda/lib64/stubs`), install Horovod, then run `ldconfig` again.",
    component="horovod", versions="all", source=HVD_DOC + " (Import TensorFlow failed during installation)",
    fixture="error: import tensorflow failed, is it installed?")
add("DD1201", "hvd-install-mpicxx-failed", C.VERSION_MISMATCH, R.CAUSE, ("error: mpicxx -show failed",),
    "Horovod's build could not run MPI's compiler wrapper (mpicxx)", rank=70,
    regex=r"error: mpicxx -show failed(?: \(see error below\))?, is (?:mpicxx|MPI) in \$PATH\?",
    remedy="Put the directory holding mpicxx (next to mpirun) on PATH before `pip install horovod`; if mpicxx itself "
    "fails to load MPI's libraries, add MPI's lib directory to LD_LIBRARY_PATH (or /etc/ld.so.conf, then `ldconfig`).",
    component="horovod", versions="all", source=HVD_DOC + " (MPI is not found during installation)",
    fixture="error: mpicxx -show failed, is mpicxx in $PATH?")
add("DD1202", "hvd-install-mpicxx-libs", C.VERSION_MISMATCH, R.CAUSE, ("mpicxx: error while loading shared libraries:",),
    "MPI's compiler wrapper cannot load MPI's own libraries", rank=72,
    remedy="MPI's libraries are not on the loader's path: add MPI's lib directory to LD_LIBRARY_PATH, or to "
    "/etc/ld.so.conf for a system location, and run `sudo ldconfig` after installing MPI.",
    component="glibc", versions="all",
    source=HVD_DOC + " (MPI is not found during installation: Are MPI libraries added to $LD_LIBRARY_PATH or ld.so.conf?)",
    fixture="mpicxx: error while loading shared libraries: libopen-pal.so.40: cannot open shared object file: No such "
            "file or directory")
add("DD1203", "hvd-install-old-mpi-headers", C.VERSION_MISMATCH, R.CAUSE, ("invalid conversion from",),
    "Horovod does not compile against this MPI's headers (non-const buffer arguments): the MPI is too old", rank=70,
    regex=r"horovod/\S+:\d+:\d+: .*invalid conversion from .const void\*. to .void\*.",
    remedy="Remove the old MPI and install a current one (Open MPI 4.0 or later), then rebuild Horovod.",
    component="horovod", versions="all",
    source=HVD_DOC + " (Error during installation: invalid conversion from 'const void*' to 'void*' [-fpermissive])",
    fixture="horovod/tensorflow/mpi_ops.cc:802:79: # error: invalid conversion from ‘const void*’ to ‘void*’ "
            "[-fpermissive]")
add("DD1204", "hvd-install-python-headers", C.VERSION_MISMATCH, R.CAUSE, ("fatal error: pyconfig.h: No such file",),
    "The Python development headers are missing (building Horovod or another extension)", rank=70,
    remedy="Install the Python headers for this interpreter (python3-dev on Debian/Ubuntu, python3-devel on RHEL) and "
    "build again.", component="horovod", versions="all",
    source=HVD_DOC + " (Error during installation: fatal error: pyconfig.h: No such file or directory)",
    fixture="build/horovod/torch/mpi_lib/_mpi_lib.c:22:24: fatal error: pyconfig.h: No such file or directory")
add("DD1205", "hvd-install-nccl-not-found", C.VERSION_MISMATCH, R.CAUSE,
    ("fatal error: nccl.h: No such file", "NCCL 2.0 library or its later version was not found"),
    "Horovod's build did not find NCCL 2", rank=70,
    remedy="Tell the build where NCCL is: HOROVOD_NCCL_HOME (a directory with include/nccl.h and lib/libnccl.so), or "
    "HOROVOD_NCCL_INCLUDE and HOROVOD_NCCL_LIB, with HOROVOD_GPU_OPERATIONS=NCCL.",
    component="horovod", versions="all", source=HVD_DOC + " (NCCL 2 is not found during installation)",
    fixture="error: NCCL 2.0 library or its later version was not found (see error above).")
add("DD1206", "pip-too-old-no-cache-dir", C.VERSION_MISMATCH, R.CAUSE, ("no such option: --no-cache-dir",),
    "pip is too old for --no-cache-dir", rank=60,
    remedy="Upgrade pip, or drop --no-cache-dir (a pip that old does not cache builds anyway).",
    component="python", versions="pip < 6", source=HVD_DOC + " (Pip install: no such option: --no-cache-dir)",
    fixture="no such option: --no-cache-dir")
add("DD1207", "hvd-nccl-invalid-data-type", C.VERSION_MISMATCH, R.CAUSE, ("failed: invalid data type",),
    "Horovod was linked against a different NCCL than the one loaded at run time", rank=80,
    regex=r"nccl\w+ failed: invalid data type",
    remedy="Another NCCL shadows the one Horovod was built with (typically conda's `nccl` package): `conda remove nccl`, "
    "uninstall Horovod and reinstall it with HOROVOD_NCCL_HOME pointing at the intended NCCL.",
    component="horovod", versions="all", source=HVD_DOC + " (ncclAllReduce failed: invalid data type)",
    fixture="UnknownError (see above for traceback): ncclAllReduce failed: invalid data type")
add("DD1208", "hvd-cuda-ipc-duplicate-hostname", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("failed to open CUDA IPC handle : 30 unknown error",),
    "NCCL took ranks on different servers for local peers: the servers share one hostname", rank=60,
    remedy="MPI and NCCL tell servers apart by hostname: give every server a unique hostname (check `hostname` on each "
    "node, and containers started with the same --hostname).",
    component="nccl", versions="all",
    source=HVD_DOC + " (transport/p2p.cu:431 WARN failed to open CUDA IPC handle : 30 unknown error)",
    fixture="node1:22671:22795 [1] transport/p2p.cu:431 WARN failed to open CUDA IPC handle : 30 unknown error")
add("DD1209", "hvd-hwloc-symbol-clash", C.VERSION_MISMATCH, R.CAUSE, ("opal_hwloc_base_free_topology",),
    "A crash inside Open MPI's hwloc teardown: TensorFlow's exported hwloc symbols clash with Open MPI's", rank=85,
    remedy="Preload the system hwloc so Open MPI binds to it rather than TensorFlow's copy: find it with "
    "`ldconfig -p | grep libhwloc.so` and start the job with LD_PRELOAD=<that libhwloc.so>.",
    component="openmpi", versions="with TensorFlow 1.14-1.15",
    source=HVD_DOC + " (segmentation fault with tensorflow 1.14 or higher mentioning hwloc)",
    fixture="[ 1] /usr/lib/x86_64-linux-gnu/libopen-pal.so.20(opal_hwloc_base_free_topology+0x76)[0x7f3042871ca6]")

# -- NCCL: the user guide's runtime issues -------------------------------------------------------------------------------
# Its quoted messages are both read already: "failed to extend /dev/shm/nccl-..." (a /dev/shm too small) is DD710 with
# the guide's cause. "unlink shared memory ... failed, error: No such file or directory" (systemd-logind's RemoveIPC
# deleting the segments) is DD710 too, with the wrong cause; its own signature (other, RemoveIPC=no) was held back: its
# fixture taught the safety net's word model (removed in session 22) that "directory" speaks for "other", which dropped
# the truth from the alternatives of a corpus case whose log shows no failure (realworld-dev/dev_054). Its code,
# DD1210, stays reserved.

# -- Open MPI: FAQ and launching-apps troubleshooting --------------------------------------------------------------------
add("DD1211", "ompi-component-not-loaded", C.VERSION_MISMATCH, R.CONTEXT, ("mca: base: component_find: unable to open",),
    "Open MPI could not load one of its plugins", rank=20,
    remedy="The plugin belongs to another Open MPI version installed over this one (reinstall into a clean prefix) or a "
    "shared library it needs is not on LD_LIBRARY_PATH; an old libltdl prints 'file not found' for either.",
    component="openmpi", versions="all",
    source=OMPI_FAQ + "/troubleshooting.inc (erroneous-file-not-found-message)",
    fixture="mca: base: component_find: unable to open /opt/openmpi/mca_ras_dash_host: file not found (ignored)")
add("DD1212", "ompi-backtrace-printer-frame", C.OTHER, R.BENIGN, ("(opal_backtrace_print+",),
    "Open MPI's own stack printer, the top frame of every crash it reports (not where the crash is)", rank=0,
    remedy="Nothing to do about this frame: the crashing function is a few frames further down the same stack.",
    component="openmpi", versions="all", source=OMPI_FAQ + "/troubleshooting.inc (libopal-apparent-segv)",
    fixture="[0] func:/opt/ompi/lib/libopen-pal.so.0(opal_backtrace_print+0x2b) [0x2a958de8a7]")
add("DD1213", "ompi-daemon-library-missing", C.VERSION_MISMATCH, R.CAUSE,
    ("orted: error while loading shared libraries:", "prted: error while loading shared libraries:"),
    "Open MPI's launch daemon cannot load a library on a remote node (its environment lacks the compiler's runtime)",
    rank=72,
    remedy="The library (a compiler runtime such as Intel's libimf.so) is found in interactive logins only: set up the "
    "compiler environment (LD_LIBRARY_PATH) in the startup file that non-interactive shells read on every node.",
    component="glibc", versions="all (orted <=4.1, prted >=5.0)",
    source=OMPI_DOC + " (Errors about missing libraries); " + OMPI_FAQ + "/running.inc (intel-compilers-static)",
    fixture="prted: error while loading shared libraries: libimf.so: cannot open shared object file: No such file or "
            "directory")
add("DD1214", "ompi-daemon-died-127", C.VERSION_MISMATCH, R.CAUSE, ("died unexpectedly with status 127",),
    "Open MPI's launch daemon could not start on a node (status 127: a program or library not found)", rank=55,
    regex=r"A daemon \(pid \d+\) died unexpectedly with status 127",
    remedy="The daemon's binary or one of its libraries is not found there: check PATH and LD_LIBRARY_PATH in the "
    "node's non-interactive shell (`ssh node env`), or use mpirun --prefix.",
    component="openmpi", versions="all", source=OMPI_DOC + " (Errors about missing libraries)",
    fixture="A daemon (pid 11893) died unexpectedly with status 127 while")
add("DD1215", "ompi-tcp-peer-reset", C.PEER_CRASHED, R.SYMPTOM,
    ("writev failed with errno=104", "readv failed with errno=104"),
    "Open MPI's TCP transport wrote to a peer whose connection was reset: that MPI process died", rank=20,
    regex=r"mca_btl_tcp_frag_(?:send|recv): (?:writev|readv) failed with errno=104",
    remedy="A peer process died (a crash, a kill): find the rank that exited first and read its own output.",
    component="openmpi", versions="all", source=OMPI_FAQ + "/tcp.inc (tcp-connection-errors)",
    fixture="mca_btl_tcp_frag_send: writev failed with errno=104")
add("DD1216", "ompi-oob-connect-backlog", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("mca_oob_tcp_peer_complete_connect: connection failed: Connection timed out (110) - retrying",),
    "mpirun could not accept the daemons' connections fast enough while launching a large job", rank=50,
    remedy="On the node running mpirun raise net.core.somaxconn and net.core.netdev_max_backlog, and run mpirun with "
    "--mca oob_tcp_listen_mode listen_thread.", component="openmpi", versions="1.2",
    source=OMPI_FAQ + "/troubleshooting.inc (large-job-tcp-oob-timeout)",
    fixture="mca_oob_tcp_peer_complete_connect: connection failed: Connection timed out (110) - retrying")

# -- Slurm: the FAQ and the troubleshooting guide ---------------------------------------------------------------------
add("DD1217", "slurm-first-task-exited", C.PEER_CRASHED, R.SYMPTOM, ("First task exited",),
    "srun saw the first task of the step exit and ends the others after --wait seconds", rank=15,
    regex=r"First task exited(?: \d+s ago|\. Terminating job in \d+s)",
    remedy="One task exited early (its own output or exit code says why); the rest were ended by srun. To let the other "
    "tasks keep running, change the delay with srun --wait=<seconds> (0 disables it).",
    component="slurm", versions="all", source=SLURM_FAQ + " (What does this mean: \"srun: First task exited 30s ago\")",
    fixture="srun: First task exited 30s ago")
add("DD1218", "slurm-nodes-not-responding", C.PEER_UNRESPONSIVE, R.CAUSE, ("not responding",),
    "slurmctld lost contact with nodes of the cluster", rank=40, regex=r"Nodes \S+ not responding",
    remedy="Check the network between the controller and those nodes (ping their NodeAddr) and that slurmd runs there "
    "(`scontrol show slurmd` on the node); `scontrol show node` gives the reason a node went DOWN.",
    component="slurm", versions="all",
    source=SLURM_TS + " (Jobs and nodes are stuck in COMPLETING state; Nodes are getting set to a DOWN state)",
    fixture="error: Nodes node[00,03,25] not responding")
add("DD1219", "slurm-rlimit-not-propagated", C.RESOURCE_EXHAUSTION, R.CONTEXT, ("Can't propagate RLIMIT_",),
    "Slurm could not give the tasks the submit host's resource limit (the node's hard limit is lower)", rank=10,
    remedy="The compute nodes' hard limits are below the login node's: make limits uniform across the cluster (for "
    "MPI the locked-memory limit: LimitMEMLOCK=infinity for slurmd) or exclude the limit with "
    "PropagateResourceLimitsExcept.", component="slurm", versions="all",
    source=SLURM_FAQ + " (Why are my resource limits not propagated?)",
    fixture="Can't propagate RLIMIT_...")
add("DD1220", "slurm-credential-replayed", C.PEER_UNRESPONSIVE, R.CONTEXT, ("Credential replayed",),
    "slurmd answered a launch request so late that srun resent it", rank=10,
    remedy="slurmd was slow to respond (network trouble on diskless nodes, slow NIS, a long Prolog): raise "
    "MessageTimeout in slurm.conf above its 10 s default and look at why that node is slow.",
    component="slurm", versions="all", source=SLURM_FAQ + " (\"Credential replayed\" in SlurmdLogFile)",
    fixture="Credential replayed")
add("DD1221", "slurm-batch-missing", C.OOM_HOST, R.CAUSE, ("missing from batch node",),
    "slurmctld cancelled a batch job whose script is no longer running on its first node", rank=40,
    regex=r"Batch \S+ missing from batch node \S+ \(not found BatchStartTime after startup\)",
    remedy="The batch script vanished from node zero of the allocation, usually because the node ran out of memory: "
    "check that node's kernel log and memory use, ask for more memory, and resubmit.", component="slurm",
    versions="all", source=SLURM_FAQ + " (\"Batch JobId=# missing from batch node <node>\")",
    fixture="Batch JobId=# missing from batch node <node> (not found BatchStartTime after startup)")
add("DD1222", "slurm-accept-eagain", C.RESOURCE_EXHAUSTION, R.CAUSE, ("Resources temporarily unavailable",),
    "srun could not accept its tasks' I/O connections: a per-user resource limit was reached", rank=60,
    regex=r"Unable to accept (?:new )?connection: Resources temporarily unavailable",
    remedy="Raise the user's limits for locked memory and stack size (ulimit -l / -s, limits.conf) where srun runs.",
    component="slurm", versions="all",
    source=SLURM_FAQ + " (\"srun: error: Unable to accept connection: Resources temporarily unavailable\")",
    fixture="srun: error: Unable to accept connection: Resources temporarily unavailable")
add("DD1223", "slurm-very-large-processing-time", C.OTHER, R.CONTEXT, ("Note very large processing time",),
    "slurmctld took over a second for one operation", rank=5,
    remedy="The controller is slow (file-system delays writing state, slow user lookups, or its host is paging): raise "
    "SlurmctldDebug to debug2 to see which operation, and check its host's memory.", component="slurm",
    versions="all", source=SLURM_FAQ + " (\"Warning: Note very large processing time\" in SlurmctldLogFile)",
    fixture="Warning: Note very large processing time")
add("DD1224", "slurm-serializer-plugin-missing", C.VERSION_MISMATCH, R.CAUSE, ("Unable to find plugin: serializer/",),
    "This Slurm was built without the JSON/YAML serializer it needs", rank=60,
    remedy="Rebuild and install Slurm with the JSON (and YAML) development libraries present so the serializer "
    "plugins are built.", component="slurm", versions=">=20.11",
    source=SLURM_FAQ + " (\"Unable to find plugin: serializer/json\")",
    fixture="slurmctld: fatal: Unable to find plugin: serializer/json")
add("DD1225", "slurm-plugin-ops-unresolved", C.VERSION_MISMATCH, R.CAUSE, ("plugin operations",),
    "A Slurm daemon loaded a plugin that lacks the symbols it expects (built for another Slurm)", rank=60,
    regex=r"[Cc]annot resolve \S+ plugin operations",
    remedy="The plugin was built or installed wrongly, or the configuration names an old plugin from a previous "
    "release: reinstall the plugins of this Slurm version; `slurmctld -Dvvvvv` shows which one fails.",
    component="slurm", versions="older releases (the wording of the FAQ)",
    source=SLURM_FAQ + " (\"Cannot resolve X plugin operations\" on daemon startup)",
    fixture="Cannot resolve X plugin operations")
add("DD1226", "slurm-node-unexpectedly-rebooted", C.PEER_CRASHED, R.CAUSE, ("Node unexpectedly rebooted",),
    "A node of the job rebooted under it (Slurm sets the node DOWN)", rank=60,
    remedy="The node restarted, killing what ran there: resubmit (or requeue) from the last checkpoint; to let such "
    "nodes return to service by themselves set ReturnToService=2, else resume them with scontrol.",
    component="slurm", versions="all",
    source=SLURM_FAQ + " (Why is a compute node down with the reason set to \"Node unexpectedly rebooted\"?)",
    fixture="Node unexpectedly rebooted")
add("DD1227", "slurm-job-credential-replayed", C.OTHER, R.CAUSE, ("Job credential replayed",),
    "slurmd refused a launch for a job ID it had already seen end: slurmctld was cold-started and reuses job IDs",
    rank=50, regex=r"Task launch (?:for \S+ )?failed on node \S+:? Job credential replayed",
    remedy="After a cold start of slurmctld (-c, startclean) job IDs begin again at FirstJobId while the slurmd daemons "
    "still remember the old ones: cold-start every slurmd too, then resubmit.", component="slurm", versions="all",
    source=SLURM_FAQ + " (\"Task launch failed on node ... Job credential replayed\")",
    fixture="Task launch failed on node ... Job credential replayed")
