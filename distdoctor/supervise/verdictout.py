"""What ``run`` and ``run --node`` both do at the end: print the verdict and choose the exit code."""
from __future__ import annotations

import argparse
import os

from ..model import Diagnosis
from ..safety import safe_text

__all__ = ["policy_exit", "notify_config", "print_human"]


def policy_exit(diag: Diagnosis, own_rc: int | None, human, prefix: str = "[distdoctor]") -> int:
    """The exit code of ``--exit-code-policy``, said with its reason."""
    from .exitcodes import policy_exit_status
    choice = policy_exit_status(diag, own_rc)
    kind = {0: "success", 143: "retryable"}.get(choice.code, "permanent")
    print(f"{prefix} exit code {choice.code} ({kind}, --exit-code-policy): {safe_text(choice.reason)}", file=human, flush=True)
    return choice.code


def notify_config(args: argparse.Namespace, out: str):
    from ..notify.options import config_from_args
    return config_from_args(args, out)


def print_human(diag: Diagnosis, out: str, stream) -> None:
    from rich.console import Console
    from ..report.terminal import render_diagnosis
    render_diagnosis(diag, Console(file=stream, force_terminal=None))
    print(f"diagnosis: {os.path.join(out, 'diagnosis.json')}", file=stream)
