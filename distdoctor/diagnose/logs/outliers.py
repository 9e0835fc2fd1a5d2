"""The task whose lines differ from its peers': a spatial outlier in a job's logs.

Tasks of one job run the same program, so they print the same lines -- ``steps per epoch: 26``, ``samples: 6000``,
``batches: 26`` -- with the same values. When every task printed a line of one shape (its numbers aside) and all but
one agree on its numbers, the one that disagrees is the task the job's imbalance comes from: the rank with fewer
batches finishes its epoch first and its peers' next collective fails. Pure: (task, line) pairs in, an
:class:`Outlier` or None out.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from .prefixes import split_prefix

__all__ = ["Outlier", "value_outlier", "task_lines"]

_NUM = re.compile(rb"\d+(?:\.\d+)?")
# an Open MPI / horovodrun output prefix anywhere in a line: a progress bar redrawn with \r before it, pasted without
# the \r, leaves it in the middle
_MPI_ANYWHERE = re.compile(rb"\[(?:1,)?(\d{1,5})\]<std(?:out|err)>:")
MIN_TASKS = 3          # an outlier needs a majority to differ from
MAX_LINE = 400


@dataclass(frozen=True)
class Outlier:
    task: str
    line: str               # the outlier's line
    value: str              # its numbers
    usual: str              # what the others printed
    others: int             # how many tasks printed the usual numbers


def task_lines(data: bytes, task: str | None) -> list[tuple[str, bytes]]:
    """(task, line) pairs of a log: the file's task, or the task its prefix names (the last prefix on the line)."""
    out = []
    for raw in data.split(b"\n"):
        raw = raw.rsplit(b"\r", 1)[-1][:MAX_LINE]
        if not raw.strip():
            continue
        who = task
        if who is None:
            found = list(_MPI_ANYWHERE.finditer(raw))
            if found:
                who, raw = f"rank:{int(found[-1].group(1))}", raw[found[-1].end():]
            else:
                w, rest, style = split_prefix(raw.decode("utf-8", "replace"))
                if w is None or style is None:
                    continue
                who, raw = w, rest.encode("utf-8", "replace")
        out.append((who, raw.strip()))
    return out


def value_outlier(lines: list[tuple[str, bytes]]) -> Outlier | None:
    """The one task whose numbers differ on a line every task printed once, when all the others agree."""
    tasks = {t for t, _ in lines}
    if len(tasks) < MIN_TASKS:
        return None
    by_shape: dict[bytes, dict[str, list[bytes]]] = defaultdict(lambda: defaultdict(list))
    for t, text in lines:
        if _NUM.search(text):
            by_shape[_NUM.sub(b"#", text)][t].append(text)
    best: Outlier | None = None
    for shape, per_task in by_shape.items():
        if len(per_task) != len(tasks) or any(len(v) != 1 for v in per_task.values()):
            continue
        values = {t: tuple(_NUM.findall(v[0])) for t, v in per_task.items()}
        counts = Counter(values.values())
        if len(counts) != 2:
            continue
        (usual, n_usual), (odd, n_odd) = counts.most_common()
        if n_odd != 1 or n_usual < MIN_TASKS - 1:
            continue
        task = next(t for t, v in values.items() if v == odd)
        cand = Outlier(task, per_task[task][0].decode("utf-8", "replace"), " ".join(x.decode() for x in odd),
                       " ".join(x.decode() for x in usual), n_usual)
        if best is None or cand.others > best.others:
            best = cand
    return best
