"""The structural scanner's prefilter (:mod:`.taskscan`): the keywords and raw patterns a line must hold to reach the
line parser, as Hyperscan expressions (compiled in :mod:`.prescan`'s databases with the signature literals: one pass
for both scanners, or this scanner's part alone), or, without Hyperscan, as one regular expression over upper-case
letters translated to \\x01 plus a few raw regexes.
"""
from __future__ import annotations

import collections
import re

__all__ = ["EXPRESSIONS", "candidate_lines"]


# Every keyword below begins with an upper-case letter other than I and W. The
# scanner maps those letters to \x01 (bytes.translate, ~1 GB/s) and searches
# the translated chunk with one regex whose every branch begins with \x01: the
# regex engine then skips with a fast literal search and only tries the
# keyword trie at upper-case letters. I and W stay themselves so that the
# INFO/WARNING prefix of nearly every TensorFlow line (I0000, W0000) is not a
# candidate, while E0000/F0000 (errors, fatal) are. False positives only cost
# time; the line is classified properly afterwards.
_KEYWORDS = (
    "Traceback (most", "Error", "Exception", "Exit", "KeyboardInterrupt", "Fatal", "Segmentation fault",
    "Bus error", "Floating point", "Aborted", "Aborting", "Abort", "Killed", "Trace/breakpoint",
    "E tensorflow/", "F tensorflow/", "E external/", "F external/",
    "SIGSEGV received", "SIGABRT received", "SIGBUS received", "Received signal", "Caught signal",
    "Received SIGTERM", "SIGTERM received", "Check failed", "CHECK failed", "OOM when", "OOMKilled",
    "Out of memory", "Memory cgroup", "Address already", "Failed", "Could not start", "No address added",
    "Example stragglers", "Connection reset", "Connection refused", "Connection timed",
    "Socket closed", "DEADLINE_EXCEEDED", "Deadline Exceeded", "Deadline exceeded",
    "The following tasks", "The tasks have", "Task /job", "RecvTensor cancel", "Cancelling", "CANCELLED AT",
    "Collective ops", "Collective has", "Coordination service", "Coordination agent", "Additional GRPC",
    "UNAVAILABLE:", "Unavailable", "Unexpected task", "Duplicate task", "Barrier timed", "Shutdown barrier",
    "Heartbeat", "Terminating", "Polled an error", "Proceeding with agent", "Local rendezvous is",
    "NCCL WARN", "NCCL error", "CUDA_ERROR", "CUDA error", "NaN",
    "No space left", "Too many open", "Resource exhausted", "Resource temporarily", "Cannot allocate",
    "Disk quota", "Preempt", "Started server", "Enabled multi", "MultiWorker", "Epoch ", "TF_CONFIG",
    "Broken pipe", "Tensor had", "Your input ran out", "Callback method", "Detected ", "Memory cgroup",
)
_UPPER = bytes(c for c in range(65, 91) if c not in b"IW")
_DIGITS = b"0123456789"
_TABLE = bytes.maketrans(_UPPER, b"\x01" * len(_UPPER))


def _trie_regex(words: list[bytes]) -> bytes:
    """A regex matching any of ``words``, factored by common prefixes."""
    words = sorted(set(words))
    # A word that has a shorter word as prefix is redundant for a prefilter.
    kept: list[bytes] = []
    for w in words:
        if not any(w.startswith(k) for k in kept):
            kept.append(w)
    if len(kept) == 1:
        return re.escape(kept[0])
    groups: dict[bytes, list[bytes]] = collections.OrderedDict()
    for w in kept:
        groups.setdefault(w[:1], []).append(w[1:])
    alts = []
    for head, rests in groups.items():
        rests = [r for r in rests]
        if any(not r for r in rests):
            alts.append(re.escape(head))
        elif len(rests) == 1:
            alts.append(re.escape(head) + re.escape(rests[0]))
        else:
            alts.append(re.escape(head) + b"(?:" + _trie_regex(rests) + b")")
    return b"(?:" + b"|".join(alts) + b")" if len(alts) > 1 else alts[0]


def _build_prefilter() -> re.Pattern[bytes]:
    words = [k.encode().translate(_TABLE) for k in _KEYWORDS]
    if not all(w[:1] == b"\x01" for w in words):
        raise ValueError("every prefilter keyword must begin with an upper-case letter other than I and W")
    return re.compile(b"\x01" + _trie_regex([w[1:] for w in words]))


_PREFILTER: re.Pattern[bytes] | None = None   # built when first needed (no Hyperscan here)
# Severity-coded C++ lines (E/F level) anywhere: one literal-prefixed regex each (fast paths in re).
# Keywords that cannot be anchored on a translated letter: one literal-prefixed regex each (fast paths in re).
# absl's E/F lines are matched raw: "E1"/"F0" on translated bytes would match every "T1" of an ISO time stamp.
_RAW_PREFILTERS = (re.compile(rb"Waiting for \d"), re.compile(rb"I(?:nvalid loss|llegal instruction|nf values)"),
                   re.compile(rb"connected to coordination service"),
                   re.compile(rb"in _all_reduce_sum_fn|in all_reduce_sum_gradients"),  # a "defined at" frame
                   re.compile(rb"(?:^|[0-9Z] )[EF][01]\d{3} \d\d:\d\d:", re.M))


# The prefilter's patterns, by id: the keywords, then the raw regexes (Hyperscan runs them all in one pass).
EXPRESSIONS: tuple[bytes, ...] = tuple(re.escape(k.encode()) for k in _KEYWORDS) + tuple(rx.pattern for rx in _RAW_PREFILTERS)
# Patterns that are never dropped from the scan however often one message repeats: the generic words of errors,
# under which any new failure may appear (a flood of "Error in PredictCost" says nothing about the next "...Error").
_NEVER_SPENT = frozenset(i for i, k in enumerate(_KEYWORDS) if k in (
    "Traceback (most", "Error", "Exception", "Exit", "Fatal", "Failed", "Aborted", "Aborting", "Abort", "Killed",
    "Epoch ", "E tensorflow/", "F tensorflow/", "E external/", "F external/", "Check failed", "CHECK failed",
    "NaN", "Detected ")) | {len(_KEYWORDS) + len(_RAW_PREFILTERS) - 1}   # absl's E/F lines


def _fallback_starts(body: bytes, pos: int) -> list[tuple[int, int]]:
    """Offsets (inside lines) of every prefilter hit from ``pos`` on, without Hyperscan: the translated-bytes regex
    plus the raw regexes (pattern -1)."""
    global _PREFILTER
    if _PREFILTER is None:
        _PREFILTER = _build_prefilter()
    tr = body.translate(_TABLE)
    out = [(m.start(), -1) for m in _PREFILTER.finditer(tr, pos)]
    for rx in _RAW_PREFILTERS:
        out.extend((m.start(), -1) for m in rx.finditer(body, pos))
    return out


def _lines_of(body: bytes, candidates: list[tuple[int, int]], pos: int) -> list[tuple]:
    """The candidate lines (start, end, the patterns found on them, None: the line classifier's literals are not
    looked for), in order, from the prefilter's hits."""
    lines: list[tuple] = []
    le, n = -1, len(body)
    rfind, find = body.rfind, body.find
    for c, pid in sorted(candidates):
        if c < le:
            lines[-1][2].append(pid)
        elif c >= pos:
            le = find(b"\n", c)
            if le < 0:
                le = n
            lines.append((rfind(b"\n", 0, c) + 1, le, [pid], None))
    return lines


def candidate_lines(body: bytes, pos: int) -> list[tuple]:
    """The candidate lines of ``body`` from ``pos`` on (start, end, pattern ids, None), in order, without Hyperscan (with it,
    :meth:`.prescan.Prescan.task_lines` answers from the joint databases)."""
    return _lines_of(body, _fallback_starts(body, pos), pos)
