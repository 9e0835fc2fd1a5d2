"""NCCL and Gloo messages mined from NVIDIA/nccl (v2.4-v2.2x src/*.cc WARN lines, ncclGetErrorString) and
facebookincubator/gloo (gloo/transport/tcp) (codes DD918-DD933, DD706-DD709, DD729, DD787; the first NCCL and Gloo
signatures are in comm.py)."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

NCCL = "nccl"
GLOO = "gloo"
_IFACE = ("Tell NCCL which interface routes between the nodes: NCCL_SOCKET_IFNAME=eth0 (not lo/docker0/virbr), the "
          "same on every node, and check the container has that interface (host networking, the CNI).")
_PEER = ("A symptom of a peer that went away: find the peer's own first error (its log, exit status, the OOM killer, "
         "the scheduler's events).")

# -- result codes (ncclGetErrorString: old wording <=2.11, new wording appends the NCCL_DEBUG hint) -----------------
add("DD918", "nccl-unhandled-cuda", C.VERSION_MISMATCH, R.CAUSE, ("unhandled cuda error", "ncclUnhandledCudaError"),
    "NCCL hit a CUDA error", rank=55,
    remedy="Rerun with NCCL_DEBUG=INFO to see the CUDA call that failed: a GPU out of memory, a driver/CUDA version "
    "mismatch, or GPUs that cannot peer (set NCCL_P2P_DISABLE=1 to test).", component=NCCL, versions="all",
    source="NVIDIA/nccl src/init.cc (ncclGetErrorString: ncclUnhandledCudaError); category from the real corpus: "
    "4 of its 6 cases were an NCCL built for another CUDA or GPU architecture (the others: a chunk size the "
    "transport rejected, GPUs already full)",
    fixture="NCCL error in: /opt/pytorch/nccl.cpp:45, unhandled cuda error (run with NCCL_DEBUG=INFO for details), "
            "NCCL version 2.18.3")
add("DD919", "nccl-invalid-usage", C.USER_CODE_ERROR, R.CAUSE,
    ("invalid usage (run with NCCL_DEBUG=WARN", "NCCL error: invalid usage", "ncclInvalidUsage:"),
    "NCCL was called wrongly (ranks disagree, or a rank/device is used twice)", rank=55,
    remedy="Rerun with NCCL_DEBUG=WARN: the WARN line says which usage was invalid (a duplicate GPU, mismatched "
    "ranks or counts between processes).", component=NCCL, versions="all",
    source="NVIDIA/nccl src/init.cc (ncclGetErrorString: ncclInvalidUsage)",
    fixture="RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, invalid usage (run with "
            "NCCL_DEBUG=WARN for details), NCCL version 2.19.3")

# -- InfiniBand / RoCE ----------------------------------------------------------------------------------------------
add("DD920", "nccl-ib-completion-error", C.PEER_CRASHED, R.SYMPTOM,
    ("NET/IB : Got completion with error", "Got completion from peer"),
    "An InfiniBand transfer failed (a status other than retry-exceeded: the queue pair was flushed after an earlier "
    "error, most often a peer that died)", rank=35,
    regex=r"NET/IB ?: Got completion (?:with error (?P<err>(?!1[23]\b)\d+)|from peer \S+ with "
          r"(?:error (?P<err2>(?!1[23]\b)\d+)|status=(?!1[23]\b)))",
    remedy=_PEER + " Statuses 12 and 13 (retry counters exceeded: the peer's side never answered) are DD1003's.",
    component=NCCL, versions="all (wording: 'with error' <=2.11, 'from peer ... with error' 2.12-2.18, 'status=' >=2.19)",
    source="NVIDIA/nccl src/transport/net_ib.cc",
    fixture="NCCL WARN NET/IB : Got completion from peer 10.3.1.12<50342> with error 5, opcode 0, len 0, vendor err 249 "
            "(Recv)")
add("DD921", "nccl-ib-async-fatal", C.NETWORK_UNREACHABLE, R.CAUSE, ("async fatal event",),
    "The InfiniBand adapter reported a fatal event", rank=65,
    remedy="The node's IB/RoCE adapter or its port failed (link down, a fatal HCA error): drain the node and check it "
    "(ibstat, dmesg); exclude it with NCCL_IB_HCA until fixed.", component=NCCL, versions=">=2.4",
    source="NVIDIA/nccl src/transport/net_ib.cc (ncclIbAsyncThreadMain)",
    fixture="NCCL WARN NET/IB : mlx5_0:1 async fatal event: local catastrophic error")
add("DD922", "nccl-ib-incompatible", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("Attempted to connect incompatible devices", "device is incompatible with the local"),
    "NCCL connects NICs of different link types (InfiniBand with RoCE/Ethernet) across ranks", rank=75,
    remedy="Select NICs of one link layer on every node (NCCL_IB_HCA), or make the nodes' adapters alike.",
    component=NCCL, versions=">=2.20", source="NVIDIA/nccl src/transport/net_ib.cc",
    fixture="NCCL WARN NET/IB : Attempted to connect incompatible devices: [0]mlx5_0:1/IB and [0]mlx5_2:1/RoCE. Try "
            "selecting NICs of only one link type using NCCL_IB_HCA")
add("DD923", "nccl-ib-none", C.NETWORK_UNREACHABLE, R.CONTEXT, ("NET/IB : No device found", "NET/IB : No IP interface found"),
    "NCCL found no usable InfiniBand device and falls back to sockets", rank=5,
    remedy="Expected on nodes without IB; on IB nodes the container lacks /dev/infiniband or the rdma libraries.",
    component=NCCL, versions="all", source="NVIDIA/nccl src/transport/net_ib.cc",
    fixture="node1:311:311 [0] NCCL INFO NET/IB : No device found.")
add("DD924", "nccl-net-device-mismatch", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("Detected mixed local Net device counts across ranks",),
    "Nodes of the job have different numbers of network devices for NCCL", rank=72,
    remedy="Give every node the same NICs visible to NCCL (NCCL_IB_HCA / NCCL_SOCKET_IFNAME alike everywhere), or set "
    "NCCL_IGNORE_NET_MISMATCH=1 if intended.", component=NCCL, versions=">=2.23", source="NVIDIA/nccl src/init.cc",
    fixture="NCCL WARN Detected mixed local Net device counts across ranks (min 4, max 8). Set "
            "NCCL_IGNORE_NET_MISMATCH=1 to ignore.")

# -- sockets and bootstrap ------------------------------------------------------------------------------------------
add("DD925", "nccl-no-subnet-interface", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("No interface found in the same subnet as remote address",),
    "NCCL has no interface in the subnet of the bootstrap address", rank=70, remedy=_IFACE + " NCCL_COMM_ID must be "
    "an address this node can reach.", component=NCCL, versions="all", source="NVIDIA/nccl src/misc/socket.cc",
    fixture="NCCL WARN Net : No interface found in the same subnet as remote address 10.8.0.5<29500>")
add("DD926", "nccl-getaddrinfo", C.NETWORK_UNREACHABLE, R.CAUSE, ("error encountered when getting address info",),
    "NCCL could not resolve a host name", rank=65,
    remedy="The name in NCCL_COMM_ID (or the master address) does not resolve on this node: fix DNS//etc/hosts or use "
    "an IP address.", component=NCCL, versions="all", source="NVIDIA/nccl src/misc/socket.cc (GetSocketAddrFromString)",
    fixture="NCCL WARN Net : error encountered when getting address info : Name or service not known")
add("DD927", "nccl-no-interface", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("No usable listening interface found", "NET/Socket : no interface found", "verify NCCL_OOB_NET_IFNAME",
     "NET/Socket : No usable"),
    "NCCL found no network interface to use (NCCL_SOCKET_IFNAME matches none)", rank=70, remedy=_IFACE,
    component=NCCL, versions="all", source="NVIDIA/nccl src/transport/net_socket.cc / src/bootstrap.cc",
    fixture="NCCL WARN NET/Socket : No usable listening interface found")
add("DD928", "nccl-socket-connect", C.NETWORK_UNREACHABLE, R.CAUSE, ("exceeded error retry count", ": connect to "),
    "NCCL could not open a socket to a peer (newer wording)",
    regex=r"NCCL WARN .*(?:connect to \S+ (?:failed|returned)|exceeded error retry count)", rank=60,
    remedy="The peer's address is not reachable from here: " + _IFACE, component=NCCL, versions=">=2.12",
    source="NVIDIA/nccl src/misc/socket.cc ('%s: connect to %s failed : %s', '... exceeded error retry count')",
    fixture="node1:4251:4312 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: connect to 10.0.0.12<43413> failed "
            ": Software caused connection abort")
add("DD929", "nccl-bootstrap-mismatch", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("Bootstrap Root : mismatch in info from procs", "Bootstrap Root : rank"),
    "NCCL's bootstrap got inconsistent ranks (two jobs share one NCCL_COMM_ID, or ranks disagree on the world size)",
    regex=r"Bootstrap Root : (?:mismatch in info from procs|rank \d+ of \d+ ranks has already checked in)",
    rank=75, remedy="Every rank must agree on the world size and the root address, and no two jobs may share one "
    "NCCL_COMM_ID/master port: check the rank/size each process is given.", component=NCCL, versions="all",
    source="NVIDIA/nccl src/bootstrap.cc",
    fixture="NCCL WARN Bootstrap Root : rank 3 of 8 ranks has already checked in")
add("DD930", "nccl-proxy-error", C.PEER_CRASHED, R.SYMPTOM,
    ("[Service thread] Error encountered progressing operation", "[Proxy Service", "proxyDestroy failed"),
    "NCCL's proxy thread lost a connection (a local or remote rank went away)", rank=25, remedy=_PEER,
    component=NCCL, versions=">=2.12", source="NVIDIA/nccl src/proxy.cc",
    fixture="NCCL WARN [Service thread] Error encountered progressing operation=Connect, res=3, closing connection")
add("DD931", "nccl-comm-abort-state", C.PEER_CRASHED, R.SYMPTOM, ("is in abort state",),
    "An NCCL communicator was aborted (after an error elsewhere)", regex=r"Comm \S+ is in abort state", rank=20,
    remedy=_PEER, component=NCCL, versions=">=2.14", source="NVIDIA/nccl src/enqueue.cc / src/init.cc",
    fixture="NCCL WARN Comm 0x55d2c8a0 is in abort state")

# -- versions -----------------------------------------------------------------------------------------------------
add("DD932", "nccl-library-too-old", C.VERSION_MISMATCH, R.CAUSE,
    ("NCCL library is too old", "NCCL library is not backwards compatible", "compiled with too old version of NCCL"),
    "The NCCL library loaded at run time is not the one the program was built for", rank=85,
    remedy="Install the NCCL version the framework was built with (or newer, same major) on every node; check "
    "LD_LIBRARY_PATH does not pick up another libnccl.", component=NCCL, versions=">=2.10", source="NVIDIA/nccl src/init.cc",
    fixture="NCCL WARN NCCL library is too old. This application was compiled with NCCL version 2.18.1, but is running "
            "with NCCL version 2.14.3")
add("DD933", "nccl-cuda-driver-too-old", C.VERSION_MISMATCH, R.CAUSE, ("CUDA Driver version found is",),
    "NCCL needs a newer CUDA driver than the node has", regex=r"CUDA Driver version found is \d+\. Minimum requirement is",
    rank=80, remedy="Update the node's NVIDIA driver (or use an NCCL/CUDA build for the older driver); every node needs "
    "the same driver level.", component=NCCL, versions=">=2.9", source="NVIDIA/nccl src/init.cc",
    fixture="NCCL WARN CUDA Driver version found is 11000. Minimum requirement is 11030")
add("DD706", "nccl-cuda-ipc", C.OTHER, R.CAUSE, ("failed to open CUDA IPC handle", "failed to get CUDA IPC handle",
                                                "failed to peer with device"),
    "NCCL could not share GPU memory between local ranks (CUDA IPC / P2P)", rank=55,
    remedy="The ranks on a node cannot map each other's GPU memory (separate containers or PID namespaces, P2P "
    "unsupported by the topology): run the local ranks in one container with --ipc=host, or set NCCL_P2P_DISABLE=1.",
    component=NCCL, versions="all", source="NVIDIA/nccl src/transport/p2p.cc",
    fixture="NCCL WARN failed to open CUDA IPC handle : 201 invalid device context")

# -- Gloo ----------------------------------------------------------------------------------------------------------
add("DD707", "gloo-op-timeout", C.HANG_STALLED_WORKER, R.WAIT,
    ("ms for recv operation to complete", "ms for send operation to complete"),
    "A Gloo send/recv timed out: a peer did not take part in the collective", rank=30,
    regex=r"Timed out waiting \d+ms for (?:recv|send) operation to complete",
    remedy="A peer never reached the collective (stuck, slow, or on another code path) or died silently: see what "
    "the other ranks were doing at that time.", component=GLOO, versions="all",
    source="facebookincubator/gloo gloo/transport/tcp/unbound_buffer.cc",
    fixture="RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms "
            "for recv operation to complete")
add("DD708", "gloo-socket-unexpectedly-closed", C.PEER_CRASHED, R.SYMPTOM, ("Socket unexpectedly closed",),
    "A Gloo peer's socket closed unexpectedly (the peer died)", rank=25, remedy=_PEER, component=GLOO, versions="all",
    source="facebookincubator/gloo gloo/transport/tcp/pair.cc",
    fixture="what():  [/opt/gloo/gloo/transport/tcp/pair.cc:201] Socket unexpectedly closed [10.0.0.3]:47312")
add("DD709", "gloo-no-address", C.NETWORK_UNREACHABLE, R.CAUSE, ("Unable to find address for: ",),
    "Gloo cannot find the network interface or host name it was given", rank=70,
    remedy="The interface (GLOO_SOCKET_IFNAME / HOROVOD_GLOO_IFACE) does not exist on this node or the host name does "
    "not resolve: name an interface every node has.", component=GLOO, versions="all",
    source="facebookincubator/gloo gloo/transport/tcp/device.cc",
    fixture="RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. "
            "Unable to find address for: eth1")
# NCCL looks for an external network plugin (libnccl-net.so) at every init and says at INFO level that there is none
# before it uses its own IB/socket transports: the dlopen error it quotes is no failure
add("DD1014", "nccl-net-plugin-absent", C.OTHER, R.BENIGN, ("NET/Plugin : Plugin load", "NET/Plugin : No plugin found"),
    "NCCL found no external network plugin and uses its internal transports (harmless)",
    regex=r"NCCL INFO NET/Plugin : (?:Plugin load|No plugin found)", rank=0,
    remedy="Nothing to do: NCCL uses its built-in IB/socket transports. Install a plugin (aws-ofi-nccl, ...) only if "
    "the fabric needs one.", component=NCCL, versions=">=2.12",
    source="NVIDIA/nccl src/net.cc (v2.12 'NET/Plugin : Plugin load returned %d : %s.', v2.18 'NET/Plugin : Plugin "
    "load (%s) returned %d : %s' / 'No plugin found, using internal implementation', INFO(NCCL_INIT|NCCL_NET))",
    fixture="node1:2201:2260 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: "
            "cannot open shared object file: No such file or directory")
add("DD1486", "nccl-ib-port-error", C.NETWORK_UNREACHABLE, R.CAUSE, ("Got async event : port error",),
    "An InfiniBand/RoCE port that NCCL uses went down", rank=78,
    remedy="The adapter's port lost its link (IBV_EVENT_PORT_ERR): check the port's state (`ibstat`, `ibv_devinfo`), "
    "the cable and the switch on that node, or exclude the adapter (NCCL_IB_HCA).",
    component=NCCL, versions="all", source="NVIDIA/nccl src/transport/net_ib.cc (ncclIbAsyncThreadMain: \"NET/IB : Got "
    "async event : %s\" with ibv_event_type_str; IBV_EVENT_PORT_ERR reads \"port error\")",
    fixture="NCCL WARN NET/IB : Got async event : port error")

# -- HCCL (Huawei Ascend's collective library, beside NCCL in MindSpore, torch_npu and TF on Ascend) ------------------
_HCCL_DOC = "hiascend.com CANN documentation: HCCL user guide (troubleshooting) and error code reference"
add("DD1523", "hccl-bind-ip-port", C.PORT_IN_USE, R.CAUSE,
    ("Failed to bind the IP port", "Communication_Error_Bind_IP_Port", "whether the port is being used by other process"),
    "HCCL could not bind its port: another process holds it", rank=72,
    remedy="Another process on that host or device holds the port HCCL listens on (by default 16666 on the device's "
    "NIC, 60000 on the host's): more than one process per device, two communicators on the same devices, or a "
    "leftover process. Run one process per device, give each its own port range (HCCL_NPU_SOCKET_PORT_RANGE, "
    "HCCL_HOST_SOCKET_PORT_RANGE), or end the leftover.",
    component="hccl", versions="all (CANN; EJ0003, EI0019, EI0020)",
    source=_HCCL_DOC + " (Port Binding Failure on the Server / on the Parameter Plane (EJ0003); EI0019/EI0020 "
    "Communication_Error_Bind_IP_Port)",
    fixture="Communication_Error_Bind_IP_Port(EJ0003): Failed to bind the IP port. Reason: The IP address and port "
            "have been bound already.")
add("DD1524", "hccl-get-socket-timeout", C.NETWORK_UNREACHABLE, R.SYMPTOM,
    ("Getting socket times out", "Communication_Error_Get_Socket"),
    "HCCL timed out connecting to the other ranks (a rank that failed or came late, or a link that is down)", rank=30,
    remedy="Look first for a rank that failed with another error or never started (its own log); if every rank "
    "reports it, compare when each did: ranks further apart than HCCL_CONNECT_TIMEOUT (120 s by default) started too "
    "far apart; otherwise check the links between the nodes (`hccn_tool -i <dev> -tls -g`, the NICs' addresses).",
    component="hccl", versions="all (CANN; EI0006)",
    source=_HCCL_DOC + " (EI0006 Communication_Error_Get_Socket: 'Getting socket times out. Reason: %s')",
    fixture="EI0006: Getting socket times out. Reason: 1. The remote does not initiate a connect request.")


# -- AWS Neuron (Trainium / Inferentia): the runtime's collective engine checks that every rank loaded a graph with
# the same collectives ---------------------------------------------------------------------------------------------
add("DD1531", "neuron-cc-ops-mismatch", C.HANG_COLLECTIVE_MISMATCH, R.CAUSE,
    ("mismatching number of cc ops", "failed to validate neff across the replica group"),
    "The ranks loaded compiled graphs (NEFFs) with different collectives: they would wait in different collectives",
    regex=r"mismatching number of cc ops, expected \d+ received \d+|failed to validate neff across the replica group",
    rank=80,
    remedy="The ranks traced different graphs: code that runs only on some ranks inside the step (a print or a "
    "tensor read on rank 0, a rank-dependent branch or shape) adds operations to that rank's graph. Keep the traced "
    "step the same on every rank (cut the graph with xm.mark_step() before rank-only work, move it out of the step), "
    "and clear stale compiled graphs from the cache if the code changed.",
    component="aws-neuron", versions="Neuron runtime 2.x (Trainium, Inferentia2)",
    source="the Neuron runtime's ENC (collectives) log lines, as it prints them: \"ENC:validate_neff_cc_ops ... "
    "mismatching number of cc ops, expected N received M. Check if ranks A and B are using the same neff\" and "
    "\"ENC:enc_load_operations ... failed to validate neff across the replica group\"",
    fixture="2023-Oct-27 14:18:42.0222 35560:35755 ERROR   ENC:validate_neff_cc_ops                    [nec_dev 0] "
            "mismatching number of cc ops, expected 6 received 3. Check if ranks 1 and 0 are using the same neff")
