"""DD210: resource thresholds crossed during a run, as warning findings."""
from __future__ import annotations

from typing import Iterable

from ..catalogue import RuleList
from ..model import Category, Evidence, Finding, Severity
from .thresholds import Crossing

__all__ = ["RULES", "THRESHOLD_RULE", "threshold_findings"]

RULES = RuleList()
THRESHOLD_RULE = RULES.add(
    code="DD210", name="resource-threshold", category=Category.RESOURCE_EXHAUSTION,
    title="A resource threshold was crossed",
    detects="A task's memory, GPU memory or step time, or the free disk space, crossed a `--threshold` during "
            "`run` (defaults: mem=90%, gpu_mem=95%, disk_free=1GiB, step_time=5x, mem_eta=120s), or its memory "
            "rose steadily toward its limit fast enough to reach it within `mem_eta`.",
    why="These come before the failure: the OOM killer, a full disk that breaks the checkpoint, a slowdown "
        "that turns into a timeout. Seen early, they can be acted on while the job still runs.",
    evidence="The supervisor's samples (RSS against the cgroup or host limit, GPU memory from NVML, step times, "
             "free space of the bundle's file system) at the first crossing; the forecast is a least-squares fit "
             "over the last 30 s of memory samples.",
    remedy="Memory: a smaller batch or shuffle buffer, no in-memory `cache()`, or a higher limit; a leak if it "
           "grows every epoch. Disk: free space or move checkpoints. Step time: look at that task's host (CPU "
           "contention, I/O, throttling) and input pipeline.",
)


def threshold_findings(crossings: Iterable[Crossing]) -> list[Finding]:
    """One warning per (threshold, task): its first crossing, with the figure."""
    return [THRESHOLD_RULE.finding(culprit=c.task, summary=c.summary, severity=Severity.WARNING, at=c.at,
                                   evidence=[Evidence(task=c.task, ts=c.at, text=f"{c.kind}: {c.summary}")])
            for c in crossings]
