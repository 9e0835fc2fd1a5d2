"""A learned, calibrated ranking of the causes a diagnosis could name (issue 25): it orders the alternatives and says
which lines weighed most.

For every category, the features of that candidate (:func:`candidate_features`): whether the hand-written reasoning
chose it and how sure it was (not where its line names no cause: :data:`DECIDED_BY_MODEL`), its place among the
alternatives, the signature hits of that category in each role, how specific the most specific is, whether it is the
first or the strongest cause line, what the words of the case's lines speak for (:class:`TextModel`), and a
per-category bias. One set of weights scores every candidate (a conditional logit), so every case teaches about every
cause; a softmax over the candidates, tempered, gives each one's probability.

The words: a case's lines (:func:`case_lines`: every line a signature or the error-line reading matched, and each
log's last lines -- what a user pastes into a thread) as a bag of words (:func:`.words.tokens`), tf-idf weighted,
read by a multinomial logistic regression over the categories; its out-of-fold probability of a candidate's category
is that candidate's ``text_logp`` (stacked: the text model is never scored on a case it learnt from).

``scripts/build_model.py`` trains both on the real corpus (``tests/realworld/*``), deterministically,
cross-validated grouped by source repository, and ships them as ``data/model.json``, read here in pure Python (no
scikit-learn or numpy at run time).

What it decides (:func:`with_learned_reading`): the verdict's alternatives -- the next most probable causes, each with
the record that would settle it; they replaced the hand-written calibration's usual causes, lookalikes and word-model
guesses, which cost nothing switched off (session 22, 856 cases), and in session 28 the rule that offered none for
Python's own exception raised in what looked like the user's own file (the corpus' 12 such cases had another cause 9
times: an API a new version removed, a library's or launcher's own code; the learned alternatives held it in 8) --
and the lines that weighed most for the verdict's cause (:func:`weighed`: the lines without which the learned
probability of that cause falls most); and the cause itself where the verdict's line names none: a line no signature
knows (DD160, :func:`_decided`: it replaced the safety net's word model there), a traceback cut before its
exception (DD861), srun's "task N: Exited with exit code" (DD1510) and Fujitsu MPI's "One of MPI processes was
aborted.(rank=N)" (DD1528), a task that aborted itself or failed a C++
CHECK with no line that says why (DD765, DD766: :func:`decided_by_model`), each read blind to the category it was
given; and the verdict's
confidence (:func:`confidence_of`): the band of its cause's calibrated probability, never above the hand-written
reading's own band (a line that names an effect, a message with more than one usual cause: :mod:`.kb.ambiguous`).
Elsewhere the cause stays the hand-written reasoning's: the learned top pick
is right about as often (``benchmarks/RESULTS-model-cv.md``; session 28 measured it deciding every low-confidence
verdict too: within the noise on the corpus, and wrong on 37 message probes written from the components' own
documentation). The capped band was measured before it was adopted: high-confidence precision in
grouped cross-validation on the 504 real cases 85 % (the hand-written band alone) or 89 % (the probability's alone)
against 93 % (both).
"""
from __future__ import annotations

import json
import math
import os
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .words import tokens

__all__ = ["decided_by_model", "features", "candidate_features", "rank", "load", "Model", "TextModel", "case_lines",
           "Line", "weighed", "with_learned_reading"]

TEXT_LINES = 400      # a case's text: at most this many lines (a 64-task job's hits are many; a pasted case has ~5)
WEIGH_LINES = 80      # lines tried without, for "which lines weighed most"
WEIGHED = 3           # lines named
MIN_WEIGHT = 0.01     # a line whose absence moves the probability less than this did not weigh
# the confidence bands of a calibrated probability (fixed before any figure was read: not tuned on the corpus)
BANDS = (("high", 0.8), ("medium", 0.5), ("low", 0.0))
_ORDER = {"low": 0, "medium": 1, "high": 2}


def band_of(p: float) -> str:
    """The confidence band of a calibrated probability."""
    return next(b for b, lo in BANDS if p >= lo)


def confidence_of(hand: str | None, p: float) -> str:
    """A verdict's confidence: the band of its calibrated probability ``p``, never above what the reading of its
    lines allows (``hand``: a line that names an effect, not its cause, or a log without the deciding line, is at most
    medium or low however often the corpus' like cases had that cause)."""
    learned = band_of(p)
    return learned if hand is None or _ORDER.get(learned, 0) <= _ORDER.get(hand, 0) else hand


@dataclass(frozen=True)
class Line:
    """One line of a case as the learned reading sees it."""

    key: tuple            # (stream, line number) of a hit; (stream, "tail", i) for one of a log's last lines
    text: str
    task: str | None      # the task the line names, else the one that wrote it
    where: str | None     # file:line, when known


def case_lines(hits: list, facts=()) -> list[Line]:
    """The lines the learned reading reads: every line a hit is on (the failure's lines first, harmless and context
    ones after), then each log's last lines not among them; at most :data:`TEXT_LINES`."""
    def order(h) -> int:
        return 1 if getattr(h.sig.role, "value", str(h.sig.role)) in ("benign", "context") else 0
    out: list[Line] = []
    keys: set = set()
    texts: set = set()
    for h in sorted(hits, key=order):
        k = (h.stream, h.line_no)
        if k in keys:
            continue
        keys.add(k)
        t = h.text.strip()
        texts.add((h.stream, t))
        out.append(Line(k, t[:2000], h.named or h.writer, f"{os.path.basename(h.stream)}:{h.line_no}"))
        if len(out) >= TEXT_LINES:
            return out
    said: dict[str, list[str]] = {}
    for stream, t in texts:
        said.setdefault(stream, []).append(t)
    for f in facts:
        for i, t in enumerate(f.tail):
            t = t.strip()
            if not t or (f.name, t) in texts or any(x and t.endswith(x) for x in said.get(f.name, ())):
                continue   # (a hit's text is the line without its launcher's prefix: "[1,0]<stderr>:")
            texts.add((f.name, t))
            out.append(Line((f.name, "tail", i), t[:2000], f.writer, f"{os.path.basename(f.name)} (end)"))
            if len(out) >= TEXT_LINES:
                return out
    return out


class TextModel:
    """What the words of a case's lines speak for: tf-idf (sublinear tf, smoothed idf, L2 norm) of their tokens, a
    multinomial logistic regression over the categories (scikit-learn's ``TfidfVectorizer`` and
    ``LogisticRegression``, computed here by hand)."""

    def __init__(self, data: dict) -> None:
        self.classes: list[str] = data["classes"]
        self.idf: dict[str, float] = data["idf"]
        self.coef: dict[str, list[float]] = data["coef"]
        self.intercept: list[float] = data["intercept"]

    def counts(self, lines: list[str]) -> Counter:
        """How often each known word occurs in ``lines``."""
        return Counter(t for line in lines for t in tokens(line) if t in self.idf)

    def probs(self, lines: list[str] | None = None, tf: Counter | None = None) -> dict[str, float]:
        """Each class's probability for ``lines`` (or their :meth:`counts` ``tf``)."""
        tf = self.counts(lines or []) if tf is None else tf
        v = {t: (1.0 + math.log(n)) * self.idf[t] for t, n in tf.items() if n > 0}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        s = list(self.intercept)
        for t, x in v.items():
            for j, w in enumerate(self.coef[t]):
                s[j] += w * x / norm
        top = max(s)
        e = [math.exp(v - top) for v in s]
        z = sum(e)
        return {c: v / z for c, v in zip(self.classes, e)}


def _role(h) -> str:
    return getattr(h.sig.role, "value", str(h.sig.role))


def _meta(hits: list) -> list[tuple[str, str, int]]:
    """Each hit's (category, role, rank), read once per signature (a 64-task job holds tens of thousands of hits of
    a few dozen signatures)."""
    seen: dict[int, tuple[str, str, int]] = {}
    out = []
    for h in hits:
        m = seen.get(id(h.sig))
        if m is None:
            m = seen[id(h.sig)] = (h.sig.category.value, _role(h), getattr(h.sig, "rank", 0) or 0)
        out.append(m)
    return out


def summary(hits: list, meta: list | None = None) -> tuple[dict, Counter, str | None, str | None]:
    """What the hits say per category, read once: each category's hits per role and its most specific hit's rank;
    the category of the first cause line and of the strongest (the first of the highest rank). ``meta``:
    :func:`_meta` of ``hits``, when already read."""
    roles: dict[str, Counter] = {}
    top: Counter = Counter()
    first = strongest = None
    best = -1
    for cat, role, r in (_meta(hits) if meta is None else meta):
        got = roles.get(cat)
        if got is None:
            got = roles[cat] = Counter()
        got[role] += 1
        if r > top[cat]:
            top[cat] = r
        if role == "cause":
            first = first or cat
            if r > best:
                best, strongest = r, cat
    return roles, top, first, strongest


class HitIndex:
    """:func:`summary` of the hits, and of the hits less one line's, without reading them all again (a 64-task job
    holds thousands of hits, and "which lines weighed most" asks once per line). ``keys``: the lines that will be
    asked about (all when None)."""

    def __init__(self, hits: list, keys: set | None = None) -> None:
        meta = _meta(hits)
        self.full = summary(hits, meta)
        self.ranks: dict[str, Counter] = {}
        self.by_key: dict[tuple, list[tuple[str, str, int]]] = {}
        causes: list[tuple[str, int, tuple]] = []
        for h, m in zip(hits, meta):
            cat, role, r = m
            ranks = self.ranks.get(cat)
            if ranks is None:
                ranks = self.ranks[cat] = Counter()
            ranks[r] += 1
            key = (h.stream, h.line_no)
            if keys is None or key in keys:
                self.by_key.setdefault(key, []).append(m)
            if role == "cause":
                causes.append((cat, r, key))
        self.causes = causes
        self.strong = sorted(causes, key=lambda c: -c[1])    # stable: the first of the highest rank first

    def without(self, key: tuple):
        """:func:`summary` of the hits not on the line ``key``."""
        gone = self.by_key.get(key)
        if not gone:
            return self.full
        roles0, top0, _, _ = self.full
        roles, top = dict(roles0), Counter(top0)
        for cat in {c for c, _, _ in gone}:
            roles[cat] = Counter(roles0[cat])
            ranks = Counter(self.ranks[cat])
            for c, role, r in gone:
                if c == cat:
                    roles[cat][role] -= 1
                    ranks[r] -= 1
            roles[cat] = +roles[cat]
            if not roles[cat]:
                del roles[cat]
            top[cat] = max((r for r, n in ranks.items() if n > 0), default=0)
        first = next((c for c, _, k in self.causes if k != key), None)
        strongest = next((c for c, _, k in self.strong if k != key), None)
        return roles, top, first, strongest


def candidate_features(diag, hits: list, category: str, text: dict | None = None, read=None) -> dict[str, float]:
    """What the reading found for one candidate cause: whether the hand-written reasoning chose it (and how sure it
    was), where it ranks among the alternatives, how many signature hits of that category the logs hold in each
    role, how specific the most specific one is, whether it is the first or the strongest cause line, what the
    words of the case's lines say of it (``text``: the text model's probabilities), and a per-category bias (how
    often that cause is the truth). ``read``: :func:`summary` of ``hits``, when already read."""
    f: dict[str, float] = {f"cat={category}": 1.0}
    rc = diag.root_cause
    if decided_by_model(rc):
        rc = None   # its line names no cause: the category it was given is no evidence (the reading decides it)
    if rc is not None and rc.category.value == category:
        f["is_hand"] = 1.0
        f[f"is_hand_{rc.confidence}"] = 1.0
        if rc.code[2:3] in "12345":   # a structural rule of run/diagnose (DD1xx-DD5xx), not a signature
            f["hand_structural"] = 1.0
    if rc is not None:
        for i, a in enumerate(rc.alternatives[:3]):
            if a.category.value == category:
                f["alt_rank_inv"] = 1.0 / (i + 1)
                f[f"alt{i}"] = 1.0
    roles, top, first, strongest = read if read is not None else summary(hits)
    for r, n in roles.get(category, {}).items():
        f[f"n_{r}"] = math.log1p(n)
    f["maxrank"] = top[category] / 100.0
    if first == category:
        f["first_cause"] = 1.0
    if strongest == category:
        f["top_cause"] = 1.0
    if text:
        f["text_logp"] = text_logp(text.get(category, 0.0))
    return f


def text_logp(p: float) -> float:
    """The text model's probability of a candidate's category as its feature (the build and this module alike)."""
    return math.log(max(p, 1e-6))


def features(diag, hits: list, text: dict | None = None, read=None) -> dict[str, dict[str, float]]:
    """Every category's candidate features (``text``: the text model's probabilities of the case's lines; ``read``:
    :func:`summary` of ``hits``, when already read)."""
    from ...model import Category
    read = summary(hits) if read is None else read
    return {c.value: candidate_features(diag, hits, c.value, text, read) for c in Category}


class Model:
    """A conditional logit: one score per candidate cause from shared weights over its features, a softmax over the
    candidates (tempered: the temperature fitted on grouped cross-validation's out-of-fold scores); with the text
    model whose probabilities are one of those features."""

    def __init__(self, data: dict) -> None:
        self.weights: dict[str, float] = data["weights"]
        self.intercept: float = data["intercept"]
        self.temperature: float = data.get("temperature", 1.0)
        self.meta: dict = data.get("meta", {})
        self.text: TextModel | None = TextModel(data["text"]) if data.get("text") else None

    def score(self, feats: dict[str, float]) -> float:
        return self.intercept + sum(self.weights.get(k, 0.0) * x for k, x in feats.items())

    def rank(self, candidates: dict[str, dict[str, float]]) -> list[tuple[str, float]]:
        scores = {c: self.score(f) / self.temperature for c, f in candidates.items()}
        top = max(scores.values())
        exps = {c: math.exp(s - top) for c, s in scores.items()}
        z = sum(exps.values())
        return sorted(((c, e / z) for c, e in exps.items()), key=lambda t: (-t[1], t[0]))

    def reading(self, diag, hits: list, lines: list[Line], tf: Counter | None = None,
                read=None) -> list[tuple[str, float]]:
        """Every category with its probability, given the hand-written diagnosis, the hits and the case's lines
        (``tf``: the lines' word counts, when already counted; ``read``: :func:`summary` of the hits)."""
        text = None
        if self.text is not None:   # (as scripts/build_model.py reads every case, even one of no words)
            text = self.text.probs([ln.text for ln in lines] if tf is None else None, tf)
        return self.rank(features(diag, hits, text, read))


@lru_cache(maxsize=1)
def load() -> Model | None:
    """The shipped model, or None when the package holds none."""
    try:
        text = resources.files(__package__).joinpath("data/model.json").read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return None
    return Model(json.loads(text))


def rank(diag, hits: list, facts=()) -> list[tuple[str, float]]:
    """Every category with its calibrated probability, most probable first ([] without a shipped model)."""
    m = load()
    return m.reading(diag, hits, case_lines(hits, facts)) if m is not None else []


class _NoVerdict:
    root_cause = None


def weighed(m: Model, diag, hits: list, lines: list[Line], category: str, n: int = WEIGHED,
            index: HitIndex | None = None) -> list[tuple[Line, float]]:
    """The lines that weighed most for ``category`` in the learned reading of the lines themselves (the hand-written
    verdict left out: it is what is being explained): each of the case's lines (the matched ones first, at most
    :data:`WEIGH_LINES`) taken away in turn -- its hits and its words -- and the probability of the cause read again;
    the ``n`` whose absence lowers it most, by at least :data:`MIN_WEIGHT`, with that fall."""
    blind = _NoVerdict()
    index = HitIndex(hits, {ln.key for ln in lines[:WEIGH_LINES]}) if index is None else index
    base = dict(m.reading(blind, hits, lines, read=index.full)).get(category, 0.0)
    each = [m.text.counts([ln.text]) if m.text is not None else Counter() for ln in lines[:WEIGH_LINES]]
    total = m.text.counts([ln.text for ln in lines]) if m.text is not None else Counter()
    falls = []
    for ln, own in zip(lines, each):   # the line's words are taken from the counts, its hits from the index
        p = dict(m.reading(blind, hits, [], total - own, read=index.without(ln.key))).get(category, 0.0)
        if base - p >= MIN_WEIGHT:
            falls.append((ln, base - p))
    falls.sort(key=lambda t: -t[1])
    return falls[:n]


UNKNOWN_MESSAGE = "DD160"   # the knowledge base names no cause; a line reads as an error (:mod:`.safetynet`)
CUT_TRACEBACK = "DD861"     # a traceback ended the task, but its exception line is not in the log
TASK_EXITED = "DD1510"      # srun: a task exited with a non-zero status (which task, not why)
RANK_ABORTED = "DD1528"     # Fujitsu MPI's plexec: a rank aborted (which rank, not why)
ABORTED = "DD765"           # a task aborted itself (SIGABRT, an uncaught C++ exception) on an error no line states
CHECK_FAILED = "DD766"      # a C++ CHECK failed: the violated condition, not the category of its cause
# the verdicts whose line names no cause: there the learned reading decides it (:func:`_decided`)
DECIDED_BY_MODEL = (UNKNOWN_MESSAGE, CUT_TRACEBACK, TASK_EXITED, RANK_ABORTED, ABORTED, CHECK_FAILED)


def decided_by_model(rc) -> bool:
    """Whether the learned reading decides this root cause's category (:data:`DECIDED_BY_MODEL`)."""
    return rc is not None and rc.code in DECIDED_BY_MODEL


def _decided(diag, ranked: list[tuple[str, float]]):
    """Where the verdict's line names no cause (:data:`DECIDED_BY_MODEL`) -- a line no signature knows (DD160), a
    traceback whose exception line the log lacks (DD861: the exception, not the traceback, would say what failed; its
    hand-written reading, the user's code, was right on 2 of the corpus's 30 such cases), or srun's report that a
    task exited with a non-zero status (DD1510: the task's own output says why; its hand-written reading, a crashed
    peer, was right on none of the corpus's 5 such cases, 4 of them a library's or the program's own defect), or a task
    that aborted itself (DD765: SIGABRT, an uncaught C++ exception) or failed a C++ CHECK (DD766) with no known line
    that states why (hindsight takes one that does; its hand-written reading, a native crash, was right on 1 of the
    corpus's 16 such cases; glibc's heap checks are a native defect, DD1518, and keep it) -- the
    learned reading decides its category: its most probable cause (its words, every other line's hits and words), at low confidence.
    It reads such a verdict blind (:func:`candidate_features`: the category the hand-written reasoning gave a line
    that names no cause is no evidence; session 31, five deals of 1,184 cases: top-1 +4 to +14, the median 739 ->
    750, where decisive and high-confidence precision within the spread).
    The quoted line, the task and the remedy stay (and for a cut traceback, what would settle it: the
    traceback's end)."""
    from dataclasses import replace

    from ...model import RUN_ONLY_CATEGORIES, Category
    from .settle import settle_for
    rc = diag.root_cause
    top = next(((c, p) for c, p in ranked if Category(c) not in RUN_ONLY_CATEGORIES), None)
    if top is None:
        return diag
    cat, p = Category(top[0]), top[1]
    line = rc.evidence[0].text.strip()[:200] if rc.evidence else ""
    ranks = f"the learned reading of the real corpus ranks {cat.value} first ({p:.0%})"
    summary = (f"not in the knowledge base: the first line that reads as an error is \"{line}\"; {ranks}"
               if rc.code == UNKNOWN_MESSAGE else f"{rc.summary}; {ranks}")
    root = replace(rc, category=cat, summary=summary, confidence="low", alternatives=())   # the learned ones follow
    if rc.code != UNKNOWN_MESSAGE:   # a cut traceback, an abort, srun's report: what settles it is their own
        return _with_root(diag, root)
    notes = tuple(f"what would settle it: {settle_for(cat)}" if n.startswith("what would settle it:") else n
                  for n in diag.notes)
    return replace(_with_root(diag, root), notes=notes)


def with_learned_reading(diag, hits: list, facts=(), *, witnessed: bool = False):
    """``diag`` with the learned reading: its root cause's alternatives re-ranked by the learned probability (the
    next most probable causes other than the verdict's, at most three, the reasoning's own first one among them;
    an alternative the hand-written reasoning gave keeps its words and culprit, a new one says it comes from the
    learned reading and names what would settle it), the lines that weighed most for its cause, and its confidence
    banded by its calibrated probability (:func:`confidence_of`) -- except where ``witnessed``: a run bundle, whose
    verdict rests on what the supervisor recorded (exits, signals, memory), of which the corpus of posted logs knows
    nothing; its confidence stays the reading's."""
    rc = diag.root_cause
    m = load()
    if rc is None or m is None or diag.status.value in ("succeeded", "running"):
        return diag
    from dataclasses import replace

    from ...model import RUN_ONLY_CATEGORIES, Alternative, Category, Weighed
    from .settle import settle_for
    lines = case_lines(hits, facts)
    index = HitIndex(hits, {ln.key for ln in lines[:WEIGH_LINES]})
    ranked = m.reading(diag, hits, lines, read=index.full)
    decided = decided_by_model(rc)
    if decided:
        diag = _decided(diag, ranked)
        rc = diag.root_cause
    heavy = tuple(Weighed(text=ln.text, task=ln.task, where=ln.where, weight=round(w, 3))
                  for ln, w in weighed(m, diag, hits, lines, rc.category.value, index=index))
    if not witnessed:
        p = dict(ranked).get(rc.category.value, 0.0)
        rc = replace(rc, probability=round(p, 3), confidence=confidence_of(rc.confidence, p))
    given = {a.category.value: a for a in rc.alternatives}
    first = rc.alternatives[0] if rc.alternatives and not decided and rc.alternatives[0].category != rc.category else None
    alts = []
    for cat, p in ranked:
        if cat == rc.category.value or Category(cat) in RUN_ONLY_CATEGORIES:   # no log shows what befell distdoctor
            continue
        a = given.get(cat)
        if a is None:
            c = Category(cat)
            why = (f"the learned reading of the real corpus ranks it next ({p:.0%})" if c != Category.OTHER else
                   f"a cause outside the catalogue (a scheduler's refusal, a launcher's or library's own bug): the "
                   f"learned reading of the real corpus ranks it next ({p:.0%})")
            a = Alternative(category=c, culprit=None, settle=settle_for(c), why=why)
        alts.append(a)
        if len(alts) == 3:
            break
    if first is not None and first.category not in [a.category for a in alts[:2]]:
        # the reasoning's own first other reading stays listed, third: what the stack's messages mean (a GPU that
        # fell off the bus leaves its peers waiting) where the corpus has too few such lines to rank it
        alts = alts[:2] + [first]
    return _with_root(diag, replace(rc, alternatives=tuple(alts), weighed=heavy))


def _with_root(diag, root):
    """``diag`` with ``root`` as its root cause, in its findings too."""
    from dataclasses import replace
    old = diag.root_cause
    return replace(diag, root_cause=root, findings=tuple(root if f is old else f for f in diag.findings))
