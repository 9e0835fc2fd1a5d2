"""``distdoctor run --node``: one supervisor per task, started by the cluster's scheduler.

Each node supervisor wraps its own task exactly as the local ``run`` does
(process group, timestamped log, bootstrap agent, psutil/cgroup samples,
py-spy at a hang). On top of that:

* before TensorFlow starts, the mesh check (:func:`~distdoctor.preflight.mesh.run_mesh`)
  runs on the task's own port; with errors the task is not started
  (``--preflight warn`` starts it anyway);
* the supervisor of ``chief:0`` -- ``worker:0`` where there is no chief -- is the
  *collector*: it opens the side link (:mod:`.sidelink`) and advertises its port
  in its mesh report; every other node connects to it and mirrors its task to
  it: every log line, agent sample, process sample and the exit, on the
  collector's clock;
* the collector therefore sees the whole job as if it had launched it, runs the
  same detectors and the same rule engine, and writes the one cluster-wide
  ``diagnosis.json`` whose culprit is the first task to fail anywhere; it asks
  the nodes to stop their tasks after a fatal failure or a hang, and to send
  their stacks at a hang; the verdict is sent back to every node, which writes
  it into its own bundle and prints it;
* a node supervisor that falls silent (``--peer-timeout``) or whose link closes
  without a goodbye is itself evidence (rule DD112): its host went down, the
  network to it was cut, or it was killed. A node that loses the collector keeps
  supervising its own task alone and says so.

With ``--restarts N`` the collector decides after each verdict (the local run's policy and
ledger); after the backoff it sends ``restart`` over the side link and every node archives its
attempt and starts its task again, on the same port once free. A lost node (DD112) is not
restarted in place: the job stops and the scheduler acts (``--exit-code-policy``).

Composition: a node's supervisor is the local :class:`~.supervisor.Supervisor` with a role --
:class:`~.mirror.CollectorRole` (the side link's hub, the mirror of the other tasks, their stacks and lost
nodes) or :class:`~.nodelink.NodeRole` (a sink that mirrors its task to the collector, the collector's
commands and decisions); both share :class:`~.nodetask.OwnTask` (the task's host and port).

The node's exit status is its task's (128+N for a signal), so the scheduler's
restart policy sees what it would see without distdoctor; 1 when the preflight
stopped the task before it started, 2 for usage errors.
"""
from __future__ import annotations

from .mirror import LINK_WAIT_S, RECONNECT_GRACE_S, CollectorRole, RemoteProcess
from .nodelink import NodeRole
from .nodetask import NodeCluster, OwnTask, collector_of
from .supervisor import RunConfig, Supervisor

__all__ = ["NodeCluster", "RemoteProcess", "node_supervisor", "collector_of", "RECONNECT_GRACE_S", "LINK_WAIT_S"]


def node_supervisor(cfg: RunConfig, *, collector: str, hub=None, client=None, peer_timeout: float = 15.0,
                    expected: tuple[str, ...] = (), decision_wait: float = 60.0) -> Supervisor:
    """The supervisor of one task of a cluster, composed with its role: the collector's mirror of every other
    task (:class:`~.mirror.CollectorRole`), or a node's link to the collector (:class:`~.nodelink.NodeRole`)."""
    own = OwnTask(cfg.cluster)
    if own.me == collector:
        role = CollectorRole(own, hub=hub, expected=expected, peer_timeout=peer_timeout)
    else:
        role = NodeRole(own, collector=collector, client=client, peer_timeout=peer_timeout,
                        decision_wait=decision_wait)
    return Supervisor(cfg, role=role)
