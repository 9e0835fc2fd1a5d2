"""Text from tasks and logs made safe to print on a terminal or post to a chat. Pure.

A task's line may hold escape sequences that act on the terminal that shows it: OSC 52 writes the clipboard, OSC 0/2
set the window title, CSI 2J clears the screen, C1 controls (``\\x9b`` is CSI in 8 bits) do the same, and bidi
overrides or zero-width characters make a line read other than it is. :func:`safe_text` drops escape sequences
(colours too: a verdict is plain text) and shows every other control or invisible character as a visible escape
(``\\x07``, ``\\u202e``); tab and newline stay.
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
_BAD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]")


def _visible(m: re.Match) -> str:
    c = m[0]
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def safe_text(text: str) -> str:
    """``text`` with escape sequences removed and other controls and invisible characters shown escaped."""
    if not _BAD.search(text):
        return text
    return _BAD.sub(_visible, _SEQ.sub("", text))


def safe_line(text: str) -> str:
    """One line to print: :func:`safe_text`, and a newline inside shown as ``\\n``."""
    return safe_text(text).replace("\n", "\\n")


def slack_escape(text: str) -> str:
    """Text for a Slack/Mattermost message: ``&``, ``<`` and ``>`` escaped (``<!channel>``, ``<url|text>`` and
    ``<@user>`` from a task's exception stay text), after :func:`safe_text`."""
    return safe_text(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
