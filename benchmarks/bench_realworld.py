"""Accuracy of `distdoctor diagnose` on real-world failure logs quoted from public bug reports.

    .venv/bin/python benchmarks/bench_realworld.py [CASE_DIR ...] [--pool] [--json]

CASE_DIR defaults to tests/realworld/realworld-dev (a copy of the shared development corpus; its README says how
the cases were collected and labelled); ``--pool`` scores the whole labelled pool: that corpus, the blind probe set
(tests/probes/blind) and the fragment probes (tests/probes/fragments). Any folder with the same layout works.
Each case is diagnosed exactly as a user would: `distdoctor diagnose DIR` on the case's log files, no --task-map.

Figures printed:

* **top-1**: the verdict's category is the label's; **culprit**: over the cases whose label names one (a list label
  is right when any of its tasks is named);
* **culprit named**: the same over the cases whose logs name the labelled task (its own log file, or a line that
  names it as the stack does: ``/job:ps/replica:0/task:0``, ``rank 3``, ``[1,3]<``; ``casedirs.log_names``) -- the
  issue's "culprit where the log names one"; a task no line names can only be inferred;
* **top-3**: the label is the verdict's category or one of its first two ranked alternatives; **verdict or
  alternatives**: the label is the verdict's or any of its (at most three) alternatives';
* **high-confidence precision**: of the verdicts given with ``high`` confidence, how many are right -- what a user
  may trust without reading further; the same for ``medium`` and ``low``;
* **coverage**: cases whose verdict comes from the knowledge base or the structural rules (a signature or rule that
  names the cause), not from the safety net's word model (DD160) or "no evidence" (DD890);
* **decisive**: for a corpus whose cases carry ``decisive`` (the lines that settle the cause, or null when the log
  lacks them), the figures on the cases whose log holds the deciding line, and on the others whether the verdict is
  low-confidence with the truth among its alternatives. Older cases carry no ``decisive``; the README's list of
  those that lack the deciding line (``OLD_WITHOUT_DECISIVE``) counts them as null;
* per log shape and per component (the repository of the thread the case comes from), then the misses.
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "tests"))

from casedirs import OLD_WITHOUT_DECISIVE, judge as run_case  # noqa: E402  (the one way the case tiers judge a case)

CORPUS = ROOT / "tests" / "realworld" / "realworld-dev"
PROBES = ROOT / "tests" / "probes"
# every labelled set: the corpus, the four blind rounds (blind4 still unread), the fragment probes
POOL = (CORPUS, PROBES / "blind", PROBES / "blind2", PROBES / "blind3", PROBES / "blind4", PROBES / "fragments")
SAFETY_NET, NO_EVIDENCE = "DD160", "DD890"


def _holds_decisive(r: dict) -> bool:
    return r["decisive"] and r["case"] not in OLD_WITHOUT_DECISIVE


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} = {100 * a / b:.1f} %" if b else f"{a}/0"


def figures(rows: list[dict]) -> dict:
    n = len(rows)
    cul = [r for r in rows if r["culprit_ok"] is not None]
    named = [r for r in cul if r.get("culprit_named")]
    by_conf = {c: [r for r in rows if r["confidence"] == c] for c in ("high", "medium", "low")}
    return {"cases": n, "category_ok": sum(r["category_ok"] for r in rows), "culprit_cases": len(cul),
            "culprit_ok": sum(bool(r["culprit_ok"]) for r in cul), "culprit_named_cases": len(named),
            "culprit_named_ok": sum(bool(r["culprit_ok"]) for r in named), "top3_ok": sum(r["top3_ok"] for r in rows),
            "any_ok": sum(r["any_ok"] for r in rows),
            "confidence": {c: [len(v), sum(r["category_ok"] for r in v)] for c, v in by_conf.items()},
            "covered": sum(r["code"] not in (None, SAFETY_NET, NO_EVIDENCE) for r in rows)}


def _print_figures(title: str, f: dict) -> None:
    print(f"{title}: {f['cases']} cases")
    print(f"  top-1 category  {_pct(f['category_ok'], f['cases'])}")
    print(f"  culprit         {_pct(f['culprit_ok'], f['culprit_cases'])} (cases whose label names one)")
    print(f"  culprit named   {_pct(f['culprit_named_ok'], f['culprit_named_cases'])} (of those, where the log names "
          f"the labelled task: casedirs.log_names)")
    print(f"  top-3 category  {_pct(f['top3_ok'], f['cases'])} (the verdict or its first two alternatives)")
    print(f"  verdict or alternatives {_pct(f['any_ok'], f['cases'])} (the verdict or any of its, at most three)")
    for c, (k, ok) in f["confidence"].items():
        print(f"  {c:6} confidence: {k:>3} verdicts, right {_pct(ok, k)}")
    print(f"  coverage        {_pct(f['covered'], f['cases'])} (a signature or rule names the cause)")


def _group(rows: list[dict], key, title: str) -> None:
    print(f"\nper {title} (top-1 / top-3 / culprit)")
    for k in sorted({str(key(r)) for r in rows}):
        sr = [r for r in rows if str(key(r)) == k]
        sc = [r for r in sr if r["culprit_ok"] is not None]
        print(f"  {k[:34]:34} {sum(r['category_ok'] for r in sr):>3}/{len(sr):<3} {sum(r['top3_ok'] for r in sr):>3}/"
              f"{len(sr):<3} culprit {sum(bool(r['culprit_ok']) for r in sc):>2}/{len(sc)}")


_REPO = re.compile(r"(?:github\.com/)?([\w.-]+)/([\w.-]+?)(?:#|/issues/|/pull/|/discussions/|$)")
# the knowledge that decided a verdict: a signature's own component (its provenance in distdoctor/diagnose/logs/kb),
# else the reasoning rules by code
_RULES = {"DD160": "safety net (word model)", "DD890": "no evidence"}


def _component(r: dict) -> str:
    """The project of the thread the case comes from (a probe written here: "probe")."""
    m = _REPO.search(str(r.get("source") or ""))
    return m.group(2).lower() if m and " " not in m.group(0) else "probe"


def _decided_by(r: dict) -> str:
    from distdoctor.diagnose.logs.kb import SIGNATURES
    code = str(r.get("code") or "")
    if not code.startswith("DD") or not code[2:].isdigit():
        return "no verdict"
    comp = {s.code: s.component for s in SIGNATURES}.get(code)
    return f"signature: {comp}" if comp else _RULES.get(code, "structural rules (steps, exits, silences)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="*")
    ap.add_argument("--pool", action="store_true", help="the development corpus, the blind and the fragment probes")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    folders = [Path(x) for x in a.folders] or (list(POOL) if a.pool else [CORPUS])
    cases = [p for d in folders for p in sorted(d.iterdir()) if (p / "case.json").exists()]
    t0 = time.perf_counter()
    rows = []
    for c in cases:
        r = run_case(c)
        r["folder"] = c.parent.name
        rows.append(r)
    wall = time.perf_counter() - t0
    total = figures(rows)
    labelled = rows   # every case says whether its log holds the deciding line (the older dev cases by the list)
    holds = [r for r in labelled if _holds_decisive(r)]
    lacks = [r for r in labelled if not _holds_decisive(r)]
    dec = {"holds": figures(holds), "lacks": len(lacks),
           "lacks_low_and_among": sum(r["confidence"] in (None, "low") and r["any_ok"] for r in lacks)}
    if a.json:
        print(json.dumps(dict(total, decisive=dec, rows=rows), indent=1))
        return 0
    print(f"{len(rows)} cases from {', '.join(d.name for d in folders)} in {wall:.2f} s\n")
    _print_figures("all", total)
    if len(folders) > 1:
        for d in folders:
            print()
            _print_figures(d.name, figures([r for r in rows if r["folder"] == d.name]))
    if labelled:
        print()
        _print_figures("cases whose log holds the deciding line", dec["holds"])
        print(f"  the {dec['lacks']} cases whose log lacks it: low confidence and the truth among the alternatives in "
              f"{dec['lacks_low_and_among']}")
    _group(rows, lambda r: r["shape"], "shape")
    _group(rows, _decided_by, "component whose knowledge decided")
    _group(rows, _component, "project of the thread")
    cats = sorted({r["want"] for r in rows} | {r["got"] for r in rows})
    conf = collections.Counter((r["want"], r["got"]) for r in rows)
    short = {c: c[:14] for c in cats}
    print("\nconfusion (rows: label, columns: verdict; only non-empty columns)")
    cols = [c for c in cats if any(conf[(w, c)] for w in cats)]
    print(f"{'':32}" + "".join(f"{short[c]:>15}" for c in cols))
    for w in cats:
        if any(conf[(w, c)] for c in cols):
            print(f"{w:32}" + "".join(f"{(conf[(w, c)] or '.'):>15}" for c in cols))
    print("\nmisses (label / verdict (confidence) [alternatives]):")
    for r in rows:
        if not r["category_ok"] or r["culprit_ok"] is False:
            print(f"  {r['case']}: {r['want']} / {r['want_culprit']}, got {r['got']} / {r['got_culprit']} "
                  f"({r['confidence']}) [{', '.join(r['alternatives'])}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
