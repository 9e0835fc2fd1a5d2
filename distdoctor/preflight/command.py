"""``distdoctor check``: the command-line edge of the preflight package.

Registers the subcommand, turns arguments into :class:`~.check.CheckOptions`,
runs :func:`~.check.run_check` and renders the report (a rich table, or JSON
with ``--json``). Exit codes: 0 clean (warnings allowed), 1 errors found, 2
unusable input (raised as :class:`~distdoctor.errors.DistDoctorError`, which
only ``cli.py`` turns into the one-line message).

This module is imported by ``cli.py`` for every command, so it imports
nothing heavy at the top.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from ..argtypes import seconds

__all__ = ["register_cli"]

_EPILOG = """\
sources (first match wins): --cluster FILE --task JOB:INDEX, --tf-config JSON|@FILE, $TF_CONFIG,
Slurm variables (SLURM_STEP_NODELIST, SLURM_PROCID, ...; ports from --port-base, jobs from
$DISTDOCTOR_SLURM_JOBS such as chief:1,worker:3), Open MPI's (OMPI_COMM_WORLD_RANK/SIZE, hosts from
$DISTDOCTOR_MPI_HOSTS or this host; ports from --port-base).
exit status: 0 no errors (warnings allowed), 1 errors found, 2 unusable input or usage.
"""


def register_cli(sub) -> None:
    p = sub.add_parser(
        "check", help="preflight: check the cluster spec, this host and (--mesh) every task's reachability",
        description="Check a multi-worker TensorFlow job before it starts: the cluster spec (static rules), this "
                    "host (address, port, memory, disk, limits, GPUs), the environment, and with --mesh the "
                    "network between all tasks and their differences.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tf-config", metavar="JSON|@FILE", help="TF_CONFIG to check instead of $TF_CONFIG")
    p.add_argument("--cluster", metavar="FILE", help="whole-cluster spec, JSON or YAML")
    p.add_argument("--task", metavar="JOB:INDEX", help="which task this is (e.g. worker:1); overrides the spec's")
    p.add_argument("--static", action="store_true", help="config checks only: no DNS, no ports, no peers")
    p.add_argument("--mesh", action="store_true", help="probe every other task (run on every task at once)")
    p.add_argument("--timeout", type=seconds, default=60.0, metavar="S", help="mesh check time limit (default 60)")
    p.add_argument("--bandwidth", action="store_true", help="also measure throughput between tasks")
    p.add_argument("--token", default=None, help="shared secret of the job's mesh (default $DISTDOCTOR_TOKEN)")
    p.add_argument("--argv", default=None, metavar="JSON|CMDLINE",
                   help="this task's training command line to compare across tasks (default "
                        "$DISTDOCTOR_TASK_ARGV, else the parent process's command line)")
    p.add_argument("--checkpoint-dir", default=".", metavar="DIR", help="where checkpoints go (default: cwd)")
    p.add_argument("--strategy", choices=("auto", "mwms", "ps"), default="auto",
                   help="MultiWorkerMirrored or ParameterServer layout rules (default: ps if the cluster has ps)")
    from ..cluster.scheduler import add_port_base_argument
    add_port_base_argument(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    """Exit status per the module doc; an unexpected failure becomes one line too (never a traceback)."""
    from ..errors import DistDoctorError
    try:
        return _check(args)
    except (DistDoctorError, KeyboardInterrupt, BrokenPipeError):
        raise
    except Exception as exc:
        if os.environ.get("DISTDOCTOR_DEBUG"):
            raise
        raise DistDoctorError(f"check failed unexpectedly: {type(exc).__name__}: {exc} "
                              "(set DISTDOCTOR_DEBUG=1 for the traceback, and please report it)") from None


def _check(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    from .check import CheckOptions, default_argv, parse_argv, run_check
    from ..cluster.spec import SpecError, load_document

    if args.static and args.mesh:
        raise UsageError("--static and --mesh exclude each other (--static means no network)")
    if not args.timeout > 0:
        raise UsageError(f"--timeout must be positive, not {args.timeout}")
    if not 1 <= args.port_base <= 65535:
        raise UsageError(f"--port-base {args.port_base} is not a port")
    if args.cluster is not None and args.task is None and not args.static:
        raise UsageError("--cluster needs --task JOB:INDEX to know which task this is (or --static for the "
                         "cluster alone)")
    environ = os.environ
    doc = load_document(tf_config=args.tf_config, cluster_file=args.cluster, task=args.task, environ=environ,
                        port_base=args.port_base)
    argv = parse_argv(args.argv, "--argv") if args.argv is not None else (
        default_argv(environ) if args.mesh else ())
    token = args.token if args.token is not None else environ.get("DISTDOCTOR_TOKEN", "")
    opt = CheckOptions(static=args.static, mesh=args.mesh, timeout=args.timeout, bandwidth=args.bandwidth,
                       token=token, checkpoint_dir=args.checkpoint_dir, strategy=args.strategy, argv=argv)
    try:
        report = run_check(doc, opt, environ)
    except SpecError as exc:
        if args.json:  # machine readers still get the finding; the one-line error goes to stderr
            print(json.dumps({"status": "errors", "findings": [f.to_json() for f in exc.findings],
                              "fingerprint": None, "mesh": None}, indent=2))
        raise
    if args.json:
        doc = report.to_json()
        # a big mesh's table is thousands of pairs: compact JSON, or printing it costs more than the check
        big = report.mesh is not None and len(doc["mesh"]["pairs"]) > 500
        print(json.dumps(doc, separators=(",", ":")) if big else json.dumps(doc, indent=2))
    else:
        import shutil
        from rich.console import Console
        from .render import render_check
        # a pipe or a log file gets 120 columns, not rich's 80: the table has five of them
        width = None if sys.stdout.isatty() else shutil.get_terminal_size((120, 24)).columns
        render_check(report, Console(file=sys.stdout, width=width))
    return report.exit_code
