"""Reports for people: the live terminal view, the end-of-run text report and the HTML incident report.

Every renderer takes the :class:`~distdoctor.model.Diagnosis`: :mod:`.terminal`
prints it (the one text rendering); :mod:`.data` builds the HTML page model
(:mod:`.page`, with :mod:`.marks`) from it and the records of a run bundle that
:mod:`.bundle` reads, and :mod:`.html` (with :mod:`.svg`) draws the page. :mod:`.live` draws the live status
during ``distdoctor run``; :mod:`.command` is the ``distdoctor report``
subcommand and :func:`write_report`, which ``run`` calls at the end of every
run.
"""
from __future__ import annotations

# no re-exports: a module takes what it needs from the submodule that holds it, so `distdoctor diagnose` starts
# without the HTML report's code (cli.py imports one subcommand's modules only)
