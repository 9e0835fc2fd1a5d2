"""Which literal prefilter for `distdoctor diagnose`: Hyperscan, pyahocorasick, google-re2 and Python's re, side by side.

    .venv/bin/python benchmarks/bench_prefilter.py [--mb 16] [--runs 5]

Each engine gets the signature knowledge base's literals (distdoctor/diagnose/logs/kb) and reports the offsets of
every hit in a buffer of a real run's log (benchmarks/data/real-mwms-worker-0.log.gz, tiled to --mb, with a few
failure lines), the work the scanner needs before it decodes candidate lines. Median MB/s of --runs, and whether
each engine found the same set of hit lines as Python's re (the reference).
"""
from __future__ import annotations

import argparse
import gzip
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from distdoctor.diagnose.logs.scan import _literal_table  # noqa: E402


def _lines_of(buf: bytes, ends) -> set[int]:
    return {buf.rfind(b"\n", 0, e) + 1 for e in ends}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=16)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    seed = gzip.open(ROOT / "benchmarks" / "data" / "real-mwms-worker-0.log.gz").read()
    buf = (seed * (1 + (a.mb << 20) // len(seed)))[: a.mb << 20]
    buf = buf[: buf.rfind(b"\n") + 1] + (b"E0000 00:00:1.0 1 ring_alg.cc:291] Aborting RingReduce with UNAVAILABLE: "
                                         b"recvmsg:Connection reset by peer\nKilled\n") * 3
    lits, caseless, _ = _literal_table()
    engines = {}

    alts = [b"(?i:" + re.escape(x) + b")" if c else re.escape(x) for x, c in zip(lits, caseless)]
    rx = re.compile(b"|".join(sorted(alts, key=len, reverse=True)))
    engines["python re"] = lambda: _lines_of(buf, (m.end() for m in rx.finditer(buf)))
    try:
        import hyperscan
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=[re.escape(x.decode()).encode() for x in lits], ids=list(range(len(lits))),
                   flags=[hyperscan.HS_FLAG_CASELESS if c else 0 for c in caseless])

        def hs():
            ends = []
            db.scan(buf, match_event_handler=lambda i, s, e, f, c: ends.append(e))
            return _lines_of(buf, ends)
        engines["hyperscan"] = hs
    except ImportError:
        pass
    try:
        import ahocorasick
        auto = ahocorasick.Automaton()
        for i, (x, c) in enumerate(zip(lits, caseless)):
            auto.add_word(x.decode().lower() if c else x.decode(), i)
        auto.make_automaton()
        auto_ci = any(caseless)

        def aho():
            text = buf.decode("latin-1")   # one byte per character: offsets stay byte offsets
            ends = [e + 1 for e, _ in auto.iter(text)]
            if auto_ci:   # the caseless literals: a second pass over the lower-cased text
                ends += [e + 1 for e, i in auto.iter(text.lower()) if caseless[i]]
            return _lines_of(buf, ends)
        engines["pyahocorasick"] = aho
    except ImportError:
        pass
    try:
        import re2
        opts = re2.Options()
        opts.max_mem = 256 << 20
        r2 = re2.compile(b"|".join(sorted(alts, key=len, reverse=True)), options=opts)
        engines["google-re2"] = lambda: _lines_of(buf, (m.end() for m in r2.finditer(buf)))
    except ImportError:
        pass
    ref = engines["python re"]()
    print(f"{len(lits)} literals, {len(buf) / 1e6:.1f} MB of a real run's log, {len(ref)} hit lines; median of {a.runs}")
    print("| engine | median MB/s | runs (s) | same hit lines as re |")
    print("|---|---:|---|---|")
    for name, fn in engines.items():
        times = []
        for _ in range(a.runs):
            t = time.perf_counter()
            got = fn()
            times.append(time.perf_counter() - t)
        med = statistics.median(times)
        print(f"| {name} | {len(buf) / 1e6 / med:.0f} | {', '.join(f'{x:.3f}' for x in times)} | {got == ref} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
