"""The words of a log line, as the learned reading (:mod:`.learned`) and the safety net (:mod:`.safetynet`) read them:
lower-cased words, CamelCase and snake_case split into their parts beside the whole word, numbers, hex and a few
stop words dropped. (The safety net's naive-Bayes word model that lived here was removed in session 22: the learned
reading decides the category of a line no signature knows, and switched off the word model cost nothing in grouped
cross-validation on 856 real cases.)
"""
from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["tokens"]

_WORD = re.compile(r"[A-Za-z][A-Za-z_]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
_STOP = frozenset("the a an of to in on at is was be by for and or with as from this that it its are were not no "
                  "has have had will can may".split())


_HEX = re.compile(r"[a-f]{8,}")


@lru_cache(maxsize=1 << 16)
def _word_tokens(w: str) -> tuple[str, ...]:
    """One word's tokens (the words of lines repeat: each is split once)."""
    low = w.lower()
    if len(low) < 2 or low in _STOP or _HEX.fullmatch(low):
        return ()
    parts = [p.lower() for seg in w.split("_") for p in _CAMEL.findall(seg)]
    if len(parts) > 1:
        return (low, *(p for p in parts if len(p) > 1 and p not in _STOP))
    return (low,)


def tokens(line: str) -> list[str]:
    """The words of a line: lower-cased, CamelCase and snake_case split into parts beside the whole word."""
    out: list[str] = []
    for w in _WORD.findall(line):
        out += _word_tokens(w)
    return out
