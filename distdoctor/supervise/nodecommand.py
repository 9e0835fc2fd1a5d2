"""``distdoctor run --node``: preflight, side link, supervision, the cluster verdict.

The steps of one node supervisor, in order (see :mod:`.node` for the roles):

1. detect the scheduler (:mod:`distdoctor.cluster.schedulers`), read the cluster and this task
   from ``TF_CONFIG`` (or the scheduler's variables: Slurm, Open MPI) and the shared token from
   ``DISTDOCTOR_TOKEN``;
2. the collector binds its side-link port (``--side-port``, default any) on its own address from the
   cluster (loopback stays loopback); a token with less than 128 bits is refused before anything binds;
3. the preflight: static rules, this host, and the mesh check on the task's own
   port, in which the collector advertises its side-link port; errors stop here
   (exit 1) with a ``diagnosis.json`` naming them, unless ``--preflight warn``;
4. the task runs under :func:`~.node.node_supervisor` (the local supervisor with a node's role);
5. the collector writes the cluster-wide diagnosis and sends it to every node;
   a node writes it next to its own (``node-diagnosis.json``) and prints it;
6. the verdict goes where the scheduler shows a job's outcome (:mod:`.outcome`): Slurm's job
   Comment (the collector), each pod's termination message, rank 0's last line under mpirun.
   Where the scheduler ends the job as soon as one task exits non-zero (``mpirun``), a node
   stays until the collector has finished, so that the collector's verdict is not cut short.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time

from ..errors import UsageError
from ..safety import safe_text, token_problem

__all__ = ["run_node", "node_exit_status", "check_token"]


def node_exit_status(rc: int | None) -> int:
    """What the node supervisor exits with: its task's status, as a shell would report it."""
    from .exitcodes import task_exit_status
    return task_exit_status(rc)


def check_token(environ) -> str:
    token = environ.get("DISTDOCTOR_TOKEN", "")
    if not token:
        raise UsageError("run --node needs the job's shared secret in DISTDOCTOR_TOKEN (the same value on every "
                         "task, e.g. from a Kubernetes Secret or `export DISTDOCTOR_TOKEN=$(openssl rand -hex 16)` "
                         "before sbatch)")
    problem = token_problem(token)
    if problem:
        raise UsageError(problem)
    return token


def _spec_and_doc(args, environ):
    from ..preflight.rules import check_document
    from ..cluster.spec import load_document
    doc = load_document(tf_config=None, cluster_file=None, task=None, environ=environ,
                        port_base=args.port_base)
    static = check_document(doc, "auto")
    if static.blocking:
        f = static.blocking[0]
        raise UsageError(f"{f.summary} ({f.code}); fix: {f.remedy}")
    spec = static.spec
    if spec is None or spec.task is None:
        raise UsageError("run --node needs a cluster and this task's place in it: TF_CONFIG with \"cluster\" and "
                         "\"task\", a Slurm step or mpirun")
    return doc, spec


def _preflight_diagnosis(report, task: str):
    """The preflight's findings as a diagnosis: the task was not started."""
    from ..model import Diagnosis, Severity, Status
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    return Diagnosis(status=Status.FAILED, root_cause=errors[0] if errors else None, findings=tuple(report.findings),
                     detected_at=time.time(), command="run",
                     notes=(f"{task} was not started: the preflight check found errors (see check.json; "
                            "--preflight warn starts the task anyway)",))


def run_node(args: argparse.Namespace, argv: list[str], out: str, human) -> int:
    from ..model import Diagnosis, Severity
    from ..preflight.check import CheckOptions, run_check
    from ..preflight.rules import infer_strategy
    from .node import NodeCluster, collector_of, node_supervisor
    from .sidelink import LinkClient, LinkHub
    from .bundle import write_json
    from .supervisor import RunConfig

    from ..cluster.schedulers import detect
    from .verdictout import notify_config
    environ = os.environ
    scheduler = detect(environ)
    sink = scheduler.outcome_sink(environ) if scheduler is not None else None
    notify = notify_config(args, out)  # validated on every node; only the collector sends
    token = check_token(environ)
    doc, spec = _spec_and_doc(args, environ)
    me = str(spec.task)
    tasks = [str(t) for t, _ in spec.tasks()]
    collector = collector_of(tasks)
    strategy = "parameter_server" if infer_strategy(spec, "auto") == "ps" else "multi_worker_mirrored"
    # Slurm and mpirun give no TF_CONFIG: hand the task the one built from their variables
    tf_config = None if "TF_CONFIG" in environ else json.dumps(spec.to_tf_config())
    say = (lambda text: print(f"[distdoctor {me}] {safe_text(text)}", file=human, flush=True))

    def show(diag) -> None:
        from .outcome import show_outcome
        said = show_outcome(sink, diag, collector=me == collector, stream=human)
        if said:
            say(said)

    hub = None
    side_port = None
    if me == collector:
        from ..preflight.gate import task_hosts
        # on the collector's own address (loopback stays loopback); only this job's tasks, from their own hosts
        hub = LinkHub(token, me, port=args.side_port, host=_collector_address(None, spec, collector)[0],
                      hosts=task_hosts(spec))  # nodes may link before the supervisor is ready: kept
        try:
            side_port = hub.start()
        except OSError as exc:
            raise UsageError(f"cannot bind the side-link port {args.side_port}: {exc.strerror or exc}; "
                             "choose another --side-port") from None
    try:
        under = f" under {scheduler.title}" if scheduler is not None else ""
        say(f"{len(tasks)} tasks{under}; collector {collector}; preflight mesh check (up to {args.mesh_timeout:.0f} s)")
        opt = CheckOptions(mesh=True, timeout=args.mesh_timeout, token=token, argv=tuple(argv), side_port=side_port,
                           checkpoint_dir=out)
        report = run_check(doc, opt, environ)
        write_json(os.path.join(out, "check.json"), report.to_json())
        if report.errors:
            _print_check(report, human)
            wrong = [f for f in report.findings if f.code == "DD505" and f.severity is Severity.ERROR]
            if wrong:  # not a fault of the cluster: the job was started with two secrets
                write_json(os.path.join(out, "diagnosis.json"), _preflight_diagnosis(report, me).to_json())
                raise UsageError(f"token mismatch: {wrong[0].summary}; give every task the same DISTDOCTOR_TOKEN")
            if args.preflight == "enforce":
                diag = _preflight_diagnosis(report, me)
                write_json(os.path.join(out, "diagnosis.json"), diag.to_json())
                say(f"the preflight found {report.errors} error(s); {me} was not started (bundle: {out})")
                code = 1
                if args.exit_code_policy == "on":
                    from .verdictout import policy_exit
                    code = policy_exit(diag, None, human, prefix=f"[distdoctor {me}]")
                show(diag)
                return code
            say(f"the preflight found {report.errors} error(s); starting {me} anyway (--preflight warn)")
        client = None
        if me != collector:
            host, port = _collector_address(report, spec, collector)
            if port is None:
                say(f"no side-link port from the collector {collector} in the mesh reports; supervising alone")
            else:
                client = LinkClient(token, me, host, port, lambda _t, _m: None)
        cfg = RunConfig(argv=argv, cluster=NodeCluster(me, tuple(tasks), strategy, tf_config), out_dir=out,
                        hang_timeout=args.hang_timeout, on_hang=args.on_hang, grace=args.grace,
                        failure_grace=args.failure_grace, exit_grace=args.exit_grace, stream=human,
                        notify=notify if me == collector else None, restarts=args.restarts,
                        restart_delay=args.restart_delay, restart_delay_max=args.restart_delay_max)
        sup = node_supervisor(cfg, collector=collector, hub=hub, client=client, peer_timeout=args.peer_timeout,
                              expected=tuple(tasks), decision_wait=args.final_wait)
        if hub is not None:
            hub.attach(sup.role.on_peer)
        if client is not None:
            client.on_message = sup.role.on_command
            client.start()
        if me != collector and (notify.sends or notify.metrics_port is not None or notify.tensorboard):
            say(f"alerts, metrics and TensorBoard events come from the collector {collector}, not this node")
        say(f"starting {me}" + (f"; side link on port {side_port}" if hub else
                                f"; side link to {collector}" if client else ""))
        diag, _job = sup.run()
        own = sup.tracks[me].proc.returncode
        mine = diag.tasks.get(me)
        if own and diag.status.value == "succeeded" and mine is not None and mine.stopped_at_end:
            own = 0   # stopped by distdoctor at the end of a job that succeeded (its work was done): its normal end
        data = diag   # the whole run: the attempt ledger and goodput included
        linger = False
        if hub is not None:
            hub.broadcast({"t": "final", "diagnosis": data.to_json(), "bundle": out, "host": socket.gethostname()})
            hub.flush(3.0)
            _await_goodbyes(hub, tasks, me, 5.0)
        elif client is not None:
            final = sup.role.wait_final(args.final_wait)
            client.send({"t": "bye"})
            # a scheduler that ends the job when one task exits non-zero would cut the collector short
            linger = final is not None and scheduler is not None and scheduler.exit_codes.ends_job_on_failure
            if not linger:
                client.close()
            if final is not None:
                os.replace(os.path.join(out, "diagnosis.json"), os.path.join(out, "node-diagnosis.json"))
                data = Diagnosis.from_json(final["diagnosis"])
                write_json(os.path.join(out, "diagnosis.json"), data.to_json())
                say(f"the cluster diagnosis from {collector} ({final.get('host')}:{final.get('bundle')})")
            else:
                say(f"no cluster diagnosis from the collector {collector}; this one covers {me} alone")
        _write_report(args, out)
        if args.json:
            print(json.dumps(data.to_json(), indent=2))
        else:
            from .verdictout import print_human
            print_human(data, out, human)
        code = node_exit_status(own)
        if args.exit_code_policy == "on":
            from .verdictout import policy_exit
            code = policy_exit(data, own, human, prefix=f"[distdoctor {me}]")
        show(data)
        if client is not None and linger:
            _await_collector_done(client, LINGER_S)
            client.close()
        return code
    finally:
        if hub is not None:
            hub.close()


#: How long a node waits for the collector to finish, where the scheduler ends the job at the first non-zero exit.
LINGER_S = 30.0


def _await_collector_done(client, timeout: float) -> None:
    """Wait (bounded) until the collector closes the side link: it has written and shown its verdict."""
    deadline = time.time() + timeout
    while client.connected and time.time() < deadline:
        time.sleep(0.05)


def _collector_address(report, spec, collector: str) -> tuple[str | None, int | None]:
    from ..cluster.spec import AddressError, TaskRef, parse_address
    port = None
    if report is not None and report.mesh is not None:
        for r in report.mesh.reports:
            if r.info.task == collector and r.info.side_port:
                port = r.info.side_port
    try:
        host = parse_address(spec.address_of(TaskRef.parse(collector))).host
    except (AddressError, TypeError, ValueError):
        host = None
    return host, port if host else None


def _await_goodbyes(hub, tasks: list[str], me: str, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        peers = hub.peers()
        if all(t == me or t not in peers or peers[t].said_bye or not peers[t].connected for t in tasks):
            return
        time.sleep(0.1)


def _print_check(report, human) -> None:
    try:
        from rich.console import Console
        from ..preflight.render import render_check
        render_check(report, Console(file=human, width=120))
    except Exception:
        for f in report.findings:
            print(f"  {f.code} {f.severity.value} {f.culprit}: {safe_text(f.summary)}", file=human)


def _write_report(args, out: str) -> None:
    if args.no_report:
        return
    try:
        from ..report.command import write_report
        write_report(out)
    except Exception as exc:
        print(f"[distdoctor] could not write report.html: {safe_text(str(exc))}", file=sys.stderr)
