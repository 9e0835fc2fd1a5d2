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
from functools import lru_cache
from importlib import resources

__all__ = ["Message", "lookup", "releases_of", "vocabulary"]

_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
SHINGLE = 3        # a line is looked up by its runs of three words
MIN_LEN = 15       # shorter messages, or of fewer than three words ("Socket closed"), are too common elsewhere


_FORMAT = re.compile(r"%[-+ #0-9.*]*(?:l{0,2}|z|h)[a-zA-Z]|\{[^{}]*\}")


@dataclass(frozen=True)
class Message:
    text: str
    releases: tuple[str, ...]
    component: str

    @property
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


def releases_of(lines: list[str]) -> tuple[set[str], list[Message]]:
    """The releases that print every TensorFlow message found in ``lines`` (all of them when none is found), and the
    messages that narrowed them."""
    allowed = set(vocabulary()[1])
    narrowing: list[Message] = []
    for line in lines:
        for m in lookup(line)[:1]:
            if set(m.releases) != allowed and set(m.releases) & allowed:
                allowed &= set(m.releases)
                narrowing.append(m)
            elif not set(m.releases) & allowed:
                return set(), narrowing + [m]
    return allowed, narrowing
