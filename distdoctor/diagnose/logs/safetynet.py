"""The safety net: a log whose lines read as errors is never "no evidence of a failure".

When the knowledge base names no cause, symptom or wait, but some line reads as an error (signature DD1012: a glog
E/F level, ERROR/FATAL, an exception's name, "failed", a non-zero exit, a stall, NCCL's WARN) and no other signature
claims that line (a known harmless line stays harmless), the verdict is a failure: the first such line quoted, the
category ``other`` (a cause the knowledge base does not name), low confidence, and the summary says the message is
not in the knowledge base. ``diagnose`` then lets the learned reading decide the category and rank the alternatives
(:func:`.learned.with_learned_reading`).

Pure: the verdict, the hits and the error-line hits in; a verdict out.
"""
from __future__ import annotations

from ...catalogue import RuleList
from ...model import Category, Status
from .conclusion import Verdict
from .jobhits import named_below
from .prefixes import split_prefix
from .progress import EPOCH_LINE, progress_of
from .scan import Hit, StreamFacts
from .settle import settle_for
from .words import tokens

__all__ = ["SAFETY_NET", "ERROR_LINE", "unclaimed", "rescue"]

ERROR_LINE = "error-line"
RULES = RuleList()
SAFETY_NET = RULES.add(
    code="DD160", name="unrecognised-error-line", category=Category.OTHER,
    title="A line reads as an error, but its message is not in the knowledge base",
    detects="Logs in which no signature names a cause, but some line reads as an error (an E/F log level, ERROR or "
            "FATAL, an exception, 'failed', a non-zero exit, a stall report).",
    why="A failing log is never 'no evidence': the first error line is the place to start, and the words of it and "
        "of the case's other lines say roughly what kind of failure it is.",
    evidence="The first line that reads as an error and that no signature claims. Its category: in `diagnose`, the "
             "learned reading of the real corpus (the words and hits of every line of the case); in `run`'s live "
             "verdict, `other` (a cause the knowledge base does not name).",
    remedy="Read the quoted line and the lines before it; the category is a guess (low confidence).")


# the job itself recorded success: the operator's Succeeded condition, a task's "training finished"
_SUCCESS = ("k8s-job-succeeded", "training-finished")


_LEVEL_WORDS = frozenset({"error", "fatal", "critical", "warn", "tensorflow", "absl", "root", "stderr", "stdout"})


def _says_something(text: str) -> bool:
    """A line with words besides its level and logger (``ERROR:tensorflow:=====`` opens a block; it says nothing)."""
    return any(len(t) >= 3 and t not in _LEVEL_WORDS for t in tokens(text))


def _progress(line: str) -> bool:
    text = split_prefix(line)[1].strip()
    return progress_of(text) is not None or bool(EPOCH_LINE.match(text))


def _trained_past(h: Hit, facts: dict[str, StreamFacts]) -> bool:
    """The stream of ``h`` ends in training progress printed after ``h`` -- two progress lines at least, a run that
    goes on rather than one bar drawn before the message (an error a task printed and then trained past did not end
    it)."""
    f = facts.get(h.stream)
    if f is None:
        return False
    tail = [t for t in f.tail if t.strip()]
    if not any(_progress(t) for t in tail[-3:]):
        return False
    key = h.text.strip()[-120:]
    at = max((i for i, t in enumerate(tail) if key and key in t), default=-1)
    return sum(_progress(t) for t in tail[at + 1:]) >= 2


def unclaimed(hits: list[Hit], lines: list[Hit], facts: list[StreamFacts] = ()) -> list[Hit]:
    """The error-line hits on lines that no other signature matched and that say something, in reading order,
    except those the same stream trained past."""
    claimed = {(h.stream, h.line_no) for h in hits}
    by_name = {f.name: f for f in facts}
    return [h for h in lines if (h.stream, h.line_no) not in claimed and _says_something(h.text)
            and not _trained_past(h, by_name)]


def rescue(v: Verdict, hits: list[Hit], lines: list[Hit], facts: list[StreamFacts] = ()) -> Verdict:
    """The verdict, or the safety net's when ``v`` found nothing and an unclaimed line reads as an error (and
    nothing in the logs says the job succeeded)."""
    if v.root is not None or v.status != Status.UNKNOWN or any(h.sig.name in _SUCCESS for h in hits):
        return v
    errs = unclaimed(hits, lines, facts)
    if not errs:
        return v
    first = min(errs, key=lambda h: (h.ts if h.ts is not None else float("inf"), lines.index(h)))
    text = first.text.strip()
    more = [h for h in errs if h is not first][:4]
    culprit = first.named or first.writer or named_below(hits, first)   # (an abort notice below it names its rank)
    return Verdict(status=Status.FAILED, category=Category.OTHER, culprit=culprit,
                   confidence="low", code=SAFETY_NET.code,
                   summary=f"not in the knowledge base: the first line that reads as an error is \"{text[:200]}\"",
                   remedy=SAFETY_NET.remedy, root=first, context=tuple(more), looked_at=v.looked_at,
                   settle=settle_for(Category.OTHER))
