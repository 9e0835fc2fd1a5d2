"""One signature = one rule unit of the log knowledge base.

A signature names a message that some layer of a distributed TensorFlow job
prints (TensorFlow 1.x/2.x, gRPC, NCCL, Horovod/MPI, CUDA, Kubernetes, Slurm,
YARN, the kernel, Python) and what it means:

* ``role`` -- what the line is evidence *of*:

  - ``cause``: the failure itself, on the task that printed it (or on the task
    the line names, for launcher/scheduler lines such as ``srun: error: task 4:
    Out Of Memory``);
  - ``symptom``: a cascade line that healthy tasks print when another task
    failed (``Connection reset by peer``, ``stopped sending heartbeats``); it
    points at the task it names, and is the verdict only when no cause is seen;
  - ``wait``: positive evidence that a task is waiting on others (``CreateSession
    still waiting``, a stall inspector) -- the only way a log shows a hang;
  - ``context``: a fact (a cluster spec, a version, a failed GPU init) that
    rules use but that is not a failure by itself;
  - ``benign``: a known alarming-looking line that is harmless.

* ``literals`` -- plain strings of which at least one occurs in every matching
  line: the scanner's prefilter. ``regex`` (optional) is then run on candidate
  lines only; its named groups ``job``/``index``, ``rank`` or ``task`` name the
  task the line is about.
* ``rank`` -- how specific the evidence is; among causes, higher outranks lower
  (a kernel OOM kill outranks the generic exception it triggered): the one rank
  direction of the catalogue (a rule's ``rank`` too is higher = stronger).
* ``fixture`` -- a real log line (triggered on this machine, or quoted from the
  source that prints it, see ``source``) and ``expect`` the task the line names,
  checked by ``tests/test_signatures.py``.
* provenance: ``component`` -- the layer that prints the message (one of
  ``COMPONENTS``: tensorflow, keras, horovod, nccl, gloo, openmpi, mpich, ...);
  ``versions`` -- the releases of that component that print this wording (a
  range such as ``">=2.9"``, ``"<=22.05"`` or ``"all"``); ``source`` -- where the
  text comes from (the file in the component's repository or wheel).

Signatures register into the one catalogue (``distdoctor rules``) with codes
DD600-DD999 and, once those were all taken, DD1000-DD1999, so ``docs/rules.md``
lists them beside the other rules.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from functools import cached_property

from ...catalogue import RuleList, code_key
from ...model import Category

__all__ = ["Role", "Signature", "RULES", "SIGNATURES", "COMPONENTS", "add", "by_code", "by_component"]


# the layers whose messages the knowledge base reads (a signature's ``component`` is one of these)
COMPONENTS: tuple[str, ...] = (
    "tensorflow", "keras", "grpc", "horovod", "nccl", "gloo", "openmpi", "mpich", "intelmpi", "pmix", "psm2", "ucx", "pbs", "lsf",
    "openssh", "slurm", "yarn", "volcano", "spark", "tfos", "tony", "ray", "kubernetes", "training-operator", "cloud-platform",
    "container-runtime", "cuda", "cudnn", "nvml", "nvidia-driver", "kernel", "systemd", "glibc", "gdb", "shell", "python",
    "dask", "pytorch", "deepspeed", "jvm", "lightgbm", "htcondor", "dgl", "jax", "envoy", "lightning", "hccl", "fujitsu-mpi",
    "tensorrt-llm", "aws-neuron",
    "any")          # "any": a wording that every layer uses (an ERROR level, "failed"): the safety net's error line


class Role(str, enum.Enum):
    CAUSE = "cause"
    SYMPTOM = "symptom"
    WAIT = "wait"
    CONTEXT = "context"
    BENIGN = "benign"


@dataclass(frozen=True)
class Signature:
    code: str
    name: str
    category: Category
    role: Role
    literals: tuple[str, ...]
    title: str
    remedy: str
    fixture: str
    source: str
    component: str = ""
    versions: str = ""
    regex: str | None = None
    rank: int = 50
    expect: str | None = None          # the task the fixture names (``worker:1``), if any
    ignore_case: bool = False
    names: str | None = None           # a pattern whose groups name the task the line is about

    # compiled on first use: a run reads a few signatures' lines, and 400 regexes compiled at start-up cost 40 ms
    @cached_property
    def compiled(self) -> re.Pattern | None:
        return re.compile(self.regex, re.IGNORECASE if self.ignore_case else 0) if self.regex else None

    @cached_property
    def names_compiled(self) -> re.Pattern | None:
        return re.compile(self.names) if self.names else None

    def __reduce__(self):
        """Pickled by its code (the scanning processes send hits back): the receiver's registry holds the same one."""
        return (by_code, (self.code,))

    def match(self, line: str) -> re.Match | None | bool:
        """The regex match on ``line``, True for a literal-only signature that matches, else None."""
        hay = line.lower() if self.ignore_case else line
        if not any(lit in hay for lit in self.literals):
            return None
        if self.compiled is None:
            return True
        return self.compiled.search(line)

    def rule_fields(self) -> dict:
        """Its entry in the catalogue. The signature keeps its own ``rank`` (the reasoning over hits reads it); the
        rule has none (the engine's tie-break ranks the structural rules)."""
        what = {Role.CAUSE: "the failure itself", Role.SYMPTOM: "a cascade symptom of a failure elsewhere",
                Role.WAIT: "evidence that tasks wait on each other (a hang)", Role.CONTEXT: "context for other rules",
                Role.BENIGN: "a harmless line that only looks alarming"}[self.role]
        return dict(code=self.code, name=self.name, category=self.category, title=self.title,
                    detects=f"Log signature ({self.role.value}, {what}): {self.fixture[:160]}",
                    why=f"Source: {self.component} {self.versions}: {self.source}.",
                    evidence="A log line containing " + " or ".join(repr(x) for x in self.literals[:3])
                             + (f" and matching /{self.regex}/" if self.regex else ""),
                    remedy=self.remedy)


RULES = RuleList()   # the knowledge base's rules: one per signature, added by ``add``
SIGNATURES: list[Signature] = []
_BY_CODE: dict[str, Signature] = {}


def add(code: str, name: str, category: Category, role: Role, literals: str | tuple[str, ...], title: str, *,
        remedy: str, fixture: str, source: str, component: str, versions: str, regex: str | None = None,
        rank: int = 50, expect: str | None = None, ignore_case: bool = False, names: str | None = None) -> Signature:
    """Register one signature (and its catalogue rule); a code is registered once, from a known component."""
    if component not in COMPONENTS or not versions.strip():
        raise ValueError(f"signature {code}: component {component!r} / versions {versions!r} not valid")
    lits = (literals,) if isinstance(literals, str) else tuple(literals)
    if ignore_case:
        lits = tuple(x.lower() for x in lits)
    if code in _BY_CODE:
        raise ValueError(f"signature code {code} registered twice")
    sig = Signature(code=code, name=name, category=category, role=role, literals=lits, title=title, remedy=remedy,
                    fixture=fixture, source=source, component=component, versions=versions, regex=regex, rank=rank,
                    expect=expect, ignore_case=ignore_case, names=names)
    SIGNATURES.append(sig)
    _BY_CODE[code] = sig
    RULES.add(**sig.rule_fields())
    return sig


def by_code(code: str) -> Signature:
    return _BY_CODE[code]


def by_component() -> dict[str, list[Signature]]:
    """The signatures of each component, in catalogue order of codes."""
    out: dict[str, list[Signature]] = {c: [] for c in COMPONENTS}
    for sig in sorted(SIGNATURES, key=lambda s: code_key(s.code)):
        out[sig.component].append(sig)
    return {c: sigs for c, sigs in out.items() if sigs}
