"""Event -> wire format. Pure: no I/O, no clock.

* :func:`to_json`: the webhook body (``--alert URL``), one JSON object per event;
* :func:`to_slack`: a chat-ready ``{"text": ...}`` body (``--alert-format slack``;
  Slack's and Mattermost's incoming webhooks take it as it is);
* :func:`to_alertmanager`: the list of alerts Alertmanager's v2 API
  (``POST /api/v2/alerts``) takes: labels, annotations, startsAt, endsAt when resolved.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import replace as _replace

from ..safety.printable import slack_escape
from .events import AlertEvent

__all__ = ["iso8601", "to_json", "to_slack", "to_alertmanager", "alert_name"]

_TITLES = {
    "hang_suspected": "hang suspected",
    "hang_cleared": "hang cleared",
    "hang_declared": "HANG",
    "task_failed": "task failed",
    "restart": "job restarted",
    "gave_up": "gave up restarting",
    "threshold": "threshold crossed",
    "verdict": "verdict",
}


def iso8601(ts: float) -> str:
    """UTC with milliseconds and an explicit zone, e.g. ``2026-11-23T14:50:00.123+00:00``."""
    return _dt.datetime.fromtimestamp(ts, tz=_dt.timezone.utc).isoformat(timespec="milliseconds")


def to_json(ev: AlertEvent) -> dict:
    return {
        "event": ev.event,
        "job": ev.job,
        "status": ev.status,
        "severity": ev.severity,
        "category": ev.category,
        "code": ev.code,
        "culprit": ev.culprit,
        "summary": ev.summary,
        "first_failure": ev.first_failure,
        "at": iso8601(ev.at),
        "since": iso8601(ev.since) if ev.since is not None else None,
        "resolved": ev.resolved,
        "bundle": ev.bundle,
        "report": ev.report,
        "details": dict(ev.details),
    }


def to_slack(ev: AlertEvent) -> dict:
    """Chat text; every value from the job escaped (``&``, ``<``, ``>``): a task's ``<!channel>`` stays text."""
    esc = slack_escape
    title = _TITLES[ev.event] if ev.event != "verdict" else f"job {ev.status.upper()}"
    if ev.resolved:
        title += " (resolved)"
    head = f"*distdoctor* `{esc(ev.job)}`: *{esc(title)}*"
    if ev.culprit:
        head += f" — culprit `{esc(ev.culprit)}`"
    if ev.category:
        head += f" ({esc(ev.category)}" + (f", {esc(ev.code)})" if ev.code else ")")
    lines = [head]
    if ev.summary:
        lines.append(esc(ev.summary))
    if ev.first_failure:
        lines.append(f"> {esc(ev.first_failure)}")
    where = [f"{name}: `{esc(path)}`" for name, path in (("bundle", ev.bundle), ("report", ev.report)) if path]
    if where:
        lines.append(" · ".join(where))
    lines.append(f"_{iso8601(ev.at)}_")
    return {"text": "\n".join(lines)}


def alert_name(event: str) -> str:
    """``hang_declared`` -> ``DistdoctorHangDeclared``."""
    return "Distdoctor" + "".join(part.capitalize() for part in event.split("_"))


def to_alertmanager(ev: AlertEvent) -> list[dict]:
    if ev.event == "hang_cleared":
        # Alertmanager has no "cleared" alert: it is the suspicion's alert, resolved (same labels, endsAt)
        ev = _replace(ev, event="hang_suspected", severity="warning", resolved=True)
    labels = {"alertname": alert_name(ev.event), "job": ev.job, "severity": ev.severity, "event": ev.event}
    for name, value in (("culprit", ev.culprit), ("category", ev.category), ("code", ev.code),
                        ("threshold", ev.detail("threshold"))):
        if value:
            labels[name] = value
    if ev.event == "verdict":
        labels["status"] = ev.status
    annotations = {"summary": ev.summary or _TITLES[ev.event]}
    for name, value in (("first_failure", ev.first_failure), ("bundle", ev.bundle), ("report", ev.report)):
        if value:
            annotations[name] = value
    alert = {"labels": labels, "annotations": annotations,
             "startsAt": iso8601(ev.since if ev.since is not None else ev.at)}
    if ev.resolved:
        alert["endsAt"] = iso8601(max(ev.at, ev.since or ev.at))
    return [alert]
