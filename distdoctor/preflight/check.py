"""``distdoctor check`` as a library call: static rules, then this host, then the mesh.

:func:`run_check` strings the pieces together and returns a
:class:`CheckReport`; it never prints. ``command.py`` parses arguments and
renders. Heavy modules (psutil, rich, importlib.metadata scans) are imported
only by the stages that need them, so ``check --static`` starts fast.
"""
from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..errors import UsageError
from ..model import Finding, Severity
from .rules import check_document, infer_strategy
from ..cluster.spec import AddressError, ClusterSpec, ConfigDocument, SpecError, parse_address

if TYPE_CHECKING:  # imported lazily at run time: --static needs none of them
    from .fingerprint import Fingerprint
    from .host import HostFacts
    from .meshmodel import MeshResult

__all__ = ["CheckOptions", "CheckReport", "run_check", "default_argv", "parse_argv"]


@dataclass(frozen=True)
class CheckOptions:
    static: bool = False
    mesh: bool = False
    timeout: float = 60.0
    bandwidth: bool = False
    token: str = ""
    checkpoint_dir: str = "."
    strategy: str = "auto"
    argv: tuple[str, ...] = ()
    side_port: int | None = None   # run --node: advertised to the other tasks in the mesh reports


@dataclass(frozen=True)
class CheckReport:
    """Everything one ``check`` found. ``fingerprint``/``host``/``mesh`` are None when not run."""

    spec: ClusterSpec | None
    findings: tuple[Finding, ...]
    fingerprint: Fingerprint | None = None
    host: HostFacts | None = None
    mesh: MeshResult | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def errors(self) -> int:
        return sum(f.severity is Severity.ERROR for f in self.findings)

    @property
    def status(self) -> str:
        return "errors" if self.errors else "ok"

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0

    def to_json(self) -> dict[str, Any]:
        from ..model import SCHEMA_VERSION
        spec = self.spec
        return {
            "schema_version": SCHEMA_VERSION, "command": "check", "status": self.status,
            "task": str(spec.task) if spec and spec.task else None,
            "source": spec.origin if spec else None,
            "cluster": spec.cluster_dict() if spec else None,
            "findings": [f.to_json() for f in self.findings],
            "fingerprint": self.fingerprint.to_json() if self.fingerprint is not None else None,
            "host": self.host.to_json() if self.host is not None else None,
            "mesh": self.mesh.to_json() if self.mesh is not None else None,
            "notes": list(self.notes),
        }


def parse_argv(text: str, what: str) -> tuple[str, ...]:
    """A JSON list of strings, or a shell-quoted command line."""
    text = text.strip()
    if text.startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{what} is not a JSON list: {exc.msg} at column {exc.colno}") from None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UsageError(f"{what} must be a JSON list of strings")
        return tuple(value)
    try:
        return tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"{what}: {exc}") from None


def default_argv(environ: Mapping[str, str]) -> tuple[str, ...]:
    """DISTDOCTOR_TASK_ARGV, else the parent process's command line (the script that runs the task)."""
    if environ.get("DISTDOCTOR_TASK_ARGV"):
        return parse_argv(environ["DISTDOCTOR_TASK_ARGV"], "DISTDOCTOR_TASK_ARGV")
    try:
        import psutil
        return tuple(psutil.Process(os.getppid()).cmdline())
    except Exception:  # the parent may be gone or hidden; the comparison then just has less to go on
        return ()


_SEVERITY_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def _ordered(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """Errors first, then by code; stable within a code (file order)."""
    return tuple(sorted(findings, key=lambda f: (_SEVERITY_RANK[f.severity], f.code)))


def _blocking_error(findings: Sequence[Finding]) -> SpecError:
    f = findings[0]
    return SpecError(f"{f.summary} ({f.code}); fix: {f.remedy}", tuple(findings))


def run_check(doc: ConfigDocument, opt: CheckOptions, environ: Mapping[str, str] | None = None) -> CheckReport:
    """Run the stages ``opt`` asks for. Raises SpecError (exit 2) when the task cannot be identified."""
    environ = os.environ if environ is None else environ
    static = check_document(doc, opt.strategy)
    if static.blocking:
        raise _blocking_error(static.blocking)
    spec, findings = static.spec, list(static.findings)
    if spec is not None:
        from ..cluster.tfjob import tfjob_pod
        from .rules import check_pod
        findings += check_pod(spec, tfjob_pod(environ))
    if opt.static:
        return CheckReport(spec, _ordered(findings))
    if spec is None:  # no cluster at all (DD303): nothing more to check against
        return CheckReport(spec, _ordered(findings), notes=("host and mesh checks skipped: no cluster",))
    if spec.task is None:
        raise UsageError("host and mesh checks need to know which task this is: add \"task\" to TF_CONFIG or "
                         "pass --task JOB:INDEX (or use --static for the config alone)")
    own = spec.address_of(spec.task)
    if opt.mesh and not opt.token:
        raise UsageError("check --mesh needs the job's shared token: set DISTDOCTOR_TOKEN (the same on every task) "
                         "or pass --token")
    if opt.mesh:
        from ..safety import token_problem
        problem = token_problem(opt.token)
        if problem:
            raise UsageError(problem)
    if opt.mesh and own is None:
        raise UsageError(f"{spec.task} has no address in the cluster, so it cannot take part in the mesh check")
    from . import fingerprint as fpmod
    from .host import collect_host_facts, judge_host
    task = str(spec.task)
    # the task's own interpreter (the command's Python), not distdoctor's
    fp, fp_note = fpmod.collect_for(opt.argv, environ) if opt.argv else (fpmod.collect(environ), None)
    notes = (fp_note,) if fp_note else ()
    strategy = infer_strategy(spec, opt.strategy)
    training = len(spec.job("chief")) + len(spec.job("worker"))
    findings += fpmod.judge_environment(fp, multi_worker_mirrored=strategy == "mwms" and training > 1, task=task)
    try:
        address = parse_address(own) if own is not None else None
    except AddressError:
        address = None
    facts = collect_host_facts(task, address, opt.checkpoint_dir)
    findings += judge_host(facts)
    if not opt.mesh:
        return CheckReport(spec, _ordered(findings), fp, facts, notes=notes)
    from .mesh import run_mesh
    # the mesh binds the port itself and reports a busy port with its holder
    result = run_mesh(spec, spec.task, opt.token, opt.timeout, argv=opt.argv, fingerprint=fp,
                      local_findings=findings, bandwidth=opt.bandwidth, side_port=opt.side_port)
    return CheckReport(spec, result.findings, fp, facts, result, notes=notes)
