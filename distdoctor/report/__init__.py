"""Reports for people: the live terminal view, the end-of-run text report and the HTML incident report.

One page model (:mod:`.data`, built from the records of a run bundle that
:mod:`.bundle` reads) and several renderers: :mod:`.html` (with :mod:`.svg`
for the drawings) and :mod:`.terminal`. :mod:`.live` draws the live status
during ``distdoctor run``; :mod:`.command` is the ``distdoctor report``
subcommand and :func:`write_report`, which ``run`` calls at the end of every
run.
"""
from __future__ import annotations

from .command import write_logs_report, write_report
from .live import LiveRow, LiveView, live_enabled, stall_banner
from .terminal import render_diagnosis

__all__ = ["write_report", "write_logs_report", "render_diagnosis", "LiveRow", "LiveView", "live_enabled",
           "stall_banner"]
