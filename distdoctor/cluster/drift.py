"""A task that runs with a TF_CONFIG other than the one it was given. Pure.

``distdoctor run`` writes each task's ``TF_CONFIG``; a wrapper or the training script may change it before
TensorFlow reads it (a port computed wrongly, an index taken from the wrong variable). The bootstrap agent reports
the value the process holds; this module says what is wrong with it against the job's: an address where no task of
the job listens, a task claiming another's index, a job missing or added.
"""
from __future__ import annotations

import json

__all__ = ["tf_config_drift", "DRIFT_MARK"]

# how the supervisor's note in the task's log begins (the log rule DD154 reads it back)
DRIFT_MARK = "runs with a TF_CONFIG other than the one distdoctor gave it"


def _jobs(cfg: dict) -> dict[str, str]:
    out: dict[str, str] = {}
    cluster = cfg.get("cluster") or {}
    if isinstance(cluster, dict):
        for job, addrs in cluster.items():
            if isinstance(addrs, list):
                for i, a in enumerate(addrs):
                    out[f"{job}:{i}"] = str(a)
            elif isinstance(addrs, dict):   # {"0": "host:port"} (sparse clusters)
                for i, a in addrs.items():
                    out[f"{job}:{i}"] = str(a)
    return out


def tf_config_drift(task: str, given: str, seen: str) -> str | None:
    """What is wrong with ``seen`` (the TF_CONFIG ``task``'s process holds) against ``given`` (the one it was
    launched with, whose cluster every task shares); None when nothing that matters differs."""
    if seen == given:
        return None
    try:
        g = json.loads(given)
    except ValueError:
        return None
    try:
        s = json.loads(seen)
    except ValueError:
        return f"its TF_CONFIG is not valid JSON ({seen[:80]!r})"
    if not isinstance(s, dict):
        return "its TF_CONFIG is not a JSON object"
    problems: list[str] = []
    t = s.get("task") or {}
    claimed = f"{t.get('type')}:{t.get('index')}" if isinstance(t, dict) else "?"
    want, have = _jobs(g), _jobs(s)
    if claimed != task:
        if claimed in want:
            problems.append(f"it says it is {claimed} (its TF_CONFIG's task), so two tasks claim {claimed}'s index "
                            f"and port {want[claimed]} and the job's {task} never joins")
        else:
            problems.append(f"it says it is {claimed}, a task the job does not have")
    listening = set(want.values())
    for name, addr in sorted(have.items()):
        if name in want and addr != want[name] and addr not in listening:
            problems.append(f"it lists {name} at {addr}, where no task of the job listens ({name} listens at "
                            f"{want[name]}): it waits for a peer that never answers")
        elif name in want and addr != want[name]:
            problems.append(f"it lists {name} at {addr}, the address of another task ({name} is at {want[name]})")
    missing = sorted(set(want) - set(have))
    extra = sorted(set(have) - set(want))
    if missing:
        problems.append(f"its cluster lacks {', '.join(missing)}")
    if extra:
        problems.append(f"its cluster adds {', '.join(extra)}, which the job does not run")
    return "; ".join(problems) or None
