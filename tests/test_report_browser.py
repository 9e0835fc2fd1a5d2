"""End to end in a real browser: headless Chromium opens reports and shows the verdict and every lane.

Screenshots land in test-output/screenshots/ for a person to look at.
"""
from __future__ import annotations

import base64
import hashlib

import pytest

from browser import check_report_in_browser, chromium_path
from bundles import make_bundle
from distdoctor.report.command import write_report

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(chromium_path() is None, reason="headless Chromium (/usr/bin/chromium) not installed")]


@pytest.mark.parametrize("scenario, n, status, lanes", [
    ("healthy", 3, "succeeded", 3),
    ("stall", 4, "hung", 4),
    ("oom", 4, "failed", 4),
    ("stall", 64, "hung", 2),          # the culprit, and 63 identical peers in one lane
    ("stall", 256, "hung", 2),         # the largest job: still two lanes, and it opens in under 2 s
])
def test_report_opens_in_chromium(tmp_path, scenario, n, status, lanes):
    html = write_report(make_bundle(str(tmp_path / "bundle"), n, scenario))
    r = check_report_in_browser(html, status, [f"worker:{i}" for i in range(n)],
                                screenshot_name=f"report-{scenario}-{n}")
    assert len(r.lanes) == lanes
    if status != "succeeded":
        assert r.culprit == "worker:1"
        assert r.lanes[0]["data-task"] == "worker:1" and "culprit" in r.lanes[0]["class"]
    assert r.task_details[0] == r.lanes[0]["data-task"]     # stacks and logs: culprit first


# Runs after the page's own load handler: hover the first mark, click a lane's name, record what happened.
_PROBE = """<script>addEventListener('load', function () {
  var mark = document.querySelector('#timeline .mark');
  mark.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
  var tip = document.getElementById('tip');
  document.documentElement.setAttribute('data-test-tip', tip.hidden ? '' : tip.textContent);
  var label = document.querySelector('#timeline .lane:not(.culprit) .lane-label');
  label.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  var d = document.getElementById(label.getAttribute('data-open'));
  document.documentElement.setAttribute('data-test-open', d && d.open ? d.getAttribute('data-task') : '');
});</script>"""


def test_hover_shows_the_event_and_a_click_opens_the_task(tmp_path):
    from browser import load_in_browser
    html = write_report(make_bundle(str(tmp_path / "bundle"), 3, "stall"))
    probe = tmp_path / "probe.html"
    page = open(html).read().replace("</body>", _PROBE + "</body>")
    # the report's CSP runs only its own script: allow the probe by its hash, as the report allows its own
    digest = base64.b64encode(hashlib.sha256(_PROBE[len("<script>"):-len("</script>")].encode()).digest()).decode()
    probe.write_text(page.replace("script-src ", f"script-src 'sha256-{digest}' "))
    r = load_in_browser(str(probe), "report-stall-probe", height=900)
    assert r.root_attrs.get("data-test-tip", "").startswith("started — worker:1 at ")
    assert r.root_attrs.get("data-test-open") == "worker:0"
