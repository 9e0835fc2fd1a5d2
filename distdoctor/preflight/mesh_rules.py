"""The catalogue entries of ``check --mesh``'s network and mesh rules (DD501-DD519).

The mesh judge (:mod:`.meshjudge`) makes their findings from the reports the tasks exchange.
"""
from __future__ import annotations

from ..catalogue import RuleList
from ..model import Category as C

__all__ = ["RULES"]

RULES = RuleList()

RULES.add("DD501", "peer-refused", C.NETWORK_UNREACHABLE, "Connection refused",
          "A task's port refused connections (nothing listening at that address) while the task itself was up.",
          "TensorFlow retries forever (\"Waiting for N tasks to connect\" / UNAVAILABLE: Connection refused).",
          "The mesh probes of the tasks that tried.",
          "Check the address the others use for this task (port, host) against where it really runs.")
RULES.add("DD502", "peer-dropped", C.FIREWALL_OR_PORT_BLOCKED, "Packets to a task's port are dropped",
          "Connections to a task's port time out with no answer and no refusal.",
          "A firewall, security group or network policy drops the traffic; TensorFlow just waits.",
          "The mesh probes of the tasks that tried.",
          "Open the port (TCP) between all tasks: security group, iptables/nftables, Kubernetes NetworkPolicy.")
RULES.add("DD503", "no-route", C.NETWORK_UNREACHABLE, "No route to a task",
          "Connecting fails with host or network unreachable.", "The hosts cannot talk at all on this network.",
          "The mesh probes.", "Check the host is up and on a network the others can route to.")
RULES.add("DD504", "name-unresolved", C.NETWORK_UNREACHABLE, "A task's name does not resolve",
          "The host name of a task does not resolve on the task that tried.",
          "TensorFlow fails with \"DNS resolution failed\" or waits.", "The resolver's error.",
          "Use names every host resolves (on Kubernetes the TFJob's headless services, which exist once pods run).")
RULES.add("DD505", "token-mismatch", C.CONFIG_MISMATCH_ACROSS_WORKERS, "A task does not share the job's token",
          "The mesh handshake fails: the peer at that address belongs to another job or has another token.",
          "The address points at someone else's task, or this task was started with another job's settings.",
          "The failed handshakes on both sides.",
          "Give every task the same DISTDOCTOR_TOKEN and check the address is this job's task.")
RULES.add("DD506", "peer-never-arrived", C.NETWORK_UNREACHABLE, "A task never arrived",
          "Nobody could reach a task within the timeout and it sent no report.",
          "The task did not start (pending pod, failed srun step, crashed before the check) or its host is down; "
          "TensorFlow would wait for it forever.",
          "Every task's probes and the missing report.", "Find out why that task did not start (kubectl describe, sacct).")
RULES.add("DD507", "unauthenticated-peer", C.CONFIG_MISMATCH_ACROSS_WORKERS, "Refused a peer without the token",
          "A connection to this task's port that could not prove it holds the job's token.",
          "Another job (or a stale task) is talking to this job's ports.", "The responder's log of refusals.",
          "Check which process at that address is connecting; give this job's tasks the same DISTDOCTOR_TOKEN.")
RULES.add("DD508", "foreign-listener", C.PORT_IN_USE, "Something else answers at a task's port",
          "A task's address accepted the connection but did not speak the mesh protocol.",
          "Another program holds the port TensorFlow needs there.", "The mesh probe.",
          "Free the port on that host, or move the task to another port.")
RULES.add("DD509", "wrong-task-at-address", C.CONFIG_MISMATCH_ACROSS_WORKERS, "Another task answers at an address",
          "At the address a config lists for task A, task B answered.",
          "The tasks' cluster lists or indices disagree; collectives would pair the wrong tasks or hang.",
          "The handshake's task names.", "Generate every task's TF_CONFIG from one cluster list with distinct indices.")
RULES.add("DD510", "cluster-lists-disagree", C.CONFIG_MISMATCH_ACROSS_WORKERS, "Tasks disagree about the cluster",
          "The cluster lists in the tasks' TF_CONFIGs differ; the odd tasks are named (majority vote).",
          "TensorFlow connects to the addresses it is given: tasks with another list wait for peers that are "
          "not there, or form a different cluster.", "Every task's TF_CONFIG, exchanged in the mesh.",
          "Generate every task's TF_CONFIG from one cluster list.")
RULES.add("DD511", "loopback-for-remote-peer", C.CONFIG_TF_CONFIG, "Loopback address for a task on another host",
          "A task's TF_CONFIG lists a peer at localhost/127.x although that peer runs on another host.",
          "The task connects to itself instead of the peer and waits forever.",
          "The TF_CONFIG and host names exchanged in the mesh.", "List that peer by its real host name or address.")
RULES.add("DD512", "package-version-mismatch", C.VERSION_MISMATCH, "Package versions differ across tasks",
          "A package (or Python, or TensorFlow's CUDA build) with another version on some tasks; the odd ones are named.",
          "Different TensorFlow/Keras/protobuf versions across tasks fail collectives or checkpoint restores in "
          "ways that name no version.", "Every task's fingerprint.", "Run every task from the same image/venv.")
RULES.add("DD513", "env-var-mismatch", C.VERSION_MISMATCH, "Environment variables differ across tasks",
          "TF_*, NCCL_*, GRPC_*, LD_LIBRARY_PATH... set differently on some tasks.",
          "These variables change TensorFlow's behaviour (Keras flavour, NCCL transport, library search path).",
          "Every task's fingerprint.", "Set the variables identically on every task.")
RULES.add("DD514", "argv-mismatch", C.CONFIG_MISMATCH_ACROSS_WORKERS, "Command lines differ across tasks",
          "A task started with other arguments (batch size, data path...) than the majority.",
          "Collectives expect identical programs; a different batch size or model hangs or corrupts training.",
          "Every task's command line.", "Start every task with the same arguments.")
RULES.add("DD515", "slow-link", C.STRAGGLER_SLOW_WORKER, "Slow link to a task",
          "Round-trip times to (or from) a task far above the others'.",
          "Every synchronous step waits for the slowest link.", "Round-trip times of the mesh probes.",
          "Check that task's network (placement, NIC, congestion).")
RULES.add("DD516", "lossy-link", C.NETWORK_UNREACHABLE, "Lost probes on a link",
          "Mesh pings between two tasks that got no answer in time.", "Lossy links stall gRPC and collectives.",
          "The mesh pings.", "Check the link between the two hosts.")
RULES.add("DD517", "low-throughput", C.STRAGGLER_SLOW_WORKER, "Low throughput to a task",
          "Measured throughput (--bandwidth) far below the other pairs'.", "Gradient exchange runs at the slowest link.",
          "The bulk transfer of the mesh check.", "Check that link (placement, NIC speed, congestion).")
RULES.add("DD518", "duplicate-task", C.CONFIG_TF_CONFIG, "Two processes claim the same task",
          "Two processes both say they are the same task (the same type and index).",
          "One of them cannot bind its port or takes the other's place; another index has nobody.",
          "The identities exchanged in the mesh.", "Give every process its own task index.")
RULES.add("DD519", "mesh-incomplete", C.NETWORK_UNREACHABLE, "Mesh check incomplete",
          "This task did not receive the reports of every reachable task within the timeout.",
          "Parts of the mesh table are missing, so some verdicts are partial.", "The reports received.",
          "Raise --timeout, or look at the tasks named.")
