"""A learned, calibrated ranking of the causes a diagnosis could name (issue 25): it orders the alternatives.

For every category, the features of that candidate (:func:`candidate_features`): whether the hand-written reasoning
chose it and how sure it was, its place among the alternatives, the signature hits of that category in each role,
how specific the most specific is, whether it is the first or the strongest cause line, and a per-category bias.
One set of weights scores every candidate (a conditional logit), so every case teaches about every cause; a softmax
over the candidates, tempered, gives each one's probability. ``scripts/build_model.py`` trains it on the real corpus
(``tests/realworld/*``), deterministically, cross-validated grouped by source repository, and ships it as
``data/model.json``, read here in pure Python (no scikit-learn or numpy at run time).

What it decides (:func:`with_learned_alternatives`): the verdict's alternatives -- the next most probable causes,
each with the record that would settle it. On the real corpus, cross-validated grouped by repository, that lists the
truth among the verdict and its first two alternatives at least as often as the hand-written ranking (more often
before the session-9 knowledge-base work, as often after it: ``benchmarks/RESULTS-model-cv.md``). The cause itself
and its confidence stay the hand-written reasoning's: the learned top pick is right about as often, and the
hand-written "high" band is more precise than the learned probability's, so the learned probability does not name
the confidence.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from functools import lru_cache
from importlib import resources

__all__ = ["features", "candidate_features", "rank", "load", "Model", "with_learned_alternatives"]

def candidate_features(diag, hits: list, category: str) -> dict[str, float]:
    """What the reading found for one candidate cause: whether the hand-written reasoning chose it (and how sure it
    was), where it ranks among the alternatives, how many signature hits of that category the logs hold in each
    role, how specific the most specific one is, whether it is the first or the strongest cause line, and a
    per-category bias (how often that cause is the truth)."""
    f: dict[str, float] = {f"cat={category}": 1.0}
    rc = diag.root_cause
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
    roles: Counter = Counter()
    top = 0
    for h in hits:
        if h.sig.category.value != category:
            continue
        roles[getattr(h.sig.role, "value", str(h.sig.role))] += 1
        top = max(top, getattr(h.sig, "rank", 0) or 0)
    for r, n in roles.items():
        f[f"n_{r}"] = math.log1p(n)
    f["maxrank"] = top / 100.0
    causes = [h for h in hits if getattr(h.sig.role, "value", str(h.sig.role)) == "cause"]
    if causes:
        if causes[0].sig.category.value == category:
            f["first_cause"] = 1.0
        if max(causes, key=lambda h: getattr(h.sig, "rank", 0) or 0).sig.category.value == category:
            f["top_cause"] = 1.0
    return f


def features(diag, hits: list) -> dict[str, dict[str, float]]:
    """Every category's candidate features."""
    from ...model import Category
    return {c.value: candidate_features(diag, hits, c.value) for c in Category}


class Model:
    """A conditional logit: one score per candidate cause from shared weights over its features, a softmax over the
    candidates (tempered: the temperature fitted on grouped cross-validation's out-of-fold scores)."""

    def __init__(self, data: dict) -> None:
        self.weights: dict[str, float] = data["weights"]
        self.intercept: float = data["intercept"]
        self.temperature: float = data.get("temperature", 1.0)
        self.meta: dict = data.get("meta", {})

    def score(self, feats: dict[str, float]) -> float:
        return self.intercept + sum(self.weights.get(k, 0.0) * x for k, x in feats.items())

    def rank(self, candidates: dict[str, dict[str, float]]) -> list[tuple[str, float]]:
        scores = {c: self.score(f) / self.temperature for c, f in candidates.items()}
        top = max(scores.values())
        exps = {c: math.exp(s - top) for c, s in scores.items()}
        z = sum(exps.values())
        return sorted(((c, e / z) for c, e in exps.items()), key=lambda t: (-t[1], t[0]))


@lru_cache(maxsize=1)
def load() -> Model | None:
    """The shipped model, or None when the package holds none."""
    try:
        text = resources.files(__package__).joinpath("data/model.json").read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return None
    return Model(json.loads(text))


def rank(diag, hits: list) -> list[tuple[str, float]]:
    """Every category with its calibrated probability, most probable first ([] without a shipped model)."""
    m = load()
    return m.rank(features(diag, hits)) if m is not None else []


def with_learned_alternatives(diag, hits: list):
    """``diag`` with its root cause's alternatives re-ranked by the learned probability: the next most probable
    causes other than the verdict's, at most three; an alternative the hand-written reasoning gave keeps its words
    and culprit, a new one says it comes from the learned reading and names what would settle it."""
    rc = diag.root_cause
    if rc is None or not rc.alternatives or diag.status.value in ("succeeded", "running"):
        return diag   # where the reasoning saw no other reading (a plain exception in the user's file), none is made up
    ranked = rank(diag, hits)
    if not ranked:
        return diag
    from dataclasses import replace

    from ...model import RUN_ONLY_CATEGORIES, Alternative, Category
    from .settle import settle_for
    given = {a.category.value: a for a in rc.alternatives}
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
    return replace(diag, root_cause=replace(rc, alternatives=tuple(alts)))
