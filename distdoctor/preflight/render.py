"""Terminal rendering of a check: findings table, fingerprint line, whole-mesh table.

One report, rendered by rich into whatever console it is given (tests pass a
``Console(file=StringIO(), width=...)``). Nothing here decides anything.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..model import Severity
from .meshmodel import MeshResult, Outcome

if TYPE_CHECKING:
    from .check import CheckReport

__all__ = ["render_check", "render_findings", "render_mesh", "MATRIX_MAX_TASKS"]

#: Above this many tasks the mesh is shown as failing pairs plus a summary, not a matrix.
MATRIX_MAX_TASKS = 10
_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_SHORT = {Outcome.OK: "ok", Outcome.REFUSED: "refused", Outcome.DROPPED: "dropped", Outcome.UNREACHABLE: "no route",
          Outcome.UNRESOLVED: "no DNS", Outcome.WRONG_TOKEN: "token!", Outcome.FOREIGN: "foreign",
          Outcome.WRONG_TASK: "other task", Outcome.ERROR: "error"}


def render_findings(findings, console: Console) -> None:
    if not findings:
        console.print("[green]No problems found.[/green]")
        return
    table = Table(show_lines=False, header_style="bold", expand=False)
    for name, ratio in (("task", None), ("code", None), ("severity", None), ("message", 3), ("fix", 2)):
        table.add_column(name, ratio=ratio, overflow="fold")
    for f in findings:
        table.add_row(f.culprit or ", ".join(f.candidates) or "-", f.code,
                      Text(f.severity.value, style=_STYLE[f.severity]), f.summary, f.remedy)
    console.print(table)


def _fingerprint_line(fp) -> str:
    build = dict(fp.tf_build)
    tf = "not installed"
    if fp.tensorflow:
        dist = ", ".join(k for k, _ in fp.tensorflow_distributions)
        cuda = f", CUDA {build['cuda_version']}, cuDNN {build.get('cudnn_version', '?')}" if build.get("cuda_version") else ""
        tf = f"{fp.tensorflow} ({dist}{cuda})"
    extra = f" · NVIDIA driver {fp.nvidia_driver}" if fp.nvidia_driver else ""
    extra += f" · NCCL {fp.nccl}" if fp.nccl else ""
    return f"Python {fp.python} · TensorFlow {tf} · Keras: {fp.keras_flavour}{extra} · host {fp.hostname}"


def render_mesh(result: MeshResult, console: Console) -> None:
    probes = result.probes
    tasks = sorted({r.task for r in result.reports} | {p.dst for p in probes})
    ok = [p for p in probes if p.outcome is Outcome.OK]
    rtts = sorted(p.rtt_ms for p in ok if p.rtt_ms is not None)
    med = f", median RTT {rtts[len(rtts) // 2]:.2f} ms" if rtts else ""
    took = result.verdict_at - result.started_at
    console.print(f"[bold]Mesh[/bold] seen from {result.task}: {len(result.reports)} of {len(tasks)} tasks reported, "
                  f"{len(ok)}/{len(probes)} directed pairs ok{med}; verdict after {took:.2f} s"
                  + ("" if result.complete else f" [yellow](incomplete: no report from {', '.join(result.missing)})[/]"))
    if len(tasks) <= MATRIX_MAX_TASKS:
        table = Table(title="probe from (row) to (column)", header_style="bold")
        table.add_column("")
        for t in tasks:
            table.add_column(t, justify="center")
        cell = {(p.src, p.dst): p for p in probes}
        for src in tasks:
            row = []
            for dst in tasks:
                p = cell.get((src, dst))
                if src == dst:
                    row.append(Text("·", style="dim"))
                elif p is None:
                    row.append(Text("?", style="dim"))
                elif p.outcome is Outcome.OK:
                    text = f"{p.rtt_ms:.1f} ms" if p.rtt_ms is not None else "ok"
                    if p.mbps:
                        text += f" {p.mbps / 1000:.1f} Gb/s" if p.mbps >= 1000 else f" {p.mbps:.0f} Mb/s"
                    row.append(Text(text, style="green"))
                else:
                    row.append(Text(_SHORT[p.outcome], style="bold red"))
            table.add_row(src, *row)
        console.print(table)
    else:
        bad = [p for p in probes if p.outcome is not Outcome.OK]
        if bad:
            table = Table(title="failed pairs", header_style="bold")
            for col in ("from", "to", "address", "outcome", "detail"):
                table.add_column(col, overflow="fold")
            for p in bad[:200]:
                table.add_row(p.src, p.dst, p.address, _SHORT[p.outcome], p.detail)
            console.print(table)


def render_check(report: "CheckReport", console: Console) -> None:
    spec = report.spec
    if spec is not None:
        who = str(spec.task) if spec.task else "whole cluster"
        n = len(spec.tasks())
        console.print(f"[bold]distdoctor check[/bold] · {who} · {spec.origin} · {n} task{'s' if n != 1 else ''}: "
                      + ", ".join(str(t) for t, _ in spec.tasks()[:8]) + (" ..." if n > 8 else ""))
    if report.fingerprint is not None:
        console.print(_fingerprint_line(report.fingerprint), style="dim")
    if report.mesh is not None:
        render_mesh(report.mesh, console)
    render_findings(report.findings, console)
    for note in report.notes:
        console.print(f"[dim]note: {note}[/dim]")
    counts = {s: sum(f.severity is s for f in report.findings) for s in Severity}
    style = "bold red" if counts[Severity.ERROR] else "bold green"
    console.print(Text(f"{report.status}: {counts[Severity.ERROR]} error(s), {counts[Severity.WARNING]} warning(s), "
                       f"{counts[Severity.INFO]} note(s)", style=style))
