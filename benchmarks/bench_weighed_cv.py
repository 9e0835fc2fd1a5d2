"""Do the lines that "weighed most" point at the lines that settle the case? Over the real corpus, cross-validated
grouped by repository (each case weighed by a model -- text model and logit -- that never saw its repository): of
the failed cases whose label lists its deciding lines, how many get weighed lines, and how often the heaviest one
(and any of the three) is a deciding line.

    .venv/bin/python benchmarks/bench_weighed_cv.py
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _model(bm, rows: list[dict], train: list[int]):
    """The learned reading trained as scripts/build_model.py trains it, on the cases ``train`` only."""
    from distdoctor.diagnose.logs import learned
    xs = bm.stacked(rows, train)
    vec, clf = bm.fit([xs[i] for i in train], [rows[i]["label"] for i in train])
    return learned.Model({"intercept": float(clf.intercept_[0]), "temperature": 1.0,
                          "text": bm.text_json(bm.fit_text([rows[i] for i in train])),
                          "weights": dict(zip(vec.get_feature_names_out(), map(float, clf.coef_[0])))})


def main() -> int:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):   # small fits: one thread is faster
        os.environ.setdefault(var, "1")
    sys.path[:0] = [str(ROOT), str(ROOT / "scripts"), str(ROOT / "tests")]
    import build_model as bm
    from distdoctor.diagnose.logs import learned
    cases = bm.cases()
    rows = [bm.read(c) for c in cases]
    n = weighed = top = anywhere = 0
    for fold in bm.grouped_folds(rows):
        held = set(fold)
        m = _model(bm, rows, [i for i in range(len(rows)) if i not in held])
        for i in fold:
            deciding = [d.strip() for d in json.loads((cases[i] / "case.json").read_text()).get("decisive") or ()
                        if d.strip()]
            diag, hits, facts = rows[i]["reading"]
            rc = diag.root_cause
            if not deciding or rc is None or diag.status.value in ("succeeded", "running"):
                continue
            n += 1
            got = learned.weighed(m, diag, hits, learned.case_lines(hits, facts), rc.category.value)
            if not got:
                continue
            weighed += 1
            settles = [any(d in ln.text or ln.text in d for d in deciding) for ln, _ in got]
            top += settles[0]
            anywhere += any(settles)
    print(f"{n} failed cases whose label lists the deciding lines; {weighed} get weighed lines")
    print(f"  the heaviest line is a deciding line: {top}/{weighed} = {100 * top / weighed:.1f} %")
    print(f"  one of the (at most three) weighed lines is: {anywhere}/{weighed} = {100 * anywhere / weighed:.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
