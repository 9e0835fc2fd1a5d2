"""What each hand-written layer of the reasoning buys, measured (issue 25, item 2).

Each layer between the readings and the verdict is switched off in turn (its function replaced by the identity, in
this process only), every real case is read again, the learned reading is retrained, and the figures ``diagnose``
prints are cross-validated exactly as ``scripts/build_model.py`` does (5 folds grouped by source repository): top-1,
top-3, high-confidence precision, over all cases and where the log holds the deciding line. A layer whose removal
costs nothing can go; one that costs cases is knowledge the learned reading has not learnt from the corpus.

The calibration layer (confidence caps of messages with more than one usual cause, the usual causes', lookalikes'
and word model's alternatives: ``calibrate.py``, ``usual_causes.py``) was measured here and removed in session 22:
switched off it cost nothing on 856 cases; its confidence caps stayed, as knowledge about messages
(``kb/ambiguous.py``). The safety net's word model went with it (the learned reading decides a line no signature
knows). ``benchmarks/RESULTS-layers.md`` holds the run after the removal.

    .venv/bin/python benchmarks/bench_layers.py [--only NAME ...] [--md benchmarks/RESULTS-layers.md]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts"), str(ROOT / "tests")]


@contextmanager
def _set(obj, name: str, value):
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


def _layers() -> dict:
    """Each layer's name, what it is, and the patches that switch it off."""
    from distdoctor.diagnose.logs import hindsight, priors, reason
    return {
        "priors": ("the priors' own rules (a SIGKILL with no sender, a step memory limit, ...; logs/priors.py)",
                   [(priors, "_RULES", ())]),
        "hindsight": ("hindsight (what the rest of the logs says of the root line; logs/hindsight.py)",
                      [(hindsight, "RULES", ())]),
        "safety net": ("the safety net (a cause from an error line no signature reads; logs/safetynet.py)",
                       [(reason, "rescue", lambda v, hits, lines, facts: v)]),
        "multi-line": ("the multi-line readings (several lines together; logs/multiline.py)",
                       [(reason, "multi_line_reading", lambda *a: None),
                        (reason, "cluster_defect_behind", lambda v, hits: None)]),
    }


def measure(patches: list) -> tuple[dict, dict, float, float]:
    """The figures ``diagnose`` prints, grouped CV, with ``patches`` applied: (all cases, decisive ones), the
    temperature, and the seconds it took."""
    import build_model as bm
    t0 = time.time()
    with ExitStack() as stack:
        for obj, name, value in patches:
            stack.enter_context(_set(obj, name, value))
        rows = [bm.read(c) for c in bm.cases()]
    oof, t = bm.cross_validate(rows)
    dec = [i for i, r in enumerate(rows) if r["decisive"]]
    every = bm.figures(rows, oof, joint=True)
    decisive = bm.figures([rows[i] for i in dec], [oof[i] for i in dec], joint=True)
    return every, decisive, t, time.time() - t0


def _cells(f: dict) -> list[str]:
    n = f["n"]
    hn, hok = f["bands"]["high"]
    return [f"{f['top1']}/{n} = {100 * f['top1'] / n:.1f} %", f"{f['top3']}/{n} = {100 * f['top3'] / n:.1f} %",
            f"{hok}/{hn} = {100 * hok / max(hn, 1):.1f} %"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="measure these layers only (names: " + ", ".join(_layers()) + ")")
    ap.add_argument("--md", help="also write the table to this Markdown file")
    a = ap.parse_args(argv)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    layers = _layers()
    unknown = [n for n in a.only or () if n not in layers]
    if unknown:
        print(f"bench_layers: no layer named {', '.join(unknown)} (known: {', '.join(layers)})", file=sys.stderr)
        return 2
    chosen = [n for n in layers if not a.only or n in a.only]
    variants = [("as shipped", "every layer", [])] + [(f"without {n}", what, p) for n, (what, p) in layers.items()
                                                     if n in chosen]
    if not a.only:
        variants.append(("without all of them", "every layer above switched off",
                         [x for n in chosen for x in layers[n][1]]))
    out = ["| reading | top-1 | top-3 | high precision | top-1, decisive | top-3, decisive | high, decisive | "
           "temperature |", "|---|---|---|---|---|---|---|---|"]
    n_cases = None
    for name, what, patches in variants:
        every, decisive, t, secs = measure(patches)
        n_cases = every["n"]
        out.append(f"| **{name}**: {what} | " + " | ".join(_cells(every) + _cells(decisive)) + f" | {t:.2f} |")
        print(out[-1], f"({secs:.0f} s)", flush=True)
    head = (f"{n_cases} real cases, 5 folds grouped by source repository; each row: the layer switched off, every "
            "case read again, the learned reading retrained; the figures as `diagnose` prints them.\n")
    text = head + "\n" + "\n".join(out) + "\n"
    print("\n" + text)
    if a.md:
        Path(a.md).write_text("# What each hand-written layer buys (issue 25, item 2)\n\n`.venv/bin/python "
                              f"benchmarks/bench_layers.py --md {a.md}`\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
