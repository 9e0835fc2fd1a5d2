"""The signature scanner's literal table: every literal the knowledge base's signatures need (and the writer clues),
with which signatures each one leads to. Both prefilters read it: :mod:`.prescan` compiles it with the structural
keywords into one Hyperscan database, :class:`~.scan.Prefilter` falls back to RE2 or ``re`` with it. Pure.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from . import kb  # noqa: F401  (registers the knowledge base)
from .signature import SIGNATURES, Signature

__all__ = ["LiteralTable", "literal_table"]

# Clues to who wrote a stream: the pod a pasted kubectl session is about, a launcher's rank prefix (always read), and
# the lines in which a task names itself (read only while the stream's writer is unknown: :class:`WriterGuess`).
_SUBJECT_CLUES = ("Name:  ", "kubectl ", "k logs ", "<stderr>:", "<stdout>:")
_IDENTITY_CLUES = ("Starting TensorFlow", "task_type", "Created device", "Created TensorFlow device",
                   "Started server with target", "GrpcChannelCache", "local_devices", "Local device", "Horovod initialized")
_CLUES = _SUBJECT_CLUES + _IDENTITY_CLUES


_ANY_DIGIT = re.compile(r"\d")
_DIGIT_BLIND = re.compile(r"0-9|\{\d*,?\d*\}|\(\?P<\w+>|\(\?P=\w+\)")   # a class of all digits, a count, a group's name


def _has_digit(pattern: str) -> bool:
    """Whether a pattern (or literal) tells one digit from another: a digit in it other than in a class of all ten,
    a repetition count or a group's name."""
    return _ANY_DIGIT.search(_DIGIT_BLIND.sub("", pattern)) is not None


def _literal_table() -> tuple[list[bytes], list[bool], list[list[Signature]]]:
    lits: dict[tuple[bytes, bool], list[Signature]] = {}
    for sig in SIGNATURES:
        for lit in sig.literals:
            lits.setdefault((lit.encode(), sig.ignore_case), []).append(sig)
    for clue in _CLUES:
        lits.setdefault((clue.encode(), False), [])
    keys = list(lits)
    return [k[0] for k in keys], [k[1] for k in keys], [lits[k] for k in keys]


@dataclass(frozen=True)
class LiteralTable:
    literals: list[bytes]
    caseless: list[bool]
    sigs: list[list[Signature]]
    identity: frozenset[int]     # ids of the clues by which a task names itself
    subject: frozenset[int]      # ids of the clues to whose output a stream is (kubectl, a rank prefix)
    blind: frozenset[int]        # ids whose signatures match or miss a line whatever its digits' values
    ids_of: dict[str, list[int]]  # signature code -> the literal ids that lead to it


_TABLE: LiteralTable | None = None


def literal_table() -> LiteralTable:
    """The process's table (built once)."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _build()
    return _TABLE


def _build() -> LiteralTable:
    literals, caseless, sigs = _literal_table()
    identity = frozenset(i for i, (x, c) in enumerate(zip(literals, caseless))
                              if not c and x.decode() in _IDENTITY_CLUES)
    subject = frozenset(i for i, (x, c) in enumerate(zip(literals, caseless))
                             if not c and x.decode() in _SUBJECT_CLUES)
    # literals whose signatures match or miss a line whatever its digits' values: no digit in the literal or in
    # the signature's patterns (``\\d`` and ``\\w`` read every digit alike; a count of digits is kept by _ZEROS)
    blind = frozenset(i for i, led in enumerate(sigs)
                      if led and not _has_digit(literals[i].decode()) and all(
                          not _has_digit(s.regex or "") and not _has_digit(s.names or "")
                          and not any(_has_digit(x) for x in s.literals) for s in led))
    ids_of: dict[str, list[int]] = {}     # signature code -> the literal ids that lead to it
    for i, led in enumerate(sigs):
        for sig in led:
            ids_of.setdefault(sig.code, []).append(i)
    return LiteralTable(literals, caseless, sigs, identity, subject, blind, ids_of)
