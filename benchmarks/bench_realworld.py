"""Accuracy of `distdoctor diagnose` on real-world failure logs quoted from public bug reports.

    .venv/bin/python benchmarks/bench_realworld.py [CORPUS_DIR] [--json]

CORPUS_DIR defaults to tests/realworld/realworld-dev (a copy of the shared development corpus; its README says how
the cases were collected and labelled). Each case is diagnosed exactly as a user would: `distdoctor diagnose DIR`
on the case's log files, no --task-map. Prints category accuracy, culprit accuracy (over the cases whose label
names a culprit; a list label is right when any of its tasks is named), the same per log shape, the confusion matrix
and the misses. Any folder with the same layout works as CORPUS_DIR, e.g. the blind probe set tests/probes/blind.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "tests"))

from casedirs import judge as run_case  # noqa: E402  (the one way the case tiers judge a case)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", default=str(ROOT / "tests" / "realworld" / "realworld-dev"))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    cases = sorted(p for p in Path(a.corpus).iterdir() if (p / "case.json").exists())
    t0 = time.perf_counter()
    rows = [run_case(c) for c in cases]
    wall = time.perf_counter() - t0
    n = len(rows)
    cat_ok = sum(r["category_ok"] for r in rows)
    cul = [r for r in rows if r["culprit_ok"] is not None]
    cul_ok = sum(r["culprit_ok"] for r in cul)
    if a.json:
        print(json.dumps({"cases": n, "category_ok": cat_ok, "culprit_cases": len(cul), "culprit_ok": cul_ok,
                          "rows": rows}, indent=1))
        return 0
    print(f"{n} cases in {wall:.2f} s")
    print(f"category: {cat_ok}/{n} = {100 * cat_ok / n:.1f} %")
    print(f"culprit:  {cul_ok}/{len(cul)} = {100 * cul_ok / max(1, len(cul)):.1f} % (cases whose label names one)")
    print("\nper shape (category right / cases; culprit right / cases naming one)")
    for shape in sorted({str(r["shape"]) for r in rows}):
        sr = [r for r in rows if str(r["shape"]) == shape]
        sc = [r for r in sr if r["culprit_ok"] is not None]
        print(f"  {shape:10} category {sum(r['category_ok'] for r in sr):>3}/{len(sr):<3} "
              f"culprit {sum(r['culprit_ok'] for r in sc):>3}/{len(sc)}")
    cats = sorted({r["want"] for r in rows} | {r["got"] for r in rows})
    conf = collections.Counter((r["want"], r["got"]) for r in rows)
    short = {c: c[:14] for c in cats}
    print("\nconfusion (rows: label, columns: verdict; only non-empty columns)")
    cols = [c for c in cats if any(conf[(w, c)] for w in cats)]
    print(f"{'':32}" + "".join(f"{short[c]:>15}" for c in cols))
    for w in cats:
        if any(conf[(w, c)] for c in cols):
            print(f"{w:32}" + "".join(f"{(conf[(w, c)] or '.'):>15}" for c in cols))
    print("\nmisses:")
    for r in rows:
        if not r["category_ok"] or r["culprit_ok"] is False:
            print(f"  {r['case']}: label {r['want']} / {r['want_culprit']}, got {r['got']} / {r['got_culprit']} "
                  f"({r['confidence']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
