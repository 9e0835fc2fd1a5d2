"""The ``distdoctor diagnose`` command line: read logs with :func:`distdoctor.diagnose.command.diagnose_paths`,
render the verdict (terminal, JSON, HTML report). Lives with the renderers so that ``diagnose`` never imports
``report`` (one direction only: report -> diagnose)."""
from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console

from ..diagnose.command import diagnose_paths
from ..diagnose.logsource import parse_task_map
from ..diagnose.observations import JobObservation
from ..errors import InputError
from ..model import Diagnosis
from .terminal import render_diagnosis

__all__ = ["register_cli"]


def register_cli(sub) -> None:
    p = sub.add_parser("diagnose", help="name the root cause of a failed or hung job from its logs",
                       description="Read the logs of a multi-worker TensorFlow job (a `distdoctor run` bundle, a folder "
                                   "of per-task logs, files, or - for one combined stream; any text, from any job) and say "
                                   "what failed first, where, and what to do. Exit 0 succeeded or no failure found, "
                                   "1 failed, 3 hung, 2 unreadable input.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="run bundle, folder of task logs, log file, or - (stdin)")
    p.add_argument("--json", action="store_true", help="print only the diagnosis JSON")
    p.add_argument("--task-map", action="append", metavar="NAME=job:index,...",
                   help="which task wrote a file or prefix the name does not tell (repeatable)")
    p.add_argument("--html", metavar="FILE", help="also write the HTML incident report (what `distdoctor report` "
                                                  "writes: verdict, timeline per task, log tails) to FILE")
    p.add_argument("--baseline", action="append", metavar="GOOD",
                   help="the logs of a good run of the same job (bundle, folder or files; repeatable): a line it "
                        "printed too is set aside, one new in this run weighs fully")
    p.add_argument("--jobs", type=int, default=None, metavar="N", help="processes reading logs (default: up to 2)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise InputError("--jobs must be at least 1")
    task_map = parse_task_map(args.task_map)
    diag, job = diagnose_paths(args.paths, task_map, jobs=args.jobs, baseline=args.baseline)
    if args.json:
        print(json.dumps(diag.to_json(), indent=2))
    else:
        render_diagnosis(diag, Console(file=sys.stdout, highlight=False, soft_wrap=True))
    if args.html:
        sys.stdout.flush()
        _write_html(diag, job, args.html, args.paths)
    return diag.exit_code


def _write_html(diag: Diagnosis, job: JobObservation, out: str, paths: list[str]) -> None:
    """The HTML incident report of these logs."""
    if paths == ["-"]:
        source = "standard input"
    elif len(paths) == 1:
        source = paths[0]
    else:
        source = ", ".join(paths[:4]) + (f" and {len(paths) - 4} more" if len(paths) > 4 else "")
    from .command import write_logs_report   # the HTML report's code, only when one is asked for
    write_logs_report(diag, job, out, source=source)
