"""The HTML report as text: self-contained, escaped, with its stable hooks, small for 256 tasks."""
from __future__ import annotations

import re

import pytest

from bundles import bundle_records, make_bundle, write_bundle
from distdoctor.report.bundle import load_bundle
from distdoctor.report.data import build_page
from distdoctor.report.html import render_html


def html_of(tmp_path, n: int, scenario: str, rec=None) -> str:
    d = str(tmp_path / f"{scenario}-{n}")
    if rec is None:
        make_bundle(d, n, scenario)
    else:
        write_bundle(d, rec)
    return render_html(build_page(load_bundle(d)))


@pytest.mark.parametrize("scenario, status", [("healthy", "succeeded"), ("stall", "hung"), ("oom", "failed")])
def test_hooks_and_verdict(tmp_path, scenario, status):
    html = html_of(tmp_path, 3, scenario)
    assert f'id="verdict" class="card verdict st-{status}" data-status="{status}"' in html
    assert len(re.findall(r'<g class="lane[^"]*" data-task="worker:\d"', html)) == 3
    for metric in ("step_time", "rss", "cpu"):
        assert f'data-metric="{metric}"' in html
    assert html.count('<details class="task') == 3


def test_self_contained(tmp_path):
    html = html_of(tmp_path, 4, "stall")
    # no external resource of any kind: everything a browser needs is in the file
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert "@import" not in html and "url(http" not in html
    assert html.count("<script>") == 1 and "<script src" not in html


def test_everything_is_escaped(tmp_path):
    rec = bundle_records(2, "oom")
    evil = "<script>alert(1)</script> & \x1b[31mred\x1b[0m \"quoted\""
    rec["diagnosis"]["root_cause"]["summary"] = evil
    rec["diagnosis"]["root_cause"]["evidence"].append(f"[worker:1 18:00:20.000] {evil}")
    rec["diagnosis"]["tasks"]["worker:1"]["stack"] = evil
    rec["logs"]["worker-1.log"].append(f"2026-11-21T18:00:20.250000+0000 {evil}")
    html = html_of(tmp_path, 2, "oom", rec)
    assert "<script>alert" not in html and "\x1b" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; red" in html
    assert html.count("<script>") == 1


def test_256_tasks_stay_small(tmp_path):
    html = html_of(tmp_path, 256, "stall")
    assert 'data-label="worker:0,2-255 (255 tasks, identical)"' in html
    assert len(html) < 400_000
    assert html.count("<") < 6000          # elements (and text markup) stay few: fast to open


def test_culprit_expanded_first_with_stack_and_log_tail(tmp_path):
    html = html_of(tmp_path, 3, "stall")
    details = re.findall(r'<details class="task[^"]*"[^>]*>', html)
    assert len(details) == 3
    assert 'data-task="worker:1"' in details[0] and details[0].endswith(" open>")     # the culprit: first, expanded
    assert all(not d.endswith(" open>") for d in details[1:])
    culprit = html[html.index(details[0]):html.index(details[1])]
    assert "<h4>Stack</h4>" in culprit and "slow_input_fn" in culprit and "<h4>Log (" in culprit


def test_the_timeline_shows_every_attempt_of_a_restarted_run(tmp_path):
    """worker:1 was OOM-killed in attempt 1 and the restart succeeded: attempt 1's failure is on worker:1's lane
    (not only in the attempts table), left of attempt 2, with the attempt's own ending."""
    from bundles import RESTART_GAP, T0, make_restarted_bundle
    page = build_page(load_bundle(make_restarted_bundle(str(tmp_path / "b"), 3)))
    assert page.t0 <= T0 and page.t1 >= T0 + RESTART_GAP
    html = render_html(page)
    timeline = html[html.index('<section id="timeline"'):html.index("</section>", html.index('<section id="timeline"'))]
    lane = re.search(r'<g class="lane[^"]*" data-task="worker:1".*?</g></g>(?=<g class="lane|<line|<g class="jm|</svg>)',
                     timeline, re.S)
    assert lane, timeline[:2000]
    marks = re.findall(r'<g class="mark mk-(\w+)" data-kind="\w+" data-attempt="(\d)" data-tip="([^"]*)">(.*?)</g>',
                       lane.group(0), re.S)
    first = [(kind, tip, glyph) for kind, n, tip, glyph in marks if n == "1"]
    assert any(kind == "fault" and "SIGKILL" in tip and tip.startswith("attempt 1: ") for kind, tip, _ in first), first
    assert any(kind == "exit" and "g-exit-failed" in glyph for kind, _, glyph in first), first   # its own ending
    assert {n for _, n, _, _ in marks} == {"1", "2"}
    assert any(kind == "exit" and "g-exit-ok" in glyph for kind, n, _, glyph in marks if n == "2")
    assert 'class="jm jm-attempt"' in timeline and "attempt 2 starts" in timeline
