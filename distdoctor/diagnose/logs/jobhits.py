"""The hits of one job, indexed for the reasoning step, and the small readings every verdict uses.

:class:`JobHits` answers "the hits of these signatures (of this role)" in order; ``order_key`` sorts by time then
by reading order; ``task_of`` is the task a hit names (a cause: else its writer); ``distinct`` keeps one hit per
line; ``alternatives``, ``summary_of``, ``settle_of`` and ``looked`` fill a :class:`~.conclusion.Verdict`. Pure.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .conclusion import Alternative
from .formats import clip
from .scan import Hit, StreamFacts
from .signature import Role

__all__ = ["JobHits", "order_key", "task_of", "distinct", "alternatives", "summary_of", "settle_of", "looked"]


@dataclass
class JobHits:
    hits: list[Hit]
    facts: dict[str, StreamFacts]
    order: dict[int, int] = field(default_factory=dict)
    _indexed: list[Hit] | None = field(default=None, repr=False)
    _by_name: dict[str, list[tuple[int, Hit]]] = field(default_factory=dict, repr=False)
    _by_role: dict[Role, list[Hit]] = field(default_factory=dict, repr=False)

    def of(self, *names: str, role: Role | None = None) -> list[Hit]:
        if self._indexed is not self.hits:   # an index by name, rebuilt when ``hits`` is replaced: a 64-task job has
            self._indexed = self.hits        # tens of thousands of hits and the policy asks thousands of questions
            self._by_name, self._by_role = {}, {}
            for i, h in enumerate(self.hits):
                self._by_name.setdefault(h.sig.name, []).append((i, h))
                self._by_role.setdefault(h.sig.role, []).append(h)
        if not names:
            return list(self.hits) if role is None else list(self._by_role.get(role, ()))
        if len(names) == 1:
            got = self._by_name.get(names[0], ())
            return [h for _, h in got] if role is None else [h for _, h in got if h.sig.role == role]
        found = [ih for n in dict.fromkeys(names) for ih in self._by_name.get(n, ())
                 if role is None or ih[1].sig.role == role]
        if len(names) > 1:
            found.sort(key=lambda ih: ih[0])
        return [h for _, h in found]


def order_key(job: JobHits, h: Hit) -> tuple:
    return (h.ts if h.ts is not None else float("inf"), job.order.get(id(h), 0))


def task_of(h: Hit) -> str | None:
    if h.sig.role == Role.CAUSE:
        return h.named or h.writer
    return h.named


def named_below(hits, root: Hit, within: int = 3) -> str | None:
    """The task named by a line at most ``within`` lines below ``root`` in its stream (an abort notice that names the
    rank whose error is printed above it: MPICH's ``Abort(1) on node 1``), else None."""
    near = [h for h in hits if h.stream == root.stream and h.named and 0 <= h.line_no - root.line_no <= within
            and h is not root]
    return near[0].named if near else None


def distinct(root: Hit | None, hits) -> tuple[Hit, ...]:
    """One hit per line, none on the root's own line (several signatures can match one line)."""
    skip = {(root.stream, root.line_no)} if root is not None else set()
    best: dict[tuple, Hit] = {}
    for h in hits:
        key = (h.stream, h.line_no)
        if key in skip:
            continue
        # of several signatures on one line, the one whose role the line plays in the cascade (a symptom) speaks for it
        if key not in best or (best[key].sig.role != Role.SYMPTOM and h.sig.role == Role.SYMPTOM):
            best[key] = h
    return tuple(best.values())


def alternatives(job: JobHits, causes: list[Hit], symptoms: list[Hit], root: Hit) -> tuple[Alternative, ...]:
    seen = {(root.sig.category, task_of(root))}
    out: list[Alternative] = []
    for h in sorted(causes, key=lambda h: -h.sig.rank) + sorted(symptoms, key=lambda h: -h.sig.rank):
        if (h.stream, h.line_no) == (root.stream, root.line_no) and h.sig.rank < root.sig.rank:
            continue
        key = (h.sig.category, task_of(h))
        if key in seen:
            continue
        seen.add(key)
        out.append(Alternative(h.sig.category, task_of(h), f"{h.sig.code} {h.sig.title}: {h.text[:160]}"))
        if len(out) >= 3:
            break
    return tuple(out)


SUMMARY_TEXT = 1000    # characters of the root line in a summary: whole, unless the line dumps data


def summary_of(root: Hit, culprit: str | None) -> str:
    where = f" on {culprit}" if culprit else ""
    return f"{root.sig.title}{where}: {clip(root.text, SUMMARY_TEXT)}"


def settle_of(culprit: str | None, root: Hit) -> str | None:
    if culprit is None:
        return "the log of the task that printed this line (its writer is not named in the input)"
    return None


def looked(job: JobHits) -> tuple[str, ...]:
    return tuple(f"{h.stream}:{h.line_no} [{h.sig.code} {h.sig.role.value}] {h.text[:160]}"
                 for h in sorted(job.hits, key=lambda h: job.order.get(id(h), 0))[:12])

