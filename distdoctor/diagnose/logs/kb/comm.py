"""Communication libraries: gRPC core, NCCL, Horovod, Open MPI / ORTE, Gloo."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

_PEER = ("A symptom of a peer that went away: find the peer's own first error (its log, exit status, the OOM killer, "
         "the scheduler's events).")
_RANK_PROC = r"process rank (?P<rank>\d+)"

# -- gRPC ------------------------------------------------------------------------------------------------
add("DD700", "grpc-connection-reset", C.PEER_CRASHED, R.SYMPTOM, ("Connection reset by peer",),
    "A peer's connection was reset (the peer died)", rank=30,
    remedy=_PEER,
    source="gRPC / POSIX ECONNRESET", fixture="UNAVAILABLE: recvmsg:Connection reset by peer")
add("DD701", "grpc-socket-closed", C.PEER_CRASHED, R.SYMPTOM, ("Socket closed", "Connection closed by peer", "Broken pipe",
                                                              "Connection closed"),
    "A peer closed its socket", rank=25, remedy=_PEER, source="gRPC / Gloo / POSIX EPIPE",
    fixture="UNAVAILABLE: Socket closed")
add("DD702", "grpc-failed-to-connect", C.NETWORK_UNREACHABLE, R.SYMPTOM,
    ("failed to connect to all addresses", "Failed to connect to remote host", "DNS resolution failed",
     "Name or service not known", "No route to host", "Network is unreachable", "Temporary failure in name resolution"),
    "A peer's address cannot be reached", rank=35,
    remedy="The address is wrong or unreachable: check the host names in the cluster spec resolve on every node, that "
    "the task listens there, and that nothing blocks the port.", source="gRPC core (subchannel / resolver)",
    fixture="UNAVAILABLE: failed to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.2:2222: Failed to connect to remote host: Connection refused")
add("DD703", "conn-refused", C.NETWORK_UNREACHABLE, R.SYMPTOM, ("Connection refused", "connection refused"),
    "A connection was refused: nothing listens at that address", rank=30,
    regex=r"(?:connect\(\) to |dial tcp |to )(?P<host>[\w.:-]+)[^\n]*(?:Connection refused|connection refused)|Connection refused|connection refused",
    remedy="Nothing listens at that address: the peer is not (yet) up, or the address/port is wrong; a sidecar or "
    "firewall can also refuse connections.", source="POSIX ECONNREFUSED as gRPC, MPI and Go print it",
    fixture="[u10][[38971,1],2][btl_tcp_endpoint.c:796:mca_btl_tcp_endpoint_complete_connect] connect() to 172.17.0.1 failed: Connection refused (111)")
add("DD704", "grpc-deadline", C.PEER_UNRESPONSIVE, R.SYMPTOM, ("DEADLINE_EXCEEDED", "Deadline Exceeded", "DeadlineExceededError",
                                                             "Connection timed out"),
    "A remote call timed out: the peer does not answer", rank=25,
    remedy="The peer is alive but not answering (frozen, overloaded, or packets dropped): check its state and the network "
    "path between them.", source="gRPC status DEADLINE_EXCEEDED / ETIMEDOUT", fixture="DEADLINE_EXCEEDED: Deadline Exceeded")
add("DD705", "grpc-epoll-noise", C.OTHER, R.BENIGN, ("becuase GRPC_LINUX_EPOLL is not defined", "because GRPC_LINUX_EPOLL is not defined",
                                                     "grpc epoll fd:"),
    "gRPC start-up notice about polling engines (harmless)", rank=0, remedy="Nothing to do: harmless start-up logging of grpcio.",
    source="gRPC ev_epoll*_linux.cc", fixture="E1229 15:07:06.653634946   11024 ev_epollex_linux.cc:1482]   Skipping epollex becuase GRPC_LINUX_EPOLL is not defined.")

# -- NCCL --------------------------------------------------------------------------------------------------
add("DD710", "nccl-shm-full", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("Error while creating shared memory segment", "posix_fallocate failed", "No space left on device"),
    "Shared memory (/dev/shm) is full", rank=80,
    regex=r"shared memory|posix_fallocate|/dev/shm|No space left on device",
    remedy="Give the container more /dev/shm (`docker run --shm-size=1g`, an emptyDir with medium: Memory on Kubernetes), "
    "or set NCCL_SHM_DISABLE=1.", source="NCCL include/shm.h",
    fixture="include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device")
add("DD711", "nccl-unhandled-system", C.NETWORK_UNREACHABLE, R.CAUSE, ("unhandled system error", "ncclSystemError"),
    "NCCL hit a system error (network or shared memory)", rank=60,
    remedy="Run with NCCL_DEBUG=INFO to see which call failed: usually the network interface (NCCL_SOCKET_IFNAME), "
    "/dev/shm size, or a peer that died.", source="NCCL error strings", fixture="NCCL error: unhandled system error, NCCL version 2.7.8")
add("DD712", "nccl-remote-error", C.PEER_CRASHED, R.SYMPTOM, ("remote process exited or there was a network error", "ncclRemoteError",
                                                             "NCCL communicator was aborted"),
    "NCCL lost a peer", rank=35, remedy=_PEER, source="NCCL error strings",
    fixture="NCCL WARN NET/IB : Got completion from peer 10.0.0.2<56000> with error 12: remote process exited or there was a network error")
add("DD713", "nccl-internal", C.OTHER, R.CAUSE, ("NCCL WARN", "ncclInternalError", "ncclInvalidUsage"),
    "NCCL reported an error", rank=30,
    remedy="Run with NCCL_DEBUG=INFO on every rank; check NCCL versions match across nodes and the interfaces it chose.",
    source="NCCL debug.cc (WARN lines)", fixture="NCCL WARN Cuda failure 'out of memory'")
add("DD714", "nccl-version-mismatch", C.VERSION_MISMATCH, R.CAUSE, ("NCCL version mismatch", "version mismatch", "Version mismatch"),
    "Different NCCL (or library) versions across ranks", regex=r"(?i)nccl.*version mismatch|version mismatch.*nccl", rank=80,
    remedy="Install the same NCCL version on every node (the same container image).", source="NCCL init.cc",
    fixture="NCCL WARN NCCL version mismatch: 2.7.8 vs 2.4.8")

# -- Horovod ---------------------------------------------------------------------------------------------
add("DD720", "horovod-shut-down", C.DATA_SHARDING_IMBALANCE, R.SYMPTOM, ("Horovod has been shut down",),
    "Horovod shut down because of an exception on a rank, or a rank that finished before the others", rank=40,
    remedy="Look for the first exception on any rank; if there is none, a rank ran out of data first: give every rank the "
    "same number of steps (shard evenly, or stop all ranks at the shortest).", source="Horovod common/operations.cc",
    fixture="AbortedError: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution.")
add("DD721", "horovod-stall", C.HANG_STALLED_WORKER, R.WAIT,
    ("were submitted to be reduced, gathered or broadcast", "waiting for remainder of ranks"),
    "Horovod's stall inspector: some ranks wait for others in a collective", rank=30,
    remedy="Ranks submit different collectives or some ranks do not submit at all: see the missing ranks, and check that "
    "every rank runs the same code path and the same number of steps.", source="Horovod common/stall_inspector.cc",
    fixture="W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds.")
add("DD722", "horovod-missing-ranks", C.HANG_COLLECTIVE_MISMATCH, R.CONTEXT, ("missing ranks:", "Missing ranks:"),
    "Horovod lists the ranks missing from a stalled collective", regex=r"[Mm]issing ranks:\s*(?P<rank>\d+)?", rank=20,
    remedy="The listed ranks never submitted the collective: they are on another code path or have finished.",
    source="Horovod common/stall_inspector.cc", fixture="NmtModel/HorovodAllreduce_grad_0 [missing ranks: 3, 6]")
add("DD737", "horovod-missing-rank-entry", C.HANG_COLLECTIVE_MISMATCH, R.CONTEXT,
    (": [allreduce", ": [allgather", ": [broadcast", ": [alltoall"),
    "Horovod's stall inspector: one missing rank and the tensor it never submitted", regex=r"^(?P<rank>\d+): \[", rank=0,
    remedy="That rank never submitted the listed collective.", source="Horovod common/stall_inspector.cc",
    fixture="3: [allreduce.noname.222700]", expect="rank:3")
add("DD723", "horovod-version-mismatch", C.VERSION_MISMATCH, R.CAUSE, ("HorovodVersionMismatchError", "installed with version"),
    "Horovod was built against another framework version", rank=90,
    remedy="Reinstall Horovod against the installed framework (`pip install --no-cache-dir --force-reinstall horovod`), "
    "or pin the framework to the version Horovod was built with.", source="Horovod common/util.py",
    fixture="horovod.common.exceptions.HorovodVersionMismatchError: Framework tensorflow installed with version 2.3.0 but found version 2.4.1.")
add("DD724", "horovod-size-one", C.VERSION_MISMATCH, R.CONTEXT, ("rank 0 / size 1", "size 1, local rank 0"),
    "Horovod initialised with size 1: the processes did not join one job", rank=30,
    remedy="Every process initialised alone: the MPI/Gloo launcher and the Horovod build disagree (Horovod built without "
    "MPI support for this MPI, or started without horovodrun/mpirun).", source="Horovod init logging",
    fixture="Horovod initialized. Hostname node1, pid 12116, rank 0 / size 1, local rank 0 / local size 1.")
add("DD725", "horovod-gloo-timeout", C.STRAGGLER_SLOW_WORKER, R.CAUSE, ("Wait timeout for key",),
    "Gloo rendezvous timed out waiting for other ranks", rank=60,
    remedy="Some ranks reached the rendezvous much later than others (slow start-up, image pulls at scale): raise "
    "HOROVOD_GLOO_TIMEOUT_SECONDS, or start the ranks together.", source="Horovod common/gloo/http_store.cc",
    fixture="what():  [horovod/common/gloo/http_store.cc:53] Wait timeout for key(s): 0")
add("DD726", "gloo-io", C.PEER_CRASHED, R.SYMPTOM, ("gloo::IoException",),
    "Gloo lost its connection to a peer", rank=30, remedy=_PEER, source="Gloo transport/tcp/pair.cc",
    fixture="terminate called after throwing an instance of 'gloo::IoException'")
add("DD727", "horovod-elastic-check-rank", C.USER_CODE_ERROR, R.CONTEXT, ("HostsUpdatedInterrupt",),
    "Horovod elastic: the set of hosts changed", rank=10, remedy="Expected under elastic training.",
    source="Horovod elastic", fixture="horovod.common.exceptions.HostsUpdatedInterrupt")

# -- Open MPI / ORTE -----------------------------------------------------------------------------------------
add("DD730", "mpirun-rank-died", C.PEER_CRASHED, R.CAUSE,
    ("mpirun noticed that process rank", "exited on signal", "Process 0 exit with status", "exit with status code"),
    "The launcher saw a rank die", rank=40,
    regex=r"process rank (?P<rank>\d+)[^\n]*|Process (?P<rank2>\d+) exit with status code (?:13[07]|9|-9)",
    remedy="That rank died first: look at its own output for the cause (a crash, the OOM killer, a kill from outside).",
    source="Open MPI orterun / horovodrun launcher", expect="rank:0",
    fixture="mpirun noticed that process rank 0 with PID 12252 on node HOST exited on signal 11 (Segmentation fault).")
add("DD731", "mpi-btl-tcp-mismatch", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("btl: tcp: Match incoming connection", "received unexpected process identifier", "btl_tcp_endpoint"),
    "Open MPI's TCP transport picked interfaces that do not connect the nodes", rank=70,
    regex=r"Match incoming connection.*failed|unexpected process identifier|btl_tcp_endpoint.*(?:failed|unexpected)",
    remedy="Tell Open MPI which interfaces route between nodes: `mpirun --mca btl_tcp_if_include eth0` (and "
    "`--mca oob_tcp_if_include`), excluding docker0/virbr bridges and loopback.", source="Open MPI btl/tcp",
    fixture="[mydocker01:06805] btl: tcp: Match incoming connection from [[27443,1],1] 44.128.0.4 with locally known IP 2.2.2.77 failed (iface 0/4)!")
add("DD732", "mpi-tcp-connect-failed", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("Open MPI failed to TCP connect to a peer", "failed to TCP connect"),
    "Open MPI could not connect to a peer process", rank=65,
    remedy="Restrict Open MPI to interfaces that route between the nodes (`--mca btl_tcp_if_include`), and check "
    "firewalls between them.", source="Open MPI help-mpi-btl-tcp.txt",
    fixture="WARNING: Open MPI failed to TCP connect to a peer MPI process.  This should not happen.")
add("DD733", "orted-not-found", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("orted: command not found", "ORTE was unable to reliably start one or more daemons", "orted: not found"),
    "Open MPI's daemon could not be started on a remote node", rank=75,
    remedy="The non-interactive shell on the remote node does not find Open MPI: install the same Open MPI at the same "
    "path on every node, or pass `--prefix` / set PATH and LD_LIBRARY_PATH in the remote shell's rc file.",
    source="Open MPI help-errmgr-base.txt / plm rsh", fixture="bash: orted: command not found")
add("DD734", "mpi-read-errno", C.OTHER, R.BENIGN, ("Read -1, expected",),
    "Open MPI's CMA read failed in an unprivileged container (harmless, it falls back)", regex=r"Read -1, expected \d+, errno = 1",
    rank=0, remedy="Harmless in containers without CAP_SYS_PTRACE; silence it with `--mca btl_vader_single_copy_mechanism none`.",
    source="Open MPI btl/vader", fixture="[96c7e3d99641:24984] Read -1, expected 122880, errno = 1")
add("DD735", "mpi-job-aborted", C.PEER_CRASHED, R.SYMPTOM,
    ("Per user-direction, the job has been aborted", "MPI_ABORT was invoked", "1 process returned", "processes returned"),
    "mpirun aborted the job after a process failed", rank=20, remedy=_PEER, source="Open MPI orterun",
    fixture="Primary job  terminated normally, but 1 process returned a non-zero exit code. Per user-direction, the job has been aborted.")
add("DD736", "mpi-p2p-same-host", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CONTEXT, ("via P2P/IPC",),
    "NCCL connects ranks through shared memory/P2P (it believes they share a host)", rank=5,
    remedy="If these ranks are on different machines, they have the same hostname: give every node a unique hostname.",
    source="NCCL INFO channel setup", fixture="mtk:2521:2528 [0] INFO 0 -> 1 via P2P/IPC")
