"""What every ``run --node`` supervisor has, collector or not: the one task it runs, on its host and port."""
from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass

from .restarts import port_free

__all__ = ["NodeCluster", "OwnTask", "collector_of"]


def collector_of(tasks: list[str]) -> str:
    """The task whose supervisor writes the cluster-wide diagnosis."""
    for t in ("chief:0", "worker:0"):
        if t in tasks:
            return t
    return sorted(tasks)[0]


@dataclass(frozen=True)
class NodeCluster:
    """The one task this node runs, in its cluster (the shape of :class:`~distdoctor.cluster.local.LocalCluster`)."""

    task: str
    all_tasks: tuple[str, ...]
    strategy: str
    tf_config_text: str | None   # None: leave the task's TF_CONFIG as the scheduler set it

    @property
    def tasks(self) -> list[str]:
        return [self.task]

    def tf_config(self, task: str) -> str:
        return self.tf_config_text or os.environ.get("TF_CONFIG", "")


class OwnTask:
    """This node's task: the host it runs on, and its port, which a restart waits for."""

    def __init__(self, cluster: NodeCluster) -> None:
        self.cluster = cluster
        self.me = cluster.task
        self.hostname = socket.gethostname()

    def launched(self, sup) -> None:
        sup.tracks[self.me].host = self.hostname

    def wait_port(self, clock, say, timeout: float = 30.0) -> None:
        """The task restarts on its own port: wait (bounded) until no old process listens on it."""
        try:
            tf = json.loads(self.cluster.tf_config(self.me) or "{}")
            job, _, idx = self.me.partition(":")
            address = tf["cluster"][job][int(idx)]
        except (ValueError, KeyError, IndexError, TypeError):
            return
        port = address.rpartition(":")[2]
        deadline = clock.now() + timeout
        while not port_free(f":{port}") and clock.now() < deadline:
            clock.sleep(0.2)
        if not port_free(f":{port}"):
            say(f"port {address} is still held after {timeout:.0f} s; starting {self.me} anyway")
