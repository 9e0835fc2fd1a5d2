"""The shortcuts of the per-epoch path of ``distdoctor diagnose`` (logs/epochs.py, the events' quick construction and
pickling, the formats' exact shortcuts, the control-byte count) give what the plain code they replace gives.
Pure and fast (the pool test starts two processes)."""
from __future__ import annotations

import copy
import pickle
import random
import re
import sys
from pathlib import Path

from distdoctor.diagnose import logsource
from distdoctor.diagnose.events import EventKind, LogEvent, quick_event
from distdoctor.diagnose.logs import formats, prescan
from distdoctor.diagnose.logs.formats import clean_line, split_timestamp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))


def test_a_quick_event_is_the_dataclass_s_event():
    a = LogEvent(task="worker:1", ts=1.5, kind=EventKind.PROGRESS, text="3/10", line_no=7, step=3, total=10,
                 loss=0.25, epoch=2)
    b = quick_event("worker:1", 1.5, EventKind.PROGRESS, "3/10", 7, step=3, total=10, loss=0.25, epoch=2)
    assert a == b and repr(a) == repr(b) and hash(a) == hash(b) and vars(a) == vars(b)
    assert list(vars(b)) == list(vars(a))


def test_an_event_pickles_and_copies_to_an_equal_one_of_the_same_types():
    events = [LogEvent(task="w", ts=None, kind=EventKind.PY_EXCEPTION, text="x", line_no=2, peer="worker:1",
                       frames=("a", "b")),
              LogEvent(task=None, ts=1.5, kind="not-a-kind", text="y"),
              quick_event("t", 2.0, EventKind.NAN_LOSS, "z", 3, step=1, total=2, loss=float("nan"), epoch=4)]
    for ev in events:
        for proto in range(pickle.HIGHEST_PROTOCOL + 1):
            back = pickle.loads(pickle.dumps(ev, protocol=proto))
            assert repr(back) == repr(ev) and type(back.kind) is type(ev.kind) and list(vars(back)) == list(vars(ev))
        assert repr(copy.deepcopy(ev)) == repr(ev) and repr(copy.copy(ev)) == repr(ev)


def test_the_control_byte_count_stops_where_the_translate_count_would_say_the_same():
    rng = random.Random(5)
    chars = logsource._CONTROL_BYTES
    for _ in range(2000):
        n = rng.randint(0, 2000)
        data = bytes(rng.choice([rng.randrange(256), 10, 65, 0, 1, 9, 27, 8, 31, 127]) for _ in range(n))
        limit = rng.choice([0, 1, 3, n // 100, n // 10, n])
        assert prescan.more_than(data, chars, limit) == (len(data) - len(data.translate(None, chars)) > limit)


def _plain_split_timestamp(line: str, year: int | None) -> tuple[float | None, str]:
    c = line[:1]
    if c.isdigit():
        m = formats._PREFIX_TS.match(line)
        if m:
            return formats._epoch(*m.groups()), line[m.end():]
        m = formats._OLD_TF.match(line)
        if m:
            return formats._epoch(*m.groups(), None), line
    if c in "IWEF":
        return split_timestamp(line, year)     # the absl branch: unchanged
    if c.isdigit() or c == "[":
        m = formats._ISO_GENERIC.match(line)
        if m:
            return formats._epoch(*m.groups()), line
    return None, line


def _plain_clean_line(raw: str) -> str:
    line = raw.rstrip("\r\n")[:formats.MAX_LINE]
    if "\r" in line:
        prefix = ""
        m = formats._PREFIX_TS.match(line)
        if m:
            prefix, line = line[:m.end()], line[m.end():]
        parts = [p for p in line.split("\r") if p.strip()]
        line = prefix + (parts[-1] if parts else "")
    line = formats.strip_ansi(line)
    if formats._CTRL.search(line):
        line = formats._CTRL.sub("", line)
    c = line[:1]
    if c == "\ufeff":
        line = line[1:]
        c = line[:1]
    if c in (">", "*", " "):
        line = formats._unwrap(line)
    if (c.isdigit() or c == " ") and "/" in line[:24]:
        m = formats._GLUED_BAR.match(line)
        if m and m.end() < len(line) and line[m.end()] not in " \t/-.,;:":
            line = line[m.end():]
    return line


def test_the_formats_shortcuts_read_lines_as_the_plain_code_does():
    import bench_diagnose
    import diagnose_mixes
    rng = random.Random(7)
    alpha = list("0123456789-:.T Z+[]IWEF>*/\t\r\x1b\x08\x00\x7f\ufeff━²١ab=") + [
        "2026-", "**", "> ", "I1121 ", "  12/100 [==>..] - ETA: 3s - loss: 0.2003", "\x1b[31m",
        "2026-11-21T18:03:04.120415Z ", "2026-11-21 18:03:04.120415: I ", "[2026-01-02 03:04:05] "]
    lines = ["".join(rng.choice(alpha) for _ in range(rng.randint(0, 12))) for _ in range(40000)]
    for content in ("progress", "errors"):
        text = diagnose_mixes.mix_task_log(content, 1, 4, 150_000, 2, bench_diagnose._fault_lines)
        for ln in text.split("\n"):
            lines += [ln, ln[:80]] + re.split(r"[\r\x08]", ln)[-3:]
    for ln in lines:
        assert clean_line(ln) == _plain_clean_line(ln), repr(ln)
        for year in (None, 2026):
            assert split_timestamp(ln, year) == _plain_split_timestamp(ln, year), repr(ln)


def test_a_pool_of_processes_gives_the_scans_of_one_process(tmp_path, monkeypatch):
    import bench_diagnose
    import diagnose_mixes
    for i in range(3):
        (tmp_path / f"worker-{i}.log").write_text(
            diagnose_mixes.mix_task_log("progress", i, 4, 400_000, 2, bench_diagnose._fault_lines))
    monkeypatch.setattr(logsource, "PARALLEL_MIN_BYTES", 0)
    disc = logsource.discover([str(tmp_path)])
    one = logsource.scan_all(disc, jobs=1)
    two = logsource.scan_all(disc, jobs=2)
    assert one[0] == two[0] and one[1] == two[1]
    assert [e.kind for s in two[0] for e in s.events] == [e.kind for s in one[0] for e in s.events]
    assert all(type(e.kind) is EventKind for s in two[0] for e in s.events)
    assert sum(len(s.events) for s in one[0]) > 100 and all(s.steps for s in one[0])
