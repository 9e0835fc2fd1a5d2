"""Grouped cross-validation (issue 25 item 3), an ablation beside scripts/build_model.py: a plain multinomial decision over the readings of the existing pipeline vs the
hand-written pipeline, on every real case under tests/realworld/*/ (never tests/probes/). Folds are grouped by the
case's source repository (owner/repo from case.json ``source``): no repository in both a training and a test fold.

Features (first cut, step (a)): every finding's category/code/role-weighted evidence (signature hits and structural
findings as the pipeline reads them), the hand-written verdict's category and alternatives, and word unigrams/bigrams
of the evidence lines. Model: LogisticRegression, C from env DD_C (default 1.0; no nested tuning yet).
Model: DD_MODEL=gbt for GradientBoostingClassifier.
Confidence: the raw softmax probability (NOT yet calibrated: isotonic/Platt in CV is still to do).
Bands: high >= 0.7, medium >= 0.4, low below (fixed thresholds, not tuned).

    PYTHONPATH=. python benchmarks/bench_model_cv_multinomial.py
"""
from __future__ import annotations

import os
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from casedirs import case_names, label  # noqa: E402

from distdoctor.diagnose.command import diagnose_paths  # noqa: E402

WORD = re.compile(r"[A-Za-z_][A-Za-z_]{2,}")


def repo_of(source: str | None) -> str:
    sys.path.insert(0, str(ROOT / "scripts"))
    from build_model import repo_of as shared  # the same grouping as scripts/build_model.py
    return shared(source or "")


def folders() -> list[Path]:
    return sorted(d for d in (ROOT / "tests" / "realworld").iterdir() if d.is_dir() and case_names(d))


def features(diag) -> dict[str, float]:
    f: dict[str, float] = {}
    rc = diag.root_cause
    if rc is not None:
        f["hw=" + rc.category.value] = 1.0
        f["hwcode=" + rc.code] = 1.0
        for i, a in enumerate(rc.alternatives[:3]):
            f["alt=" + a.category.value] = 1.0 / (i + 2)
    if os.environ.get("DD_FEATS") == "verdict":  # ablation: only the hand-written verdict and its alternatives
        return f
    for fd in diag.findings:
        f["find=" + fd.category.value] = f.get("find=" + fd.category.value, 0) + 1.0
        f["code=" + fd.code] = 1.0
        for ev in fd.evidence[:20]:
            ws = [w.lower() for w in WORD.findall(ev.text)][:60]
            for w in ws:
                f[f"w:{ev.role}:{w}"] = 1.0
                f["w:" + w] = 1.0
            for a, b in zip(ws, ws[1:]):
                f[f"b:{a}_{b}"] = 1.0
    return f


def make_model():
    if os.environ.get("DD_MODEL") == "gbt":  # gradient-boosted trees (sklearn), fixed seed
        from sklearn.ensemble import GradientBoostingClassifier
        return GradientBoostingClassifier(n_estimators=100, max_depth=3, learning_rate=0.1, random_state=0)
    return LogisticRegression(C=float(os.environ.get('DD_C', '1.0')), max_iter=5000)


def main() -> None:
    X, y, groups, hw, decisive, rows = [], [], [], [], [], []
    for folder in folders():
        for name in case_names(folder):
            cd = folder / name
            lab = label(cd)
            logs = sorted(str(p) for p in cd.iterdir() if p.name != "case.json")
            diag, _ = diagnose_paths(logs, detected_at=0.0)
            rc = diag.root_cause
            got = rc.category.value if rc else "other"
            alts = [a.category.value for a in rc.alternatives] if rc else []
            X.append(features(diag)); y.append(lab["category"]); groups.append(repo_of(lab.get("source")))
            hw.append((got, [got] + [a for a in alts if a != got][:2], rc.confidence if rc else None))
            decisive.append(lab.get("decisive", "unlisted") is not None)
            rows.append(f"{folder.name}/{name}")
    y = np.array(y); n = len(y)
    vec = DictVectorizer(sort=True)
    Xm = vec.fit_transform(X)
    n_groups = len(set(groups))
    k = min(5, n_groups)
    pred = [None] * n; top3 = [None] * n; conf = np.zeros(n)
    for tr, te in GroupKFold(n_splits=k).split(Xm, y, groups):
        assert not set(groups[i] for i in tr) & set(groups[i] for i in te)
        clf = make_model()
        clf.fit(Xm[tr], y[tr])
        P = clf.predict_proba(Xm[te])
        for j, i in enumerate(te):
            order = np.argsort(-P[j], kind="stable")
            pred[i] = clf.classes_[order[0]]; top3[i] = list(clf.classes_[order[:3]]); conf[i] = P[j][order[0]]
    fit = make_model().fit(Xm, y)
    fitted_top1 = float(np.mean(fit.predict(Xm) == y))

    def band(c):
        return "high" if c >= 0.7 else "medium" if c >= 0.4 else "low"

    m_ok = np.array([pred[i] == y[i] for i in range(n)])
    m3 = np.array([y[i] in top3[i] for i in range(n)])
    h_ok = np.array([hw[i][0] == y[i] for i in range(n)])
    h3 = np.array([y[i] in hw[i][1] for i in range(n)])
    dec = np.array(decisive)
    print(f"cases: {n} from {len(folders())} folders, {n_groups} source repositories, GroupKFold k={k}\n")
    print("| figure | learned model (grouped CV) | hand-written pipeline |")
    print("|---|---|---|")
    print(f"| top-1 | {m_ok.mean():.1%} | {h_ok.mean():.1%} |")
    print(f"| top-3 | {m3.mean():.1%} | {h3.mean():.1%} |")
    print(f"| top-1 where decisive line present ({dec.sum()}) | {m_ok[dec].mean():.1%} | {h_ok[dec].mean():.1%} |")
    print(f"| fitted train=test top-1 (gap only) | {fitted_top1:.1%} | n/a |")
    print("\nModel confidence bands (raw softmax, thresholds 0.7/0.4 fixed):\n")
    print("| band | coverage | precision |")
    print("|---|---|---|")
    for b in ("high", "medium", "low"):
        sel = np.array([band(c) == b for c in conf])
        print(f"| {b} | {sel.mean():.1%} ({sel.sum()}) | {m_ok[sel].mean() if sel.any() else float('nan'):.1%} |")
    print("\nHand-written pipeline confidence bands (its own labels):\n")
    print("| band | coverage | precision |")
    print("|---|---|---|")
    for b in sorted({h[2] for h in hw}, key=str):
        sel = np.array([h[2] == b for h in hw])
        print(f"| {b} | {sel.mean():.1%} ({sel.sum()}) | {h_ok[sel].mean():.1%} |")
    per = Counter(); perok = Counter(); perh = Counter()
    for i in range(n):
        f = rows[i].split("/")[0]; per[f] += 1; perok[f] += m_ok[i]; perh[f] += h_ok[i]
    print("\n| folder | cases | model top-1 | hand-written top-1 |\n|---|---|---|---|")
    for f in sorted(per):
        print(f"| {f} | {per[f]} | {perok[f]/per[f]:.1%} | {perh[f]/per[f]:.1%} |")


if __name__ == "__main__":
    main()
