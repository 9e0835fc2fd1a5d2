"""The restart policy of ``distdoctor run --restarts N``: pure decisions over recorded attempts.

After every attempt the supervisor asks one question: restart the job, or stop?
The answer depends only on the verdict (the root-cause :class:`~distdoctor.model.Finding`),
on what earlier attempts ended with (:class:`AttemptOutcome`), on the budget and on a random
number for the jitter -- all passed in, so the policy is tested with plain values
(tests/test_restart_policy.py, benchmarks/bench_restart_policy.py).

Why each cause is what it is (:func:`classify`):

* **transient** -- a restart can fix it: a task preempted or terminated from outside
  (SIGTERM), a task SIGKILLed with no out-of-memory evidence (an eviction), a lost peer or
  host (peers report it lost, its supervisor went silent, it froze), a peer not reachable
  yet at start-up, a port still held by an old process (the restart takes fresh ports),
  and transient-looking exceptions (``UnavailableError``, ``DeadlineExceededError``,
  connection errors). A first native crash, a first OOM and a stall get *one* restart:
  a flaky node, a noisy neighbour or a slow filesystem look the same as a bug until it
  happens again;
* **deterministic** -- a restart would fail the same way: a Python exception in the
  training code, a bad cluster configuration, version mismatches, a collective mismatch,
  unequal data shards, NaN losses, an exhausted disk or descriptor table, and any
  "first-time transient" cause that repeats at about the same place.

The same root cause twice in a row (same rule, same task, about the same step), or no
progress across ``no_progress_attempts`` attempts, stops the job whatever its class.
TFJob's ExitCode policy (exit codes 130, 137, 143 retryable; the rest permanent) decides
only where distdoctor has no better evidence (an unexplained exit).
"""
from __future__ import annotations

import enum
import random
import re
from dataclasses import dataclass
from typing import Protocol, Sequence

# the policy's vocabulary (Action, Position, AttemptOutcome) is the model's: the diagnosis carries it
from ..model import Action, AttemptOutcome, Category, Finding, Position

__all__ = ["RestartClass", "Action", "Position", "AttemptOutcome", "RestartPolicy", "RestartDecision",
           "classify", "decide_restart", "backoff_s", "same_place"]


class RestartClass(str, enum.Enum):
    """Whether restarting can fix a failure (stable names: issue 13 maps them to exit codes)."""

    TRANSIENT = "transient"
    DETERMINISTIC = "deterministic"


@dataclass(frozen=True)
class RestartPolicy:
    """The budget and the backoff. Kubernetes' defaults: 10 s doubling up to 6 min."""

    max_restarts: int = 0
    delay_s: float = 10.0
    delay_max_s: float = 360.0
    jitter: float = 0.2                 # the backoff is drawn from [1 - jitter, 1] x the exponential value
    no_progress_attempts: int = 3       # stop when this many attempts in a row trained no further


@dataclass(frozen=True)
class RestartDecision:
    action: Action
    reason: str
    backoff_s: float = 0.0
    restart_class: RestartClass | None = None


class _Random(Protocol):
    def random(self) -> float: ...


# Exceptions that are the network's or a peer's fault, not the training code's.
_TRANSIENT_EXCEPTIONS = re.compile(
    r"\b(UnavailableError|DeadlineExceededError|AbortedError|CancelledError|ConnectionError|ConnectionResetError|"
    r"ConnectionRefusedError|ConnectionAbortedError|BrokenPipeError|TimeoutError|socket\.timeout|"
    r"PreemptionError)\b")

_TRANSIENT = {Category.PREEMPTION, Category.PEER_CRASHED, Category.PEER_UNRESPONSIVE, Category.NETWORK_UNREACHABLE,
              Category.PORT_IN_USE}
# Transient the first time; the same again at about the same place is deterministic.
_ONCE = {Category.SEGFAULT_CORE_DUMP, Category.OOM_HOST, Category.OOM_GPU, Category.HANG_STALLED_WORKER,
         Category.OTHER}
_DETERMINISTIC_WHY = {
    Category.USER_CODE_ERROR: "the training code raised",
    Category.CONFIG_TF_CONFIG: "the cluster configuration is wrong",
    Category.CONFIG_MISMATCH_ACROSS_WORKERS: "the tasks disagree about the cluster or their arguments",
    Category.VERSION_MISMATCH: "the tasks run different software",
    Category.HANG_COLLECTIVE_MISMATCH: "the tasks call different collectives",
    Category.DATA_SHARDING_IMBALANCE: "the tasks' data shards are unequal",
    Category.STRAGGLER_SLOW_WORKER: "one task is consistently slower",
    Category.NUMERICAL_DIVERGENCE: "the loss diverges with this data and these hyper-parameters",
    Category.RESOURCE_EXHAUSTION: "a resource (disk, descriptors, threads) is exhausted",
    Category.FIREWALL_OR_PORT_BLOCKED: "a firewall drops the traffic",
}
# TFJob's ExitCode policy: these exit codes are retryable, the others permanent.
RETRYABLE_EXIT_CODES = (130, 137, 143, -2, -9, -15)


def same_place(a: Position, b: Position) -> bool:
    """About the same point of training: the same epoch and within 10 % (at least 2) steps."""
    if a.epoch != b.epoch:
        return False
    if a.step is None or b.step is None:
        return a.step is None and b.step is None
    return abs(a.step - b.step) <= max(2, 0.1 * max(a.step, b.step))


def _same_cause(a: Finding | None, b: Finding | None) -> bool:
    return (a is not None and b is not None and a.code == b.code and a.category == b.category
            and a.culprit == b.culprit)


def _where(f: Finding, reached: Position | None) -> str:
    place = f" at {reached.describe()}" if reached is not None and (reached.epoch is not None or reached.step) else ""
    return f"{f.category.value}{' on ' + f.culprit if f.culprit else ''}{place}"


def classify(root_cause: Finding, history: Sequence[AttemptOutcome] = (), *,
             reached: Position | None = None, exit_code: int | None = None) -> tuple[RestartClass, str]:
    """Whether a restart can fix ``root_cause``, and why, given the attempts before it.

    ``history`` are the earlier attempts (oldest first); ``reached`` is where the failing
    attempt stopped and ``exit_code`` its culprit's exit code, when known.
    """
    cat = root_cause.category
    where = _where(root_cause, reached)
    prev = history[-1] if history else None
    if cat == Category.INTERRUPTED:
        return RestartClass.DETERMINISTIC, "distdoctor itself was stopped (a person's Ctrl-C, a kill): not retried"
    if cat == Category.USER_CODE_ERROR and _TRANSIENT_EXCEPTIONS.search(root_cause.summary):
        name = _TRANSIENT_EXCEPTIONS.search(root_cause.summary).group(1)
        return RestartClass.TRANSIENT, f"{where}: {name} is a lost peer or a network fault, which a restart can fix"
    if cat in _DETERMINISTIC_WHY:
        return RestartClass.DETERMINISTIC, f"{where}: {_DETERMINISTIC_WHY[cat]}; a restart would fail the same way"
    repeated = prev is not None and _same_cause(prev.root_cause, root_cause) and \
        (reached is None or same_place(prev.reached, reached))
    if cat in _ONCE:
        if cat == Category.OTHER and root_cause.code == "DD106" and exit_code is not None \
                and exit_code not in RETRYABLE_EXIT_CODES:
            return RestartClass.DETERMINISTIC, f"{where}: exit code {exit_code} is permanent (TFJob's ExitCode policy)"
        if repeated:
            return RestartClass.DETERMINISTIC, f"{where}: the same failure as attempt {prev.number}, at the same place"
        return RestartClass.TRANSIENT, f"{where}: a first {cat.value} can be a flaky node; one restart tells"
    if cat in _TRANSIENT:
        return RestartClass.TRANSIENT, f"{where}: {_TRANSIENT_WHY[cat]}"
    return RestartClass.DETERMINISTIC, f"{where}: no evidence that a restart helps"


_TRANSIENT_WHY = {
    Category.PREEMPTION: "terminated from outside (preemption or eviction); a restart resumes",
    Category.PEER_CRASHED: "killed from outside with no out-of-memory evidence (eviction, lost host); a restart resumes",
    Category.PEER_UNRESPONSIVE: "a task or its host froze or went silent; a restart replaces it",
    Category.NETWORK_UNREACHABLE: "a peer was not reachable yet; a restart waits for it",
    Category.PORT_IN_USE: "a port was still held; the restart takes fresh ports",
}


def backoff_s(restart_number: int, policy: RestartPolicy, rng: _Random) -> float:
    """The wait before restart number ``restart_number`` (from 1): exponential, capped, jittered down."""
    if restart_number < 1:
        raise ValueError(f"restart numbers start at 1 (got {restart_number})")
    base = min(policy.delay_max_s, policy.delay_s * 2.0 ** (restart_number - 1))
    return round(base * (1.0 - policy.jitter * rng.random()), 3)


def decide_restart(root_cause: Finding | None, history: Sequence[AttemptOutcome], policy: RestartPolicy,
                   rng: _Random | None = None, *, succeeded: bool = False, reached: Position = Position(),
                   exit_code: int | None = None, interrupted: str | None = None) -> RestartDecision:
    """Restart or stop after an attempt; ``history`` holds the attempts before it (oldest first)."""
    rng = rng if rng is not None else random.Random()
    if succeeded:
        return RestartDecision(Action.NONE, "the job succeeded")
    if interrupted:
        return RestartDecision(Action.STOP, f"distdoctor received {interrupted}: the run stops here "
                                            "(run it again with the same --out to continue the restart budget)")
    if root_cause is None:
        return RestartDecision(Action.STOP, "the job failed with no root cause to judge; not restarting blindly",
                               restart_class=RestartClass.DETERMINISTIC)
    cls, why = classify(root_cause, history, reached=reached, exit_code=exit_code)
    if cls == RestartClass.DETERMINISTIC:
        return RestartDecision(Action.STOP, why, restart_class=cls)
    prev = history[-1] if history else None
    if prev is not None and _same_cause(prev.root_cause, root_cause) and same_place(prev.reached, reached):
        return RestartDecision(Action.STOP, f"{_where(root_cause, reached)}: the same root cause as attempt "
                                            f"{prev.number}, at the same place; a restart would fail the same way",
                               restart_class=RestartClass.DETERMINISTIC)
    k = policy.no_progress_attempts
    if k >= 1 and len(history) >= k:
        cut = len(history) - k + 1
        recent = [h.reached for h in history[cut:]] + [reached]          # the last k attempts
        best = max(h.reached.key() for h in history[:cut])              # the furthest point before them
        if all(p.key() <= best for p in recent):
            return RestartDecision(Action.STOP, f"no progress across {k} attempts (none got past "
                                                f"{max(history[:cut], key=lambda h: h.reached.key()).reached.describe()}"
                                                "); restarting again would not help", restart_class=cls)
    used = sum(1 for h in history if h.decision == Action.RESTART)
    if used >= policy.max_restarts:
        return RestartDecision(Action.STOP, f"{why}; but the restart budget is spent ({used} of {policy.max_restarts})",
                               restart_class=cls)
    wait = backoff_s(used + 1, policy, rng)
    return RestartDecision(Action.RESTART, f"{why} (restart {used + 1} of {policy.max_restarts})", wait, cls)
