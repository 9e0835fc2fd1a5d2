"""``distdoctor report BUNDLE|LOGS... [--html FILE] [--open]`` and :func:`write_report`.

A bundle folder (one with ``diagnosis.json``) is read as it is; anything else
is treated as plain logs and diagnosed first by ``distdoctor diagnose``'s
``diagnose_paths``, so a report can be written from logs alone (with what
logs allow: no process samples, so no CPU chart).
"""
from __future__ import annotations

import argparse
import glob
import os
import webbrowser

from ..errors import InputError, UsageError
from ..safety import write_fresh
from .bundle import BundleData, bundle_from_observation, is_bundle, load_bundle
from .data import build_page
from .html import render_html

__all__ = ["register_cli", "write_report", "write_logs_report", "report_command", "REPORT_NAME", "LOGS_REPORT_NAME"]

REPORT_NAME = "report.html"
LOGS_REPORT_NAME = "distdoctor-report.html"


def register_cli(sub) -> None:
    p = sub.add_parser("report", help="write a self-contained HTML incident report from a run bundle or logs",
                       description="Write one self-contained HTML file (no network needed to view it): the verdict, "
                                   "a timeline with one lane per task, step time, memory and CPU, stacks and log tails.")
    p.add_argument("paths", nargs="+", metavar="BUNDLE|LOGS",
                   help="a run bundle folder written by `distdoctor run`, or task log files / a folder of logs")
    p.add_argument("--html", metavar="FILE", help=f"where to write the report (default: BUNDLE/{REPORT_NAME}, "
                                                  f"or ./{LOGS_REPORT_NAME} for logs)")
    p.add_argument("--open", action="store_true", help="open the report in a web browser")
    p.set_defaults(func=report_command)


def report_command(args: argparse.Namespace) -> int:
    paths = list(args.paths)
    if len(paths) == 1 and is_bundle(paths[0]):
        data = load_bundle(paths[0])
        out = args.html or os.path.join(paths[0], REPORT_NAME)
    else:
        if any(is_bundle(p) for p in paths):
            raise UsageError("pass one run bundle on its own, or only log files")
        data = _from_logs(paths)
        out = args.html or os.path.join(os.getcwd(), LOGS_REPORT_NAME)
    page = build_page(data)
    _write(render_html(page), out)
    v = page.verdict
    who = f", culprit {', '.join(v.culprits)}" if v.culprits else ""
    print(f"report: {out} ({v.status}{who})")
    if args.open:
        webbrowser.open("file://" + os.path.abspath(out))
    return 0


def write_report(bundle_dir: str, out: str | None = None) -> str:
    """Write the HTML report of a run bundle; return its path (default ``bundle_dir/report.html``).

    Raises :class:`InputError` when ``bundle_dir`` is not a readable bundle or
    the file cannot be written.
    """
    data = load_bundle(bundle_dir)
    path = out or os.path.join(bundle_dir, REPORT_NAME)
    _write(render_html(build_page(data)), path)
    return path


def write_logs_report(diagnosis, observation, out: str, source: str | None = None) -> str:
    """Write the HTML report for a diagnosis made from plain logs (``distdoctor diagnose --html``).

    ``diagnosis`` is a :class:`~distdoctor.model.Diagnosis`, ``observation`` the
    :class:`JobObservation` it was made from.
    """
    data = bundle_from_observation(diagnosis, observation, source or os.path.dirname(os.path.abspath(out)))
    _write(render_html(build_page(data)), out)
    return out


def _write(html: str, path: str) -> None:
    try:
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        # a reader never sees half a report; a name or line that was not UTF-8 (a surrogate escape) is written
        # as its escape, never a UnicodeEncodeError
        write_fresh(path, html, errors="backslashreplace")
    except OSError as exc:
        raise InputError(f"cannot write the report to {path}: {exc.strerror or exc}; choose another --html") from None


def _expand(paths: list[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            logs = sorted(glob.glob(os.path.join(p, "*.log")) + glob.glob(os.path.join(p, "logs", "*.log")))
            if not logs:
                raise InputError(f"{p}: a folder with neither diagnosis.json nor *.log files; "
                                 "pass a run bundle or the task logs")
            out += logs
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise InputError(f"{p}: no such file or folder")
    return out


def _from_logs(paths: list[str]) -> BundleData:
    files = _expand(paths)
    try:
        from ..diagnose.command import diagnose_paths
    except ImportError:
        raise InputError("reporting on plain logs needs `distdoctor diagnose`, which this installation lacks; "
                         "pass a run bundle instead") from None
    diagnosis, observation = diagnose_paths(files)
    where = files[0] if len(files) == 1 else os.path.commonpath([os.path.abspath(f) for f in files])
    return bundle_from_observation(diagnosis, observation, where)
