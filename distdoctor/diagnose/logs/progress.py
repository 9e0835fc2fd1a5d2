"""Step counting, in one place: Keras progress bars (tf.keras and Keras 3), Estimator ``loss = x, step = n`` lines,
and plain ``step N ... loss`` prints; the loss each reports and the seconds per step.
"""
from __future__ import annotations

import re

from ..events import EventKind

__all__ = ["step_time_of", "progress_of", "EPOCH_LINE"]

_PROGRESS = re.compile(r"(?:^|\s)(\d+)/(\d+|Unknown)\s+(?:\[[=>.]*\]|-\s|━)")
_ESTIMATOR = re.compile(r"\bloss = ([-+\w.]+), step = (\d+)\b")
_GENERIC_STEP = re.compile(r"^(?:\S+\s+){0,4}?(?:global[_ ])?[Ss]tep[\s:=#\[]+(\d+)(?:\s*/\s*(\d+))?\b")
# Horovod's synthetic benchmarks (and scripts modelled on them) report each batch of iterations as throughput
_IMG_SEC = re.compile(r"^Iter #(\d+): [\d.]+ img/sec per \w+")
_EPOCH = re.compile(r"^Epoch (\d+)/(\d+)\s*$")
_LOSS = re.compile(r"\bloss(?::\s*|\s*=\s*|\s+)([-+]?(?:nan|inf|[\d.]+(?:e[-+]?\d+)?))", re.IGNORECASE)
_STEP_TIME = re.compile(r"(\d+(?:\.\d+)?)(s|ms|us|µs)/step")
_GLOBAL_STEP_SEC = re.compile(r"global_step/sec: ([\d.]+)")


def _step_time_match(text: str) -> re.Match[str] | None:
    """``_STEP_TIME.search(text)``, tried only where a ``/step`` is (a search from every digit is slow): the number
    before the first ``/step`` that has one, read back to where its digits begin, then matched from there."""
    i = text.find("/step")
    while i >= 0:
        j = i - 2 if text.startswith(("ms", "us", "µs"), i - 2) and i >= 3 else i - 1
        k = j
        while k > 0 and text[k - 1].isdecimal():
            k -= 1
        if k > 1 and k < j and text[k - 1] == "." and text[k - 2].isdecimal():
            k -= 1
            while k > 0 and text[k - 1].isdecimal():
                k -= 1
        if k < j:
            m = _STEP_TIME.match(text, k, i + 5)
            if m and m.end() == i + 5:
                return m
        i = text.find("/step", i + 5)
    return None


def step_time_of(text: str) -> float | None:
    """Seconds per step a Keras progress line reports (``9ms/step``), if any."""
    m = _step_time_match(text)
    if not m:
        m2 = _GLOBAL_STEP_SEC.search(text) if "global_step/sec" in text else None
        if m2:
            try:
                rate = float(m2.group(1))
            except ValueError:
                return None
            return 1.0 / rate if rate > 0 else None
        return None
    value = float(m.group(1))
    return value * {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6}[m.group(2)]


def _loss(text: str) -> float | None:
    if text.isascii():   # the case-blind search tries every position: start it where "loss" first is
        i = text.lower().find("loss")
        if i < 0:
            return None
        lm = _LOSS.search(text, i)
    else:
        lm = _LOSS.search(text)
    if not lm:
        return None
    try:
        return float(lm.group(1))
    except ValueError:
        return None


def _progress(text: str) -> tuple[EventKind, dict] | None:
    found = _progress_styled(text)
    return None if found is None else found[:2]


def _progress_styled(text: str) -> tuple[EventKind, dict, str] | None:
    """(kind, fields, style): style is ``keras``, ``estimator`` or ``generic`` (a ``step N ... loss`` print)."""
    step: int | None = None
    total: int | None = None
    style = "keras"
    m = _PROGRESS.search(text)
    if m:
        step = int(m.group(1))
        total = None if m.group(2) == "Unknown" else int(m.group(2))
        if total is not None and not (0 < total < 10**9 and step <= total):
            return None
    else:
        m = _ESTIMATOR.search(text)
        if m:
            step = int(m.group(2))
            style = "estimator"
        elif _IMG_SEC.match(text):
            style = "generic"
            step = int(_IMG_SEC.match(text).group(1))
        elif "Saving dict for global step" in text:
            return None    # the Estimator's evaluation results for a checkpoint's step: no training step
        else:
            style = "generic"
            m = _GENERIC_STEP.match(text)
            if not m or "loss" not in text.lower():
                return None
            step = int(m.group(1))
            total = int(m.group(2)) if m.group(2) else None
            if total is not None and step > total:
                return None
    if step is None or step > 10**12:
        return None
    loss = _loss(text)
    fields = {"step": step, "total": total, "loss": loss}
    if loss is not None and (loss != loss or loss in (float("inf"), float("-inf"))):
        return EventKind.NAN_LOSS, fields, style
    return EventKind.PROGRESS, fields, style




EPOCH_LINE = _EPOCH


def progress_of(text: str) -> tuple[EventKind, dict, str] | None:
    """(kind, fields, style) of a progress line, or None (style: keras, estimator or generic)."""
    return _progress_styled(text)
