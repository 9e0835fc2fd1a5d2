"""Types of command-line values shared by the subcommands: a duration is a finite number of seconds, 0 or more.

``--grace -5`` or ``--hang-timeout nan`` is a usage error at parse time (one line, exit 2), never a supervisor
that kills at once or never.
"""
from __future__ import annotations

import argparse
import math

__all__ = ["seconds"]


def seconds(text: str) -> float:
    """argparse ``type=``: a finite duration in seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds, 0 or more, got {text!r}")
    return value
