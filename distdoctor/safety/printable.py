"""Text from tasks and logs made safe to print on a terminal or post to a chat. Pure.

A task's line may hold escape sequences that act on the terminal that shows it: OSC 52 writes the clipboard, OSC 0/2
set the window title, CSI 2J clears the screen, C1 controls (``\\x9b`` is CSI in 8 bits) do the same, and bidi
overrides or zero-width characters make a line read other than it is. :func:`safe_text` drops escape sequences
(colours too: a verdict is plain text) and the other C0/C1 controls (a progress bar's ``\\r`` and backspaces
included), and shows bidi controls and zero-width characters as visible escapes (``\\u202e``); tab and newline
stay.
"""
from __future__ import annotations

import re

__all__ = ["safe_text", "safe_line", "slack_escape"]

# ESC sequences: OSC/DCS/SOS/PM/APC strings up to BEL or ST (or the end), CSI, and two-character escapes;
# the same introduced by their 8-bit C1 forms (\x9b CSI, \x9d OSC, \x90 DCS, \x98 SOS, \x9e PM, \x9f APC)
_SEQ = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)"
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|\x1b[ -/]*[0-~]?")
_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f"
_INVISIBLE = "\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb"
_BAD = re.compile(f"[{_CONTROL}{_INVISIBLE}]")
_DROP = re.compile(f"[{_CONTROL}]+")
_SHOW = re.compile(f"[{_INVISIBLE}]")


def _visible(m: re.Match) -> str:
    return f"\\u{ord(m[0]):04x}"


def safe_text(text: str) -> str:
    """``text`` with escape sequences and other controls removed, invisible characters shown escaped."""
    if not _BAD.search(text):
        return text
    return _SHOW.sub(_visible, _DROP.sub("", _SEQ.sub("", text)))


def safe_line(text: str) -> str:
    """One line to print: :func:`safe_text`, and a newline inside shown as ``\\n``."""
    return safe_text(text).replace("\n", "\\n")


def slack_escape(text: str) -> str:
    """Text for a Slack/Mattermost message: ``&``, ``<`` and ``>`` escaped (``<!channel>``, ``<url|text>`` and
    ``<@user>`` from a task's exception stay text), after :func:`safe_text`."""
    return safe_text(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
