"""MPI launchers and libraries: Open MPI (help-*.txt catalogue, v1.x-v5), MPICH / Hydra, Intel MPI and libfabric
(codes DD934-DD959; the first Open MPI signatures are in comm.py).

Open MPI wording is from open-mpi/ompi (orte/tools/orterun/help-orterun.txt, orte/mca/*/help-*.txt,
opal/mca/btl/*/help-*.txt, ompi/runtime/help-mpi-runtime.txt, ompi/errhandler/help-mpi-errors.txt, v4.1.5 and v5.0);
MPICH's from pmodels/mpich (src/pm/hydra, src/mpi/errhan/errnames.txt, src/mpid/ch4). Intel MPI is MPICH-based
(its ch4/OFI and Hydra messages share MPICH's text) and closed: its own launcher lines are quoted from its output.
"""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

OMPI = "openmpi"
MPICH = "mpich"
IMPI = "intelmpi"
_PEER = ("A symptom of a process that went away: find the first process that failed (its own output, exit status, "
         "the OOM killer, the scheduler's events).")
_IFACES = ("Restrict Open MPI to interfaces that route between the nodes (`--mca btl_tcp_if_include eth0 --mca "
           "oob_tcp_if_include eth0`), excluding docker0/virbr bridges and loopback.")

# -- Open MPI: launcher (orterun / prterun) ---------------------------------------------------------------------------
add("DD934", "prterun-rank-died", C.PEER_CRASHED, R.CAUSE,
    ("noticed that process rank",),
    "The launcher saw a rank die (Open MPI 5 / PRRTE wording, or a launcher under another name: the help text's "
    "\"%s noticed\" is the tool's own name, mpirun.real, mpirun.openmpi, orterun, mpiexec)",
    regex=r"(?<!\bmpirun )noticed that process rank (?P<rank>\d+)",
    rank=40, expect="rank:2", remedy="That rank died first: look at its own output for the cause (a crash, the OOM "
    "killer, a kill from outside).", component=OMPI, versions=">=5.0 (prterun); all (mpiexec/orterun)",
    source="openpmix/prrte src/mca/schizo/prte/help-prun.txt and Open MPI orte/tools/orterun/help-orterun.txt "
    "(proc-aborted-strsignal: \"%s noticed that process rank %lu\", %s the tool's name; plain `mpirun` is DD730)",
    fixture="prterun noticed that process rank 2 with PID 4242 on node gpu-2 exited on signal 9 (Killed).")
add("DD935", "mpirun-job-aborted-unknown", C.PEER_CRASHED, R.SYMPTOM,
    ("noticed that the job aborted, but has no info as to the process", "has exited due to a process exiting without"),
    "mpirun saw the job abort but cannot say which process", rank=20, remedy=_PEER, component=OMPI, versions="all",
    source="open-mpi/ompi orte/tools/orterun/help-orterun.txt (proc-aborted-unknown / proc-exit-no-sync-unknown)",
    fixture="mpirun noticed that the job aborted, but has no info as to the process that caused that situation.")
add("DD936", "mpirun-sys-limit", C.RESOURCE_EXHAUSTION, R.CAUSE, ("system limit exceeded on number of",),
    "mpirun hit a system limit (pipes, sockets, child processes) while starting the job", rank=75,
    remedy="Raise the limit (`ulimit -n` / `ulimit -u`, or `--mca opal_set_max_sys_limits 1`), or start fewer "
    "processes per node.", component=OMPI, versions="all",
    source="open-mpi/ompi orte/tools/orterun/help-orterun.txt (sys-limit-pipe / sys-limit-sockets / sys-limit-children)",
    fixture="Error: system limit exceeded on number of network connections that can be open")
add("DD937", "mpirun-cannot-allocate", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("was unable to allocate enough resources to start your application",),
    "mpirun could not get the resources the job asks for", rank=70,
    remedy="The allocation (hostfile or the scheduler's) has fewer nodes/slots than requested: ask for fewer "
    "processes or more nodes.", component=OMPI, versions="all",
    source="open-mpi/ompi orte/tools/orterun/help-orterun.txt (allocate-resources)",
    fixture="mpirun was unable to allocate enough resources to start your application.")
add("DD938", "mpi-peer-hung-up", C.PEER_CRASHED, R.SYMPTOM,
    ("An MPI communication peer process has unexpectedly disconnected",),
    "An MPI peer disconnected unexpectedly (it crashed or exited without MPI_Finalize)", rank=30, remedy=_PEER,
    component=OMPI, versions=">=4.0", source="open-mpi/ompi opal/mca/btl/tcp/help-mpi-btl-tcp.txt (peer hung up)",
    fixture="An MPI communication peer process has unexpectedly disconnected.  This usually indicates a failure in the "
            "peer process (e.g., a crash or otherwise exiting without calling MPI_FINALIZE first).")
add("DD939", "mpi-errors-are-fatal", C.PEER_CRASHED, R.SYMPTOM, ("MPI_ERRORS_ARE_FATAL",),
    "An MPI call failed and the default error handler aborts the process", rank=22,
    remedy="The error class printed above (MPI_ERR_TRUNCATE, MPI_ERR_OTHER ...) says what failed; when it follows a "
    "lost peer it is a consequence: find the process that failed first.", component=OMPI, versions="all",
    source="open-mpi/ompi ompi/errhandler/help-mpi-errors.txt (mpi_errors_are_fatal)",
    fixture="[node1:04242] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,")
add("DD940", "mpi-init-failed", C.VERSION_MISMATCH, R.CAUSE,
    ("It looks like MPI_INIT failed for some reason", "It looks like orte_init failed for some reason",
     "It looks like opal_init failed for some reason", "It looks like MPI_INIT_THREAD failed for some reason"),
    "MPI failed to initialise in a process", rank=55,
    remedy="MPI could not start in this environment: the text below it names the failing component (a transport, PMI, "
    "a library); run the same Open MPI build and environment on every node, started by its own mpirun.",
    component=OMPI, versions="all", source="open-mpi/ompi ompi/runtime/help-mpi-runtime.txt / "
    "orte/runtime/help-orte-runtime.txt (startup:internal-failure)",
    fixture="It looks like MPI_INIT failed for some reason; your parallel process is likely to abort.  There are many "
            "reasons that a parallel process can fail during MPI_INIT; some of which are due to configuration or "
            "environment problems.")
add("DD941", "mpi-init-unreachable", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("MPI_INIT has failed because at least one MPI process is unreachable",),
    "MPI_INIT failed: some processes cannot reach each other over any transport", rank=68, remedy=_IFACES,
    component=OMPI, versions="all", source="open-mpi/ompi ompi/runtime/help-mpi-runtime.txt (pml-add-procs-fail)",
    fixture="MPI_INIT has failed because at least one MPI process is unreachable from another.  This *usually* means "
            "that an underlying communication plugin -- such as a BTL or an MTL -- has either not loaded or not "
            "allowed itself to be used.")
add("DD942", "ompi-direct-launch-no-pmi", C.VERSION_MISMATCH, R.CAUSE,
    ('appears to have been direct launched using "srun"', "but OMPI was not built with SLURM"),
    "Open MPI was started by srun but was built without Slurm's PMI support", rank=80,
    remedy="Start the job with mpirun inside the allocation, or use an Open MPI built with PMIx/PMI2 support matching "
    "the cluster's Slurm (`srun --mpi=pmix`).", component=OMPI, versions="<=4.1",
    source="open-mpi/ompi orte/mca/ess/base/help-ess-base.txt (slurm-error / slurm-error2)",
    fixture='The application appears to have been direct launched using "srun", but OMPI was not built with SLURM\'s '
            'PMI support and therefore cannot execute.')
add("DD943", "ompi-version-mismatch", C.VERSION_MISMATCH, R.CAUSE,
    ("Open MPI detected a mismatch in versions between two processes", "Data unpack would read past end of buffer"),
    # the daemons of two Open MPI versions cannot read each other's messages: ORTE_ERROR_LOG prints this unpack error
    "Two processes of the job run different Open MPI versions", rank=85,
    remedy="mpirun and the remote nodes' default Open MPI differ: install one Open MPI at the same path on every node "
    "(or pass --prefix).", component=OMPI, versions="all", source="open-mpi/ompi orte/mca/oob/tcp/help-oob-tcp.txt "
    "(version mismatch) / opal/runtime/opal_init.c (OPAL_ERR_UNPACK_READ_PAST_END_OF_BUFFER)",
    fixture="Open MPI detected a mismatch in versions between two processes.  This typically means that you executed "
            "\"mpirun\" (or \"mpiexec\") from one version of Open MPI on on node, but your default path on one of the "
            "other nodes upon which you launched found a different version of Open MPI.")
add("DD944", "ompi-oob-no-network", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("None of the TCP networks specified to be included for out-of-band communications",
     "resulted in no networks being available", "No sockets were able to be opened on the available protocols"),
    "Open MPI's out-of-band channel has no usable network (the include/exclude lists match nothing)", rank=70,
    remedy=_IFACES + " The names must exist on every node.", component=OMPI, versions="<=4.1 (ORTE)",
    source="open-mpi/ompi orte/mca/oob/tcp/help-oob-tcp.txt (no-included-found / excluded-all / no-listeners)",
    fixture="None of the TCP networks specified to be included for out-of-band communications could be found:")
add("DD945", "ompi-daemon-died", C.PEER_CRASHED, R.CAUSE, ("A daemon died unexpectedly",),
    "An Open MPI daemon died while the job was being launched", rank=55,
    remedy="The daemon on a node died at launch (killed, a missing library, the node failed): look at that node's "
    "environment and the lines the resource manager printed above.", component=OMPI, versions="<=4.1 (ORTE)",
    source="open-mpi/ompi orte/mca/plm/base/help-plm-base.txt (daemon-died-*)",
    fixture="A daemon died unexpectedly with status 127 while attempting to launch so we are aborting.")
add("DD946", "ompi-tcp-wrong-peer", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("Open MPI failed to handshake with a connecting peer", "Open MPI detected an inbound MPI TCP connection request",
     "ORTE is unable to establish a communication connection",
     "Open MPI accepted a TCP connection from what appears to be a"),
    "Open MPI's TCP connections between nodes fail (handshake, wrong source address, no connection to a daemon)",
    rank=62, remedy=_IFACES, component=OMPI, versions=">=3.0",
    source="open-mpi/ompi opal/mca/btl/tcp/help-mpi-btl-tcp.txt (client handshake fail / dropped inbound connection) "
    "/ orte/mca/errmgr/base/help-errmgr-base.txt (no-connect)",
    fixture="WARNING: Open MPI failed to handshake with a connecting peer MPI process over TCP.  This should not happen.")
add("DD947", "ompi-openib-warning", C.OTHER, R.BENIGN,
    ("There was an error initializing an OpenFabrics device", "No OpenFabrics connection schemes reported",
     "but there are no active ports detected",
     # mpirun's aggregated repeat of the same warning names its help file and topic (orte/util/show_help.c)
     "help-mpi-btl-openib.txt / error in device init"),
    "Open MPI's openib transport could not use an InfiniBand device and falls back (usually harmless)", rank=0,
    remedy="Harmless when the job runs over TCP or UCX; silence it with `--mca btl ^openib`.", component=OMPI,
    versions="<=4.1 (btl/openib)", source="open-mpi/ompi opal/mca/btl/openib/help-mpi-btl-openib.txt",
    fixture="WARNING: There was an error initializing an OpenFabrics device.")
add("DD948", "ompi-abnormal-exit", C.PEER_CRASHED, R.CONTEXT,
    ("has exited before it received notification that all",),
    "mpirun exited before all its processes were known to be gone", rank=5,
    remedy="Check for runaway processes on the nodes; the failure that ended the job is reported above.",
    component=OMPI, versions="all", source="open-mpi/ompi orte/tools/orterun/help-orterun.txt (abnormal-exit)",
    fixture="WARNING: mpirun has exited before it received notification that all started processes had terminated.")

# -- MPICH / Hydra (and Intel MPI, which prints the same) --------------------------------------------------------------
add("DD950", "hydra-bad-termination", C.PEER_CRASHED, R.CAUSE, ("BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",),
    "MPICH's launcher (Hydra) reports a process that terminated badly", rank=40,
    remedy="A process died (its EXIT CODE on the next lines: 9 killed, 11 segfault, 139/137 ...): read its own "
    "output for the cause.", component=MPICH, versions=">=3.0 (also Intel MPI)",
    source="pmodels/mpich src/pm/hydra/mpiexec/pmiserv_cb.c",
    fixture="=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES")
add("DD1499", "hydra-process-header", C.PEER_CRASHED, R.CONTEXT, ("RUNNING AT ",),
    "MPICH's launcher (Hydra) names the rank its next lines are about", regex=r"^=\s+RANK (?P<rank>\d+) PID \d+ RUNNING AT ",
    # the header of Hydra's BAD TERMINATION block: the EXIT CODE / KILLED BY SIGNAL line under it is that rank's
    rank=10, expect="rank:0", remedy="The rank named here is the one whose exit the next line reports.",
    component=MPICH, versions=">=3.3 (also Intel MPI; older Hydra prints '=   PID %d RUNNING AT %s', no rank)",
    source="pmodels/mpich src/pm/hydra/mpiexec/pmiserv_cb.c (BAD TERMINATION block: '=   PID %d RUNNING AT %s')",
    fixture="=   RANK 0 PID 38 RUNNING AT node-13")
add("DD951", "hydra-exit-string", C.PEER_CRASHED, R.CAUSE, ("YOUR APPLICATION TERMINATED WITH THE EXIT STRING:",),
    "mpiexec reports the signal that ended the application",
    regex=r"TERMINATED WITH THE EXIT STRING: (?P<sig>.+?) \(signal (?P<signo>\d+)\)", rank=42,
    remedy="A process died of that signal: 9 (Killed) is the OOM killer or the scheduler, 11 a native crash; read "
    "that process's output and dmesg.", component=MPICH, versions="all (also Intel MPI)",
    source="pmodels/mpich src/pm/hydra/mpiexec/mpiexec.c",
    fixture="YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)")
add("DD952", "mpich-fatal-error", C.OTHER, R.CONTEXT, ("Fatal error in PMPI_", "Fatal error in MPI_",
                                                     "Fatal error in internal_"),
    "An MPI call failed fatally (MPICH / Intel MPI): the header of an error stack", rank=10,
    remedy="The error stack's last line says why (a communication error with a rank, a failed fabric): a lost peer "
    "makes this a consequence; otherwise fix what it names.", component=MPICH, versions="all (also Intel MPI)",
    source="pmodels/mpich src/mpi/errhan/errutil.c ('Fatal error in %s: ')",
    fixture="Fatal error in PMPI_Allreduce: Unknown error class, error stack:")
add("DD953", "mpich-comm-error-rank", C.PEER_CRASHED, R.SYMPTOM, ("Communication error with rank",),
    "MPICH lost the connection to a rank", regex=r"Communication error with rank (?P<rank>\d+)", rank=30,
    expect="rank:3", remedy=_PEER, component=MPICH, versions="all (also Intel MPI)",
    source="pmodels/mpich src/mpi/errhan/errnames.txt (**comm_fail)",
    fixture="MPIDI_CH3I_Progress(176)...: Communication error with rank 3")
add("DD954", "mpich-abort-on-node", C.PEER_CRASHED, R.CONTEXT, (") on node ",),
    "An MPICH / Intel MPI process aborted", regex=r"\bAbort\(\d+\) on node (?P<rank>\d+)(?: \(rank \d+ in comm \d+\))?:",
    # the rank that aborted, not why: a communication error with another rank or the program's own error says why
    rank=10, expect="rank:0", remedy="That rank aborted: the text after the colon says why (application called "
    "MPI_Abort: the program's own error, printed above).", component=MPICH, versions=">=3.3 (ch4; also Intel MPI 2019+)",
    source="pmodels/mpich src/mpid/ch4/src/ch4_globals.c (MPID_Abort: 'Abort(%d)%s%s: %s%s')",
    fixture="Abort(1) on node 0 (rank 0 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 1) - process 0")
# which rank aborted, not why (as srun's "task N: Exited with exit code", DD1510): the learned reading decides the cause
add("DD1528", "fujitsu-plexec-rank-aborted", C.PEER_CRASHED, R.CAUSE, ("One of MPI processes was aborted",),
    "Fujitsu MPI's launcher reports the rank that aborted", regex=r"PLE \d+ plexec One of MPI processes was aborted\."
    r"\(rank=(?P<rank>\d+)\)", rank=40, expect="rank:0",
    remedy="That rank aborted (MPI_Abort, or it died): its own output just above says why -- most often the program "
    "stopped on its own error (an input file it could not open, a bad parameter).",
    component="fujitsu-mpi", versions="Fujitsu Technical Computing Suite (FX1000 / A64FX, Fugaku)",
    source="Fujitsu Technical Computing Suite's job launcher plexec, message PLE 0608 as it prints it in a job's output "
    "(the rank, node id and code in parentheses)",
    fixture="[WARN] PLE 0608 plexec One of MPI processes was aborted.(rank=0)(nid=0xff33000e)(CODE=1903,"
            "3028255134016143360,256)(DETAIL=N/A)")
# TensorRT-LLM's world: an engine built for TP x PP ranks must be started as exactly that many MPI processes
add("DD1532", "trtllm-world-size", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE, ("mpiSize == tp * pp", "!= TP size"),
    "The number of processes started is not the engine's tensor x pipeline parallel size",
    regex=r"mpiSize == tp \* pp|MPI size \d+ != TP size \d+ \* PP size \d+", rank=78,
    remedy="Start as many processes as the engine was built for: `mpirun -n <tp x pp>` (or the launcher's world "
    "size), one GPU each; or rebuild the engine with the tensor/pipeline parallel sizes of the processes you have.",
    component="tensorrt-llm", versions="all (later releases add a CP factor to the check)",
    source="NVIDIA/TensorRT-LLM cpp/tensorrt_llm/runtime/worldConfig.cpp (WorldConfig::mpi: TLLM_CHECK(mpiSize == tp "
    "* pp); later TLLM_CHECK_WITH_INFO(mpiSize == tp * pp * cp, \"MPI size %d != TP size %d * PP size %d * CP Size "
    "%d\"))",
    fixture="RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp (/home/jenkins/agent/workspace/"
            "tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:90)")
add("DD955", "mpich-sock-connect", C.NETWORK_UNREACHABLE, R.CAUSE, ("unable to connect to",),
    "MPICH could not connect to another process", regex=r"unable to connect to \S+ on port \d+", rank=60,
    remedy="The peer's address is not reachable (wrong interface, firewall): choose the interface with "
    "-iface / MPIR_CVAR_NEMESIS_TCP_NETWORK_IFACE / FI_TCP_IFACE and open the ports between nodes.",
    component=MPICH, versions="all (also Intel MPI)", source="pmodels/mpich src/mpi/errhan/errnames.txt (**sock_connect)",
    fixture="MPID_nem_tcp_connect(592)........: unable to connect to node2 on port 48731, No route to host (errno 113)")
# Hydra's proxy was started on the remote node (over ssh, which therefore worked) and cannot connect back to the
# port mpiexec listens on: the port is blocked between the nodes far more often than the route (Hydra says so itself)
add("DD1016", "hydra-proxy-upstream-refused", C.FIREWALL_OR_PORT_BLOCKED, R.CAUSE,
    ("(check for firewalls!)",),
    "MPICH's Hydra proxy cannot connect back to mpiexec's port (a firewall between the nodes)",
    # specific (never demoted below the "unable to connect from" line Hydra prints first); kb/ambiguous.py caps it at
    # medium: a missing route fails the same connect
    regex=r"unable to connect to server \S+ at port \d+ \(check for firewalls!\)", rank=70,
    remedy="Open the ports between the nodes (mpiexec listens on an ephemeral port: allow the nodes' subnet, or fix "
    "the range with MPIR_CVAR_CH3_PORT_RANGE / HYDRA_PORT_RANGE and open it), or run without the host firewall.",
    component=MPICH, versions=">=1.3 (Hydra; also Intel MPI)",
    source="pmodels/mpich src/pm/hydra/proxy/pmip.c ('unable to connect to server %s at port %d (check for firewalls!)')",
    fixture="[proxy:0:1@node-b] main (proxy/pmip.c:101): unable to connect to server node-a at port 35123 (check for "
            "firewalls!)")
add("DD956", "hydra-proxy-closed", C.PEER_CRASHED, R.SYMPTOM,
    ("assert (!closed) failed", "HYDT_bscu_wait_for_completion", "HYD_pmcd_pmiserv_send_signal",
     "HYDU_sock_write"),
    "MPICH's launcher lost a proxy (a node's processes went away)", rank=25, remedy=_PEER,
    component=MPICH, versions="all (also Intel MPI)", source="pmodels/mpich src/pm/hydra (pmiserv_cb.c control_cb, "
    "tools/bootstrap/utils/bscu_wait.c)",
    fixture="[mpiexec@node1] control_cb (pm/pmiserv/pmiserv_cb.c:208): assert (!closed) failed")
add("DD957", "hydra-execvp-failed", C.OTHER, R.CAUSE, ("execvp error on file",),
    "MPICH's proxy could not execute the program on a node", rank=70,
    remedy="The program is missing or not executable at that path on the node: install the same environment at the "
    "same path on every node.", component=MPICH, versions="all (also Intel MPI)",
    source="pmodels/mpich src/pm/hydra/lib/utils/launch.c (HYDU_create_process); category as Slurm's execve() "
    "(DD827): the corpus' two cases were a container image without the srun its MPICH hands start-up to, not a version",
    fixture="[proxy:0:1@node2] HYDU_create_process (utils/launch/launch.c:74): execvp error on file python3 (No such "
            "file or directory)")
add("DD958", "mpi-ofi-init-failed", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("OFI addrinfo() failed", "OFI fi_getinfo() failed", "No valid libfabric provider", "OFI Provider name does not match",
     "OFI get address vector map failed"),
    "MPI could not initialise its libfabric (OFI) network provider", rank=72,
    remedy="No fabric provider matched (no InfiniBand/EFA on this node, or FI_PROVIDER / I_MPI_OFI_PROVIDER set to "
    "one it lacks): pick a provider every node has (FI_PROVIDER=tcp to test), the same on all nodes.",
    component=IMPI, versions="Intel MPI 2019+ / MPICH ch4:ofi",
    source="pmodels/mpich src/mpid/ch4/netmod/ofi/ofi_init.c and errnames.txt (Intel MPI prints the same stack)",
    fixture="MPIDI_OFI_mpi_init_hook(1546): OFI addrinfo() failed (ofi_init.c:1546:MPIDI_OFI_mpi_init_hook:No data "
            "available)")
add("DD959", "mpi-ofi-poll-failed", C.PEER_CRASHED, R.SYMPTOM, ("OFI poll failed", "OFI call failed"),
    "A libfabric (OFI) completion failed in MPI: the peer or the fabric went away", rank=30,
    remedy=_PEER + " With every process alive, the fabric dropped the connection: check the NICs and links.",
    component=MPICH, versions=">=3.3 (ch4:ofi; also Intel MPI 2019+)",
    source="pmodels/mpich src/mpid/ch4/netmod/ofi/errnames.txt (**ofid_poll)",
    fixture="MPIDI_OFI_handle_cq_error(1062): OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:Input/output "
            "error)")
add("DD949", "intelmpi-bstrap-failed", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("unable to run bstrap_proxy on", "unable to run proxy on"),
    "Intel MPI's launcher could not start its proxy on a node (ssh or the bootstrap failed)", rank=70,
    remedy="The launch node cannot start processes on that node: make passwordless ssh work (or set I_MPI_HYDRA_BOOTSTRAP "
    "to the scheduler's launcher), and install Intel MPI at the same path on every node.",
    component=IMPI, versions="2019+", source="Intel MPI hydra (i_hydra libhydra/demux/hydra_demux_poll.c check_exit_codes, "
    "as Intel MPI prints it)",
    fixture="[mpiexec@node1] check_exit_codes (../../../../../src/pm/i_hydra/libhydra/demux/hydra_demux_poll.c:117): "
            "unable to run bstrap_proxy on node2 (pid 25324, exit code 65280)")
add("DD1473", "mpi-truncated-in-collective", C.HANG_COLLECTIVE_MISMATCH, R.CAUSE, ("MPI_ERR_TRUNCATE",),
    "A collective received more data than its buffer holds: the ranks entered it with different sizes", rank=72,
    regex=r"MPI_(?:I?Allreduce|I?Reduce(?:_scatter)?|I?Bcast|I?Allgatherv?|I?Gatherv?|I?Scatterv?|I?Alltoallv?)\b.*"
    r"MPI_ERR_TRUNCATE|MPI_ERR_TRUNCATE.*\bin MPI_(?:I?Allreduce|I?Reduce|I?Bcast|I?Allgather|I?Gather|I?Scatter|"
    r"I?Alltoall)",
    remedy="In a collective every rank must pass the same count and type (MPI standard: the amount sent must equal the "
    "amount received): the ranks called it with different buffers, or called their collectives in different orders "
    "(a rank-dependent branch, a library that issues one collective per tensor without a fixed order). Print the "
    "sizes each rank passes at that call.", component=OMPI, versions="all (MPI standard error class)",
    source="MPI standard, 'Error classes' (MPI_ERR_TRUNCATE: message truncated on receive) and the collective "
    "chapter's type-matching rule; the error string as Open MPI prints it (\"MPI_ERR_TRUNCATE: message truncated\") "
    "on one line with the call (mpi4jax: \"MPI_Allreduce returned error code 15: ...\"); Open MPI's own handler names the call on the line before "
    "(\"*** An error occurred in MPI_Bcast\"), which this per-line reading does not join",
    fixture="r3 | MPI_Allreduce returned error code 15: b'MPI_ERR_TRUNCATE: message truncated' - aborting")
add("DD1483", "mpi-called-before-init", C.USER_CODE_ERROR, R.CAUSE, ("was called before MPI_INIT was invoked",),
    "The program called an MPI function before MPI was initialised", rank=85,
    remedy="Initialise MPI before any MPI call (MPI_Init, `hvd.init()`, mpi4py's import): a library or the program "
    "called MPI first (a rank-dependent code path, a module-level call, a launcher started without MPI).",
    component=OMPI, versions="all", source="Open MPI ompi/runtime/ompi_mpi_errors / help-mpi-runtime.txt (\"The %s() "
    "function was called before MPI_INIT was invoked. This is disallowed by the MPI standard.\")",
    fixture="*** The MPI_Barrier() function was called before MPI_INIT was invoked.")
# MPI's argument check: the count the caller passed is invalid -- in practice a size that overflowed a 32-bit int (a
# message of more than 2**31 elements or bytes wraps negative), so a program's or library's defect at large scale
add("DD1503", "mpi-invalid-count", C.OTHER, R.CAUSE, ("MPI_ERR_COUNT", "Invalid count", "Negative count"),
    "MPI refused the count an MPI call was given (most often a size that overflowed a 32-bit int)", rank=64,
    regex=r"MPI_ERR_COUNT\b|Fatal error in \w+: Invalid count\b|Negative count, value is -\d+",
    remedy="The program (or the library under it) passed MPI a count it rejects: most often a message larger than "
    "2**31 elements or bytes whose size wrapped negative in a 32-bit int. Split the message, send it with a larger "
    "derived datatype or MPI 4's large-count calls (MPI_Send_c ...), or upgrade the code that computes it; it appears "
    "only at scale, not from the machines.",
    component=OMPI, versions="all (MPI standard error class; MPICH / Intel MPI: 'Invalid count', 'Negative count')",
    source="MPI standard error class MPI_ERR_COUNT (open-mpi/ompi ompi/errhandler/errcode.c: \"MPI_ERR_COUNT: invalid "
    "count argument\"; pmodels/mpich src/mpi/errhan/errnames.txt: **count \"Invalid count\", **countneg \"Negative "
    "count, value is %d\")",
    fixture=" *** MPI_ERR_COUNT: invalid count argument")
