"""Where a task's main thread waits in native code: inside TensorFlow's runtime, or not. Pure.

The bootstrap agent sees Python frames only. A task whose innermost Python frame is plain user code (a loop's
head, ``iterator = iter(dataset)``) can still be blocked inside TensorFlow's C++: destroying the previous epoch's
distributed iterator (``EagerTensor_dealloc`` -> ``MultiDeviceIterator`` waiting on a tf.data thread), a tf.data
``GetNext``, a collective's rendezvous. Such a task waits on TensorFlow, like its peers in the all-reduce; it is not
idle in its own code. ``py-spy dump --native`` shows the native frames above the innermost Python one; this module
reads them. The look itself (a subprocess, ptrace) is :func:`.probe.py_spy_dump`.
"""
from __future__ import annotations

import re

__all__ = ["tf_native_wait", "main_thread_frames", "native_summary"]

_THREAD = re.compile(r'^Thread \S+ \([^)]*\)(?::\s*"(?P<name>[^"]*)")?')
_FRAME = re.compile(r"^\s+(?P<func>.+?) \((?P<where>[^()]*)\)\s*$")
_PY_WHERE = re.compile(r"\.py[cw]?:\d+$")
_TF_LIB = re.compile(r"tensorflow|_pywrap_tf|_pywrap_tensorflow|libtensorflow", re.I)
# frames that say *how* a thread waits, not *what* it waits for
_PLUMBING = re.compile(r"^(?:absl::|std::|syscall|pthread_|__|Abslinternal|AbslInternal|tsl::mutex|tsl::condition|"
                       r"nsync::|Eigen::|pybind11::|0x[0-9a-f]+)", re.I)


def main_thread_frames(dump: str) -> list[tuple[str, str]]:
    """(function, where) of the main thread's frames, innermost first (the first thread when none is named)."""
    blocks: list[tuple[str, list[tuple[str, str]]]] = []
    for line in dump.splitlines():
        m = _THREAD.match(line)
        if m:
            blocks.append((m.group("name") or "", []))
            continue
        f = _FRAME.match(line)
        if f and blocks:
            blocks[-1][1].append((f.group("func").strip(), f.group("where").strip()))
    for name, frames in blocks:
        if name == "MainThread":
            return frames
    return blocks[0][1] if blocks else []


def native_summary(dump: str | None, limit: int = 10) -> str:
    """The main thread's innermost frames, native ones first, as one line (evidence for the event stream)."""
    frames = main_thread_frames(dump or "")[:limit]
    return " <- ".join(re.sub(r"\(.*", "", f)[:100] + (f" ({w.rsplit('/', 1)[-1]})" if w else "") for f, w in frames)


def tf_native_wait(dump: str | None) -> str | None:
    """What TensorFlow code the main thread waits in, when its innermost native frames are TensorFlow's; else None.

    Only the native frames above the innermost Python frame count: a thread in ``time.sleep`` or a Python lock has
    none of TensorFlow's there, whatever Python frames follow."""
    if not dump:
        return None
    native: list[tuple[str, str]] = []
    for func, where in main_thread_frames(dump):
        if _PY_WHERE.search(where):
            break
        native.append((func, where))
    tf = [(f, w) for f, w in native if _TF_LIB.search(w)]
    if not tf:
        return None
    names = [f for f, _ in tf]
    if any("EagerTensor_dealloc" in f or "~" in f for f in names) and any("Iterator" in f for f in names):
        what = "destroying a tf.data iterator"
    elif any("tensorflow::data::" in f for f in names):
        what = "a tf.data pipeline"
    elif any("Collective" in f or "Rendezvous" in f or "RecvBuf" in f for f in names):
        what = "a collective"
    else:
        what = "TensorFlow's runtime"
    telling = next((f for f in names if f.startswith("tensorflow::") and not _PLUMBING.match(f)), names[0])
    telling = re.sub(r"\(.*", "", telling)[:160]
    return f"{what} ({telling})"
