"""The learned ranking of causes (issue 25): built deterministically from the real corpus by scripts/build_model.py,
shipped, read in pure Python; a rebuild equals the shipped file, and its cross-validated figures are the README's."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from distdoctor.diagnose.command import diagnose_paths
from distdoctor.diagnose.logs import learned

ROOT = Path(__file__).resolve().parent.parent


def test_a_rebuild_from_the_corpus_is_the_shipped_model():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_model.py"), "--check"], capture_output=True,
                       text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]


def test_the_pure_python_ranking_is_scikit_learns():
    spec = importlib.util.spec_from_file_location("build_model", ROOT / "scripts" / "build_model.py")
    bm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bm)
    rows = [bm.read(c) for c in bm.cases()[:40]]
    vec, clf = bm.fit([r["x"] for r in rows], [r["label"] for r in rows])
    model = learned.Model({"intercept": float(clf.intercept_[0]), "temperature": 1.0,
                           "weights": dict(zip(vec.get_feature_names_out(), map(float, clf.coef_[0])))})
    for r in rows[:10]:
        ours = dict(model.rank(r["x"]))
        theirs = bm.scores(vec, clf, r["x"])
        assert all(abs(ours[c] - theirs[c]) < 1e-9 for c in theirs)


def test_a_real_case_gets_a_distribution_over_every_cause():
    case = ROOT / "tests" / "realworld" / "realworld-dev" / "dev_002"
    feats: list = []
    diag, _ = diagnose_paths([str(p) for p in case.iterdir() if p.name != "case.json"], detected_at=0.0,
                             features_out=feats)
    ranked = learned.load().rank(feats[0])
    from distdoctor.model import Category
    assert abs(sum(p for _, p in ranked) - 1.0) < 1e-9 and {c for c, _ in ranked} == {c.value for c in Category}
    assert ranked[0][0] == "oom_gpu" and ranked[0][1] > 0.5
