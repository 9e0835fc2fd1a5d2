"""Decision accuracy of the restart policy on the labelled verdict -> decision table.

    PYTHONPATH=. python benchmarks/bench_restart_policy.py

Prints accuracy, the confusion matrix (rows: the labelled decision, columns: the policy's)
and every miss. The goal: >= 95 % and no restart of a failure labelled `stop`.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from restart_cases import load_cases  # noqa: E402
from distdoctor.supervise.policy import Action  # noqa: E402


def main() -> int:
    cases = load_cases()
    labels = [Action.RESTART, Action.STOP, Action.NONE]
    matrix = {(e, g): 0 for e in labels for g in labels}
    for c in cases:
        matrix[(c.expect, c.decision.action)] += 1
    right = sum(matrix[(a, a)] for a in labels)
    wrong_restarts = matrix[(Action.STOP, Action.RESTART)]
    print(f"restart policy: {right}/{len(cases)} decisions right = {right / len(cases):.1%}; "
          f"restarts of failures labelled stop: {wrong_restarts}")
    print()
    print("| labelled \\ decided | " + " | ".join(a.value for a in labels) + " |")
    print("|---|" + "---|" * len(labels))
    for e in labels:
        print(f"| {e.value} | " + " | ".join(str(matrix[(e, g)]) for g in labels) + " |")
    misses = [c for c in cases if c.decision.action != c.expect]
    if misses:
        print("\nmisses:")
        for c in misses:
            print(f"  {c.id}: labelled {c.expect.value}, decided {c.decision.action.value} -- {c.decision.reason}"
                  + (f" ({c.note})" if c.note else ""))
    return 0 if right / len(cases) >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
