"""The self-contained HTML incident report.

One file, no network: inline CSS, SVG drawn by :mod:`.svg`, and a few lines
of inline JavaScript for hover tooltips and for jumping from a lane to its
task's stack and log. Everything from logs or JSON is escaped on the way in.

The DOM is kept small so that 256 tasks open in well under two seconds:
identical tasks share a lane, series are downsampled by the page model, and a
log tail is one ``<pre>`` text node rather than a node per line.

Stable hooks for tests and tools: ``#verdict[data-status][data-culprit]``,
``#timeline g.lane[data-task][data-members][data-outcome]``,
``#charts svg.chart[data-metric]``, ``#tasks details.task[data-task]``, and
``html[data-load-ms]`` (set by the page once loaded and laid out).
"""
from __future__ import annotations

import base64
import hashlib
from html import escape

from ..model import Finding, format_clock
from .fmt import clean_text, evidence_clock, fmt_bytes, fmt_duration
from .page import Lane, LanePhase, Mark, ReportPage, TaskOutcome
from .svg import PHASE_COLORS, chart_svg, lane_colors, mark_glyph, task_anchor, timeline_svg

__all__ = ["render_html"]


def _t(text: object, limit: int = 4000) -> str:
    return escape(clean_text(text, limit), quote=False)


def _a(text: object) -> str:
    return escape(clean_text(text), quote=True)


def csp() -> str:
    """The report's Content-Security-Policy: it loads nothing, sends nothing, and runs only its own script (by
    hash); inline styles, the <style> element and the SVG's style attributes, are all it needs besides."""
    digest = base64.b64encode(hashlib.sha256(_JS.encode()).digest()).decode()
    return (f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; base-uri 'none'; "
            "form-action 'none'")


def render_html(page: ReportPage) -> str:
    colors = lane_colors(page.lanes)
    v = page.verdict
    parts = [
        "<!doctype html>",
        f'<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{csp()}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_t(page.title)}</title><style>{_CSS}</style></head>",
        f'<body data-status="{_a(v.status)}">',
        _header(page),
        "<main>",
        _verdict(page),
        _findings(page.findings),
        _attempts(page),
        _timeline(page, colors),
        _charts(page, colors),
        _tasks(page, colors),
        _footer(page),
        "</main>",
        '<div id="tip" role="tooltip" hidden></div>',
        f"<script>{_JS}</script>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p)


def _header(page: ReportPage) -> str:
    span = page.t1 - page.t0
    n = len(page.tasks)
    what = "run bundle" if page.source == "bundle" else "logs"
    meta = (f"{n} task{'s' if n != 1 else ''} · {format_clock(page.t0)[:8]} – {format_clock(page.t1)[:8]} "
            f"({fmt_duration(span)}) · from {what} <code>{_t(page.path)}</code>")
    caveats = "".join(f"<li>{_t(c)}</li>" for c in page.caveats)
    return (f'<header class="top"><div class="brand">distdoctor <span>incident report</span></div>'
            f'<div class="meta">{meta}</div></header>'
            + (f'<ul class="caveats" id="caveats">{caveats}</ul>' if caveats else ""))


def _evidence(f: Finding) -> str:
    if not f.evidence:
        return ""
    culprits = set(f.culprits)
    items = []
    for e in f.evidence:
        consequence = e.role == "consequence"
        cls = "ev consequence" if consequence else "ev"
        tag = '<span class="ev-tag">consequence</span>' if consequence else ""
        who = "ev-task culprit" if e.task in culprits else "ev-task"
        clock = evidence_clock(e)     # no timestamp: where it was read, else nothing rather than dashes
        items.append(f'<li class="{cls}"><span class="{who}">{_t(e.task or "job")}</span>'
                     f'<span class="ev-clock">{_t(clock)}</span>{tag}<span class="ev-text">{_t(e.text)}</span></li>')
    return f'<ol class="evidence">{"".join(items)}</ol>'


def _readings(r: Finding) -> str:
    """The lines that weighed most in the learned reading of the cause, and the other readings with what settles
    each (``diagnose``'s verdicts)."""
    out = ""
    if r.weighed:
        rows = "".join(f'<li class="ev"><span class="ev-clock">-{w.weight * 100:.0f} pts</span>'
                       f'<span class="ev-task">{_t(w.where or w.task or "")}</span>'
                       f'<span class="ev-text">{_t(w.text)}</span></li>' for w in r.weighed)
        out += ('<h3 class="ev-head" id="weighed">Weighed most <span class="code">the learned probability of this '
                f'cause without the line</span></h3><ol class="evidence weighed">{rows}</ol>')
    if r.alternatives:
        rows = "".join(f'<li><code>{_t(a.category.value)}</code>{" on " + _t(a.culprit) if a.culprit else ""}: '
                       f'{_t(a.why)}{"; <em>settled by " + _t(a.settle) + "</em>" if a.settle else ""}</li>'
                       for a in r.alternatives)
        out += f'<h3 class="ev-head" id="alternatives">Also possible</h3><ul class="alternatives">{rows}</ul>'
    return out


def _verdict(page: ReportPage) -> str:
    v = page.verdict
    r = v.root
    culprit = ", ".join(v.culprits)
    facts = []
    if v.culprits:
        chips = "".join(f'<a class="chip culprit" href="#{task_anchor(c)}">{_t(c)}</a>' for c in v.culprits)
        label = "Culprit" if len(v.culprits) == 1 else "Candidates"
        facts.append(f"<div><dt>{label}</dt><dd>{chips}</dd></div>")
    if r is not None:
        facts.append(f'<div><dt>Category</dt><dd><code>{_t(r.category.value)}</code> <span class="code">{_t(r.code)}</span></dd></div>')
        if r.at is not None:
            facts.append(f"<div><dt>Began</dt><dd>{format_clock(r.at)}</dd></div>")
        if r.confidence:   # diagnose over logs it did not write: the band of the cause's calibrated probability
            p = f" ({r.probability:.0%})" if r.probability is not None else ""
            facts.append(f'<div><dt>Confidence</dt><dd class="confidence" data-confidence="{_a(r.confidence)}">'
                         f'{_t(r.confidence)}{p}</dd></div>')
    if v.detected_at is not None and page.source == "bundle":
        word = "Ended" if v.status == "succeeded" else "Detected"
        facts.append(f"<div><dt>{word}</dt><dd>{format_clock(v.detected_at)}</dd></div>")
    outcomes = _outcome_counts(page)
    if outcomes:
        facts.append(f"<div><dt>Tasks</dt><dd>{outcomes}</dd></div>")
    remedy = ""
    if r is not None and r.remedy:
        remedy = f'<div class="remedy"><h3>What to do</h3><p>{_t(r.remedy)}</p></div>'
    evidence = ""
    if r is not None and r.evidence:
        evidence = f'<h3 class="ev-head">Evidence</h3>{_evidence(r)}'
    if r is not None:
        evidence += _readings(r)
    if r is None and page.findings:   # finished, but something deserves a look: say so up here
        f = page.findings[0]
        more = f" (and {len(page.findings) - 1} more)" if len(page.findings) > 1 else ""
        remedy = (f'<p class="vsub sev-{_a(f.severity.value)}"><span class="sev">{_t(f.severity.value)}</span> {_t(f.summary)}'
                  f'{more} — see <a href="#findings">findings</a></p>') + remedy
    return (f'<section id="verdict" class="card verdict st-{_a(v.status)}" data-status="{_a(v.status)}" '
            f'data-culprit="{_a(culprit)}">'
            f'<div class="vhead"><span class="badge">{_t(v.title)}</span><h1>{_t(v.headline)}</h1></div>'
            f'<dl class="facts">{"".join(facts)}</dl>{remedy}{evidence}</section>')


def _outcome_counts(page: ReportPage) -> str:
    counts: dict[TaskOutcome, int] = {}
    for lane in page.lanes:
        counts[lane.outcome] = counts.get(lane.outcome, 0) + len(lane.members)
    words = {TaskOutcome.OK: "finished", TaskOutcome.FAILED: "failed", TaskOutcome.STOPPED: "stopped by distdoctor",
             TaskOutcome.RUNNING: "running", TaskOutcome.UNKNOWN: "unknown"}
    return " · ".join(f'<span class="oc oc-{o.value}">{n} {words[o]}</span>' for o, n in counts.items())


def _findings(findings: tuple[Finding, ...]) -> str:
    if not findings:
        return ""
    items = []
    for f in findings:
        who = f' <span class="chip">{_t(f.culprit)}</span>' if f.culprit else ""
        sev = f.severity.value
        items.append(f'<li class="finding sev-{_a(sev)}" data-code="{_a(f.code)}">'
                     f'<div class="f-head"><span class="sev">{_t(sev)}</span><span class="code">{_t(f.code)}</span>'
                     f'<code>{_t(f.category.value)}</code>{who}</div><p>{_t(f.summary)}</p>'
                     + (f'<p class="f-remedy">{_t(f.remedy)}</p>' if f.remedy else "")
                     + _evidence(f) + "</li>")
    return f'<section id="findings" class="card"><h2>Other findings</h2><ul class="findings">{"".join(items)}</ul></section>'


_BAND_COLOR = {"succeeded": "#2e7d32", "failed": "#c62828", "hung": "#f9a825"}


def _attempts(page: ReportPage) -> str:
    """One band per attempt on the run's time axis; the gaps between them are the backoffs."""
    bands = page.attempts
    if not bands:
        return ""
    t0, t1 = bands[0].start, max(b.end for b in bands)
    span = max(t1 - t0, 1e-6)
    cells, rows = [], []
    for b in bands:
        left, width = 100 * (b.start - t0) / span, max(0.5, 100 * (b.end - b.start) / span)
        tip = f"attempt {b.number}: {b.status}" + (f", {b.cause}" if b.cause else "") + f"; {b.decision}: {b.reason}"
        cells.append(f'<div class="attempt-band" data-attempt="{b.number}" data-status="{_a(b.status)}" title="{_a(tip)}" '
                     f'style="position:absolute;left:{left:.2f}%;width:{width:.2f}%;top:0;bottom:0;'
                     f'background:{_BAND_COLOR.get(b.status, "#757575")};color:#fff;font-size:12px;overflow:hidden;'
                     f'white-space:nowrap;padding:2px 4px;box-sizing:border-box">#{b.number} {_t(b.status)}</div>')
        wait = f" after {b.backoff_s:.1f} s" if b.decision == "restart" else ""
        rows.append(f"<tr><td>#{b.number}</td><td>{_t(b.status)}</td><td>{_t(b.cause or '-')}</td>"
                    f"<td>{_t(b.decision + wait)}</td><td>{_t(b.resumed)}</td><td>{_t(b.reason)}</td></tr>")
    sub = f" <small>{_t(page.goodput)}</small>" if page.goodput else ""
    return (f'<section id="attempts" class="card"><h2>Attempts{sub}</h2>'
            f'<div style="position:relative;height:22px;background:#eee;margin:6px 0">{"".join(cells)}</div>'
            '<table class="attempts"><tr><th>#</th><th>ended</th><th>root cause</th><th>decision</th>'
            f'<th>resumed at</th><th>reason</th></tr>{"".join(rows)}</table></section>')


_MARK_WORDS = ((Mark.START, "start"), (Mark.CONNECTED, "joined cluster"), (Mark.FIRST_STEP, "first step"),
               (Mark.EPOCH, "epoch"), (Mark.STALL, "stall suspected"), (Mark.HANG, "hang declared"),
               (Mark.FAULT, "fault"), (Mark.SYMPTOM, "peer symptom"), (Mark.SIGNAL, "signal from distdoctor"),
               (Mark.EXIT, "exit"))


def _legend() -> str:
    phases = "".join(f'<span class="lg"><i class="sw" style="background:{PHASE_COLORS[p]}"></i>{p.value}</span>'
                     for p in LanePhase)
    marks = "".join(f'<span class="lg"><svg viewBox="-8 -8 16 16" width="14" height="14" class="lgm">'
                    f'{mark_glyph(k, 0, 0, TaskOutcome.OK if k == Mark.EXIT else None)}</svg>{w}</span>'
                    for k, w in _MARK_WORDS)
    return f'<div class="legend">{phases}</div><div class="legend">{marks}</div>'


def _timeline(page: ReportPage, colors: dict[str, str]) -> str:
    groups = sum(1 for lane in page.lanes if lane.group)
    sub = f"{len(page.lanes)} lanes for {len(page.tasks)} tasks"
    if groups:
        sub += "; tasks that behaved identically share a lane"
    return (f'<section id="timeline" class="card"><h2>Timeline <small>{_t(sub)} · hover for details, '
            f'click a name for its stack and log</small></h2>{_legend()}{timeline_svg(page)}</section>')


def _charts(page: ReportPage, colors: dict[str, str]) -> str:
    keys = [lane for lane in page.lanes if any(not getattr(lane.metrics, m).empty for m in ("step_time", "rss", "cpu"))]
    shown = keys[:12]
    legend = "".join(f'<span class="lg"><i class="sw line-sw" style="background:{colors[lane.key]}"></i>'
                     f'{_t(lane.label)}</span>' for lane in shown)
    if len(keys) > len(shown):
        legend += f'<span class="lg muted">… {len(keys) - len(shown)} more in grey</span>'
    if any(lane.group for lane in keys):
        legend += '<span class="lg muted">groups: median line, min–max band</span>'
    body = "".join(chart_svg(page, m, colors) for m in ("step_time", "rss", "cpu"))
    return (f'<section id="charts" class="card"><h2>Step time, memory and CPU <small>same time axis as the timeline'
            f'</small></h2><div class="legend">{legend}</div>{body}</section>')


def _task_row(lane: Lane, colors: dict[str, str]) -> str:
    f = lane.facts
    doing = ", ".join(x for x in (f.where, f.in_call, f.location) if x)
    steps = "–" if f.steps is None else str(f.steps)
    last = format_clock(f.last_progress_at) if f.last_progress_at else "–"
    return (f'<tr class="{"culprit" if lane.culprit else ""}" data-task="{_a(lane.key)}">'
            f'<td><i class="sw line-sw" style="background:{colors.get(lane.key, "#94a3b8")}"></i>'
            f'<a href="#{task_anchor(lane.key)}">{_t(lane.label)}</a></td>'
            f'<td class="oc-{lane.outcome.value}">{_t(f.ending)}</td><td class="num">{steps}</td>'
            f'<td class="num">{fmt_bytes(f.peak_rss)}</td><td>{last}</td><td class="doing">{_t(doing or "–")}</td></tr>')


def _task_detail(lane: Lane) -> str:
    f = lane.facts
    marked = {m.line for m in lane.marks if m.kind in (Mark.FAULT, Mark.SYMPTOM) and m.line}
    lines = []
    for ln in f.tail:
        text = f"{ln.clock:<12} {clean_text(ln.text, 500)}" if ln.clock else clean_text(ln.text, 500)
        lines.append(f"<mark>{_t(text)}</mark>" if ln.text in marked else _t(text))
    shown = len(f.tail)
    more = f"last {shown} of {f.log_lines} lines" if f.log_lines > shown else f"{shown} lines"
    log = ("<pre class=\"log\">" + "\n".join(lines) + "</pre>") if lines else '<p class="muted">no log recorded</p>'
    stack = f'<pre class="stack">{_t(f.stack, 20000)}</pre>' if f.stack else '<p class="muted">no stack captured</p>'
    who = ""
    if lane.group:
        who = (f'<p class="muted">{len(lane.members)} tasks behaved identically; showing {_t(f.task)}. '
               f'Members: {_t(", ".join(lane.members), 2000)}</p>')
    head = (f'<span class="t-name">{_t(lane.label)}</span>' + (' <span class="chip culprit">culprit</span>' if lane.culprit else "")
            + f' <span class="t-end oc-{lane.outcome.value}">{_t(f.ending)}</span>')
    path = f" — <code>{_t(f.log_path)}</code>" if f.log_path else ""
    return (f'<details class="task{" culprit" if lane.culprit else ""}" id="{task_anchor(lane.key)}" '
            f'data-task="{_a(lane.key)}"{" open" if lane.culprit else ""}><summary>{head}</summary>{who}'
            f'<h4>Stack</h4>{stack}<h4>Log ({more}){path}</h4>{log}</details>')


def _tasks(page: ReportPage, colors: dict[str, str]) -> str:
    rows = "".join(_task_row(lane, colors) for lane in page.lanes)
    details = "".join(_task_detail(lane) for lane in page.lanes)
    return (f'<section id="tasks" class="card"><h2>Tasks <small>culprit first; stacks and log tails</small></h2>'
            f'<table class="tasks"><thead><tr><th>task</th><th>ended</th><th>steps</th><th>peak RSS</th>'
            f'<th>last progress</th><th>last seen doing</th></tr></thead><tbody>{rows}</tbody></table>'
            f'<div class="details">{details}</div></section>')


def _footer(page: ReportPage) -> str:
    notes = "".join(f"<li>{_t(n)}</li>" for n in page.notes)
    return (f'<footer>{"<ul>" + notes + "</ul>" if notes else ""}'
            f"<p>Written by distdoctor. Self-contained: this file needs no network.</p></footer>")


_CSS = """
:root{--fg:#0f172a;--muted:#64748b;--line:#e2e8f0;--bg:#f1f5f9;--card:#fff;--red:#dc2626;--amber:#d97706;--green:#16a34a}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
code,pre,.ev-clock,.ev-task{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace}
header.top{display:flex;align-items:baseline;gap:18px;flex-wrap:wrap;padding:14px 28px;background:#0f172a;color:#e2e8f0}
.brand{font-weight:700;font-size:16px;letter-spacing:.2px}.brand span{font-weight:400;color:#94a3b8}
.meta{color:#94a3b8;font-size:13px}.meta code{color:#cbd5e1;font-size:12px}
main{max-width:1180px;margin:0 auto;padding:18px 20px 40px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:18px 22px;margin:0 0 18px;box-shadow:0 1px 2px rgba(15,23,42,.04)}
h1{font-size:21px;line-height:1.35;margin:0;font-weight:650}
h2{font-size:16px;margin:0 0 10px}h2 small{font-weight:400;color:var(--muted);font-size:12.5px;margin-left:8px}
h3{font-size:13px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:16px 0 6px}
h4{font-size:12.5px;color:var(--muted);margin:12px 0 4px;font-weight:600}
.caveats{max-width:1180px;margin:12px auto 0;padding:8px 40px;color:#92400e;font-size:13px}
.verdict{border-left:8px solid var(--muted);padding-top:20px}
.verdict.st-hung{border-left-color:#f59e0b;background:linear-gradient(90deg,#fffbeb,#fff 40%)}
.verdict.st-failed{border-left-color:#ef4444;background:linear-gradient(90deg,#fef2f2,#fff 40%)}
.verdict.st-succeeded{border-left-color:#22c55e;background:linear-gradient(90deg,#f0fdf4,#fff 40%)}
.vhead{display:flex;gap:16px;align-items:flex-start}
.badge{flex:none;display:inline-block;padding:5px 12px;border-radius:6px;font-weight:800;font-size:14px;letter-spacing:.08em;text-transform:uppercase;color:#fff;background:var(--muted);margin-top:1px}
.st-hung .badge{background:#d97706}.st-failed .badge{background:#dc2626}.st-succeeded .badge{background:#16a34a}
dl.facts{display:flex;flex-wrap:wrap;gap:8px 34px;margin:16px 0 0}
dl.facts dt{font-size:11.5px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted)}
dl.facts dd{margin:2px 0 0;font-weight:500}
.chip{display:inline-block;padding:1px 8px;border-radius:999px;background:#e2e8f0;color:#0f172a;font-size:12.5px;text-decoration:none;font-family:ui-monospace,monospace}
.chip.culprit{background:#fee2e2;color:#b91c1c;font-weight:700;border:1px solid #fecaca}
.code{color:var(--muted);font-size:12px;margin-left:4px}
.vsub{margin:14px 0 0;font-size:14px}.vsub a{color:#1d4ed8}
.remedy{margin:16px 0 0;padding:10px 14px;border-radius:8px;background:#eff6ff;border:1px solid #dbeafe}
.remedy h3{margin:0 0 4px;color:#1d4ed8}.remedy p{margin:0}
ol.evidence{list-style:none;margin:0;padding:0;border:1px solid var(--line);border-radius:8px;overflow:hidden}
.ev{display:flex;gap:10px;padding:5px 10px;font-size:13px;border-top:1px solid var(--line);background:#fff}
.ev:first-child{border-top:0}
.ev-task{flex:none;font-weight:700;color:#334155;min-width:78px}.ev-task.culprit{color:#b91c1c}
.ev-clock{flex:none;color:var(--muted);min-width:92px}
.ev-text{white-space:pre-wrap;word-break:break-word}
.ev.consequence{background:#f8fafc;color:#475569}.ev.consequence .ev-task{color:#64748b}
.ev-tag{flex:none;font-size:11px;border:1px solid #cbd5e1;border-radius:4px;padding:0 5px;color:var(--muted);height:18px}
ul.alternatives{margin:0;padding-left:20px;font-size:13.5px}ul.alternatives li{margin:3px 0}
h3 .code{text-transform:none;letter-spacing:0;font-weight:400}
ul.findings{list-style:none;margin:0;padding:0}
.finding{padding:8px 0;border-top:1px solid var(--line)}.finding:first-child{border-top:0}
.finding p{margin:4px 0}.f-head{display:flex;gap:8px;align-items:center}
.sev{font-size:11px;text-transform:uppercase;font-weight:700;color:var(--muted)}
.sev-error .sev{color:var(--red)}.sev-warning .sev{color:var(--amber)}
.f-remedy{color:#1d4ed8;font-size:13px}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px;color:#334155;margin:0 0 6px}
.lg{display:inline-flex;align-items:center;gap:5px}.lg.muted{color:var(--muted)}
.sw{display:inline-block;width:14px;height:10px;border-radius:2px}.line-sw{height:4px;width:16px;border-radius:2px;margin-right:6px;vertical-align:middle}
svg{display:block;overflow:visible}svg text{font-family:inherit}
.timeline{margin-top:8px}
.lane-bg{fill:#fff}.lane-bg.alt{fill:#f8fafc}.lane-bg.culprit-bg{fill:#fef2f2}
.lane-label{font-size:13px;font-weight:600;fill:#0f172a;cursor:pointer;font-family:ui-monospace,monospace}
.lane.culprit .lane-label{fill:#b91c1c}.lane-sub{font-size:10.5px;fill:#64748b}.culprit-tag{fill:#dc2626;font-weight:700;text-transform:uppercase;letter-spacing:.05em}
.lane-end{font-size:11.5px;font-weight:600}
.axis{stroke:#94a3b8;stroke-width:1}.grid{stroke:#e2e8f0;stroke-width:1}.tick{font-size:11px;fill:#64748b}
.span{stroke:none}.span:hover{stroke:#0f172a;stroke-width:1}
.mark{cursor:default}.mark:hover{filter:drop-shadow(0 0 2px #0f172a)}
.spread{stroke:#64748b;stroke-width:2;stroke-linecap:round;opacity:.45}
.g-start{stroke:#475569;stroke-width:2}.g-epoch{stroke:#166534;stroke-width:1.5;opacity:.7}
.g-connected{fill:#2563eb;stroke:#fff;stroke-width:1.5}.g-first{fill:#16a34a;stroke:#fff;stroke-width:1.2}
.g-stall{fill:#f59e0b;stroke:#fff;stroke-width:1.5}.g-hang{fill:#b91c1c;stroke:#fff;stroke-width:1.5}
.g-fault{fill:#dc2626;stroke:#fff;stroke-width:1.5}.g-fault-x{stroke:#fff;stroke-width:1.8}
.g-symptom{fill:#f97316;stroke:#fff;stroke-width:1}.g-warning{fill:#eab308;stroke:#fff}
.g-signal{fill:#7c3aed;stroke:#fff}.g-exit{fill:#475569;stroke:#fff;stroke-width:1.5}
.g-exit-ok{fill:#16a34a;stroke:#fff;stroke-width:1.5}.g-exit-failed{fill:#991b1b;stroke:#fff;stroke-width:1.5}
.g-other{fill:#64748b}
.jm{stroke-width:1.5;stroke-dasharray:5 4}.jm-attempt{stroke:#475569;stroke-dasharray:none}.jm-stall{stroke:#d97706}.jm-hang{stroke:#b91c1c}.jm-cause{stroke:#dc2626;stroke-dasharray:2 3}
.jm-label{font-size:11.5px;font-weight:600}text.jm-stall{fill:#b45309;stroke:none}text.jm-attempt{fill:#334155;stroke:none}text.jm-hang,text.jm-cause{fill:#b91c1c;stroke:none}
.chart{margin-top:10px}.chart-title{font-size:13px;font-weight:650;fill:#0f172a}.chart-sub{font-size:11px;fill:#64748b}
.line{fill:none;stroke-width:1.4;opacity:.85;stroke-linejoin:round}.culprit-line{stroke-width:2.6;opacity:1}
.line:hover{stroke-width:3;opacity:1}.band{opacity:.13;stroke:none}.empty{font-size:13px;fill:#94a3b8}
table.tasks{border-collapse:collapse;width:100%;font-size:13px;margin-bottom:12px}
.tasks th{text-align:left;font-size:11.5px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);border-bottom:1px solid var(--line);padding:4px 8px}
.tasks td{padding:4px 8px;border-bottom:1px solid #f1f5f9;vertical-align:top}.tasks td:first-child{white-space:nowrap}.tasks td.num{text-align:right;font-variant-numeric:tabular-nums}
.tasks tr.culprit td{background:#fef2f2}.tasks a{color:inherit;font-family:ui-monospace,monospace}
.doing{color:#475569;font-size:12.5px}
.oc-ok{color:#15803d}.oc-failed{color:#b91c1c;font-weight:600}.oc-stopped{color:#475569}.oc-running{color:#1d4ed8}
details.task{border:1px solid var(--line);border-radius:8px;margin:8px 0;padding:0 12px}
details.task.culprit{border-color:#fca5a5}
details.task>summary{cursor:pointer;padding:8px 0;font-size:13.5px}
.t-name{font-family:ui-monospace,monospace;font-weight:650}.t-end{font-size:12.5px;margin-left:6px}
pre{margin:0 0 12px;padding:10px 12px;background:#0f172a;color:#e2e8f0;border-radius:6px;font-size:12px;line-height:1.45;overflow:auto;max-height:420px;white-space:pre}
pre.stack{background:#1e293b}
pre mark{background:#7f1d1d;color:#fecaca}
.muted{color:var(--muted)}
footer{color:var(--muted);font-size:12px;padding:4px 4px}footer ul{margin:0;padding-left:18px}
#tip{position:fixed;z-index:10;max-width:560px;padding:7px 10px;border-radius:6px;background:#0f172a;color:#f8fafc;font-size:12px;line-height:1.4;white-space:pre-wrap;word-break:break-word;pointer-events:none;box-shadow:0 4px 16px rgba(0,0,0,.25)}
@media print{#tip{display:none}pre{max-height:none}}
"""

_JS = """
(function(){
var tip=document.getElementById('tip');
document.addEventListener('mouseover',function(e){
  var el=e.target.closest&&e.target.closest('[data-tip]');
  if(!el){tip.hidden=true;return;}
  tip.textContent=el.getAttribute('data-tip');tip.hidden=false;
});
document.addEventListener('mousemove',function(e){
  if(tip.hidden)return;
  var x=e.clientX+14,y=e.clientY+14,w=tip.offsetWidth,h=tip.offsetHeight;
  if(x+w>innerWidth-8)x=Math.max(8,e.clientX-w-14);
  if(y+h>innerHeight-8)y=Math.max(8,e.clientY-h-14);
  tip.style.left=x+'px';tip.style.top=y+'px';
});
document.addEventListener('click',function(e){
  var el=e.target.closest&&e.target.closest('[data-open]');
  if(!el)return;
  var d=document.getElementById(el.getAttribute('data-open'));
  if(d){d.open=true;d.scrollIntoView({block:'start'});}
});
addEventListener('load',function(){
  void document.body.offsetHeight;
  document.documentElement.setAttribute('data-load-ms',String(Math.round(performance.now())));
});
})();
"""
