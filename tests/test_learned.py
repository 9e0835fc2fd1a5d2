"""The learned ranking of causes (issue 25): built deterministically from the real corpus by scripts/build_model.py,
shipped, read in pure Python; a rebuild equals the shipped file, and its cross-validated figures are the README's;
the verdict names the lines that weighed most."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from distdoctor.diagnose.command import diagnose_paths
from distdoctor.diagnose.logs import learned

ROOT = Path(__file__).resolve().parent.parent


def test_a_rebuild_from_the_corpus_is_the_shipped_model():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_model.py"), "--check"], capture_output=True,
                       text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]


def _build_model():
    spec = importlib.util.spec_from_file_location("build_model", ROOT / "scripts" / "build_model.py")
    bm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bm)
    return bm


def test_the_pure_python_ranking_is_scikit_learns():
    bm = _build_model()
    rows = [bm.read(c) for c in bm.cases()[:40]]
    vec, clf = bm.fit([r["x"] for r in rows], [r["label"] for r in rows])
    model = learned.Model({"intercept": float(clf.intercept_[0]), "temperature": 1.0,
                           "weights": dict(zip(vec.get_feature_names_out(), map(float, clf.coef_[0])))})
    for r in rows[:10]:
        ours = dict(model.rank(r["x"]))
        theirs = bm.scores(vec, clf, r["x"])
        assert all(abs(ours[c] - theirs[c]) < 1e-9 for c in theirs)


def test_the_pure_python_text_model_is_scikit_learns():
    """tf-idf and the multinomial regression computed by hand give scikit-learn's probabilities (up to the shipped
    file's rounding)."""
    bm = _build_model()
    rows = [bm.read(c) for c in bm.cases()[:120]]
    tm = bm.fit_text(rows)
    ours = learned.TextModel(json.loads(json.dumps(bm.text_json(tm))))
    theirs = bm.text_probs(tm, rows[:30])
    for r, want in zip(rows[:30], theirs):
        got = ours.probs(r["lines"])
        assert max(abs(got[c] - want[c]) for c in want) < 5e-3, r["case"]
    assert len({max(p, key=p.get) for p in theirs}) > 3   # the words speak for several causes, not one prior


def _diagnose(case: Path):
    got: list = []
    diagnose_paths([str(p) for p in case.iterdir() if p.name != "case.json"], detected_at=0.0, features_out=got)
    return got[0]


def test_a_real_case_gets_a_distribution_over_every_cause():
    diag, hits, facts = _diagnose(ROOT / "tests" / "realworld" / "realworld-dev" / "dev_002")
    ranked = learned.rank(diag, hits, facts)
    from distdoctor.model import Category
    assert abs(sum(p for _, p in ranked) - 1.0) < 1e-9 and {c for c, _ in ranked} == {c.value for c in Category}
    assert ranked[0][0] == "oom_gpu" and ranked[0][1] > 0.5


def test_the_verdict_names_the_lines_that_weighed_most(tmp_path):
    """The line that shows the cause weighs; start-up chatter does not; each weight is the fall of the learned
    probability without the line, which reading the case without it shows; a line the log's end repeats with a
    launcher's prefix is one line, not two."""
    log = tmp_path / "worker-1.log"
    chatter = [f"I tensorflow/core/platform/cpu_feature_guard.cc:{i}] This TensorFlow binary is optimized"
               for i in range(5)]
    log.write_text("\n".join(chatter + [
        "E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 512.00M (536870912 bytes) from "
        "device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
        "2024-01-01 10:00:00.000 Epoch 1/10", "Done."]) + "\n")
    diag, _ = diagnose_paths([str(log)], detected_at=0.0)
    rc = diag.root_cause
    assert rc.category.value == "oom_gpu" and rc.weighed, rc
    assert "CUDA_ERROR_OUT_OF_MEMORY" in rc.weighed[0].text and rc.weighed[0].where == "worker-1.log:6"
    assert all("cpu_feature_guard" not in w.text for w in rc.weighed)
    assert list(rc.weighed) == sorted(rc.weighed, key=lambda w: -w.weight)
    # the weight is what the line's absence costs the learned reading of the lines (the verdict being explained is
    # left out of it): read the log without it
    _, hits, facts = _diagnose(tmp_path)
    m, blind = learned.load(), learned._NoVerdict()
    lines = learned.case_lines(hits, facts)
    base = dict(m.reading(blind, hits, lines))["oom_gpu"]
    top = next(ln for ln in lines if "CUDA_ERROR_OUT_OF_MEMORY" in ln.text)
    without = dict(m.reading(blind, [h for h in hits if (h.stream, h.line_no) != top.key],
                             [ln for ln in lines if ln is not top]))["oom_gpu"]
    assert abs((base - without) - rc.weighed[0].weight) < 2e-3
    assert json.loads(json.dumps(diag.to_json()))["root_cause"]["weighed"][0]["where"] == "worker-1.log:6"
    mpi = tmp_path / "mpi"
    mpi.mkdir()
    (mpi / "output.log").write_text("[1,1]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an "
                                    "exception on one of the ranks\n")
    _, hits, facts = _diagnose(mpi)
    assert len(learned.case_lines(hits, facts)) == len({(h.stream, h.line_no) for h in hits}) == 1


def _real_cases_with_alternatives(limit: int):
    for folder in sorted((ROOT / "tests" / "realworld").iterdir()):
        for case in sorted(p for p in folder.iterdir() if (p / "case.json").exists()):
            logs = [str(p) for p in case.iterdir() if p.name != "case.json"]
            hand, _ = diagnose_paths(logs, detected_at=0.0, learned=False)
            if hand.root_cause is not None and hand.root_cause.alternatives and \
                    hand.root_cause.code != learned.UNKNOWN_MESSAGE:   # (there the learned reading decides)
                yield logs, hand
                limit -= 1
                if limit == 0:
                    return


def test_diagnose_lists_the_learned_next_most_probable_causes():
    """The printed alternatives are the model's next most probable causes after the verdict's, the reasoning's own
    first one listed third where those leave it out (the cause and culprit stay the hand-written reasoning's; its
    confidence is the band of the cause's calibrated probability, never above the hand-written one); one the
    reasoning offered keeps its words."""
    changed = lowered = 0
    for logs, hand in _real_cases_with_alternatives(25):
        feats: list = []
        diagnose_paths(logs, detected_at=0.0, features_out=feats)
        ranked = [c for c, _ in learned.rank(*feats[0])]
        got, _ = diagnose_paths(logs, detected_at=0.0)
        rc, hrc = got.root_cause, hand.root_cause
        assert (rc.category, rc.culprit, rc.code) == (hrc.category, hrc.culprit, hrc.code)
        p = dict(learned.rank(*feats[0]))[rc.category.value]
        assert rc.probability == round(p, 3)
        assert rc.confidence == learned.confidence_of(hrc.confidence, p)
        lowered += rc.confidence != hrc.confidence
        cats = [a.category.value for a in rc.alternatives]
        given = {a.category.value: a for a in hrc.alternatives}
        want = [c for c in ranked if c not in (rc.category.value, "interrupted")][:3]   # interrupted: run only
        first = [a.category.value for a in hrc.alternatives[:1] if a.category != hrc.category]
        if first and first[0] not in want[:2]:    # the reasoning's own first one stays listed, third
            want = want[:2] + first
        assert cats == want, (logs, cats, want)
        for a in rc.alternatives:
            assert a.settle
            if a.category.value in given:
                assert a == given[a.category.value]
            else:
                assert "learned reading" in a.why
        changed += cats != [a.category.value for a in hrc.alternatives]
    assert changed > 0   # the learned ranking is not the hand-written one under another name
    assert lowered > 0   # the calibrated probability speaks: somewhere it is below the hand-written band


def test_where_no_signature_names_a_cause_the_learned_reading_decides_it(monkeypatch):
    """The safety net's verdict (DD160: a line reads as an error, no signature knows it) takes the learned reading's
    most probable cause, at low confidence, with the quoted line, the task and its own alternatives; the hand-written
    reading (``other`` since the word model went, session 22) is one of its inputs. On real cases it differs from the
    hand-written reading somewhere -- with the shipped model or, where that one puts ``other`` first on every such
    case (since session 26's: 61 of the corpus's 100 DD160 cases are labelled ``other``), with the same model told
    not to trust the hand-written pick: the verdict is the model's, not the hand-written reading under another name."""
    shipped = learned.load()
    data = json.loads((ROOT / "distdoctor" / "diagnose" / "logs" / "data" / "model.json").read_text())
    data["weights"] = {k: w for k, w in data["weights"].items() if not k.startswith("is_hand")}
    distrusting = learned.Model(data)
    for model in (shipped, distrusting):
        monkeypatch.setattr(learned, "load", lambda model=model: model)
        seen, differ = _learned_decides()
        assert seen >= 12, seen
        if differ:
            break
    assert differ > 0, (seen, differ)


def _learned_decides() -> tuple[int, int]:
    seen = differ = 0
    for _, hand, ranked, got in _read_by_code((learned.UNKNOWN_MESSAGE,)):   # until a dozen are seen and one differs
        seen += 1
        rc, hrc = got.root_cause, hand.root_cause
        assert (rc.code, rc.category.value, rc.confidence) == (learned.UNKNOWN_MESSAGE, ranked[0], "low")
        assert (rc.culprit, rc.evidence) == (hrc.culprit, hrc.evidence) and "learned reading" in rc.summary
        assert ranked[0] not in [a.category.value for a in rc.alternatives]
        assert not any("words of the line resemble" in a.why for a in rc.alternatives)
        assert [n for n in got.notes if n.startswith("what would settle it:")] == \
            [f"what would settle it: {learned_settle(rc.category)}"]
        differ += rc.category != hrc.category
        if seen >= 12 and differ > 0:
            break
    return seen, differ


def _read_by_code(codes):
    """Each real case whose hand-written verdict (the reading before the model's) has one of ``codes``: the case,
    that reading, the learned ranking of it, and the verdict ``diagnose`` prints."""
    for folder in sorted((ROOT / "tests" / "realworld").iterdir()):
        for case in sorted(p for p in folder.iterdir() if (p / "case.json").exists()):
            logs = [str(p) for p in case.iterdir() if p.name != "case.json"]
            feats: list = []
            hand, _ = diagnose_paths(logs, detected_at=0.0, features_out=feats)
            if hand.root_cause is None or hand.root_cause.code not in codes:
                continue
            got, _ = diagnose_paths(logs, detected_at=0.0)
            yield case, hand, [c for c, _ in learned.rank(*feats[0])], got

def test_a_traceback_cut_before_its_exception_is_decided_by_the_learned_reading():
    """DD861 (a traceback ended the task, its exception line not in the log) names no cause: the learned reading
    decides its category at low confidence, the summary says so, and what would settle it stays the traceback's end.
    On the corpus' real such cases the verdict is the model's top pick everywhere, and not always the user's code
    (the hand-written reading, right on 2 of 30)."""
    seen = not_user = 0
    for case, _, ranked, got in _read_by_code((learned.CUT_TRACEBACK,)):
        rc = got.root_cause
        seen += 1
        assert (rc.category.value, rc.confidence) == (ranked[0], "low"), case
        assert "exception line is not in the log" in rc.summary and "learned reading" in rc.summary
        assert ranked[0] not in [a.category.value for a in rc.alternatives]
        assert "what would settle it: the end of the traceback (the exception line)" in got.notes
        not_user += rc.category.value != "user_code_error"
    assert seen >= 20, seen
    assert not_user > 0


def test_srun_reporting_a_task_exit_is_decided_by_the_learned_reading():
    """DD1510 (srun: a task exited with exit code N) says which task, not why: the learned reading decides the
    category at low confidence; the task stays the one srun names. On the corpus' real such cases the verdict is the
    model's top pick everywhere, and not always a crashed peer (the hand-written reading, right on none of 5). srun's
    "Killed" (DD823) says how the task ended and keeps its reading."""
    seen = other = killed = 0
    for case, hand, ranked, got in _read_by_code((learned.TASK_EXITED, "DD823")):
        rc, hrc = got.root_cause, hand.root_cause
        if hrc.code == "DD823":   # "Killed", "Segmentation fault": how it ended; its reading stays
            assert rc.category == hrc.category and not learned.decided_by_model(hrc), case
            killed += 1
            continue
        seen += 1
        assert (rc.category.value, rc.confidence, rc.culprit) == (ranked[0], "low", hrc.culprit), case
        assert "learned reading" in rc.summary and ranked[0] not in [a.category.value for a in rc.alternatives]
        other += rc.category.value != "peer_crashed"
    assert seen >= 4 and killed >= 1, (seen, killed)
    assert other > 0


def learned_settle(category):
    from distdoctor.diagnose.logs.settle import settle_for
    return settle_for(category)


def test_a_plain_user_error_lists_the_learned_next_causes_never_boilerplate(tmp_path):
    """Python's own exception raised in the script stays the user's code; its alternatives are the learned next most
    probable causes, each with its probability (the corpus' such cases were an API a new version removed or a
    library's own code 9 times in 12), never a list of causes "known to produce the same lines"."""
    log = tmp_path / "worker-0.log"
    log.write_text('Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    print(1 / x)\n'
                   "ZeroDivisionError: division by zero\n")
    rc = diagnose_paths([str(log)], detected_at=0.0)[0].root_cause
    assert rc.category.value == "user_code_error" and rc.probability > 0.5
    assert rc.alternatives and all("learned reading" in a.why and "%" in a.why and a.settle for a in rc.alternatives)
    assert "user_code_error" not in [a.category.value for a in rc.alternatives]


def test_the_weighed_lines_reach_the_terminal_the_json_and_the_html(tmp_path):
    log = tmp_path / "worker-1.log"
    log.write_text("E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 512.00M (536870912 "
                   "bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\nDone.\n")
    cli = [sys.executable, "-m", "distdoctor", "diagnose", str(log)]
    term = subprocess.run(cli + ["--html", str(tmp_path / "r.html")], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert "Weighed most" in term.stdout and "worker-1.log:1" in term.stdout, term.stdout + term.stderr
    js = json.loads(subprocess.run(cli + ["--json"], capture_output=True, text=True, timeout=120, cwd=ROOT).stdout)
    assert js["root_cause"]["weighed"][0]["where"] == "worker-1.log:1" and js["root_cause"]["weighed"][0]["weight"] > 0
    html = (tmp_path / "r.html").read_text()
    assert 'id="weighed"' in html and "CUDA_ERROR_OUT_OF_MEMORY" in html.split('id="weighed"')[1]


def test_the_hits_less_one_line_are_read_as_if_read_again():
    """HitIndex.without(line) is summary() of the hits not on that line, for every line of real multi-line cases."""
    checked = 0
    for case in sorted((ROOT / "tests" / "realworld" / "realworld-dev").iterdir())[:60]:
        if not (case / "case.json").exists():
            continue
        _, hits, _ = _diagnose(case)
        index = learned.HitIndex(hits)
        assert index.without(("nowhere", 0)) == learned.summary(hits)
        for key in {(h.stream, h.line_no) for h in hits}:
            want = learned.summary([h for h in hits if (h.stream, h.line_no) != key])
            got = index.without(key)
            assert (got[0], +got[1], got[2], got[3]) == (want[0], +want[1], want[2], want[3]), (case.name, key)
            checked += 1
    assert checked > 100


def test_the_html_report_lists_the_alternatives_with_what_settles_each(tmp_path):
    case = ROOT / "tests" / "realworld" / "batch-2026-11-28-s9-mpi" / "m9_002"
    logs = [str(p) for p in case.iterdir() if p.name != "case.json"]
    diag, _ = diagnose_paths(logs, detected_at=0.0)
    assert diag.root_cause.alternatives
    out = tmp_path / "r.html"
    r = subprocess.run([sys.executable, "-m", "distdoctor", "diagnose", *logs, "--html", str(out)], capture_output=True,
                       text=True, timeout=120, cwd=ROOT)
    assert r.returncode in (0, 1, 3), r.stderr
    section = out.read_text().split('id="alternatives"')[1].split("</ul>")[0]
    for a in diag.root_cause.alternatives:
        assert f"<code>{a.category.value}</code>" in section and "settled by" in section



def test_cases_group_by_repository_and_a_page_by_its_site():
    """Grouped CV: no repository (or Q&A site) in both a training and a test fold."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from build_model import repo_of
    assert repo_of("https://github.com/Horovod/horovod/issues/978") == "horovod/horovod"
    assert repo_of("horovod/horovod#1029") == "horovod/horovod"
    assert repo_of("https://stackoverflow.com/questions/123/tf-hangs") == repo_of("https://www.stackoverflow.com/q/9")
    assert repo_of("https://stackoverflow.com/questions/123/x") != repo_of("https://discuss.pytorch.org/t/x/1")


def test_every_deal_of_repositories_to_folds_keeps_a_repository_in_one_fold(monkeypatch):
    """The shipped deal and the shuffled ones of --spread partition the cases, each repository in one fold, and a
    shuffled deal is not the shipped one."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    import build_model as bm
    rows = [{"repo": f"org/r{i % 23}"} for i in range(200)]
    deals = []
    for deal in (None, 1, 2):
        monkeypatch.setattr(bm, "DEAL", deal)
        folds = bm.grouped_folds(rows)
        assert sorted(i for f in folds for i in f) == list(range(200)) and len(folds) == bm.FOLDS
        assert all(len({rows[i]["repo"] for i in f} & {rows[j]["repo"] for j in g}) == 0
                   for a, f in enumerate(folds) for g in folds[a + 1:])
        deals.append(sorted(map(sorted, folds)))
    assert deals[0] != deals[1] != deals[2]


@pytest.mark.parametrize("hand, p, want", [
    ("high", 0.93, "high"),      # the line names its cause and the corpus agrees
    ("high", 0.62, "medium"),    # the line reads as a cause, but like cases often had another: no longer high
    ("high", 0.20, "low"),
    ("medium", 0.99, "medium"),  # a line that names an effect stays at most medium however sure the corpus is
    ("low", 0.97, "low"),        # a log without the deciding line is never sold as more than a guess
    (None, 0.85, "high"),
])
def test_confidence_is_the_calibrated_probability_capped_by_the_reading(hand, p, want):
    assert learned.confidence_of(hand, p) == want


def test_the_terminal_shows_the_calibrated_probability(tmp_path):
    """`diagnose` on a real case prints the band and the probability it comes from, in the terminal and the HTML
    report; --json carries both."""
    case = ROOT / "tests" / "realworld" / "realworld-dev" / "dev_017"
    logs = [str(p) for p in case.iterdir() if p.name != "case.json"]
    got, _ = diagnose_paths(logs, detected_at=0.0)
    rc = got.root_cause
    assert rc.probability is not None and 0.0 <= rc.probability <= 1.0
    out = subprocess.run([sys.executable, "-m", "distdoctor", "diagnose", *logs, "--html", str(tmp_path / "r.html")],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"})
    assert f"confidence {rc.confidence} ({rc.probability:.0%})" in out.stdout, out.stdout
    html = (tmp_path / "r.html").read_text()
    assert f'data-confidence="{rc.confidence}">{rc.confidence} ({rc.probability:.0%})<' in html
    js = subprocess.run([sys.executable, "-m", "distdoctor", "diagnose", "--json", *logs], capture_output=True,
                        text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    d = json.loads(js.stdout)["root_cause"]
    assert d["probability"] == rc.probability and d["confidence"] == rc.confidence


def test_a_run_bundle_keeps_the_confidence_of_what_the_supervisor_recorded():
    """A run bundle's verdict rests on what `distdoctor run` recorded (exits, signals, memory), which the corpus of
    posted logs knows nothing of: the learned reading ranks its alternatives but does not band its confidence. The
    same task logs without the bundle's record are banded."""
    bundle = ROOT / "tests" / "corpus" / "sigkill-run-bundle"
    hand, _ = diagnose_paths([str(bundle)], detected_at=0.0, learned=False)
    got, _ = diagnose_paths([str(bundle)], detected_at=0.0)
    assert got.root_cause.confidence == hand.root_cause.confidence and got.root_cause.probability is None
    raw, _ = diagnose_paths([str(bundle / "logs")], detected_at=0.0)
    assert raw.root_cause.probability is not None


def test_a_verdict_whose_line_names_no_cause_is_read_blind_to_its_given_category():
    """Where the learned reading decides (DD160, DD861, DD1510), the category the hand-written reasoning gave the line
    is no evidence: no candidate carries the hand-written features; elsewhere the verdict's own category does."""
    from types import SimpleNamespace

    from distdoctor.model import Category
    for code, blind in (("DD160", True), ("DD861", True), ("DD1510", True), ("DD860", False)):
        rc = SimpleNamespace(code=code, category=Category.USER_CODE_ERROR, confidence="low", alternatives=())
        feats = learned.features(SimpleNamespace(root_cause=rc), [])
        hand = [c for c, f in feats.items() if any(k.startswith("is_hand") for k in f)]
        assert hand == ([] if blind else ["user_code_error"]), code


def test_an_abort_or_a_failed_check_with_no_stated_reason_is_decided_by_the_learned_reading(tmp_path):
    """DD765 (a task aborted: SIGABRT, an uncaught C++ exception) and DD766 (a C++ CHECK failed) say how the process
    ended itself, not why: where no known line states the reason, the learned reading decides the category at low
    confidence, and not always a native crash (the hand-written reading, right on 1 of the corpus' 16 such cases).
    glibc's heap checks ("double free or corruption") are a native defect (DD1518) and keep their reading."""
    seen = other = 0
    for case, _, ranked, got in _read_by_code((learned.ABORTED, learned.CHECK_FAILED)):
        rc = got.root_cause
        seen += 1
        assert (rc.category.value, rc.confidence) == (ranked[0], "low"), case
        assert "learned reading" in rc.summary
        other += rc.category.value != "segfault_core_dump"
    assert seen >= 10, seen
    assert other > 0
    frag = tmp_path / "output.log"
    frag.write_text("*** Error in `python': double free or corruption (!prev): 0x000055d5c6b1e6b0 ***\n"
                    "Aborted (core dumped)\n")
    heap, _ = diagnose_paths([str(frag)], detected_at=0.0)
    assert (heap.root_cause.code, heap.root_cause.category.value) == ("DD1518", "segfault_core_dump")
