"""What one ``distdoctor run`` is asked to do: the command, the cluster, the bundle, the thresholds, the restart
budget (built from the command line by :mod:`.command` and :mod:`.nodecommand`, read by :mod:`.supervisor`)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..cluster.local import LocalCluster

__all__ = ["RunConfig"]


@dataclass
class RunConfig:
    argv: list[str]
    cluster: LocalCluster
    out_dir: str
    hang_timeout: float | None = None
    on_hang: str = "stop"               # "stop" or "wait"
    grace: float = 10.0                 # SIGTERM -> SIGKILL
    failure_grace: float = 10.0         # after a fatal failure, time for peers to report
    exit_grace: float = 120.0           # every task's code ended cleanly: how long a process may sit in teardown
    sample_s: float = 0.5
    stream: object = None               # where task output is echoed (None: no echo)
    live: object = None                 # a LiveView-like object with update(rows, banner, lines)
    extra_env: dict[str, str] = field(default_factory=dict)
    notify: object = None               # a notify.hub.NotifyConfig: alerts, metrics, thresholds, TensorBoard
    restarts: int = 0                   # --restarts: the restart budget (0: stop at the first failure)
    restart_delay: float = 10.0         # the first backoff, doubling ...
    restart_delay_max: float = 360.0    # ... up to this
    rng: object = None                  # random.Random-like, for the backoff's jitter (tests inject one)
    clock: object = None                # a .clock.Clock (tests inject one); None: the system's
