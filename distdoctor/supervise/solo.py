"""The local run's role in the supervisor: it launches every task itself and judges alone (``run --node``'s roles
are in :mod:`.node`)."""
from __future__ import annotations

from .policy import RestartDecision
from .tracking import TaskTrack

__all__ = ["Solo"]


class Solo:
    """The local run's role: it launches every task itself and judges alone."""

    observes_all_logs = True   # the bundle holds every task's log

    def attach(self, sup) -> None:   # the Supervisor it is composed with
        pass

    def tick(self, now: float) -> tuple:
        return ()              # tasks lost elsewhere (run --node's collector)

    def awaiting(self, now: float) -> bool:
        return False           # tasks started elsewhere may still join

    def judges_hangs(self) -> bool:
        return True

    def stack_of(self, track: TaskTrack) -> str | None:
        return None            # None: this host's py-spy and the agent's sample

    def notes(self) -> list[str]:
        return []

    def launched(self) -> None:
        pass

    def decide(self, judge) -> RestartDecision:
        return judge(None)     # judge(veto): the policy's decision, recorded in the ledger

    def between(self, decision: RestartDecision, backoff) -> bool:
        return backoff()       # backoff(): the local wait before a restart; False: do not restart
