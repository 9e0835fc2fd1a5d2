"""The command-line options of alerts, metrics, thresholds and TensorBoard (``run`` and ``run --node``)."""
from __future__ import annotations

import argparse
import os
import urllib.parse

from .events import NotifyUsageError
from .hub import NotifyConfig
from .thresholds import parse_thresholds

__all__ = ["add_arguments", "config_from_args"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("alerts and monitoring (docs/alerts.md)")
    g.add_argument("--alert", action="append", default=[], metavar="URL",
                   help="POST one JSON object per event (hang_suspected, hang_declared, task_failed, restart, "
                        "gave_up, threshold, verdict) to URL; repeatable")
    g.add_argument("--alert-format", choices=["json", "slack"], default="json",
                   help="body of --alert posts: the JSON event (default) or a chat-ready {\"text\": ...}")
    g.add_argument("--alertmanager", action="append", default=[], metavar="URL",
                   help="post the same events as alerts to Alertmanager's v2 API at URL (e.g. http://am:9093); repeatable")
    g.add_argument("--alert-cmd", action="append", default=[], metavar="CMD",
                   help="run `sh -c CMD` per event with the JSON on stdin ($DISTDOCTOR_EVENT set); repeatable")
    g.add_argument("--metrics-port", type=int, default=None, metavar="PORT",
                   help="serve Prometheus metrics (distdoctor_*) on PORT at /metrics (0: any free port)")
    g.add_argument("--metrics-addr", default="127.0.0.1", metavar="ADDR",
                   help="address the metrics endpoint binds (default 127.0.0.1, this host only; 0.0.0.0 for a "
                        "Prometheus on another host)")
    g.add_argument("--threshold", action="append", default=[], metavar="SPEC",
                   help="resource thresholds, e.g. mem=90%%,gpu_mem=95%%,disk_free=5GiB,step_time=3x,mem_eta=120s "
                        "(NAME=off disables one; these values but disk_free=1GiB and step_time=5x are the defaults)")
    g.add_argument("--tensorboard", metavar="DIR",
                   help="write per-task step time, RSS and CPU, and the verdict, as a TensorBoard run DIR/distdoctor")
    g.add_argument("--job-name", metavar="NAME",
                   help="the job's name in alerts and metrics (default: the bundle folder's name)")


def _url(option: str, url: str) -> str:
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("http", "https") or not u.netloc:
        raise NotifyUsageError(f"{option} {url}: expected an http:// or https:// URL")
    return url


def config_from_args(args: argparse.Namespace, out: str) -> NotifyConfig:
    """Validate the options (one-line NotifyUsageError on bad input) and build the notifier's config."""
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65535:
        raise NotifyUsageError(f"--metrics-port {args.metrics_port} is not a port")
    for cmd in args.alert_cmd:
        if not cmd.strip():
            raise NotifyUsageError("--alert-cmd needs a command")
    tb = os.path.abspath(args.tensorboard) if args.tensorboard else None
    return NotifyConfig(
        job=args.job_name or os.path.basename(os.path.normpath(out)),
        alerts=tuple(_url("--alert", u) for u in args.alert), alert_format=args.alert_format,
        alertmanagers=tuple(_url("--alertmanager", u) for u in args.alertmanager),
        alert_cmds=tuple(args.alert_cmd), metrics_port=args.metrics_port, metrics_addr=args.metrics_addr,
        thresholds=parse_thresholds(args.threshold), tensorboard=tb)
