"""Mutable per-task bookkeeping of the supervisor, turned into frozen observations.

The supervisor's threads (output readers, agent channel, main loop) update a
:class:`TaskTrack`; :meth:`TaskTrack.snapshot` and :meth:`TaskTrack.observation`
freeze it for the pure detector and the rule engine.
"""
from __future__ import annotations

import collections
import os
import re
import threading

from ..diagnose.events import EventKind, LogEvent
from ..diagnose.logparse import TaskLogParser
from ..diagnose.logs import prescan
from ..diagnose.logs.formats import clean_line
from ..diagnose.logs.taskfilter import candidate_lines
from ..diagnose.logs.progress import progress_of
from ..diagnose.observations import MemorySample, OomEvidence, TaskObservation, TaskState
from .activity import Activity
from .channel import AgentSample
from .detect import TaskSnapshot
from .launch import TaskProcess
from .probe import ProcSample

__all__ = ["TaskTrack"]

_TF_MARKERS = (os.sep + "tensorflow" + os.sep, os.sep + "tf_keras" + os.sep, os.sep + "keras" + os.sep)


# Python's own waiting: the frames between TensorFlow's collective layer and the lock its thread pool waits on
_STDLIB_WAITS = (os.sep + "threading.py", os.sep + "queue.py", os.sep + "multiprocessing" + os.sep + "pool.py",
                 os.sep + "concurrent" + os.sep + "futures" + os.sep)
# TensorFlow's collective layer in Python: an eager cross-replica reduction (``StrategyBase.reduce`` and below, as
# Keras' metrics reset at an epoch's start under MultiWorkerMirroredStrategy reaches it) runs its all-reduce on a
# thread pool while the main thread waits in ``Pool.map``
_TF_COLLECTIVE_FILES = ("cross_device_ops.py", "cross_device_utils.py", "collective_ops.py",
                        "collective_all_reduce_strategy.py")


def in_tf_code(stack) -> bool:
    """Whether a main thread's stack (outermost first; (file, line, function) each) is inside TensorFlow: its
    innermost frame is TensorFlow's or Keras', or it waits on a lock of Python's own (a thread pool's) for
    TensorFlow's collective layer -- an eager all-reduce, which waits for the peers as a tf.function's does."""
    if not stack:
        return False
    if any(m in stack[-1][0] for m in _TF_MARKERS):
        return True
    for f in reversed(stack):
        name = f[0]
        if any(w in name for w in _STDLIB_WAITS):
            continue
        return (os.sep + "tensorflow" + os.sep in name) and os.path.basename(name) in _TF_COLLECTIVE_FILES
    return False


# Lines that may show progress (Keras bars, "step N ... loss", Epoch lines): the structural prefilter leaves them to
# the progress sampler of `diagnose`; a live task counts its steps from them.
_PROGRESS_MARKS = (rb"/step", rb"ETA:", rb"/Unknown", rb"\xe2\x94\x81", rb"[Ss]tep", rb"loss", rb"Epoch", rb"[0-9]/[0-9]",
                   rb"\r")
_PROGRESSISH = re.compile(b"|".join(_PROGRESS_MARKS))
_progress_db: list = []     # [Hyperscan database] once compiled, [None] where Hyperscan is not installed


def _progress_offsets(body: bytes) -> list[int]:
    """Where the progress markers are in ``body``: Hyperscan (~3 GB/s) where installed, else ``re`` (~30 MB/s)."""
    if not _progress_db:
        try:
            import hyperscan
            db = hyperscan.Database()
            db.compile(expressions=list(_PROGRESS_MARKS), ids=list(range(len(_PROGRESS_MARKS))),
                       flags=[0] * len(_PROGRESS_MARKS))
            _progress_db.append(db)
        except Exception:   # not installed, or this machine's CPU: the regex
            _progress_db.append(None)
    db = _progress_db[0]
    if db is None:
        return [m.start() for m in _PROGRESSISH.finditer(body)]
    ends: list[int] = []
    db.scan(body, match_event_handler=lambda _i, _s, end, _f, _c: ends.append(end - 1), scratch=prescan.scratch_for(db))
    return ends


def candidate_line_numbers(body: bytes) -> list[int]:
    """The indices (0-based) of the lines of ``body`` the task parser must read: the structural prefilter's
    candidates (Hyperscan when present, else :func:`.taskfilter.candidate_lines`) and the lines with a progress
    marker. Pure."""
    joint = prescan.get()
    starts = [c[0] for c in (joint.task_lines(body, 0) if joint is not None else candidate_lines(body, 0))]
    starts += _progress_offsets(body)
    if not starts:
        return []
    starts.sort()
    out: list[int] = []
    at, idx = 0, 0
    for off in starts:
        idx += body.count(b"\n", at, off)
        at = off
        if not out or out[-1] != idx:
            out.append(idx)
    return out


class TaskTrack:
    MAX_MEMORY_SAMPLES = 4000
    MAX_EVENTS = 5000

    def __init__(self, task: str, proc: TaskProcess) -> None:
        self.task = task
        self.proc = proc
        self.lock = threading.Lock()
        self.parser = TaskLogParser(task)
        self.events: list[LogEvent] = []
        self.dropped_events = 0
        self.line_no = 0
        self.lines_unread = 0          # lines no prefilter pattern sent to the parser (counted, not parsed)
        self.state: str = TaskState.STARTING
        self.state_since = proc.started_at
        self.cpu_hist: collections.deque[tuple[float, float]] = collections.deque(maxlen=40)
        self.memory: list[MemorySample] = []
        self.cgroup: str | None = None
        self.oom: OomEvidence | None = None
        self.shm: tuple[int, int] | None = None   # the fullest its /dev/shm was seen: (bytes used, size)
        self.agent: AgentSample | None = None
        self.agent_pid: int | None = None
        self.last_calls = 0
        self.last_calls_ts: float | None = None
        self.step_intervals: collections.deque[float] = collections.deque(maxlen=50)
        self.last_progress_at: float | None = None
        self.keras_steps = 0
        self._epoch_step = 0
        self._redraw_step = 0                  # the step a progress bar still being redrawn shows (its line unended)
        self.explicit_steps: int | None = None
        self.samples_training = 0
        self.samples_outside = 0
        self._counts_at_first_call: tuple[int, int] | None = None   # (samples_training, samples_outside) then
        self._counts_at_last_call: tuple[int, int] | None = None    # ... and at the latest new call
        self.stack = ""
        self.memory_warned = False
        self.exit_handled = False
        self.last_proc: ProcSample | None = None
        self._nan_seen = False
        self.epoch_marks: list[tuple[int, float, int]] = []  # (0-based epoch, when it began, steps before it)
        self.first_step_at: float | None = None
        self.step_calls: int | None = None     # the agent's count of the step function's calls
        self.final_sample = False              # the agent sent its sample at exit: step_calls is exact
        self.code_ended_at: float | None = None  # when that sample was sent: the task's main code had ended
        self.threads_busy_at: float | None = None  # the last sample in which the job's own threads still ran
        self.checkpoints: tuple[tuple[str, str | None], ...] = ()  # where the job checkpoints (the agent saw it)
        self.frozen_view: dict | None = None  # what the task was doing when the verdict was reached
        self.host: str | None = None           # run --node: the machine it runs on
        self.lost_at: float | None = None      # run --node: its supervisor was last heard from then ...
        self.lost_how = ""                     # ... and was lost this way
        self.activity = Activity()             # its own progress (CPU, I/O, network, new code) while peers wait
        self.native_possible = False           # its native stack can be looked at (py-spy here, a task of ours)
        self.native_look: tuple[str | None, float, str | None] | None = None  # (place, when, TF wait found)
        self.native_pending = False            # a look is under way
        self.native_said = False               # its TensorFlow wait went on the event stream
        self.native_frames = ""                # the main thread's innermost frames at that look
        self.tf_config_seen: str | None = None  # the TF_CONFIG its process held at the last look
        self.config_problem: tuple[str, float] | None = None  # what is wrong with it against the job's, since when

    def freeze(self) -> None:
        """Remember the task's state at the verdict, before it is stopped."""
        with self.lock:
            s = self.agent
            alive = self.proc.alive
            self.frozen_view = {
                "state": self.state if alive else TaskState.EXITED,
                "in_tf_call": s.in_call if s and alive else None,
                "in_tf_since": s.call_since if s and alive else None,
                "where": self.where() if alive else None,
                "location": self.location(),
                "last_progress_at": self.last_progress_at,
            }

    # -- fed by threads -------------------------------------------------
    def on_line(self, ts: float, line: str) -> list[LogEvent]:
        with self.lock:
            self.line_no += 1
            return self._take(ts, line)

    def on_chunk(self, ts: float, text: str) -> list[LogEvent]:
        """Lines printed together (``text``, no final newline): only the lines the prefilter finds (the structural
        parser's and progress markers), and the lines that belong with them (a traceback's), reach the parser; the
        others are counted. The events, as :meth:`on_line` of each line would give them."""
        if "\n" not in text:
            return self.on_line(ts, text)
        body = text.encode("utf-8", "replace")
        cands = candidate_line_numbers(body)
        lines = text.split("\n")
        n = len(lines)
        out: list[LogEvent] = []
        with self.lock:
            parser, base = self.parser, self.line_no
            k = ci = 0
            while k < n:
                if not (parser.busy or parser.wants_context(base + k + 1)):
                    while ci < len(cands) and cands[ci] < k:
                        ci += 1
                    if ci == len(cands):
                        break
                    k = cands[ci]
                self.line_no = base + k + 1
                out += self._take(ts, lines[k])
                k += 1
            self.line_no = base + n
            self.lines_unread += n - len(set(cands))
        return out

    def _take(self, ts: float, line: str) -> list[LogEvent]:
        """One line to the parser, as line ``self.line_no`` (the lock held)."""
        evs = self.parser.feed(self.line_no, line)
        for e in evs:
            if e.ts is None or abs(e.ts - ts) > 5:
                e = LogEvent(**{**e.__dict__, "ts": ts})
            if e.kind in (EventKind.PROGRESS, EventKind.NAN_LOSS) and e.step is not None:
                self._redraw_step = 0   # the bar's line ended: its drawings are this line's events
                if e.step < self._epoch_step:
                    self.keras_steps += self._epoch_step
                self._epoch_step = e.step
                self.last_progress_at = ts
                self.activity.on_step()
                if self.first_step_at is None and e.step > 0:
                    self.first_step_at = ts
            elif e.kind == EventKind.EPOCH:
                self.keras_steps += max(self._epoch_step, self._redraw_step)
                self._epoch_step = self._redraw_step = 0
                self.last_progress_at = ts
                if e.epoch is not None and len(self.epoch_marks) < 10000:
                    self.epoch_marks.append((e.epoch - 1, ts, self.keras_steps))
            if len(self.events) < self.MAX_EVENTS or e.kind not in (EventKind.PROGRESS, EventKind.EPOCH):
                self.events.append(e)
        if len(self.events) >= 2 * self.MAX_EVENTS:
            self._thin_events()
        return evs

    def on_redraw(self, ts: float, drawing: str) -> None:
        """A drawing of a progress bar whose line has not ended (Keras draws one line per epoch, redrawn with
        ``\r`` at every step): the step it shows counts now; the line's own events replace it when it ends."""
        found = progress_of(clean_line(drawing))
        if found is None or found[0] != EventKind.PROGRESS or found[1]["step"] is None:
            return
        step = found[1]["step"]
        with self.lock:
            if step == self._redraw_step:
                return
            self._redraw_step = step
            self.last_progress_at = ts
            self.activity.on_step()
            if self.first_step_at is None and step > 0:
                self.first_step_at = ts

    _KEEP_KINDS = (EventKind.PY_EXCEPTION, EventKind.FATAL_SIGNAL, EventKind.OOM_TENSOR, EventKind.OOM_GPU,
                   EventKind.CHECK_FAILED, EventKind.PORT_IN_USE, EventKind.NAN_LOSS, EventKind.CLUSTER_CONNECTED,
                   EventKind.PREEMPTION)

    def _thin_events(self) -> None:
        """Bound the events: keep the first MAX/2 (start-up, the first fault), the newest, and every fault
        between; drop the repetitive middle (a task that logs the same warning for days)."""
        head = self.MAX_EVENTS // 2
        middle = self.events[head:-head]
        kept = [e for e in middle if e.kind in self._KEEP_KINDS][: self.MAX_EVENTS // 4]
        self.dropped_events += len(middle) - len(kept)
        self.events[head:-head] = kept

    def close_log(self) -> None:
        """The task's output ended: flush what the parser still holds (a cut traceback or crash dump)."""
        with self.lock:
            self.events.extend(self.parser.close())

    def on_agent(self, s: AgentSample) -> None:
        with self.lock:
            self.agent = s
            self.agent_pid = s.pid
            if s.calls > self.last_calls:
                if self.last_calls_ts is not None:
                    self.step_intervals.append((s.ts - self.last_calls_ts) / (s.calls - self.last_calls))
                self.last_calls = s.calls
                self.last_calls_ts = s.ts
                self._counts_at_last_call = (self.samples_training, self.samples_outside)
                if self._counts_at_first_call is None:
                    self._counts_at_first_call = self._counts_at_last_call
                self.last_progress_at = s.ts
                self.activity.on_step()
                if self.first_step_at is None:
                    self.first_step_at = s.ts
            if s.steps is not None and s.steps != self.explicit_steps:
                self.explicit_steps = s.steps
                self.last_progress_at = s.step_ts or s.ts
                self.activity.on_step()
                if s.loss is not None and not self._nan_seen and (s.loss != s.loss or abs(s.loss) == float("inf")):
                    self._nan_seen = True
                    self.events.append(LogEvent(task=self.task, ts=s.step_ts or s.ts, kind=EventKind.NAN_LOSS,
                                                text=f"loss {s.loss} at step {s.steps} (reported by DoctorCallback)",
                                                step=s.steps, loss=s.loss))
            if s.stack or s.user_threads:
                self.activity.on_stack(s.ts, (s.stack, tuple(tuple(tuple(f) for f in u.get("stack") or ())
                                                             for u in s.user_threads)))
            if s.checkpoints:
                self.checkpoints = s.checkpoints
            if s.step_calls is not None:
                self.step_calls = s.step_calls
            if s.final and not self.final_sample:
                self.code_ended_at = s.ts
            if s.joining:
                self.threads_busy_at = s.ts
            self.final_sample = self.final_sample or s.final
            if s.tf_loaded and s.calls > 0:
                self.samples_training += 1
                if (s.in_call is None and not self._in_tf_code(s) and not self._serving(s)) or s.user_threads:
                    self.samples_outside += 1  # its own code runs (main thread, or an input thread) while a step waits

    # -- derived -------------------------------------------------------
    @staticmethod
    def _in_tf_code(s: AgentSample | None) -> bool:
        return s is not None and in_tf_code(s.stack)

    @staticmethod
    def _serving(s: AgentSample | None) -> bool:
        if s is None:
            return False
        return any(fn.endswith("server_lib.py") and name == "join" for fn, _, name in s.stack)

    def cpu_rate(self, window: float = 3.0) -> float | None:
        if len(self.cpu_hist) < 2:
            return None
        t1, c1 = self.cpu_hist[-1]
        t0, c0 = self.cpu_hist[0]
        for t, c in self.cpu_hist:
            if t1 - t <= window:
                t0, c0 = t, c
                break
        if t1 - t0 <= 0.2:
            return None
        return max(0.0, (c1 - c0) / (t1 - t0))

    def location(self) -> str | None:
        s = self.agent
        if s is None:
            return None
        loc = s.location
        if s.user_threads and (s.in_call or self._in_tf_code(s)):
            u = s.user_threads[0].get("user")
            if u:
                loc = u
        if not loc:
            return None
        return f"{loc[0]}:{loc[1]} in {loc[2]}"

    def steps(self) -> int | None:
        if self.explicit_steps is not None:
            return self.explicit_steps
        if self.keras_steps or self._epoch_step or self._redraw_step:
            return self.keras_steps + max(self._epoch_step, self._redraw_step)
        if self.agent is not None and self.agent.calls:
            return self.agent.calls  # TF function calls: one per step in Keras fit and tf.function loops
        return None

    def native_view(self) -> tuple[bool, str | None]:
        """(looked, TensorFlow wait): whether its native stack was looked at in its current place since its last
        progress, and what TensorFlow code its main thread waited in then (None: none)."""
        look = self.native_look
        if look is None or look[0] != self.location() or look[1] < (self.last_progress_at or 0.0):
            return (not self.native_possible), None
        return True, look[2]

    def snapshot(self) -> TaskSnapshot:
        with self.lock:
            s = self.agent
            p = self.proc
            looked, native = self.native_view()
            return TaskSnapshot(
                task=self.task, alive=p.alive, exit_code=p.returncode, state=self.state,
                state_since=self.state_since, has_agent=s is not None, tf_loaded=bool(s and s.tf_loaded),
                in_call=s.in_call if s else None, call_since=s.call_since if s else None,
                calls=s.calls if s else 0, location=self.location(), in_tf_code=self._in_tf_code(s),
                serving=self._serving(s), user_thread_busy=bool(s and s.user_threads),
                last_progress_at=self.last_progress_at, cpu_rate=self.cpu_rate(1.5), started_at=p.started_at,
                agent_ts=s.ts if s else None, own_progress_at=self.activity.at, activity=self.activity.how,
                native_wait=native, native_looked=looked,
                config_problem=self.config_problem[0] if self.config_problem else None,
                config_since=self.config_problem[1] if self.config_problem else None,
                ended=self.final_sample)

    def position(self) -> tuple[int | None, int | None]:
        """(0-based epoch, steps done in it) from Keras' lines, else (None, steps done)."""
        with self.lock:
            if self.epoch_marks:
                return self.epoch_marks[-1][0], max(self._epoch_step, self._redraw_step)
        return None, self.steps()

    def where(self) -> str | None:
        s = self.agent
        if s is None:
            return None
        if self._serving(s):
            return "serving"
        if s.in_call or self._in_tf_code(s):
            return "tf"
        return "python"

    def observation(self) -> TaskObservation:
        with self.lock:
            p = self.proc
            rc = p.returncode
            sig = None
            if rc is not None and rc < 0:
                sig = -rc
            elif rc is not None and 128 < rc < 160 and p.argv and os.path.basename(p.argv[0]) in ("sh", "bash", "dash", "zsh"):
                sig = rc - 128  # a shell reports its child's fatal signal as 128+n
            s = self.agent
            frac = None
            training, outside = self.samples_training, self.samples_outside
            if self._counts_at_first_call is not None:
                # the samples between the first and the latest step seen: not the end after the last one (saving,
                # teardown), time nobody waited for, which would raise a healthy peer's share and hide a straggler
                (t0, o0), (t1, o1) = self._counts_at_first_call, self._counts_at_last_call
                if t1 - t0 >= 10:
                    training, outside = t1 - t0, o1 - o0
            if training >= 10:
                frac = outside / training
            state = TaskState.EXITED if rc is not None else self.state
            fv = self.frozen_view or {}
            if fv:
                state = fv["state"]
            obs = TaskObservation(
                task=self.task, events=tuple(self.events), pid=self.agent_pid or p.pid, started_at=p.started_at,
                ended_at=p.ended_at, exit_code=rc, signal=sig, state=state, state_since=self.state_since,
                last_progress_at=self.last_progress_at, last_output_at=p.last_output_at, steps=self.steps(),
                step_times=tuple(self.step_intervals), step_calls=self.step_calls,
                step_calls_exact=self.final_sample, in_tf_call=s.in_call if s and rc is None else None,
                in_tf_since=s.call_since if s and rc is None else None, where=self.where() if rc is None else None,
                user_thread_busy=bool(s and s.user_threads), outside_tf_fraction=frac,
                stack=self.stack or (s.stack_text() if s and rc is None else ""), location=self.location(),
                cpu_busy=None, memory=tuple(self.memory), oom=self.oom, shm=self.shm,
                killed_by_supervisor=p.killed_by_supervisor, log_path=p.log_path, host=self.host,
                uncaught_at=s.uncaught[1] if s and s.uncaught else None,
                supervisor_lost_at=self.lost_at, supervisor_lost=self.lost_how)
            if fv:
                from dataclasses import replace
                obs = replace(obs, in_tf_call=fv["in_tf_call"], in_tf_since=fv["in_tf_since"], where=fv["where"],
                              location=fv["location"], last_progress_at=fv["last_progress_at"])
            return obs
