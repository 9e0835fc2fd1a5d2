"""Metamorphic tier: HOW a log reaches us must not change what it says.

Every development-corpus case that is diagnosed right today (tests/realworld/realworld-dev minus KNOWN_GAPS) is
passed through transformations that real users' copies go through -- a Windows copy, colour codes, a Markdown
quote in a GitHub reply, ``kubectl logs --timestamps``, syslog, a log collector's JSON lines, gzip, a Keras
progress bar drawn over the same line, another task's lines interleaved by ``kubectl logs --prefix`` or ``srun
--label`` -- and must get the same verdict (category and culprit) as the untransformed case.

Each transformation is a small pure function ``{file name: bytes} -> {file name: bytes}``.
"""
from __future__ import annotations

import gzip
import io
import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Callable

import pytest

from distdoctor.diagnose.command import diagnose_paths
from distdoctor.diagnose.logs.demux import task_from_filename
from distdoctor.diagnose.logs.prefixes import split_prefix
from distdoctor.errors import InputError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_realworld_corpus import CASES, CORPUS, KNOWN_GAPS, MODEL_DECIDED  # noqa: E402

Files = dict[str, bytes]
GOOD = [c for c in CASES if c not in KNOWN_GAPS and c not in MODEL_DECIDED]   # a pick that follows the rebuild is no verdict to keep


def case_files(case: str) -> Files:
    return {p.name: p.read_bytes() for p in sorted((CORPUS / case).iterdir()) if p.name != "case.json"}


def _lines(data: bytes) -> list[bytes]:
    """The lines of ``data`` without their ends (a last line without a newline is a line)."""
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def _per_line(fn: Callable[[bytes], bytes]) -> Callable[[Files], Files]:
    def apply(files: Files) -> Files:
        return {name: b"".join(fn(ln) + b"\n" for ln in _lines(data)) for name, data in files.items()}
    apply.__doc__ = fn.__doc__
    return apply


# -- the transformations --------------------------------------------------------------------------------------

def crlf(files: Files) -> Files:
    """A copy made on Windows: CRLF line ends."""
    return {n: b"".join(ln + b"\r\n" for ln in _lines(d)) for n, d in files.items()}


def bom(files: Files) -> Files:
    """A UTF-8 byte-order mark before the first line (Notepad, PowerShell's Out-File)."""
    return {n: b"\xef\xbb\xbf" + d for n, d in files.items()}


trailing_ws = _per_line(lambda ln: ln + b"  \t ")
tabs_to_spaces = _per_line(lambda ln: ln.expandtabs(4))
spaces_to_tabs = _per_line(lambda ln: re.sub(rb"^((?:    )+)", lambda m: b"\t" * (len(m.group(1)) // 4), ln))

_LEVEL_WORDS = re.compile(rb"\b(ERROR|WARNING|INFO|FATAL|CRITICAL|Error|Warning|Exception|Traceback|error)\b")
ansi_words = _per_line(lambda ln: _LEVEL_WORDS.sub(lambda m: b"\x1b[1;31m" + m.group(1) + b"\x1b[0m", ln))
ansi_lines = _per_line(lambda ln: b"\x1b[31m" + ln + b"\x1b[0m" if ln.strip() else ln)
# rich's highlighter colours every number (and so splits "task 4:" or "port 2222" with escapes)
ansi_numbers = _per_line(lambda ln: re.sub(rb"(?<![\w.])(\d+)(?!\w)", lambda m: b"\x1b[1;36m" + m.group(1) + b"\x1b[0m", ln))

md_quote = _per_line(lambda ln: b"> " + ln)
md_bold = _per_line(lambda ln: b"**" + ln + b"**" if ln.strip() else ln)
md_code = _per_line(lambda ln: b"`" + ln + b"`" if ln.strip() and b"`" not in ln else ln)   # each line as `code`


def k8s_timestamps(files: Files) -> Files:
    """``kubectl logs --timestamps``: an RFC 3339 time with nanoseconds before every line."""
    out = {}
    for n, d in files.items():
        out[n] = b"".join(b"2021-03-04T05:%02d:%02d.123456789Z " % (i // 60 % 60, i % 60) + ln + b"\n"
                          for i, ln in enumerate(_lines(d)))
    return out


def syslog(files: Files) -> Files:
    """A syslog / journald (``journalctl -o short``) prefix before every line."""
    return {n: b"".join(b"Mar  4 05:%02d:%02d node3 python[1234]: " % (i // 60 % 60, i % 60) + ln + b"\n"
                        for i, ln in enumerate(_lines(d))) for n, d in files.items()}


def cri(files: Files) -> Files:
    """containerd / CRI-O node logs (``/var/log/pods/NS_POD_UID/CONTAINER/0.log``): ``TIME stderr F text``; a line
    longer than the runtime's buffer is split into ``P`` (partial) records."""
    out = {}
    for n, d in files.items():
        rows = []
        for i, ln in enumerate(_lines(d)):
            ts = b"2021-03-04T05:06:%02d.%09dZ stderr " % (i % 60, i)
            parts = [ln[k:k + 80] for k in range(0, len(ln), 80)] or [b""]
            rows += [ts + b"P " + p for p in parts[:-1]] + [ts + b"F " + parts[-1]]
        out[n] = b"\n".join(rows) + b"\n"
    return out


def docker_json(files: Files) -> Files:
    """Docker's json-file log driver (what /var/log/containers/*.log holds): one JSON object per line."""
    out = {}
    for n, d in files.items():
        text = d.decode("utf-8", "replace")
        out[n] = "".join(json.dumps({"log": ln + "\n", "stream": "stderr",
                                     "time": "2021-03-04T05:06:%02d.%09dZ" % (i % 60, i)}) + "\n"
                         for i, ln in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"))
                         ).encode()
    return out


def cloud_logging_json(files: Files) -> Files:
    """Cloud Logging / structured-logging export: ``{"message": ..., "severity": ...}`` per line."""
    out = {}
    for n, d in files.items():
        rows = []
        for ln in d.decode("utf-8", "replace").splitlines():
            sev = "ERROR" if re.search(r"error|Error|E\d{4} ", ln) else "INFO"
            rows.append(json.dumps({"severity": sev, "message": ln, "timestamp": "2021-03-04T05:06:07.123Z"}))
        out[n] = ("\n".join(rows) + "\n").encode()
    return out


def gzipped(files: Files) -> Files:
    """A compressed attachment: ``worker-0.log.gz``."""
    return {n + ".gz": gzip.compress(d, mtime=0) for n, d in files.items()}


def gzipped_no_suffix(files: Files) -> Files:
    """A compressed log whose name does not say so (saved from a browser, or renamed)."""
    return {n: gzip.compress(d, mtime=0) for n, d in files.items()}


def _bar(step: int, steps: int = 100) -> bytes:
    done = step * 30 // steps
    return b"%4d/%d [%s>%s] - ETA: 3s - loss: 0.2%03d" % (step, steps, b"=" * max(0, done - 1), b"." * (30 - done), step)


def keras_bar_lines(files: Files) -> Files:
    """A tf.keras ``verbose=1`` progress bar (``\\b``/``\\r`` redraws) finished by a newline, every few lines."""
    out = {}
    for n, d in files.items():
        rows = []
        for i, ln in enumerate(_lines(d)):
            if i % 4 == 0:
                rows.append(b"".join(b"\x08" * 60 + b"\r" + _bar(s) for s in range(1, 6)) + b"\n")
            rows.append(ln + b"\n")
        out[n] = b"".join(rows)
    return out


def keras_bar_glued(files: Files) -> Files:
    """A progress bar cut short by a message: the message goes on the bar's line (a terminal or ``2>&1`` copy)."""
    out = {}
    for n, d in files.items():
        rows = []
        for i, ln in enumerate(_lines(d)):
            if i % 3 == 0 and ln.strip():
                ln = b"".join(b"\x08" * 60 + b"\r" + _bar(s) for s in range(1, 4)) + ln
            rows.append(ln + b"\n")
        out[n] = b"".join(rows)
    return out


# A second task that ran to its end: start-up, two whole epochs (Keras' last step of the last epoch drawn).
_HEALTHY = [
    b"2021-03-04 05:06:07.123456: I tensorflow/core/platform/cpu_feature_guard.cc:142] This TensorFlow binary is "
    b"optimized with oneAPI Deep Neural Network Library (oneDNN) to use the following CPU instructions in "
    b"performance-critical operations:  AVX2 FMA",
    b"Epoch 1/2",
    b"100/100 [==============================] - 3s 30ms/step - loss: 0.2310 - accuracy: 0.9120",
    b"Epoch 2/2",
    b"100/100 [==============================] - 3s 29ms/step - loss: 0.1874 - accuracy: 0.9301",
]
HEALTHY_TASK = "worker:7"


def _own_label(name: str, data: bytes) -> tuple[str, str]:
    """(pod name, task) for the lines of one case file when they go through ``kubectl logs --prefix``."""
    lines = [ln.decode("utf-8", "replace") for ln in _lines(data) if ln.strip()][:200]
    if lines and sum(split_prefix(ln)[2] == "mpi" for ln in lines) >= 0.3 * len(lines):
        return "job-launcher", "launcher:0"     # mpirun output is the MPIJob launcher pod's log
    task = task_from_filename(name)
    if task is None:
        return "trainer-5d8f9", ""              # a pod whose name says nothing
    job, idx = task.split(":")
    return f"job-{job}-{idx}", task


def _interleave(own: list[bytes], prefix: Callable[[bytes], bytes], healthy_prefix: bytes) -> tuple[bytes, bytes]:
    """(the combined stream, the healthy task's lines alone): a healthy line after every second line of ``own``."""
    rows, h = [], 0
    for i, ln in enumerate(own):
        rows.append(prefix(ln) + ln + b"\n")
        if i % 2 == 1 and h < len(_HEALTHY):
            rows.append(healthy_prefix + _HEALTHY[h] + b"\n")
            h += 1
    rows += [healthy_prefix + ln + b"\n" for ln in _HEALTHY[h:]]
    return b"".join(rows), b"".join(ln + b"\n" for ln in _HEALTHY)


def kubectl_prefix_split(files: Files) -> tuple[Files, Files]:
    """``kubectl logs -l job-name=job --prefix``: each pod's lines, labelled, interleaved with a healthy pod's.

    Returns (the combined stream, the same lines as one file per pod).
    """
    combined, split = {}, {}
    for n, d in files.items():
        pod, _ = _own_label(n, d)
        tag = b"[pod/%s/tensorflow] " % pod.encode()
        combined[f"kubectl-logs-{len(combined)}.txt"], healthy = _interleave(_lines(d), lambda ln: tag,
                                                                             b"[pod/job-worker-7/tensorflow] ")
        split[f"{pod}.log"] = d
        split["job-worker-7.log"] = healthy
    return combined, split


# srun and slurmstepd print their own messages without a label
_SLURM_OWN = re.compile(rb"^(?:srun|slurmstepd|sbatch|salloc)(?:\[\d+\])?: ")


def srun_label_split(files: Files) -> tuple[Files, Files]:
    """``srun --label``: the task number before each task line, interleaved with healthy task 7's lines."""
    combined, split = {}, {}
    for n, d in files.items():
        task = task_from_filename(n)
        idx = task.split(":")[1] if task else "0"
        tag = b"%s: " % idx.encode()
        combined[f"slurm-4217{len(combined)}.out"], healthy = _interleave(
            _lines(d), lambda ln: b"" if _SLURM_OWN.match(ln) else tag, b"7: ")
        split[f"rank-{idx}.log"] = d      # srun's label is the Slurm task id: rank:N, whatever the TF job
        split["rank-7.log"] = healthy
    return combined, split


def kubectl_prefix(files: Files) -> Files:
    return kubectl_prefix_split(files)[0]


def srun_label(files: Files) -> Files:
    return srun_label_split(files)[0]


TRANSFORMS: dict[str, Callable[[Files], Files]] = {
    "crlf": crlf, "bom": bom, "trailing_ws": trailing_ws, "tabs_to_spaces": tabs_to_spaces,
    "spaces_to_tabs": spaces_to_tabs, "ansi_words": ansi_words, "ansi_lines": ansi_lines, "ansi_numbers": ansi_numbers,
    "md_quote": md_quote, "md_bold": md_bold, "md_code": md_code, "k8s_timestamps": k8s_timestamps, "syslog": syslog,
    "cri": cri, "docker_json": docker_json, "cloud_logging_json": cloud_logging_json, "gzipped": gzipped,
    "gzipped_no_suffix": gzipped_no_suffix, "keras_bar_lines": keras_bar_lines, "keras_bar_glued": keras_bar_glued,
    "kubectl_prefix": kubectl_prefix, "srun_label": srun_label,
}
# Transformations that add a second task's lines; their verdict is compared with the same lines as per-task files.
SPLIT_OF = {"kubectl_prefix": kubectl_prefix_split, "srun_label": srun_label_split}
NAMES_THE_WRITER = set(SPLIT_OF)


# -- diagnosing ---------------------------------------------------------------------------------------------------

def verdict_of(files: Files, folder: Path, stdin: bool = False) -> tuple[str, str | None]:
    folder.mkdir(parents=True, exist_ok=True)
    if stdin:
        (data,) = files.values()
        old = sys.stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(data))
        try:
            diag, _ = diagnose_paths(["-"], detected_at=0.0)
        finally:
            sys.stdin = old
    else:
        paths = []
        for name, data in files.items():
            (folder / name).write_bytes(data)
            paths.append(str(folder / name))
        diag, _ = diagnose_paths(sorted(paths), detected_at=0.0)
    rc = diag.root_cause
    return (rc.category.value if rc is not None else "other"), (rc.culprit if rc is not None else None)


@lru_cache(maxsize=None)
def baseline(case: str) -> tuple[str, str | None]:
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        return verdict_of(case_files(case), Path(tmp))


def expected(name: str, case: str, files: Files, tmp: Path) -> tuple[str, str | None] | None:
    """The verdict the transformed case must get, or None when no relation holds.

    For a stream that interleaves a second task's lines the second task adds a log, and a log can change a verdict
    (another engine's concern). The relation there: when the same lines given as one file per task get the
    untransformed verdict, the interleaved stream gets it too.
    """
    base = baseline(case)
    if name == "srun_label" and base[1]:   # the label carries the task id only: job:N is named rank:N
        base = (base[0], "rank:" + base[1].split(":", 1)[1])
    if name in SPLIT_OF:
        split = verdict_of(SPLIT_OF[name](files)[1], tmp / "split")
        return split if split == base else None
    return base


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@pytest.mark.parametrize("case", GOOD)
def test_verdict_survives(case, name, tmp_path):
    files = case_files(case)
    want = expected(name, case, files, tmp_path)
    if want is None:
        pytest.skip("a second task's log, given as its own file, changes this verdict already")
    got = verdict_of(TRANSFORMS[name](files), tmp_path / "t")
    assert got == want


STDIN_TRANSFORMS = sorted(n for n in TRANSFORMS if n not in NAMES_THE_WRITER | {"gzipped"})


@pytest.mark.parametrize("name", ["identity"] + STDIN_TRANSFORMS)
@pytest.mark.parametrize("case", [c for c in GOOD if len(case_files(c)) == 1 and "output.log" in case_files(c)])
def test_verdict_survives_on_stdin(case, name, tmp_path):
    """The same, piped on standard input (``... | distdoctor diagnose -``)."""
    files = case_files(case)
    want = baseline(case)
    got = verdict_of(files if name == "identity" else TRANSFORMS[name](files), tmp_path, stdin=True)
    assert got == want


# -- odd files ----------------------------------------------------------------------------------------------------

_OOM = b"srun: error: node7: task 4: Out Of Memory\n"


def test_text_with_nul_bytes_is_read(tmp_path):
    """A container log cut by a crash holds a run of NULs (the file was pre-allocated); it is still text."""
    p = tmp_path / "worker-0.log"
    p.write_bytes(b"I tensorflow/core/platform/cpu_feature_guard.cc:142] start\n" * 20 + b"\x00" * 300 + b"\n" + _OOM)
    cat, _ = verdict_of({"worker-0.log": p.read_bytes()}, tmp_path)
    assert cat == "oom_host"


@pytest.mark.parametrize("head", [b"\x89PNG\r\n\x1a\n", b"\x7fELF\x02\x01\x01\x00"])
def test_real_binaries_stay_rejected(tmp_path, head):
    import random
    rnd = random.Random(1)
    p = tmp_path / "worker-0.log"
    p.write_bytes(head + bytes(rnd.randrange(256) for _ in range(20000)) + _OOM)
    with pytest.raises(InputError, match="binary"):
        diagnose_paths([str(p)], detected_at=0.0)


def test_empty_file_is_an_input_error(tmp_path):
    p = tmp_path / "worker-0.log"
    p.write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        diagnose_paths([str(p)], detected_at=0.0)


def test_nested_task_folders(tmp_path):
    """``logs/worker-0/stderr``, ``logs/worker-1/stderr``: the task comes from the folder when the file says nothing."""
    from distdoctor.diagnose.logsource import discover
    for i in range(2):
        (tmp_path / "logs" / f"worker-{i}").mkdir(parents=True)
        (tmp_path / "logs" / f"worker-{i}" / "stderr").write_bytes(
            b"I tensorflow/core/platform/cpu_feature_guard.cc:142] start\n" + (_OOM if i == 1 else b""))
    disc = discover([str(tmp_path / "logs")])
    assert sorted(s.task for s in disc.sources) == ["worker:0", "worker:1"]
    diag, _ = diagnose_paths([str(tmp_path / "logs")], detected_at=0.0)
    assert diag.root_cause.category.value == "oom_host"


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_archive_of_task_logs(tmp_path, kind):
    """Users attach one archive of every task's log: ``logs.tar.gz`` (folders per task) or ``logs.zip``."""
    import tarfile
    import zipfile
    members = {"job/worker-0/stderr": b"I tensorflow/core/platform/cpu_feature_guard.cc:142] start\n",
               "job/worker-1/stderr": b"I tensorflow/core/platform/cpu_feature_guard.cc:142] start\n" + _OOM,
               "job/.DS_Store": b"\x00\x01binary"}
    path = tmp_path / f"logs.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(path, "w") as zf:
            for name, data in members.items():
                zf.writestr(name, data)
    else:
        with tarfile.open(path, "w:gz") as tf:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    from distdoctor.diagnose.logsource import discover
    disc = discover([str(path)])
    assert sorted(s.task for s in disc.sources) == ["worker:0", "worker:1"]
    diag, _ = diagnose_paths([str(path)], detected_at=0.0)
    assert diag.root_cause.category.value == "oom_host"


# -- the unwrapping itself (pure) -----------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, text", [
    # docker splits a line longer than 16 KB into records without "\n": they are one line again
    (b'{"log":"part one ","stream":"stderr","time":"2021-03-04T05:06:07.1Z"}\n'
     b'{"log":"part two\\n","stream":"stderr","time":"2021-03-04T05:06:07.2Z"}\n',
     b"2021-03-04T05:06:07.1Z part one part two\n"),
    # containerd's partial records likewise
    (b"2021-03-04T05:06:07.1Z stderr P part one \n2021-03-04T05:06:07.2Z stderr F part two\n",
     b"2021-03-04T05:06:07.1Z part one part two\n"),
    # journalctl -o json
    (b'{"__REALTIME_TIMESTAMP":"1614834367000000","MESSAGE":"Killed","SYSLOG_IDENTIFIER":"python"}\n',
     b"2021-03-04T05:06:07.000000Z Killed\n"),
    # PowerShell's `> file` writes UTF-16 with a BOM
    ("E0304 05:06:07.1 x] boom\n".encode("utf-16"), b"E0304 05:06:07.1 x] boom\n"),
    # a TF_CONFIG line is JSON, but no collector's record: left as it is
    (b'{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}}\n',
     b'{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}}\n'),
    (b"> > [1,0]<stderr>:x\n> \n", b"[1,0]<stderr>:x\n\n"),
    # each pasted line as Markdown inline code (a thread's "`Killed`"), indentation inside kept
    (b"`Training Started.`\n`  File \"t.py\", line 3`\n`Killed`\n", b"Training Started.\n  File \"t.py\", line 3\nKilled\n"),
    (b"Mar  4 05:06:07 node3 python[1234]: E0304 x\n", b"2021-03-04T05:06:07Z E0304 x\n"),
    (b"ok\x00\x00\x00\n\x1b[31mERROR\x1b[0m x\n", b"ok\nERROR x\n"),
])
def test_unwrap(raw, text):
    from distdoctor.diagnose.logs.unwrap import unwrap_bytes
    assert unwrap_bytes(raw, year=2021) == text


@pytest.mark.parametrize("line, text", [
    ("  3/100 [==>....] - ETA: 3s - loss: 0.2003Traceback (most recent call last):", "Traceback (most recent call last):"),
    ("200/200 - 3s - loss: 0.7964 - 3s/epoch - 13ms/step", "200/200 - 3s - loss: 0.7964 - 3s/epoch - 13ms/step"),
    ("100/100 [======] - 3s 30ms/step - loss: 0.2310", "100/100 [======] - 3s 30ms/step - loss: 0.2310"),
    ("**tensorflow.python.framework.errors_impl.UnavailableError: x**", "tensorflow.python.framework.errors_impl.UnavailableError: x"),
    ("*** SIGSEGV received at time=1795286227 on cpu 1 ***", "*** SIGSEGV received at time=1795286227 on cpu 1 ***"),
    ("\ufeffE0304 05:06:07.1 x] boom", "E0304 05:06:07.1 x] boom"),
])
def test_clean_line_unwraps_one_line(line, text):
    from distdoctor.diagnose.logs.formats import clean_line
    assert clean_line(line) == text
