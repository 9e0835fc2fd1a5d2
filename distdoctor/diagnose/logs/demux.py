"""Which task wrote a line: prefixes of combined streams, file names, and the log's own content.

Pure functions over text. A line's writer comes, in order, from

1. its prefix in a combined stream (the one grammar of those: :mod:`.prefixes`);
2. the file's name (``worker-1.log``, ``rank3.out``, ``slurm-12_1.out``);
3. the file's content: ``Starting TensorFlow worker:1`` (TensorFlowOnSpark),
   ``task_type 'worker', task_id 1``, a TF_CONFIG's ``task``, a device the
   task created (``/job:worker/replica:0/task:1/device:CPU:0``), Horovod's
   ``rank 2 / size 4``, or the address the task's server started on, looked
   up in the cluster spec the same log printed.

Otherwise the writer stays unknown (None): the culprit is then what the lines
themselves name, or nobody.
"""
from __future__ import annotations

import ast
import json
import os
import re

__all__ = ["file_stem", "task_from_filename", "WriterGuess", "normalise_task", "parse_cluster"]

# a task token and its index; the v1alpha1 tf-operator named pods JOB-TYPE-RUNTIMEID-INDEX-RANDOM (a 4-character
# runtime id between the type and the index: dist-mnist-worker-3ti2-1-9st9r is worker:1)
_TASK_TOKEN = re.compile(r"(?:^|[^a-z])(chief|worker|ps|evaluator|master|launcher|rank)"
                         r"(?:[-_.:]?(\d+)|-[a-z0-9]{4}-(\d+)(?=-[a-z0-9]{5}$))?(?![a-z])", re.I)
_SLURM_FILE = re.compile(r"^slurm-\d+[_.](\d+)(?:[_.](\d+))?$", re.I)
_TASK_SPEC = re.compile(r"^([a-z_][a-z0-9_]*):(\d+)$", re.I)
_LOG_EXTS = {".log", ".txt", ".out", ".err", ".stdout", ".stderr", ".gz", ".logs"}


def normalise_task(job: str, index: str | int) -> str:
    return f"{job.lower()}:{int(index)}"


def file_stem(name: str) -> str:
    """The name without its log extensions and rotation number (``job-worker-1.log.2`` -> ``job-worker-1``)."""
    base = os.path.basename(name.rstrip("/"))
    while True:
        root, ext = os.path.splitext(base)
        if ext.lower() in _LOG_EXTS:
            base = root
            continue
        # a rotation number (worker-1.log.2) follows a log extension; in worker.1 the number is the task's index
        if re.fullmatch(r"\.\d+", ext) and os.path.splitext(root)[1].lower() in _LOG_EXTS:
            base = root
            continue
        return base


def task_from_filename(name: str) -> str | None:
    """The task a file, pod or service name stands for (``myjob-worker-1.log`` -> ``worker:1``), or None."""
    stem = file_stem(name)
    m = _TASK_SPEC.match(stem)
    if m:
        return normalise_task(m.group(1), m.group(2))
    m = _SLURM_FILE.match(stem)
    if m:
        return f"worker:{int(m.group(2) or m.group(1))}"
    hits = list(_TASK_TOKEN.finditer(stem))
    if not hits:
        return None
    job, idx = hits[-1].group(1).lower(), hits[-1].group(2) or hits[-1].group(3)
    if job == "rank" and idx is None:
        return None
    return f"{job}:{int(idx) if idx else 0}"


# -- content --------------------------------------------------------------------------------------------------
_TFOS = re.compile(r"Starting TensorFlow (?P<job>[a-z]+):(?P<index>\d+)")
_TASK_TYPE_ID = re.compile(r"task_type\s*=?\s*'(?P<job>\w+)',?\s*task_id\s*=?\s*(?P<index>\d+)")
_CREATED_DEVICE = re.compile(r"(?:Created (?:TensorFlow )?device|Local device|local_devices = \[)\W*/job:(?P<job>[A-Za-z_]+)(?:/replica:\d+)?/task:(?P<index>\d+)")
_HVD_RANK = re.compile(r"\brank (?P<rank>\d+) / size (?P<size>\d+)")
_STARTED_SERVER = re.compile(r"Started server with target: grpc://(?P<addr>[\w.\-\[\]:]+)")
_CHANNEL_CACHE = re.compile(r"Initialize GrpcChannelCache for job (?P<job>\w+) -> \{(?P<body>[^}]*)\}")
_TFCONFIG_TASK = re.compile(r"""['"]task['"]\s*:\s*\{[^}]*?['"]type['"]\s*:\s*u?['"](?P<job>\w+)['"][^}]*?['"]index['"]\s*:\s*(?P<index>\d+)""")
_TFCONFIG_TASK2 = re.compile(r"""['"]task['"]\s*:\s*\{[^}]*?['"]index['"]\s*:\s*(?P<index>\d+)[^}]*?['"]type['"]\s*:\s*u?['"](?P<job>\w+)['"]""")


class WriterGuess:
    """Collects clues about who wrote one stream; :meth:`task` is the answer when the clues agree."""

    def __init__(self) -> None:
        self.votes: dict[str, int] = {}
        self.addresses: dict[str, str] = {}   # host:port -> task, from printed channel caches / cluster specs
        self.server: str | None = None

    def see(self, text: str) -> None:
        for rx in (_TFOS, _TASK_TYPE_ID, _CREATED_DEVICE, _TFCONFIG_TASK, _TFCONFIG_TASK2):
            m = rx.search(text)
            if m:
                t = normalise_task(m.group("job"), m.group("index"))
                self.votes[t] = self.votes.get(t, 0) + 1
                return
        m = _HVD_RANK.search(text)
        if m and "Horovod" in text and m.group("size") != "1":
            t = f"rank:{int(m.group('rank'))}"
            self.votes[t] = self.votes.get(t, 0) + 1
            return
        m = _STARTED_SERVER.search(text)
        if m:
            self.server = m.group("addr")
            return
        m = _CHANNEL_CACHE.search(text)
        if m:
            for part in m.group("body").split(","):
                idx, _, addr = part.partition("->")
                if addr.strip() and idx.strip().isdigit():
                    self.addresses[addr.strip()] = normalise_task(m.group("job"), idx.strip())

    def task(self) -> str | None:
        if len(self.votes) == 1:
            return next(iter(self.votes))
        if self.votes:
            best = max(self.votes.items(), key=lambda kv: kv[1])
            if best[1] >= 3 * sorted(self.votes.values())[-2]:
                return best[0]
            return None
        if self.server and self.server in self.addresses:
            return self.addresses[self.server]
        return None


def parse_cluster(text: str) -> tuple[dict[str, list[str]] | None, str | None]:
    """A cluster spec / TF_CONFIG printed in a line: ({job: [addresses]}, own task or None)."""
    start = text.find("{")
    if start < 0:
        return None, None
    blob = text[start:]
    depth = 0
    for i, ch in enumerate(blob):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                blob = blob[:i + 1]
                break
    else:
        return None, None
    data = None
    for loader in (json.loads, _py_literal):
        try:
            data = loader(blob)
            break
        except Exception:   # noqa: BLE001 -- any unparsable text is simply not a spec
            continue
    if not isinstance(data, dict):
        return None, None
    own = None
    cluster = data.get("cluster", data)
    task = data.get("task")
    if isinstance(task, dict) and "type" in task:
        try:
            own = normalise_task(str(task["type"]), int(task.get("index", 0)))
        except (TypeError, ValueError):
            own = None
    if not isinstance(cluster, dict):
        return None, own
    out = {}
    for job, addrs in cluster.items():
        if isinstance(addrs, (list, tuple)) and all(isinstance(a, str) for a in addrs):
            out[str(job)] = list(addrs)
        elif isinstance(addrs, dict):
            out[str(job)] = [str(v) for v in addrs.values()]
    return (out or None), own


def _py_literal(blob: str):
    return ast.literal_eval(blob) if len(blob) < 20000 else None
