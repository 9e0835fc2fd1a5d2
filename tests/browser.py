"""Open an HTML report in headless Chromium and check what a person would see.

One Chromium process per report does both jobs: ``--dump-dom`` gives the DOM
after the page's scripts ran (parsed here with the standard library), and
``--screenshot`` saves a PNG under ``test-output/screenshots/``. The page
itself records how long it took to load and lay out (``html[data-load-ms]``),
which is what "opens in under 2 s" means; the Chromium start-up is measured
apart (``wall_s``) and only loosely bounded, since it depends on the machine.

``check_report_in_browser`` is also called by the real-TensorFlow integration
tests on real bundles.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Iterable

__all__ = ["chromium_path", "load_in_browser", "check_report_in_browser", "BrowserResult", "SCREENSHOT_DIR"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCREENSHOT_DIR = os.path.join(ROOT, "test-output", "screenshots")
LOAD_LIMIT_MS = 2000        # the bound on opening a report
WALL_LIMIT_S = 60           # Chromium start + load + screenshot, on a loaded 2-core machine
_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
          "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
          "--disable-dev-shm-usage", "--mute-audio", "--no-default-browser-check")


def chromium_path() -> str | None:
    for cand in (os.environ.get("DISTDOCTOR_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                 shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


@dataclass
class _Node:
    tag: str
    attrs: dict[str, str]


class _Dom(HTMLParser):
    """Collects the elements carrying the report's stable hooks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root_attrs: dict[str, str] = {}
        self.verdict: _Node | None = None
        self.lanes: list[_Node] = []
        self.charts: list[_Node] = []
        self.tasks: list[_Node] = []
        self.title = ""
        self._in_title = False
        self._in_h1 = False
        self.headline = ""

    def handle_starttag(self, tag: str, attrs) -> None:
        a = {k: (v or "") for k, v in attrs}
        classes = a.get("class", "").split()
        if tag == "html":
            self.root_attrs = a
        elif a.get("id") == "verdict":
            self.verdict = _Node(tag, a)
        elif tag == "g" and "lane" in classes:
            self.lanes.append(_Node(tag, a))
        elif tag == "svg" and "chart" in classes:
            self.charts.append(_Node(tag, a))
        elif tag == "details" and "task" in classes:
            self.tasks.append(_Node(tag, a))
        elif tag == "title":
            self._in_title = True
        elif tag == "h1":
            self._in_h1 = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "h1":
            self._in_h1 = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._in_h1:
            self.headline += data


@dataclass
class BrowserResult:
    html_path: str
    status: str | None
    culprit: str
    headline: str
    lanes: list[dict[str, str]] = field(default_factory=list)
    charts: list[str] = field(default_factory=list)
    task_details: list[str] = field(default_factory=list)
    load_ms: int | None = None
    wall_s: float = 0.0
    screenshot: str | None = None
    dom_bytes: int = 0
    root_attrs: dict[str, str] = field(default_factory=dict)   # attributes of <html> after scripts ran

    @property
    def tasks(self) -> set[str]:
        """Every task some lane stands for (a group lane stands for all its members)."""
        return {t for lane in self.lanes for t in lane.get("data-members", "").split()}


def load_in_browser(html_path: str, screenshot_name: str | None = None, width: int = 1280,
                    height: int = 1800, timeout: float = 90.0) -> BrowserResult:
    """Load ``html_path`` in headless Chromium; return what its DOM shows and where the screenshot is."""
    exe = chromium_path()
    if exe is None:
        raise RuntimeError("headless Chromium not found (/usr/bin/chromium); install the Debian package `chromium`")
    html_path = os.path.abspath(html_path)
    os.makedirs(SCREENSHOT_DIR, exist_ok=True)
    name = screenshot_name or os.path.splitext(os.path.basename(html_path))[0]
    shot = os.path.join(SCREENSHOT_DIR, name if name.endswith(".png") else f"{name}.png")
    with tempfile.TemporaryDirectory(prefix="dd-chromium-") as profile:
        cmd = [exe, *_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
               f"--screenshot={shot}", "--dump-dom", "file://" + html_path]
        t = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "HOME": profile})
        wall = time.monotonic() - t
    if proc.returncode != 0 or "<html" not in proc.stdout:
        raise RuntimeError(f"chromium failed on {html_path} (exit {proc.returncode}): {proc.stderr[-2000:]}")
    dom = _Dom()
    dom.feed(proc.stdout)
    load = dom.root_attrs.get("data-load-ms")
    return BrowserResult(
        html_path=html_path,
        status=dom.verdict.attrs.get("data-status") if dom.verdict else None,
        culprit=dom.verdict.attrs.get("data-culprit", "") if dom.verdict else "",
        headline=dom.headline.strip(),
        lanes=[n.attrs for n in dom.lanes],
        charts=[n.attrs.get("data-metric", "") for n in dom.charts],
        task_details=[n.attrs.get("data-task", "") for n in dom.tasks],
        load_ms=int(load) if load and load.isdigit() else None,
        wall_s=wall,
        screenshot=shot if os.path.isfile(shot) else None,
        dom_bytes=len(proc.stdout),
        root_attrs=dom.root_attrs,
    )


def check_report_in_browser(html_path: str, expect_status: str, expect_tasks: int | Iterable[str],
                            screenshot_name: str | None = None) -> BrowserResult:
    """Assert that a report opens in Chromium, shows the expected verdict and a lane for every task.

    ``expect_tasks`` is the number of tasks, or their names (``worker:0``...).
    Raises ``AssertionError`` with what was seen otherwise.
    """
    r = load_in_browser(html_path, screenshot_name)
    assert r.status == expect_status, f"verdict status {r.status!r}, expected {expect_status!r} ({html_path})"
    assert r.headline, f"the verdict has no headline ({html_path})"
    assert r.lanes, f"no timeline lanes rendered ({html_path})"
    if isinstance(expect_tasks, int):
        assert len(r.tasks) == expect_tasks, f"lanes cover {len(r.tasks)} tasks, expected {expect_tasks}: {sorted(r.tasks)}"
    else:
        missing = set(expect_tasks) - r.tasks
        assert not missing, f"no lane for {sorted(missing)}; lanes: {[l.get('data-task') for l in r.lanes]}"
    assert set(r.charts) >= {"step_time", "rss", "cpu"}, f"charts rendered: {r.charts}"
    assert r.load_ms is not None, "the page did not record its load time (its script did not run)"
    assert r.load_ms < LOAD_LIMIT_MS, f"the report took {r.load_ms} ms to load, limit {LOAD_LIMIT_MS} ms"
    assert r.wall_s < WALL_LIMIT_S, f"Chromium took {r.wall_s:.1f} s in all"
    assert r.screenshot, "no screenshot was written"
    return r
