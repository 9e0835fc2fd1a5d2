"""The contract of the notification sinks: one :class:`AlertEvent` per thing worth telling a person.

An event is plain data (no I/O, no clock): the supervisor builds it, the pure
formatters in :mod:`.alerts` turn it into a webhook body, a chat message or an
Alertmanager alert, and :mod:`.sender` delivers it off the supervision thread.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import DistDoctorError, UsageError

__all__ = ["EVENTS", "AlertEvent", "NotifyError", "NotifyUsageError"]

# hang_suspected: the detector first sees a candidate stall (before its threshold)
# hang_cleared:   progress resumed after a hang_suspected (the suspicion was a pause; resolves its alert)
# hang_declared:  the hang verdict
# task_failed:    a task ended non-zero (or by a signal) on its own
# restart / gave_up: the restart policy restarted the job / stopped restarting it
# threshold:      a resource threshold was crossed, or memory will reach its limit soon
# verdict:        the final diagnosis
EVENTS = ("hang_suspected", "hang_cleared", "hang_declared", "task_failed", "restart", "gave_up", "threshold", "verdict")


class NotifyError(DistDoctorError):
    """A notification sink could not be set up (a port taken, a package missing)."""


class NotifyUsageError(NotifyError, UsageError):
    """A notification option on the command line is malformed."""


@dataclass(frozen=True)
class AlertEvent:
    """One event, as every sink sees it.

    ``at`` is when it happened and ``since`` when the condition began (a hang's
    last progress, a threshold's first crossing). ``resolved`` marks the end of
    a condition raised earlier under the same ``key`` (Alertmanager's endsAt).
    ``details`` holds event-specific extras (the threshold's kind and figure,
    the restart attempt) as sorted ``(name, value)`` pairs.
    """

    event: str
    job: str
    at: float
    status: str = "running"            # running, succeeded, failed, hung
    severity: str = "warning"          # critical, warning, info
    category: str | None = None
    code: str | None = None
    culprit: str | None = None
    summary: str = ""
    first_failure: str | None = None
    bundle: str | None = None
    report: str | None = None
    since: float | None = None
    resolved: bool = False
    details: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.event not in EVENTS:
            raise ValueError(f"unknown event {self.event!r}; expected one of {', '.join(EVENTS)}")

    def detail(self, name: str) -> str | None:
        return dict(self.details).get(name)

    @property
    def key(self) -> tuple[str, str | None, str | None]:
        """What identifies the condition: a later resolved event with the same key ends it."""
        return (self.event, self.culprit, self.detail("threshold"))
