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
    component="grpc", versions="all", source="gRPC / POSIX ECONNRESET", fixture="UNAVAILABLE: recvmsg:Connection reset by peer")
add("DD701", "grpc-socket-closed", C.PEER_CRASHED, R.SYMPTOM, ("Socket closed", "Connection closed by peer", "Broken pipe",
                                                              "Connection closed"),
    "A peer closed its socket", rank=25, remedy=_PEER,
    component="grpc", versions="all", source="gRPC / Gloo / POSIX EPIPE",
    fixture="UNAVAILABLE: Socket closed")
add("DD702", "grpc-failed-to-connect", C.NETWORK_UNREACHABLE, R.SYMPTOM,
    ("failed to connect to all addresses", "Failed to connect to remote host", "DNS resolution failed",
     "Name or service not known", "No route to host", "Network is unreachable", "Temporary failure in name resolution"),
    "A peer's address cannot be reached", rank=35,
    remedy="The address is wrong or unreachable: check the host names in the cluster spec resolve on every node, that "
    "the task listens there, and that nothing blocks the port.",
    component="grpc", versions="all", source="gRPC core (subchannel / resolver)",
    fixture="UNAVAILABLE: failed to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.2:2222: Failed to connect to remote host: Connection refused")
add("DD703", "conn-refused", C.NETWORK_UNREACHABLE, R.SYMPTOM, ("Connection refused", "connection refused"),
    "A connection was refused: nothing listens at that address", rank=30,
    regex=r"(?:connect\(\) to |dial tcp |to )(?P<host>[\w.:-]+)[^\n]*(?:Connection refused|connection refused)|Connection refused|connection refused",
    remedy="Nothing listens at that address: the peer is not (yet) up, or the address/port is wrong; a sidecar or "
    "firewall can also refuse connections.",
    component="grpc", versions="all", source="POSIX ECONNREFUSED as gRPC, MPI and Go print it",
    fixture="[u10][[38971,1],2][btl_tcp_endpoint.c:796:mca_btl_tcp_endpoint_complete_connect] connect() to 172.17.0.1 failed: Connection refused (111)")
add("DD704", "grpc-deadline", C.PEER_UNRESPONSIVE, R.SYMPTOM, ("DEADLINE_EXCEEDED", "Deadline Exceeded", "DeadlineExceededError"),
    "A remote call timed out: the peer does not answer", rank=25,
    remedy="The peer is alive but not answering (frozen, overloaded, or packets dropped): check its state and the network "
    "path between them.",
    component="grpc", versions="all", source="gRPC status DEADLINE_EXCEEDED / ETIMEDOUT", fixture="DEADLINE_EXCEEDED: Deadline Exceeded")
add("DD705", "grpc-epoll-noise", C.OTHER, R.BENIGN, ("becuase GRPC_LINUX_EPOLL is not defined", "because GRPC_LINUX_EPOLL is not defined",
                                                     "grpc epoll fd:"),
    "gRPC start-up notice about polling engines (harmless)", rank=0, remedy="Nothing to do: harmless start-up logging of grpcio.",
    component="grpc", versions="1.2x-1.3x (epollex engine)", source="gRPC ev_epoll*_linux.cc", fixture="E1229 15:07:06.653634946   11024 ev_epollex_linux.cc:1482]   Skipping epollex becuase GRPC_LINUX_EPOLL is not defined.")

# -- NCCL --------------------------------------------------------------------------------------------------
add("DD710", "nccl-shm-full", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("Error while creating shared memory segment", "posix_fallocate failed", "/dev/shm"),
    "Shared memory (/dev/shm) is full", rank=80,
    regex=r"shared memory|posix_fallocate|/dev/shm",
    remedy="Give the container more /dev/shm (`docker run --shm-size=1g`, an emptyDir with medium: Memory on Kubernetes), "
    "or set NCCL_SHM_DISABLE=1.", component="nccl", versions=">=2.4", source="NCCL include/shm.h",
    fixture="include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device")
add("DD711", "nccl-unhandled-system", C.NETWORK_UNREACHABLE, R.CAUSE, ("unhandled system error", "ncclSystemError"),
    "NCCL hit a system error (network or shared memory)", rank=60,
    remedy="Run with NCCL_DEBUG=INFO to see which call failed: usually the network interface (NCCL_SOCKET_IFNAME), "
    "/dev/shm size, or a peer that died.",
    component="nccl", versions="all", source="NCCL error strings", fixture="NCCL error: unhandled system error, NCCL version 2.7.8")
add("DD712", "nccl-remote-error", C.PEER_CRASHED, R.SYMPTOM, ("remote process exited or there was a network error", "ncclRemoteError",
                                                             "NCCL communicator was aborted"),
    "NCCL lost a peer", rank=35, remedy=_PEER, component="nccl", versions=">=2.12", source="NCCL error strings",
    fixture="NCCL WARN NET/IB : Got completion from peer 10.0.0.2<56000> with error 12: remote process exited or there was a network error")
add("DD713", "nccl-internal", C.OTHER, R.CAUSE, ("NCCL WARN", "ncclInternalError", "ncclInvalidUsage"),
    "NCCL reported an error", rank=30,
    remedy="Run with NCCL_DEBUG=INFO on every rank; check NCCL versions match across nodes and the interfaces it chose.",
    component="nccl", versions="all", source="NCCL debug.cc (WARN lines)", fixture="NCCL WARN Cuda failure 'out of memory'")
add("DD714", "nccl-version-mismatch", C.VERSION_MISMATCH, R.CAUSE,
    ("NCCL version mismatch", "version mismatch", "Version mismatch", "Mismatched NCCL version"),
    "Different NCCL (or library) versions across ranks",
    regex=r"(?i)nccl.*version mismatch|version mismatch.*nccl|mismatched nccl version", rank=80,
    remedy="Install the same NCCL version on every node (the same container image).",
    component="nccl", versions=">=2.4", source="NCCL init.cc",
    fixture="NCCL WARN NCCL version mismatch: 2.7.8 vs 2.4.8")

# -- Horovod ---------------------------------------------------------------------------------------------
add("DD720", "horovod-shut-down", C.DATA_SHARDING_IMBALANCE, R.SYMPTOM, ("Horovod has been shut down",),
    "Horovod shut down because of an exception on a rank, or a rank that finished before the others", rank=40,
    remedy="Look for the first exception on any rank; if there is none, a rank ran out of data first: give every rank the "
    "same number of steps (shard evenly, or stop all ranks at the shortest).",
    component="horovod", versions=">=0.13", source="Horovod common/operations.cc",
    fixture="AbortedError: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution.")
add("DD721", "horovod-stall", C.HANG_STALLED_WORKER, R.WAIT,
    ("were submitted to be reduced, gathered or broadcast", "waiting for remainder of ranks"),
    "Horovod's stall inspector: some ranks wait for others in a collective", rank=30,
    remedy="Ranks submit different collectives or some ranks do not submit at all: see the missing ranks, and check that "
    "every rank runs the same code path and the same number of steps.",
    component="horovod", versions="all", source="Horovod common/stall_inspector.cc",
    fixture="W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds.")
add("DD722", "horovod-missing-ranks", C.HANG_COLLECTIVE_MISMATCH, R.CONTEXT, ("missing ranks:", "Missing ranks:"),
    "Horovod lists the ranks missing from a stalled collective", regex=r"[Mm]issing ranks:\s*(?P<rank>\d+)?", rank=20,
    remedy="The listed ranks never submitted the collective: they are on another code path or have finished.",
    component="horovod", versions=">=0.16", source="Horovod common/stall_inspector.cc", fixture="NmtModel/HorovodAllreduce_grad_0 [missing ranks: 3, 6]")
add("DD737", "horovod-missing-rank-entry", C.HANG_COLLECTIVE_MISMATCH, R.CONTEXT,
    (": [allreduce", ": [allgather", ": [broadcast", ": [alltoall", ": [Distributed", ": [Horovod",
     # Horovod's TensorFlow ops are named HorovodAllreduce_<tensor> (mpi_ops.py) under any name scope
     "HorovodAllreduce_", "HorovodAllgather_", "HorovodBroadcast_", "HorovodAlltoall_", "HorovodReducescatter_",
     # a rank stalled past HOROVOD_STALL_SHUTDOWN_TIME_SECONDS is marked "N!: [...]", whatever its tensors are named
     "!: ["),
    "Horovod's stall inspector: one missing rank and the tensor it never submitted (unnamed tensors are "
    "allreduce.noname.N; Horovod's TensorFlow wrappers name theirs DistributedXxx_Allreduce/... or HorovodAllreduce_...)",
    regex=r"(?:^|[\s:>])(?P<rank>\d+)!?: \[(?=\S)", rank=0,
    remedy="That rank never submitted the listed collective.",
    component="horovod", versions=">=0.19", source="Horovod common/stall_inspector.cc",
    fixture="3: [allreduce.noname.222700]", expect="rank:3")
add("DD723", "horovod-version-mismatch", C.VERSION_MISMATCH, R.CAUSE, ("HorovodVersionMismatchError", "installed with version"),
    "Horovod was built against another framework version", rank=90,
    remedy="Reinstall Horovod against the installed framework (`pip install --no-cache-dir --force-reinstall horovod`), "
    "or pin the framework to the version Horovod was built with.",
    component="horovod", versions=">=0.20", source="Horovod common/util.py",
    fixture="horovod.common.exceptions.HorovodVersionMismatchError: Framework tensorflow installed with version 2.3.0 but found version 2.4.1.")
add("DD724", "horovod-size-one", C.VERSION_MISMATCH, R.CONTEXT, ("rank 0 / size 1", "size 1, local rank 0"),
    "Horovod initialised with size 1: the processes did not join one job", rank=30,
    remedy="Every process initialised alone: the MPI/Gloo launcher and the Horovod build disagree (Horovod built without "
    "MPI support for this MPI, or started without horovodrun/mpirun).",
    component="horovod", versions="all", source="Horovod init logging",
    fixture="Horovod initialized. Hostname node1, pid 12116, rank 0 / size 1, local rank 0 / local size 1.")
add("DD725", "horovod-gloo-timeout", C.STRAGGLER_SLOW_WORKER, R.CAUSE,
    ("Wait timeout for key", "Wait timeout after", "HOROVOD_GLOO_TIMEOUT_SECONDS"),
    "Gloo rendezvous timed out waiting for other ranks", rank=60,
    # older Horovod: "Wait timeout for key(s): 0"; newer: "Wait timeout after 30 seconds for key(s): 0. You may want
    # to increase the timeout via HOROVOD_GLOO_TIMEOUT_SECONDS"
    regex=r"Wait timeout (?:after \d+ seconds? )?for key|increase the timeout via HOROVOD_GLOO_TIMEOUT_SECONDS",
    remedy="Some ranks reached the rendezvous much later than others (slow start-up, image pulls at scale): raise "
    "HOROVOD_GLOO_TIMEOUT_SECONDS, or start the ranks together.",
    component="horovod", versions=">=0.20", source="Horovod common/gloo/http_store.cc",
    fixture="what():  [horovod/common/gloo/http_store.cc:53] Wait timeout for key(s): 0")
add("DD726", "gloo-io", C.PEER_CRASHED, R.CONTEXT, ("gloo::IoException",),
    "Gloo raised an I/O exception (its `what()` line says why: a lost peer or a timeout)", rank=5, remedy=_PEER,
    component="gloo", versions="all", source="Gloo transport/tcp/pair.cc",
    fixture="terminate called after throwing an instance of 'gloo::IoException'")
add("DD727", "horovod-elastic-check-rank", C.USER_CODE_ERROR, R.CONTEXT, ("HostsUpdatedInterrupt",),
    "Horovod elastic: the set of hosts changed", rank=10, remedy="Expected under elastic training.",
    component="horovod", versions=">=0.20", source="Horovod elastic", fixture="horovod.common.exceptions.HostsUpdatedInterrupt")

# -- Open MPI / ORTE -----------------------------------------------------------------------------------------
add("DD730", "mpirun-rank-died", C.PEER_CRASHED, R.CAUSE,
    ("mpirun noticed that process rank", "exited on signal", "Process 0 exit with status", "exit with status code"),
    "The launcher saw a rank die", rank=40,
    regex=r"process rank (?P<rank>\d+)[^\n]*|Process (?P<rank2>\d+) exit with status code (?:13[07]|9|-9)",
    remedy="That rank died first: look at its own output for the cause (a crash, the OOM killer, a kill from outside).",
    component="openmpi", versions="all", source="Open MPI orterun / horovodrun launcher", expect="rank:0",
    fixture="mpirun noticed that process rank 0 with PID 12252 on node HOST exited on signal 11 (Segmentation fault).")
add("DD731", "mpi-btl-tcp-mismatch", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("btl: tcp: Match incoming connection", "received unexpected process identifier", "btl_tcp_endpoint"),
    "Open MPI's TCP transport picked interfaces that do not connect the nodes", rank=70,
    regex=r"Match incoming connection.*failed|unexpected process identifier|btl_tcp_endpoint.*(?:failed|unexpected)",
    remedy="Tell Open MPI which interfaces route between nodes: `mpirun --mca btl_tcp_if_include eth0` (and "
    "`--mca oob_tcp_if_include`), excluding docker0/virbr bridges and loopback.",
    component="openmpi", versions="all", source="Open MPI btl/tcp",
    fixture="[mydocker01:06805] btl: tcp: Match incoming connection from [[27443,1],1] 44.128.0.4 with locally known IP 2.2.2.77 failed (iface 0/4)!")
add("DD732", "mpi-tcp-connect-failed", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("Open MPI failed to TCP connect to a peer", "failed to TCP connect"),
    "Open MPI could not connect to a peer process", rank=65,
    remedy="Restrict Open MPI to interfaces that route between the nodes (`--mca btl_tcp_if_include`), and check "
    "firewalls between them.", component="openmpi", versions="all", source="Open MPI help-mpi-btl-tcp.txt",
    fixture="WARNING: Open MPI failed to TCP connect to a peer MPI process.  This should not happen.")
add("DD733", "orted-not-found", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("orted: command not found", "was unable to reliably start one or more daemons", "orted: not found",
     "prted: command not found"),
    "Open MPI's daemon could not be started on a remote node", rank=75,
    remedy="The non-interactive shell on the remote node does not find Open MPI: install the same Open MPI at the same "
    "path on every node, or pass `--prefix` / set PATH and LD_LIBRARY_PATH in the remote shell's rc file.",
    component="openmpi", versions="all (orted <=4.1, prted >=5.0)",
    source="Open MPI help-errmgr-base.txt / plm rsh; openpmix/prrte src/mca/errmgr/base/help-errmgr-base.txt",
    fixture="bash: orted: command not found")
add("DD734", "mpi-read-errno", C.OTHER, R.BENIGN, ("Read -1, expected",),
    "Open MPI's CMA read failed in an unprivileged container (harmless, it falls back)", regex=r"Read -1, expected \d+, errno = 1",
    rank=0, remedy="Harmless in containers without CAP_SYS_PTRACE; silence it with `--mca btl_vader_single_copy_mechanism none`.",
    component="openmpi", versions="2.x-4.x (btl/vader)", source="Open MPI btl/vader", fixture="[96c7e3d99641:24984] Read -1, expected 122880, errno = 1")
add("DD735", "mpi-job-aborted", C.PEER_CRASHED, R.SYMPTOM,
    ("Per user-direction, the job has been aborted", "MPI_ABORT was invoked", "1 process returned", "processes returned"),
    "mpirun aborted the job after a process failed", rank=20, remedy=_PEER,
    component="openmpi", versions="all", source="Open MPI orterun",
    fixture="Primary job  terminated normally, but 1 process returned a non-zero exit code. Per user-direction, the job has been aborted.")
add("DD736", "mpi-p2p-same-host", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CONTEXT, ("via P2P/IPC",),
    "NCCL connects ranks through shared memory/P2P (it believes they share a host)", rank=5,
    remedy="If these ranks are on different machines, they have the same hostname: give every node a unique hostname.",
    component="nccl", versions="all", source="NCCL INFO channel setup", fixture="mtk:2521:2528 [0] INFO 0 -> 1 via P2P/IPC")

# -- gRPC (as TensorFlow's bundled grpc core prints it) ---------------------------------------------------------
_GRPC = "gRPC core (strings in TF 2.21's _pywrap_tensorflow_internal.so)"
# other, not resource_exhaustion: a size limit the framework set on its channel (4 MB by default, 2 GB at most),
# not a node's resource running out; the four real threads in the corpus (ElasticDL, Paddle, tfdbg, Flower) agree
add("DD738", "grpc-message-too-large", C.OTHER, R.CAUSE,
    ("Received message larger than max", "Sent message larger than max"),
    "A gRPC message exceeded the channel's size limit", rank=75,
    remedy="A single tensor (or tf.data element) sent between tasks is larger than gRPC allows: split large variables "
    "(variable partitioning / ShardedVariable), send smaller elements, or raise the channel's max message size.",
    component="grpc", versions="all", source=_GRPC + " message_size_filter.cc",
    fixture="RESOURCE_EXHAUSTED: Received message larger than max (2147483648 vs. 2147483647)")
add("DD739", "grpc-http-proxy", C.FIREWALL_OR_PORT_BLOCKED, R.CAUSE,
    ("Trying to connect an http1.x server", "HTTP proxy returned response code"),
    "gRPC reached an HTTP server or proxy instead of the peer task", rank=70,
    remedy="The connection went to an HTTP proxy (http_proxy/https_proxy set in the task's environment) or to a port "
    "that serves HTTP: set no_proxy for the cluster's hosts (or unset the proxy variables) and check the port in TF_CONFIG.",
    component="grpc", versions="all", source=_GRPC + " chttp2 / http_connect_handshaker.cc",
    fixture="UNAVAILABLE: Trying to connect an http1.x server (HTTP status 400)")
add("DD740", "grpc-too-many-pings", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.SYMPTOM, ("too_many_pings",),
    "A gRPC server closed a connection because the client's keepalive pings are more frequent than the server's "
    "keepalive policy permits: the two ends' keepalive settings disagree", rank=55,
    remedy="Client and server keepalive settings disagree (or a proxy enforces its own): make the server's "
    "GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS no longer than the client's GRPC_ARG_KEEPALIVE_TIME_MS (or "
    "lengthen the client's), and set GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS alike on both ends (gRPC's "
    "doc/keepalive.md).",
    component="grpc", versions="all", source=_GRPC + " chttp2_transport.cc",
    fixture="Received a GOAWAY with error code ENHANCE_YOUR_CALM and debug data equal to \"too_many_pings\"")
add("DD741", "grpc-keepalive-timeout", C.PEER_UNRESPONSIVE, R.SYMPTOM, ("keepalive watchdog timeout", "Keepalive timeout triggered"),
    "gRPC keepalive pings went unanswered: the peer or the path to it froze", rank=25,
    remedy="The peer stopped answering without closing the connection (frozen host, dropped packets, a NAT/idle "
    "timeout): check the peer's state and the network path.",
    component="grpc", versions="all", source=_GRPC + " chttp2_transport.cc",
    fixture="UNAVAILABLE: keepalive watchdog timeout")
add("DD742", "grpc-stream-removed", C.PEER_CRASHED, R.SYMPTOM, ("Stream removed", "Received RST_STREAM with error code"),
    "A gRPC stream was torn down by the other side", rank=36, remedy=_PEER,
    component="grpc", versions="all", source="gRPC core (chttp2 stream removal; 'Received RST_STREAM with error code ' in the TF 2.21 wheel's libtensorflow_cc.so.2)",
    fixture="tensorflow.python.framework.errors_impl.UnknownError: Stream removed")

# -- NCCL (messages of NCCL 2.x, src/bootstrap.cc, src/init.cc, src/transport/net_socket.cc) ---------------------
add("DD743", "nccl-no-socket-interface", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("no socket interface found", "Bootstrap : no socket interface"),
    "NCCL found no network interface to bootstrap over", rank=70,
    remedy="Set NCCL_SOCKET_IFNAME to the interface that routes between the nodes (e.g. eth0), and check that the "
    "container has that interface (host networking, the CNI).",
    component="nccl", versions="all", source="NCCL src/bootstrap.cc",
    fixture="node1:1234:1234 [0] NCCL WARN Bootstrap : no socket interface found")
add("DD744", "nccl-duplicate-gpu", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE, ("Duplicate GPU detected",),
    "Two ranks use the same GPU", rank=80,
    remedy="Give each local rank its own GPU (CUDA_VISIBLE_DEVICES / local_rank pinning); two processes on one GPU "
    "cannot form an NCCL communicator.", component="nccl", versions=">=2.4", source="NCCL src/init.cc",
    fixture="NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000")
add("DD745", "nccl-message-truncated", C.HANG_COLLECTIVE_MISMATCH, R.CAUSE, ("Message truncated : received",),
    "NCCL received a different amount of data than it expected: ranks ran different collectives", rank=75,
    remedy="Ranks called collectives with different sizes or in a different order: make every rank run the same "
    "collectives on tensors of the same shape.",
    component="nccl", versions="all", source="NCCL src/transport/net_socket.cc / src/misc/socket.cc",
    fixture="NCCL WARN Message truncated : received 2048 bytes instead of 1024")

# -- Horovod (horovod-0.28.1 sources) -----------------------------------------------------------------------------
_HVD = "Horovod 0.28.1 "
add("DD746", "horovod-mismatched-ops", C.HANG_COLLECTIVE_MISMATCH, R.CAUSE, ("Mismatched operations: One rank did an",),
    "Horovod ranks submitted different collective operations for one tensor", rank=80,
    remedy="Every rank must run the same sequence of collectives: look for rank-dependent branches around "
    "allreduce/allgather/broadcast.", component="horovod", versions="all", source=_HVD + "horovod/common/controller.cc",
    fixture="Mismatched operations: One rank did an ALLREDUCE, but another rank did an ALLGATHER.")
add("DD747", "horovod-mismatched-shapes", C.HANG_COLLECTIVE_MISMATCH, R.CAUSE,
    ("tensor shapes: One rank sent a tensor", "One rank sent a tensor with dimension"),
    "Horovod ranks reduced tensors of different shapes", rank=82,
    remedy="Pad or bucket variable-length inputs so that gradients have the same shape on every rank; use dense "
    "gradients for embeddings.", component="horovod", versions="all", source=_HVD + "horovod/common/controller.cc",
    fixture="Mismatched allreduce tensor shapes: One rank sent a tensor of shape [32, 128], but another rank sent a tensor of shape [32, 96].")
add("DD748", "horovod-not-initialized", C.USER_CODE_ERROR, R.CAUSE, ("Horovod has not been initialized; use hvd.init()",),
    "Horovod was used before hvd.init()", rank=70, remedy="Call hvd.init() first, in every process.",
    component="horovod", versions="all", source=_HVD + "horovod/common/common.h / basics.py",
    fixture="ValueError: Horovod has not been initialized; use hvd.init().")
add("DD749", "horovod-not-built", C.VERSION_MISMATCH, R.CAUSE, ("has not been built: ", "support has not been built",
                                                                     "Neither MPI nor Gloo support has been built"),
    "Horovod was installed without the framework extension or controller it needs", rank=80,
    remedy="Reinstall Horovod against the installed TensorFlow with the needed parts enabled (HOROVOD_WITH_TENSORFLOW=1, "
    "HOROVOD_WITH_MPI=1 or HOROVOD_WITH_GLOO=1) and `pip install --no-cache-dir`, on every node.",
    component="horovod", versions=">=0.20", source=_HVD + "horovod/common/util.py / horovod/runner/launch.py",
    fixture="ImportError: Extension horovod.tensorflow has not been built: /usr/local/lib/python3.8/dist-packages/horovod/"
            "tensorflow/mpi_lib.cpython-38-x86_64-linux-gnu.so not found")
add("DD750", "horovod-stall-shutdown", C.HANG_STALLED_WORKER, R.WAIT, ("is stalled for longer than",),
    "Horovod's stall inspector shuts the job down: a rank has not joined a collective for too long", rank=45,
    remedy="The ranks marked '!' never submitted the collective: see what they were doing (stack dump, their input "
    "pipeline, a rank that finished early).",
    component="horovod", versions=">=0.20", source=_HVD + "horovod/common/stall_inspector.cc",
    fixture="One or more rank (marked by \"!\") is stalled for longer than 600 seconds. Will shutdown.")
add("DD751", "launcher-first-process-failed", C.PEER_CRASHED, R.SYMPTOM,
    ("Horovod detected that one or more processes exited with non-zero status",
     "detected that one or more processes exited with non-zero status"),
    "The launcher terminated the job because a process exited with an error", rank=22,
    remedy="The process named on the next lines failed first: read its own output for the cause.",
    component="horovod", versions=">=0.20", source=_HVD + "horovod/runner/gloo_run.py / Open MPI help-orterun.txt",
    fixture="mpirun detected that one or more processes exited with non-zero status, thus causing the job to be terminated. "
            "The first process to do so was:")
add("DD752", "mpi-process-name", C.PEER_CRASHED, R.SYMPTOM, ("Process name: [[",),
    "The launcher names the first process that failed", regex=r"Process name:\s*\[\[\d+,\d+\],(?P<rank>\d+)\]", rank=15,
    expect="rank:1", remedy="That rank failed first: read its own output for the cause.",
    component="openmpi", versions="all", source="Open MPI help-orterun.txt (proc-exit-no-sync / non-zero-exit)", fixture="  Process name: [[37745,1],1]")
add("DD753", "horovodrun-start-timeout", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("Please check connectivity between servers", "ssh not successful for host"),
    "horovodrun could not reach the hosts to start the job", rank=65,
    remedy="Check passwordless ssh from the launch host to every host (port, keys, host key verification), that the "
    "hosts resolve, and that the task ports are open between them; raise --start-timeout for large jobs.",
    component="horovod", versions=">=0.16", source=_HVD + "horovod/runner/launch.py",
    fixture="Timed out waiting for Horovod to start tasks. Please check connectivity between servers. You may need to "
            "increase the --start-timeout parameter if you have too many servers.")
add("DD754", "gloo-http-store-failed", C.NETWORK_UNREACHABLE, R.CAUSE, ("HTTP GET request failed too many times",),
    "Gloo could not reach horovodrun's rendezvous server", rank=55,
    remedy="The ranks cannot reach the launcher's rendezvous HTTP server: check HOROVOD_GLOO_RENDEZVOUS_ADDR/PORT, "
    "firewalls and the interface chosen (--network-interface).",
    component="horovod", versions=">=0.20", source=_HVD + "horovod/common/gloo/http_store.cc",
    fixture="[horovod/common/gloo/http_store.cc:96] HTTP GET request failed too many times, aborting. See exception message above.")

# -- Open MPI / ORTE (help-*.txt messages) ---------------------------------------------------------------------------
add("DD755", "mpi-not-enough-slots", C.CONFIG_TF_CONFIG, R.CAUSE, ("not enough slots available in the system",
                                                                  "All nodes which are allocated for this job are already filled"),
    "mpirun was asked for more processes than its host list or allocation offers slots", rank=75,
    remedy="The launcher's description of the cluster is wrong for the job: list enough slots per host in the hostfile "
    "(`host slots=N`; a host written without slots, or with slots=0, offers one or none), pass -H host:N, match -np "
    "to the allocation's tasks (SLURM_NTASKS), or use --oversubscribe.",
    component="openmpi", versions="all", source="Open MPI help-orte-rmaps-base.txt (both messages: the mapper found "
    "fewer free slots in the hostfile, -H list or resource manager's allocation than processes requested); "
    "category from the real corpus, where each such case was the host list the launcher was given (horovodrun's "
    "-H without a count, hostfiles written without or with zero slots)",
    fixture="There are not enough slots available in the system to satisfy the 8 slots that were requested by the application:")
add("DD756", "orte-lost-daemon", C.PEER_CRASHED, R.CAUSE, ("ORTE has lost communication with a remote daemon",
                                                           "PRTE has lost communication with a remote daemon"),
    "mpirun lost a node's daemon (the node or its network went away)", rank=60,
    remedy="The remote node died or its network to the launcher broke: check that node (dmesg, power, the scheduler's "
    "node state) and the network between them.",
    component="openmpi", versions="all (ORTE <=4.1, PRTE >=5.0)",
    source="Open MPI help-errmgr-base.txt; openpmix/prrte src/mca/errmgr/base/help-errmgr-base.txt",
    fixture="ORTE has lost communication with a remote daemon.")
add("DD757", "orte-daemon-failed-launch", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("An ORTE daemon has unexpectedly failed after launch and before communicating back to mpirun",
     "An PRTE daemon has unexpectedly failed after launch and before"),
    "A remote Open MPI daemon started but could not call back to mpirun", rank=65,
    remedy="The remote daemon cannot connect back to the launch host: restrict Open MPI to routable interfaces "
    "(`--mca oob_tcp_if_include eth0`), open the ports between nodes, and check that Open MPI is installed alike there.",
    component="openmpi", versions="all (ORTE <=4.1, PRTE >=5.0)",
    source="Open MPI help-plm-base.txt; openpmix/prrte src/mca/errmgr/base/help-errmgr-base.txt",
    fixture="An ORTE daemon has unexpectedly failed after launch and before communicating back to mpirun. This could be "
            "caused by a number of factors, including an inability to create a connection back to mpirun due to a lack "
            "of common network interfaces and/or no route found between them.")
add("DD758", "mpirun-exited-improperly", C.PEER_CRASHED, R.CAUSE, ("has exited due to process rank",),
    "mpirun names the rank that exited without finalizing", regex=r"has exited due to process rank (?P<rank>\d+)",
    rank=40, expect="rank:3", remedy="That rank died first: read its own output for the cause.",
    component="openmpi", versions="all", source="Open MPI help-orterun.txt",
    fixture="mpirun has exited due to process rank 3 with PID 0 on node node2 exiting improperly. There are three reasons this could occur:")
add("DD759", "mpirun-cannot-execute", C.VERSION_MISMATCH, R.CAUSE,
    ("was unable to launch the specified application as it could not access", "could not access or execute an executable",
     "was unable to find the specified executable file"),
    "mpirun could not run the program on a node", rank=70,
    remedy="The executable (python, the script) is missing or not executable at that path on the remote node: install "
    "the same environment at the same path on every node.",
    component="openmpi", versions="all", source="Open MPI help-orterun.txt",
    fixture="mpirun was unable to launch the specified application as it could not access or execute an executable:")

# -- coverage audit (message probes, tests/probes/messages.tsv) --------------------------------------------------
add("DD715", "horovod-mismatched-dtypes", C.HANG_COLLECTIVE_MISMATCH, R.CAUSE, ("Mismatched data types: One rank had type",),
    "Horovod ranks reduced one tensor with different data types", rank=80,
    remedy="Every rank must submit the tensor with the same dtype: apply the same mixed-precision policy and casts on "
    "every rank (a policy set on some ranks only is the usual cause).",
    component="horovod", versions=">=0.19", source=_HVD + "horovod/common/controller.cc",
    fixture="FailedPreconditionError: Mismatched data types: One rank had type float32, but another rank had type float16.")
add("DD716", "nccl-connect-failed", C.NETWORK_UNREACHABLE, R.CAUSE, ("Connect to",),
    "NCCL could not open a socket to a peer", regex=r"NCCL WARN .*Connect to \S+ failed", rank=60,
    remedy="The address NCCL chose for the peer is not reachable from here: pin NCCL_SOCKET_IFNAME to the interface that "
    "routes between the nodes (not docker0/lo/virbr), and check firewalls between them.",
    component="nccl", versions=">=2.4", source="NCCL src/misc/socket.cc ('Net : Connect to %s failed : %s')",
    fixture="node1:4251:4312 [0] misc/socket.cc:456 NCCL WARN Net : Connect to 10.10.1.12<43413> failed : No route to host")
add("DD728", "connect-timed-out", C.FIREWALL_OR_PORT_BLOCKED, R.CAUSE, ("Connection timed out",),
    "A TCP connect to a peer timed out: no answer at all, packets dropped on the way",
    regex=r"Failed to connect to remote host: Connection timed out",
    rank=70, remedy="A host that is up answers a connect at once (accepted, or refused when nothing listens); a connect "
    "to the address in the cluster spec that times out means the packets were dropped: a firewall or cloud security "
    "group blocks the port between the nodes (open the job's ports, or all TCP inside the cluster's subnet), or the "
    "address is one of a host that is down.",
    component="grpc", versions="all", source="POSIX ETIMEDOUT on connect() as gRPC core prints it (src/core/lib/iomgr/tcp_client_posix.cc). NCCL's and "
    "Open MPI's own connect timeouts are left to the interface reading: they pick the address themselves",
    fixture='{"description":"Failed to connect to remote host: Connection timed out","errno":110,"os_error":"Connection timed out","syscall":"connect","target_address":"ipv4:34.91.40.7:2222"}')
# a connection that could not be made in time (ETIMEDOUT, a deadline while connecting): the peer's host gave no answer
# at all -- a host that is up answers a connect at once, even when its process is frozen (the kernel completes the
# handshake), so it is the path or the address, not a peer that stopped answering (DD704). gRPC core's own record of a
# connect to the cluster spec's address that timed out stays DD728 (a firewall dropping the packets, ranked above)
add("DD1527", "timed-out-connecting", C.NETWORK_UNREACHABLE, R.SYMPTOM,
    ("Connection timed out", "Failed to connect to remote server", "call type: CONNECT"),
    "A connection to a peer could not be made in time: its host gave no answer", rank=28,
    regex=r"\bConnection timed out\b|Failed to connect to remote server at address|call type: CONNECT\b",
    remedy="The peer's address gave no answer at all (a host that is up answers a connect at once, accepted or "
    "refused): the address or interface in the cluster configuration is not reachable from this node, the host is "
    "down or not started, or a firewall drops the packets. `nc -vz HOST PORT` from this node settles it.",
    component="grpc", versions="all", source="POSIX ETIMEDOUT on connect() (and ibv_modify_qp's to RTR) as gRPC, NCCL "
    "and MPI print it; gRPC's DEADLINE_EXCEEDED while connecting (\"Failed to connect to remote server at address\", "
    "a channel's call type CONNECT)",
    fixture="tensorflow.python.framework.errors_impl.UnavailableError: Connection timed out")
add("DD717", "mpi-unreachable", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("are unable to reach each other for", "does not know how to route a message"),
    "Open MPI finds no network path between two processes (or daemons)", rank=65,
    remedy="The nodes share no interface Open MPI can use between them: restrict it to routable interfaces "
    "(`--mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0`) and check the network between the nodes.",
    component="openmpi", versions="all", source="Open MPI help-mca-bml-r2.txt (unreachable proc) / help-routed-*.txt",
    fixture="At least one pair of MPI processes are unable to reach each other for")
add("DD718", "ssh-launch-failed", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("Host key verification failed", "ssh: connect to host", "Permission denied (publickey", "ssh: Could not resolve hostname"),
    "The launcher's ssh to another node failed", rank=80,
    regex=r"ssh: Could not resolve hostname |ssh: connect to host \S+ port \d+: (?:No route to host|Connection timed out|Connection refused|Network is "
          r"unreachable)|Host key verification failed|Permission denied \(publickey",
    remedy="mpirun/horovodrun start the remote processes over ssh: make passwordless ssh work from the launch node to "
    "every node (keys, known_hosts, the ssh port, the host reachable) before the job starts.",
    component="openssh", versions="all", source="OpenSSH client messages as mpirun / horovodrun relay them",
    fixture="ssh: connect to host node02 port 22: No route to host")
add("DD719", "gloo-full-mesh-failed", C.NETWORK_UNREACHABLE, R.CAUSE, ("connectFullMesh failed",),
    "Gloo could not connect every pair of ranks", rank=60,
    remedy="Gloo opens a TCP connection between every pair of ranks: pick an interface that routes between the nodes "
    "(HOROVOD_GLOO_IFACE / --network-interface, GLOO_SOCKET_IFNAME) and open the ports between them.",
    component="gloo", versions="all", source="Gloo rendezvous (as Horovod's and PyTorch's Gloo backends report it)",
    fixture="RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error")
add("DD1478", "ucx-listener-failed", C.PORT_IN_USE, R.CAUSE, ("transports can listen for",),
    "UCX could not open a listener on the requested address and port", rank=62,
    regex=r"none of the available transports can listen for\b(?:\s+connections on\s+(?P<addr>\S+))?",
    remedy="Every transport failed to bind the listener, most often because the port is already taken (another "
    "process, an earlier run's listener, a socket in TIME_WAIT): pick a free port or let the library choose one (port "
    "0), and check `ss -ltnp` on that host.",
    component="ucx", versions=">=1.8", source="openucx/ucx src/ucp/core/ucp_listener.c (\"none of the available "
    "transports can listen for connections on %s\"); two real cases (UCX-Py), both a port already bound",
    fixture="[dgx12:67177:0]   ucp_listener.c:431  UCX  ERROR none of the available transports can listen for "
            "connections on 0.0.0.0:41245")
add("DD1481", "lightgbm-port-bind-failed", C.PORT_IN_USE, R.CAUSE, ("Binding port", "Binding to port"),
    "A worker could not bind its listen port", regex=r"Binding (?:to )?port \d+ failed", rank=70,
    remedy="The port is already taken on that machine (another worker, an earlier run): give each worker a free port "
    "(LightGBM's local_listen_port / machines list), or let the library search for free ports.",
    component="lightgbm", versions="all", source="microsoft/LightGBM src/network/linkers_socket.cpp (\"Binding port %d "
    "failed\")",
    fixture="[LightGBM] [Fatal] Binding to port 12402 failed")
add("DD1497", "port-in-use-in-words", C.PORT_IN_USE, R.CAUSE,
    ("already occupied", "already in use", "already taken", "already being used", "already bound",
     "but another process is utilizing it"),
    "A program says in words that the port it needs is taken", ignore_case=True, rank=80,
    # a statement, not a check or a condition ("checking whether port N is already in use")
    regex=r"^(?:(?!\b(?:whether|if|unless|check(?:s|ing)?)\b).)*?\bport\b[^.\n]{0,40}?(?:\b(?:is|was|are) already "
    r"(?:in use|occupied|taken|being used|bound)|, but another process is utilizing it)",
    remedy="Another process holds that port on this host (`ss -ltnp | grep PORT`): stop it, or give the program "
    "another port (or run it on another node).",
    component="any", versions="all", source="the launchers' and schedulers' own wording of EADDRINUSE (Dask's "
    "executors, LightGBM, Ray: \"Port 'N' is already occupied\", \"port N is already in use\"; accelerate launch's "
    "port check: \"Tried to launch distributed communication on port `N`, but another process is utilizing it\")",
    fixture="RuntimeError: Port '8786' is already occupied on this node. Try another machine.")
add("DD1000", "mpi-help-aggregate", C.OTHER, R.BENIGN, ('to see all help / error messages',),
    "Open MPI's notice that it folded repeated help messages into one (harmless by itself)", rank=0,
    remedy="Nothing to do: the help message it counts is printed once above; set `--mca orte_base_help_aggregate 0` "
    "to see every copy.", component="openmpi", versions="all", source="Open MPI orte/util/show_help.c (the aggregation notice)",
    fixture='[node1:02811] Set MCA parameter "orte_base_help_aggregate" to 0 to see all help / error messages')
add("DD1001", "mpi-process-received-signal", C.SEGFAULT_CORE_DUMP, R.CAUSE, ("*** Process received signal ***",),
    "Open MPI's signal handler reports that a process received a fatal signal", rank=44,
    remedy="A process crashed on a signal: the 'Signal:' line below names it and the frames below that say where; "
    "match the versions of the libraries in those frames (NCCL, MPI, TensorFlow, extensions).",
    component="openmpi", versions="all", source="Open MPI opal/util/stacktrace.c", fixture="[rtptest1621:405884] *** Process received signal ***")
add("DD1002", "hydra-exit-code", C.PEER_CRASHED, R.CAUSE, ("EXIT CODE: ",),
    "MPICH's Hydra prints the exit code (or the signal) of the process it lost", rank=47, regex=r"^\W*EXIT CODE: \d+",
    remedy="One process of the job died: an exit code of 9 is SIGKILL (most often the OOM killer: `dmesg`), 11 or 139 a "
    "segmentation fault, anything else the process's own error (its output above).", component="mpich",
    versions=">=3.0 (also Intel MPI)", source="pmodels/mpich src/pm/hydra (pmiserv_cb.c: the EXIT CODE line under DD950's BAD TERMINATION banner)",
    fixture="=   EXIT CODE: 9")
# ibv_wc_status 12 (IBV_WC_RETRY_EXC_ERR) and 13 (IBV_WC_RNR_RETRY_EXC_ERR): the transport gave up retrying: the peer
# did not answer (link down, a port or switch failure, a dead peer). NCCL >= 2.12 words it "remote process exited or
# there was a network error": kb/ambiguous.py caps it at medium with a dead peer as the alternative. Any other status
# (a work request flushed after an earlier error, ...) is DD920's: a symptom of a failure elsewhere.
add("DD1003", "nccl-ib-retry-exceeded", C.NETWORK_UNREACHABLE, R.CAUSE, ("Got completion",),
    "NCCL's InfiniBand transport gave up: the peer did not answer (retry count exceeded)", rank=60,
    regex=r"NET/IB ?: Got completion (?:from peer \S+ )?with (?:error |status=)(?:12|13)\b",
    remedy="Check the InfiniBand path between the two nodes (`ibstat`, `ibv_devinfo`, the switch's port counters), "
    "NCCL_IB_HCA/NCCL_IB_GID_INDEX (RoCE), and whether the peer process was still alive.",
    component="nccl", versions="all ('with error' <=2.11, 'from peer ... with error' 2.12-2.18, 'status=' >=2.19)",
    source="NVIDIA/nccl src/transport/net_ib.cc; libibverbs ibv_wc_status",
    fixture="node-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129")
# DGL's RPC server binds the address its ip_config file gives this machine; EADDRNOTAVAIL (errno 99) says this machine
# has no such address: the file lists another host's address, or a NAT'd public one, for this server
add("DD1502", "dgl-bind-address-not-here", C.CONFIG_TF_CONFIG, R.CAUSE, ("Failed bind on",),
    "DGL's RPC server cannot bind the address the cluster's ip_config gives it: the address is not this machine's",
    regex=r"Failed bind on \S+?,? errno=99\b", rank=72,
    remedy="The ip_config file (the cluster spec of DGL's distributed training) lists an address this machine does "
    "not have: put each machine's own address (`hostname -I`, the private one, not a NAT'd public one) on its line.",
    component="dgl", versions=">=0.5 (distributed)", source="dmlc/dgl src/rpc/network/tcp_socket.cc (TCPSocket::Bind: "
    "\"Failed bind on \" << ip << \":\" << port << \" , errno=\" << errno); errno 99 EADDRNOTAVAIL",
    fixture="/opt/dgl/src/rpc/network/tcp_socket.cc: 69: Failed bind on 10.0.0.7:30050(ip+port), errno=99")
