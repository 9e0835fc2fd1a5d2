"""How much a job's shared token is worth: a token a stranger can guess keeps nobody out.

The token keys every handshake of the mesh check and the side link (``DISTDOCTOR_TOKEN``). It must hold
at least :data:`MIN_BITS` bits of entropy (16 random bytes). What a string holds cannot be measured, only
bounded: this counts :data:`bits per character <_alphabet_bits>` by the smallest alphabet the token is
written in (hex, base64, printable ASCII) and asks for :data:`MIN_DISTINCT` distinct characters, so
``openssl rand -hex 16`` (32 hex digits) or ``-base64 16`` (24 characters) pass and ``tok``,
``my-job-2024`` or 40 times ``a`` do not.
"""
from __future__ import annotations

import math
import string

__all__ = ["MIN_BITS", "token_bits", "token_problem"]

MIN_BITS = 128
MIN_DISTINCT = 8
_HEX = frozenset(string.hexdigits)
_B64 = frozenset(string.ascii_letters + string.digits + "+/=-_")


def _alphabet_bits(token: str) -> float:
    chars = set(token)
    if chars <= set(string.digits):
        return math.log2(10)
    if chars <= _HEX:
        return 4.0
    if chars <= _B64:
        return 6.0
    return math.log2(95)


def token_bits(token: str) -> float:
    """An upper bound of the token's entropy, in bits (0 for one with fewer than MIN_DISTINCT characters)."""
    if len(set(token)) < MIN_DISTINCT:
        return 0.0
    return len(token.rstrip("=")) * _alphabet_bits(token)


def token_problem(token: str, name: str = "DISTDOCTOR_TOKEN") -> str | None:
    """One line saying why ``token`` is too weak, or None."""
    bits = token_bits(token)
    if bits >= MIN_BITS:
        return None
    return (f"{name} is too weak to keep strangers out ({len(token)} characters, at most {bits:.0f} bits; "
            f"{MIN_BITS} needed): use 16 random bytes, e.g. `export {name}=$(openssl rand -hex 16)`")
