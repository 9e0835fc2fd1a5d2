"""TensorFlow's own distributed-runtime vocabulary: the messages its releases print, with the releases that print each.

``data/tf_messages.tsv`` is extracted mechanically from the wheels of TensorFlow 1.15, 2.4, 2.10, 2.15 and 2.21 by
``scripts/tf_vocabulary.py`` (the strings compiled into its libraries and the messages of its Python sources about
collectives, the coordination service, gRPC, sessions, parameter servers, memory, checkpoints and input
pipelines). :func:`lookup` says which of those messages a line holds; :func:`releases_of` which of the releases could
have printed a set of lines (a log whose lines no single release prints came from more than one TensorFlow). Pure.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources

__all__ = ["Message", "lookup", "releases_of", "disjoint", "vocabulary"]

_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
SHINGLE = 3        # a line is looked up by its runs of three words
MIN_LEN = 15       # shorter messages, or of fewer than three words ("Socket closed"), are too common elsewhere


_FORMAT = re.compile(r"%[-+ #0-9.*]*(?:l{0,2}|z|h)[a-zA-Z]|\{[^{}]*\}")


@dataclass(frozen=True)
class Message:
    text: str
    releases: tuple[str, ...]
    component: str

    @cached_property
    def pieces(self) -> tuple[str, ...]:
        """The fixed text between the values a format fills in (``%d``, ``%s``, ``{}``)."""
        return tuple(p.strip() for p in _FORMAT.split(self.text) if len(p.strip()) >= 4)

    def in_line(self, line: str) -> bool:
        at = 0
        for p in self.pieces:
            at = line.find(p, at)
            if at < 0:
                return False
            at += len(p)
        return bool(self.pieces)


@lru_cache(maxsize=1)
def vocabulary() -> tuple[tuple[Message, ...], tuple[str, ...]]:
    """The messages and the releases they were read from."""
    text = resources.files(__package__).joinpath("data/tf_messages.tsv").read_text(encoding="utf-8")
    lines = text.splitlines()
    releases = tuple(re.findall(r"\d+\.\d+", lines[0].split("TensorFlow", 1)[-1])) if lines else ()
    msgs = []
    for row in lines[1:]:
        parts = row.split("\t")
        if len(parts) == 3:
            m = Message(parts[0], tuple(parts[1].split(",")), parts[2])
            if sum(len(p) for p in m.pieces) >= MIN_LEN and len(_WORDS.findall(" ".join(m.pieces))) >= 3:
                msgs.append(m)
    return tuple(msgs), releases


@lru_cache(maxsize=1)
def _index() -> dict[tuple[str, ...], tuple[Message, ...]]:
    idx: dict[tuple[str, ...], list[Message]] = {}
    for m in vocabulary()[0]:
        words = _WORDS.findall(m.pieces[0] if m.pieces else "")
        if len(words) < SHINGLE:
            key = tuple(words)
            idx.setdefault(key, []).append(m)
            continue
        idx.setdefault(tuple(words[:SHINGLE]), []).append(m)
    return {k: tuple(v) for k, v in idx.items()}


def lookup(line: str) -> list[Message]:
    """The vocabulary's messages found whole in ``line``, longest first."""
    idx = _index()
    words = _WORDS.findall(line)
    found: dict[str, Message] = {}
    for n in (SHINGLE, 2):
        for i in range(len(words) - n + 1):
            for m in idx.get(tuple(words[i:i + n]), ()):
                if m.text not in found and m.in_line(line):
                    found[m.text] = m
    return sorted(found.values(), key=lambda m: -len(m.text))


NARROWING_LEN = 25   # a message that says which release printed it: TensorFlow's own (not the gRPC library it bundles,
# whose wording moves with gRPC's version, not TensorFlow's), and long enough to be one message, not a common phrase


def _narrows(m: Message) -> bool:
    return m.component != "rpc" and sum(len(p) for p in m.pieces) >= NARROWING_LEN


def _span(m: Message) -> tuple[int, int]:
    """The releases that may print ``m``, as an open interval of positions among the releases read: a message read in
    releases i..j may also be printed by the releases not read between i-1 and j+1 (one is not read: 2.16-2.20)."""
    order = vocabulary()[1]
    pos = [order.index(r) for r in m.releases if r in order]
    return min(pos) - 1, max(pos) + 1


def releases_of(lines: list[str]) -> tuple[tuple[int, int], list[Message]]:
    """Where among the releases read the lines' TensorFlow messages place their release: an open interval of positions
    in ``vocabulary()[1]`` (the whole line of them when no message tells releases apart; empty, lo >= hi, when no one
    release can print them all), and the messages that narrowed it."""
    lo, hi = -1, len(vocabulary()[1])
    narrowing: list[Message] = []
    for line in lines:
        for m in [m for m in lookup(line) if _narrows(m)][:1]:
            a, b = _span(m)
            if a > lo or b < hi:
                lo, hi = max(lo, a), min(hi, b)
                narrowing.append(m)
                if lo >= hi:
                    return (lo, hi), narrowing
    return (lo, hi), narrowing


def disjoint(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """No one release can lie in both intervals."""
    return max(a[0], b[0]) >= min(a[1], b[1])
