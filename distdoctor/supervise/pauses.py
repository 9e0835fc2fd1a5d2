"""The pauses of a run: each suspicion of a stall, followed while it lasts, kept when training resumes. Pure.

A suspicion that ends because the job steps again was a pause (the suspect kept working, or came back), not a
hang; it becomes a DD211 warning of the run. A value: every method returns a new log. Time is a parameter: the
loop's step passes ``now`` and the detector's :class:`~.detect.Assessment`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..diagnose.observations import Pause

__all__ = ["PauseLog"]


@dataclass(frozen=True)
class PauseLog:
    open: Pause | None = None            # the suspicion under way
    closed: tuple[Pause, ...] = ()       # pauses that ended: training resumed
    seen: tuple = ()                     # the open pause: (kind, turns, latest words) of each thing its suspect did
    places: tuple = ()                   # the open pause: (where, turns, where) of each place its suspect was at

    def suspect(self, a, now: float) -> "PauseLog":
        """A suspicion begins (the job's last step was ``a.stalled_for`` ago)."""
        p = Pause(task=a.suspect, since=now - a.stalled_for, until=now, where=a.where, doing=a.doing,
                  waiting=a.waiting) if a.suspect else None
        return replace(self, open=p, seen=_saw((), a.doing) if p else (), places=_at((), a.where) if p else ())

    def follow(self, a) -> "PauseLog":
        """While it lasts, remember where its suspect was and what it did most (the pause's evidence: a task that
        writes a checkpoint also moves a heartbeat's bytes now and then; the pause is the writing -- and its last
        look may fall after the writing returned, on the line that steps again: the pause is where it wrote)."""
        p = self.open
        if p is None or a is None or a.status != "suspect" or a.suspect != p.task:
            return self
        seen = _saw(self.seen, a.doing)
        doing = max(seen, key=lambda k: k[1])[2] if seen else p.doing
        places = _at(self.places, a.where)
        # the place seen most, the later of equals (max keeps the first of equals: read from the latest back)
        where = max(reversed(places), key=lambda k: k[1])[0] if places else p.where
        return replace(self, open=replace(p, where=where, doing=doing, waiting=a.waiting or p.waiting),
                       seen=seen, places=places)

    def still(self, a, now: float) -> bool:
        """No step since the suspicion began: it may not end yet."""
        return a is not None and self.open is not None and now - a.stalled_for <= self.open.since + 0.01

    def clear(self, a, now: float) -> tuple["PauseLog", Pause | None]:
        """Training resumed: the suspicion is a pause of the run, ending when the job stepped again."""
        p = self.open
        if p is None:
            return self, None
        resumed = now - (a.stalled_for if a is not None else 0.0)
        p = replace(p, until=max(p.since, resumed))
        return PauseLog(None, self.closed + (p,)), p

    def drop(self) -> "PauseLog":
        """The suspicion became a hang: it was no pause."""
        return replace(self, open=None, seen=(), places=())

    def all(self, now: float, hung: bool) -> tuple[Pause, ...]:
        """Every pause of the attempt; one still open when the job ended counts up to ``now`` (not after a hang)."""
        out = list(self.closed)
        if self.open is not None and not hung:
            out.append(replace(self.open, until=now))
        return tuple(out)


def _saw(seen: tuple, doing: str) -> tuple:
    """``seen`` with one more turn of ``doing`` (its kind: the words before the figures in brackets)."""
    return _tally(seen, doing.split(" (")[0], doing) if doing else seen


def _at(places: tuple, where: str | None) -> tuple:
    """``places`` with one more turn at ``where`` (a look that found no place adds none)."""
    return _tally(places, where, where) if where else places


def _tally(rows: tuple, kind: str, words: str) -> tuple:
    """``rows`` of (kind, turns, latest words), in the order first seen, with one more turn of ``kind``."""
    if any(k == kind for k, _, _ in rows):
        return tuple((k, n + 1, words) if k == kind else (k, n, d) for k, n, d in rows)
    return rows + ((kind, 1, words),)
