#!/usr/bin/env python3
"""Build the learned reading of diagnoses (``distdoctor/diagnose/logs/data/model.json``) from the real corpus, and
measure it honestly: cross-validation grouped by source repository (no repository in both a training and a test fold).

    python scripts/build_model.py              # cross-validate, print the table, write the model
    python scripts/build_model.py --check      # rebuild in memory and compare with the shipped file (exit 1 if not)
    python scripts/build_model.py --cv-only --md benchmarks/RESULTS-model-cv.md
    python scripts/build_model.py --spread 5    # the same figures under five other deals of repositories to folds

Data: every case folder under ``tests/realworld/`` (quoted real failures; never ``tests/probes/``, written from
knowledge). Features: :func:`distdoctor.diagnose.logs.learned.features`, every category's candidate features from
the diagnosis the hand-written reasoning gives on the case's files, as a user runs it. Model: a conditional logit --
one logistic regression (scikit-learn, lbfgs, L2, fixed C) on (case, candidate) rows, "is this candidate the
label", its scores softmaxed over a case's candidates; deterministic; one temperature fitted on the out-of-fold
scores.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from distdoctor.diagnose.logs.learned import BANDS, band_of, confidence_of, decided_by_model  # noqa: E402

OUT = ROOT / "distdoctor" / "diagnose" / "logs" / "data" / "model.json"
C = 10.0
TEXT_C = 10.0
FOLDS = 5


def cases() -> list[Path]:
    found = []
    for folder in sorted((ROOT / "tests" / "realworld").iterdir()):
        if folder.is_dir():
            found += sorted(p for p in folder.iterdir() if (p / "case.json").exists())
    return found


def repo_of(source: str) -> str:
    s = (source or "").lower().strip()
    for pre in ("https://github.com/", "http://github.com/"):
        if s.startswith(pre):
            s = s[len(pre):]
    if "://" in s:   # a Q&A or forum page: the whole site is one group (its threads share readers and habits)
        return s.split("://", 1)[1].split("/")[0].removeprefix("www.")
    return "/".join(s.split("#")[0].split("/")[:2]) or s


def read(case: Path) -> dict:
    from distdoctor.diagnose.command import diagnose_paths
    from distdoctor.diagnose.logs.learned import case_lines, features
    from casedirs import OLD_WITHOUT_DECISIVE
    label = json.loads((case / "case.json").read_text())
    logs = sorted(str(p) for p in case.iterdir() if p.name != "case.json")
    got: list = []
    diag, _ = diagnose_paths(logs, detected_at=0.0, features_out=got)
    diag, hits, facts = got[0]
    rc = diag.root_cause
    hand = rc.category.value if rc is not None else "other"
    alts = [a.category.value for a in rc.alternatives] if rc is not None else []
    return {"case": f"{case.parent.name}/{case.name}", "label": label["category"], "repo": repo_of(label.get("source")),
            "decisive": label.get("decisive", "unlisted") is not None and case.name not in OLD_WITHOUT_DECISIVE,
            "hand": hand, "hand_top3": [hand] + [a for a in alts if a != hand][:2], "hand_alts": alts,
            "hand_conf": rc.confidence if rc is not None else None,
            "x": features(diag, hits),
            "code": rc.code if rc is not None else None,
            "decided": decided_by_model(rc),
            "lines": [ln.text for ln in case_lines(hits, facts)], "reading": (diag, hits, facts)}


def _words(r: dict) -> list[str]:
    """A case's words (counted once per case: the folds fit the text model some forty times)."""
    if "words" not in r:
        from distdoctor.diagnose.logs.words import tokens
        r["words"] = [t for line in r["lines"] for t in tokens(line)]
    return r["words"]


def _given(words: list[str]) -> list[str]:
    return words


def fit_text(rows: list[dict]):
    """The text model: tf-idf of the words of each case's lines, a multinomial logistic regression over labels."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    vec = TfidfVectorizer(analyzer=_given, sublinear_tf=True, min_df=2)
    x = vec.fit_transform([_words(r) for r in rows])
    clf = LogisticRegression(C=TEXT_C, max_iter=5000, tol=1e-6)
    clf.fit(x, [r["label"] for r in rows])
    return vec, clf


def text_probs(model, rows: list[dict]) -> list[dict[str, float]]:
    vec, clf = model
    p = clf.predict_proba(vec.transform([_words(r) for r in rows]))
    return [dict(zip(map(str, clf.classes_), map(float, q))) for q in p]


def stacked(rows: list[dict], idx: list[int]) -> dict[int, dict]:
    """Candidate features with the text model's probability for the cases ``idx``, each from a text model that
    never saw that case's repository (inner folds grouped by repository): what the logit learns from."""
    out: dict[int, dict] = {}
    for fold in grouped_folds([rows[i] for i in idx]):
        inner = [idx[j] for j in fold]
        held = set(inner)
        tm = fit_text([rows[i] for i in idx if i not in held])
        for i, tp in zip(inner, text_probs(tm, [rows[i] for i in inner])):
            out[i] = with_text(rows[i]["x"], tp)
    return out


def with_text(cands: dict, tp: dict[str, float]) -> dict:
    """Candidate features with the text model's probabilities ``tp``, as :func:`learned.candidate_features` adds them."""
    from distdoctor.diagnose.logs.learned import text_logp
    return {c: {**f, "text_logp": text_logp(tp.get(c, 0.0))} for c, f in cands.items()}


def fit(xs: list[dict], ys: list[str]):
    """Train on cases' candidate features ``xs`` ({category: features}) and labels ``ys``."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression
    rows, hit = [], []
    for cands, y in zip(xs, ys):
        for c in sorted(cands):
            rows.append(cands[c])
            hit.append(int(c == y))
    vec = DictVectorizer(sparse=True, sort=True)
    clf = LogisticRegression(C=C, max_iter=5000, tol=1e-8)
    clf.fit(vec.fit_transform(rows), hit)
    return vec, clf


def scores(vec, clf, cands: dict) -> dict[str, float]:
    """A case's candidates' probabilities (softmax of the scores)."""
    cs = sorted(cands)
    s = clf.decision_function(vec.transform([cands[c] for c in cs]))
    top = max(s)
    e = [math.exp(v - top) for v in s]
    z = sum(e)
    return {c: v / z for c, v in zip(cs, e)}


DEAL: int | None = None   # None: the shipped deal; a number: the repositories dealt in that seed's order (--spread)


def grouped_folds(rows: list[dict]) -> list[list[int]]:
    """Repositories dealt to folds, largest first, each to the fold with fewest cases (deterministic); with
    :data:`DEAL` set, in a shuffled order of that seed instead (how much the figures owe to one deal)."""
    by_repo: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_repo[r["repo"]].append(i)
    folds: list[list[int]] = [[] for _ in range(FOLDS)]
    order = sorted(by_repo, key=lambda k: (-len(by_repo[k]), k))
    if DEAL is not None:
        import random
        random.Random(DEAL).shuffle(order)
    for repo in order:
        min(folds, key=len).extend(by_repo[repo])
    return folds


def spread(rows: list[dict], seeds: int) -> str:
    """The figures ``diagnose`` prints under ``seeds`` other deals of the repositories to folds: each deal's, and
    the lowest, median and highest -- the noise of one cross-validation on a corpus this size."""
    global DEAL
    dec = [i for i, r in enumerate(rows) if r["decisive"]]
    keys = ("top-1", "top-1 decisive", "top-3", "top-3 decisive", "high right", "high given")
    runs = []
    for seed in range(1, seeds + 1):
        DEAL = seed
        oof, _ = cross_validate(rows)
        a = figures(rows, oof, joint=True)
        d = figures([rows[i] for i in dec], [oof[i] for i in dec], joint=True)
        runs.append((a["top1"], d["top1"], a["top3"], d["top3"], a["bands"]["high"][1], a["bands"]["high"][0]))
    DEAL = None
    out = [f"{len(rows)} cases ({len(dec)} decisive), {seeds} deals of the repositories to {FOLDS} folds", "",
           "| deal | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    out += [f"| {i + 1} | " + " | ".join(map(str, r)) + " |" for i, r in enumerate(runs)]
    cols = list(zip(*runs))
    for name, pick in (("lowest", min), ("median", lambda c: sorted(c)[len(c) // 2]), ("highest", max)):
        out.append(f"| {name} | " + " | ".join(str(pick(c)) for c in cols) + " |")
    return "\n".join(out) + "\n"


def _nll(probs: list[dict], ys: list[str], t: float) -> float:
    total = 0.0
    for p, y in zip(probs, ys):
        logits = {c: math.log(max(v, 1e-12)) / t for c, v in p.items()}
        top = max(logits.values())
        z = sum(math.exp(v - top) for v in logits.values())
        total -= (logits.get(y, math.log(1e-12) / t) - top) - math.log(z)
    return total / max(1, len(ys))


def temper(probs: list[dict], t: float) -> list[dict]:
    out = []
    for p in probs:
        logits = {c: math.log(max(v, 1e-12)) / t for c, v in p.items()}
        top = max(logits.values())
        e = {c: math.exp(v - top) for c, v in logits.items()}
        z = sum(e.values())
        out.append({c: v / z for c, v in e.items()})
    return out


def cross_validate(rows: list[dict]) -> tuple[list[dict], float]:
    """Out-of-fold probabilities (grouped by repository) and the temperature that calibrates them. In each outer
    fold the text model and the logit learn from the other folds only (the logit from the text model's inner
    out-of-fold probabilities); the held-out cases are read by a text model trained on every other fold."""
    oof: list[dict] = [{} for _ in rows]
    for fold in grouped_folds(rows):
        test = set(fold)
        train = [i for i in range(len(rows)) if i not in test]
        xs = stacked(rows, train)
        vec, clf = fit([xs[i] for i in train], [rows[i]["label"] for i in train])
        tm = fit_text([rows[i] for i in train])
        for i, tp in zip(fold, text_probs(tm, [rows[i] for i in fold])):
            oof[i] = scores(vec, clf, with_text(rows[i]["x"], tp))
    ys = [r["label"] for r in rows]
    t = min((x / 20 for x in range(4, 61)), key=lambda t: _nll(oof, ys, t))
    return temper(oof, t), t


def figures(rows: list[dict], probs: list[dict] | None, joint: bool = False) -> dict:
    """top-1, top-3, and precision/coverage per confidence band; ``probs`` None: the hand-written reasoning's;
    ``joint``: the hand-written verdict's cause, its confidence the band of its calibrated probability capped by the
    hand-written one, the alternatives the learned next most probable causes (what ``diagnose`` prints)."""
    n = len(rows)
    out = {"n": n, "top1": 0, "top3": 0, "bands": {b: [0, 0] for b, _ in BANDS}}
    for i, r in enumerate(rows):
        if probs is None:
            ranked, band = r["hand_top3"], r["hand_conf"] or "low"
        elif joint:
            # as :func:`distdoctor.diagnose.logs.learned.with_learned_reading` ranks them, and decides the cause
            # where the knowledge base names none
            order = [c for c, _ in sorted(probs[i].items(), key=lambda kv: (-kv[1], kv[0]))]
            hand = order[0] if r["decided"] else r["hand"]
            ranked = [hand] + [c for c in order if c != hand][:2]
            band = confidence_of(r["hand_conf"], probs[i].get(hand, 0.0))   # as with_learned_reading bands it
        else:
            ranked = [c for c, _ in sorted(probs[i].items(), key=lambda kv: -kv[1])][:3]
            p = max(probs[i].values())
            band = band_of(p)
        ok = ranked[0] == r["label"]
        out["top1"] += ok
        out["top3"] += r["label"] in ranked[:3]
        out["bands"][band][0] += 1
        out["bands"][band][1] += ok
    return out


def table(rows: list[dict], oof: list[dict], fitted: list[dict], t: float) -> str:
    dec = [i for i, r in enumerate(rows) if r["decisive"]]

    def line(name, f):
        pct = lambda a, b: f"{a}/{b} = {100 * a / b:.1f} %" if b else "—"  # noqa: E731
        bands = "; ".join(f"{b} {pct(f['bands'][b][1], f['bands'][b][0])} (covers {f['bands'][b][0]})"
                          for b, _ in BANDS)
        return f"| {name} | {pct(f['top1'], f['n'])} | {pct(f['top3'], f['n'])} | {bands} |"
    sub = lambda idx: [rows[i] for i in idx]  # noqa: E731
    out = [f"{len(rows)} real cases from {len({r['repo'] for r in rows})} repositories; {FOLDS} folds grouped by "
           f"repository; temperature {t:.2f}", "",
           "| reading | top-1 | top-3 | precision per confidence band (coverage) |", "|---|---|---|---|",
           line("hand-written reasoning, all cases", figures(rows, None)),
           line("learned, grouped cross-validation, all cases", figures(rows, oof)),
           line("**as diagnose prints it**: hand-written cause (learned where no signature names one), confidence "
                "the band of its calibrated probability capped by the hand-written one, learned alternatives, "
                "grouped CV",
                figures(rows, oof, joint=True)),
           line("learned, fitted (train = test, only to show the gap)", figures(rows, fitted)),
           line("hand-written, log holds the deciding line", figures(sub(dec), None)),
           line("learned, grouped CV, log holds the deciding line", figures(sub(dec), [oof[i] for i in dec])),
           line("**as diagnose prints it**, log holds the deciding line", figures(sub(dec), [oof[i] for i in dec], joint=True))]
    return "\n".join(out) + "\n"


def text_json(tm) -> dict:
    """The text model as :class:`distdoctor.diagnose.logs.learned.TextModel` reads it: each word's idf and its
    weight for every class, in the order of ``classes``."""
    vec, clf = tm
    names = [str(n) for n in vec.get_feature_names_out()]
    return {"classes": [str(c) for c in clf.classes_],
            "idf": {n: round(float(v), 4) for n, v in zip(names, vec.idf_)},
            "coef": {n: [round(float(w), 3) for w in clf.coef_[:, k]] for k, n in enumerate(names)},
            "intercept": [round(float(b), 4) for b in clf.intercept_]}


def model_json(rows: list[dict], t: float) -> str:
    idx = list(range(len(rows)))
    xs = stacked(rows, idx)
    vec, clf = fit([xs[i] for i in idx], [r["label"] for r in rows])
    weights = {str(n): round(float(w), 4) for n, w in zip(vec.get_feature_names_out(), clf.coef_[0]) if abs(w) >= 1e-4}
    data = {"intercept": round(float(clf.intercept_[0]), 4), "weights": weights,
            "temperature": round(t, 2), "text": text_json(fit_text(rows)),
            "meta": {"cases": len(rows), "C": C, "text_C": TEXT_C, "folds": FOLDS, "built_by": "scripts/build_model.py"}}
    return json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


def close(a, b) -> bool:
    """The same model, up to another CPU's last bits of floating point (a weight under the cut on one side is 0)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return all(close(a.get(k, 0.0), b.get(k, 0.0)) for k in set(a) | set(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(a - b) <= 2e-3
    return a == b


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="rebuild and compare with the shipped model")
    ap.add_argument("--cv-only", action="store_true", help="print the cross-validated table only")
    ap.add_argument("--md", help="also write the table to this Markdown file")
    ap.add_argument("--spread", type=int, metavar="N", help="print the figures under N other deals of the "
                    "repositories to folds (nothing is written)")
    a = ap.parse_args(argv)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):   # before numpy loads: the fits are
        os.environ.setdefault(var, "1")       # small, and threads fighting over two cores made the build 5x slower
    rows = [read(c) for c in cases()]
    if a.spread:
        print(spread(rows, a.spread))
        return 0
    oof, t = cross_validate(rows)
    built = model_json(rows, t)
    if a.check:
        same = close(json.loads(OUT.read_text()) if OUT.exists() else {}, json.loads(built))
        print("the shipped model is what the corpus builds" if same else "the shipped model differs from a rebuild")
        return 0 if same else 1
    from distdoctor.diagnose.logs.learned import Model
    m = Model(json.loads(built))
    fitted = [dict(m.rank(with_text(r["x"], m.text.probs(r["lines"])))) for r in rows]
    text = table(rows, oof, fitted, t)
    print(text)
    if a.md:
        Path(a.md).write_text("# The learned reading, cross-validated (issue 25)\n\n`python scripts/build_model.py "
                              f"--cv-only --md {a.md}`\n\n" + text)
    if not a.cv_only:
        OUT.write_text(built)
        print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
