"""Reports for people: the live terminal view, the end-of-run text report and the HTML incident report.

One page model (:mod:`.data`, built from a run bundle read by :mod:`.bundle`)
and several renderers (:mod:`.html`, :mod:`.terminal`); :mod:`.live` draws
the live status during ``distdoctor run``; :mod:`.command` is the
``distdoctor report`` subcommand and :func:`write_report`, which ``run``
calls at the end of every run.
"""
from __future__ import annotations

__all__ = ["write_report", "render_diagnosis", "LiveRow", "LiveView", "live_enabled"]


def __getattr__(name: str):
    # Lazy: importing the package must stay cheap for `distdoctor run`'s start-up.
    if name == "write_report":
        from .command import write_report
        return write_report
    if name == "render_diagnosis":
        from .terminal import render_diagnosis
        return render_diagnosis
    if name in ("LiveRow", "LiveView", "live_enabled"):
        from . import live
        return getattr(live, name)
    raise AttributeError(name)
