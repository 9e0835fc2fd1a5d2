"""``distdoctor run``: the command-line edge of the supervisor."""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import sys

from ..cluster.scheduler import add_port_base_argument
from ..cluster.schedulers import task_label
from ..cluster.local import build_local_cluster
from ..argtypes import seconds
from ..errors import UsageError
from ..safety import OutLock, OutLockError, ensure_private_dir, open_fresh, safe_text
from .verdictout import notify_config, policy_exit, print_human

__all__ = ["register_cli", "run_command"]


def register_cli(sub) -> None:
    p = sub.add_parser("run", help="launch and supervise a multi-worker TensorFlow job",
                       description="Launch COMMAND once per task with its TF_CONFIG, supervise every task, "
                                   "and write a diagnosis naming the culprit of any hang or crash.")
    p.add_argument("--workers", type=int, default=None, help="number of worker tasks (default 2)")
    p.add_argument("--ps", type=int, default=None, help="number of parameter-server tasks (ParameterServerStrategy; implies --chief)")
    p.add_argument("--chief", action="store_true", help="add a chief task")
    node = p.add_argument_group("on a cluster (one supervisor per task, started by Kubernetes, Slurm or mpirun)")
    node.add_argument("--node", action="store_true",
                      help="supervise only this task, from TF_CONFIG or the scheduler's variables (Slurm, Open MPI); "
                           "the supervisors of all "
                           "tasks check the mesh first and share a side link (token: $DISTDOCTOR_TOKEN)")
    node.add_argument("--mesh-timeout", type=seconds, default=60.0, metavar="S",
                      help="the preflight mesh check's time limit (default 60 s)")
    node.add_argument("--preflight", choices=["enforce", "warn"], default="enforce",
                      help="when the preflight finds errors: do not start the task (default), or only report them")
    node.add_argument("--side-port", type=int, default=0, metavar="PORT",
                      help="the collector's side-link port (default: any free port, advertised in the mesh check)")
    node.add_argument("--peer-timeout", type=seconds, default=15.0, metavar="S",
                      help="a node supervisor silent this long is lost: its host is down or cut off (default 15 s)")
    node.add_argument("--final-wait", type=seconds, default=60.0, metavar="S",
                      help="how long a node waits for the collector's cluster verdict after its task ended (default 60 s)")
    add_port_base_argument(node)
    p.add_argument("--out", help="bundle folder (default: a new timestamped folder under ./distdoctor-runs/)")
    p.add_argument("--json", action="store_true", help="print only the diagnosis JSON on stdout")
    p.add_argument("--hang-timeout", type=seconds, default=None, metavar="S",
                   help="bound every pause: declare a hang after S seconds without a training step, even while the "
                        "task the others wait for still computes or moves bytes. Default: no bound on such a pause "
                        "(chief-only evaluation, a slow upload, a long trace are everyday; it is suspected and "
                        "reported, never stopped); a task stalled (no CPU, I/O, network or new code) while its "
                        "peers wait is declared after 10-20 s, adapted to the step time; a frozen task (T) after 3 s. "
                        "Before the job's first step either needs 60 s at the least (start-up)")
    p.add_argument("--on-hang", choices=["stop", "wait"], default="stop",
                   help="after a hang is diagnosed: stop the job (default) or keep it alive for a debugger")
    p.add_argument("--grace", type=seconds, default=10.0, metavar="S", help="SIGTERM to SIGKILL grace period (default 10 s)")
    p.add_argument("--failure-grace", type=seconds, default=10.0, metavar="S",
                   help="after a fatal failure, how long the other tasks may run to report it (default 10 s)")
    p.add_argument("--exit-grace", type=seconds, default=120.0, metavar="S",
                   help="once every task's code has ended without an error, how long a process may sit in its exit "
                        "teardown (TensorFlow's destructors can wait for ever) before distdoctor stops it; the job "
                        "succeeded either way (default 120 s; 0: wait for ever)")
    rs = p.add_argument_group("restarts (what a restart fixes: preemption, eviction, a lost peer)")
    rs.add_argument("--restarts", type=int, default=0, metavar="N",
                    help="restart the job up to N times after a transient failure, resuming from its checkpoint; "
                         "deterministic failures (an exception in the code, a bad config) stop at once (default 0)")
    rs.add_argument("--restart-delay", type=seconds, default=10.0, metavar="S",
                    help="the first backoff before a restart, doubling with each restart (default 10 s)")
    rs.add_argument("--restart-delay-max", type=seconds, default=360.0, metavar="S",
                    help="the longest backoff (default 360 s)")
    rs.add_argument("--exit-code-policy", nargs="?", const="on", choices=["off", "on"], default="off",
                    help="when the job stops for good, exit 143 (retryable) after a transient failure and 1 "
                         "(permanent) after a deterministic one, so TFJob's restartPolicy: ExitCode, a "
                         "podFailurePolicy or Slurm's requeue act on the verdict (default off: the task's own "
                         "status; `distdoctor policy tfjob|jobset|slurm` prints the matching snippet)")
    p.add_argument("--no-live", action="store_true", help="plain prefixed log streaming instead of the live view")
    p.add_argument("--no-report", action="store_true", help="do not write report.html into the bundle")
    from ..notify.options import add_arguments as add_notify_arguments
    add_notify_arguments(p)
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...] run once per task")
    p.set_defaults(func=run_command)


def _default_out(suffix: str = "") -> str:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S") + suffix
    base = os.path.join(os.getcwd(), "distdoctor-runs", stamp)
    out, n = base, 1
    while os.path.exists(out):
        n += 1
        out = f"{base}-{n}"
    return out


def _check_out(path: str, human) -> OutLock:
    """Make the bundle folder (0700) and lock it for this run: a live run's folder is refused, a dead run's is
    reused with a note. The lock is held until the process ends."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        lock = OutLock(path)
        ensure_private_dir(os.path.join(path, "logs"))
        probe = os.path.join(path, ".write-test")
        with open_fresh(probe) as fh:
            fh.write("ok")
        os.unlink(probe)
    except OutLockError as exc:
        raise UsageError(f"{exc.strerror}; choose another --out") from None
    except OSError as exc:
        raise UsageError(f"cannot write the run bundle to {path}: {exc.strerror or exc}; choose another --out") from None
    if lock.reused:
        print(f"[distdoctor] {path} holds an earlier run's bundle: its files are replaced", file=human, flush=True)
    return lock


def _check_command(argv: list[str]) -> None:
    if not argv:
        raise UsageError("no command to run; usage: distdoctor run --workers 2 -- python train.py")
    exe = argv[0]
    if os.sep in exe:
        if not os.path.exists(exe):
            raise UsageError(f"command not found: {exe}")
        if not os.access(exe, os.X_OK) or os.path.isdir(exe):
            raise UsageError(f"command is not executable: {exe}")
    elif shutil.which(exe) is None:
        raise UsageError(f"command not found on PATH: {exe}")
    for arg in argv[1:2]:
        if arg.endswith(".py") and os.path.basename(exe).startswith("python") and not os.path.exists(arg):
            raise UsageError(f"script not found: {arg}")


def run_command(args: argparse.Namespace) -> int:
    from .supervisor import RunConfig, Supervisor
    argv = list(args.command)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if args.node:
        return _run_node(args, argv)
    args.workers = 2 if args.workers is None else args.workers
    args.ps = 0 if args.ps is None else args.ps
    if args.workers < 1:
        raise UsageError(f"--workers must be at least 1 (got {args.workers})")
    if args.hang_timeout is not None and args.hang_timeout <= 0:
        raise UsageError(f"--hang-timeout must be positive (got {args.hang_timeout})")
    _check_restart_args(args)
    _check_command(argv)
    out = os.path.abspath(args.out or _default_out())
    notify = notify_config(args, out)
    human = sys.stderr if args.json else sys.stdout
    lock = _check_out(out, human)
    cluster = build_local_cluster(args.workers, args.ps, args.chief)
    if os.environ.get("TF_CONFIG"):
        print("[distdoctor] TF_CONFIG in the environment is replaced by the job's own for each task",
              file=sys.stderr, flush=True)
    live = None
    if not args.json and not args.no_live:
        try:
            from ..report.live import live_enabled
            if live_enabled(human, os.environ):
                from .liveadapter import LiveAdapter
                live = LiveAdapter(human)
        except ImportError:
            live = None
    cfg = RunConfig(argv=argv, cluster=cluster, out_dir=out, hang_timeout=args.hang_timeout, on_hang=args.on_hang,
                    grace=args.grace, failure_grace=args.failure_grace, exit_grace=args.exit_grace, stream=human,
                    live=live,
                    notify=notify, restarts=args.restarts, restart_delay=args.restart_delay,
                    restart_delay_max=args.restart_delay_max)
    print(f"[distdoctor] {len(cluster.tasks)} tasks ({', '.join(cluster.tasks)}); bundle: {safe_text(out)}", file=human, flush=True)
    sup = Supervisor(cfg)
    try:
        if live is not None:
            with live:
                diag, _job = sup.run()
        else:
            diag, _job = sup.run()
        if not args.no_report:
            try:
                from ..report.command import write_report
                write_report(out)
            except Exception as exc:  # the report is a convenience; the diagnosis is written already
                print(f"[distdoctor] could not write report.html: {safe_text(str(exc))}", file=sys.stderr)
    finally:
        lock.release()
    if args.json:
        print(json.dumps(diag.to_json(), indent=2))
    else:
        print_human(diag, out, human)
    if args.exit_code_policy == "on":
        return policy_exit(diag, None, human)
    return diag.exit_code


def _check_restart_args(args: argparse.Namespace) -> None:
    if args.restarts < 0:
        raise UsageError(f"--restarts must be 0 or more (got {args.restarts})")
    if not args.restart_delay >= 0:
        raise UsageError(f"--restart-delay must be 0 or more seconds (got {args.restart_delay})")
    if not args.restart_delay_max >= args.restart_delay:
        raise UsageError(f"--restart-delay-max ({args.restart_delay_max}) must be at least --restart-delay "
                         f"({args.restart_delay})")


def _run_node(args: argparse.Namespace, argv: list[str]) -> int:
    from .nodecommand import run_node
    if args.workers is not None or args.ps is not None or args.chief:
        raise UsageError("--node takes the cluster from TF_CONFIG or the scheduler (Slurm, Open MPI): drop --workers, "
                         "--ps and --chief")
    _check_restart_args(args)
    for name in ("mesh_timeout", "peer_timeout", "final_wait"):
        if not getattr(args, name) > 0:
            raise UsageError(f"--{name.replace('_', '-')} must be positive")
    if not 0 <= args.side_port <= 65535:
        raise UsageError(f"--side-port {args.side_port} is not a port")
    if not 1 <= args.port_base <= 65535:
        raise UsageError(f"--port-base {args.port_base} is not a port")
    if args.hang_timeout is not None and args.hang_timeout <= 0:
        raise UsageError(f"--hang-timeout must be positive (got {args.hang_timeout})")
    _check_command(argv)
    label = task_label(os.environ)
    out = os.path.abspath(args.out or _default_out(suffix=f"-{label}" if label else ""))
    human = sys.stderr if args.json else sys.stdout
    lock = _check_out(out, human)
    try:
        return run_node(args, argv, out, human)
    finally:
        lock.release()


