"""The backward readers of a task's log body (logs/lookback.py) and the progress parsers' shortcuts give the answers of
the plain readings they replace."""
from __future__ import annotations

import random
import re
import sys
from pathlib import Path

from distdoctor.diagnose.logs import taskscan
from distdoctor.diagnose.logs.formats import split_timestamp
from distdoctor.diagnose.logs.lookback import TimeWalk
from distdoctor.diagnose.logs.progress import _LOSS, _STEP_TIME, _loss, _step_time_match

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))


def _plain_walk(body: bytes, pos: int, limit: int, year: int) -> float | None:
    end = pos
    for _ in range(limit):
        start = body.rfind(b"\n", 0, end) + 1 if end > 0 else 0
        head = body[start:min(end, start + 80)]
        if head[:1].isdigit() or head[:1] in (b"I", b"W", b"E", b"F", b"["):
            ts, _ = split_timestamp(head.decode("ascii", "replace"), year)
            if ts is not None:
                return ts
        if start == 0:
            return None
        end = start - 1
    return None


def test_time_walk_remembers_without_changing_an_answer():
    rng = random.Random(1)
    calls = 0
    for _ in range(300):
        rate = rng.choice([0.0, 0.01, 0.05, 0.3])
        lines = [f"2024-01-01 12:{i % 60:02d}:{rng.randint(0, 59):02d}.000 x" if rng.random() < rate else
                 rng.choice(["Epoch 3/5", "  10/100 [====] - loss: 1", "hello", "", "I think", "[x] y"])
                 for i in range(rng.randint(1, 300))]
        body = ("\n".join(lines) + "\n").encode()
        walk = TimeWalk(2024)
        for _ in range(40):
            pos = rng.randrange(len(body))
            if rng.random() < 0.5:
                pos = max(body.rfind(b"\n", 0, pos), 0)
            limit = rng.choice([64, 64, 5, 200])
            assert walk.before(body, pos, limit) == _plain_walk(body, pos, limit, 2024), (pos, limit)
            calls += 1
    assert calls == 12000


def test_time_walk_skips_a_span_it_read():
    """A log without time stamps: the second walk over the same lines reads none of them again."""
    body = b"".join(b"  %d/100 [====] - loss: 0.5\n" % i for i in range(200))
    walk = TimeWalk(2024)
    assert walk.before(body, len(body) - 1) is None
    seen = []

    class Spy(bytes):
        def rfind(self, *a):
            seen.append(a)
            return bytes.rfind(self, *a)
    spy = Spy(body)
    walk._memo = (spy,) + walk._memo[1:]
    assert walk.before(spy, len(body) - 30) is None
    assert len(seen) <= 2


def test_step_time_and_loss_shortcuts_match_the_plain_searches():
    rng = random.Random(3)
    alpha = list("0123456789.0123456789 msuµ/step-lossLOSS:=") + ["/step", "ms/step", "s/step", " loss: ", "Loss=",
                                                                   "١", "²", "ſ"]
    for _ in range(50000):
        t = "".join(rng.choice(alpha) for _ in range(rng.randint(0, 30)))
        a, b = _STEP_TIME.search(t), _step_time_match(t)
        assert (a and (a.group(0), a.span())) == (b and (b.group(0), b.span())), t
        lm = _LOSS.search(t)
        try:
            want = float(lm.group(1)) if lm else None
        except ValueError:
            want = None
        got = _loss(t)
        assert want == got or (want != want and got != got), t


def test_plain_epoch_lines_read_the_short_way_give_the_same_scan(monkeypatch):
    import bench_diagnose
    import diagnose_mixes
    text = diagnose_mixes.mix_task_log("progress", 3, 8, 600_000, 5, bench_diagnose._fault_lines)
    # and the same log without any time stamp (each epoch's time is then looked for far back)
    bare = "\n".join(ln for ln in text.split("\n") if not re.match(r"[IWEF]\d{4} |\d{4}-", ln)) + "\n"

    def scan(data: str):
        sc = taskscan.TaskScanner("worker:3", year=2026)
        raw = data.encode()
        for i in range(0, len(raw), 1 << 16):
            sc.feed(raw[i:i + (1 << 16)])
        return sc.close()
    fast = [scan(text), scan(bare)]
    assert fast[0].steps and fast[0].epoch and fast[1].steps == fast[0].steps
    monkeypatch.setattr(taskscan, "_PLAIN_EPOCH", re.compile(rb"(?!)"))   # every Epoch line through the parser
    assert [scan(text), scan(bare)] == fast
