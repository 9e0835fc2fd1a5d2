"""Cluster specifications: where a task learns who is in its job and which one it is.

Four sources, in the order ``check`` prefers them:

* ``--cluster FILE`` (JSON or YAML: a TF_CONFIG-shaped document, or just the
  job mapping) with ``--task job:index``;
* ``--tf-config JSON`` or ``--tf-config @FILE``;
* the ``TF_CONFIG`` environment variable (what Kubeflow's TFJob writes);
* a scheduler's variables: Slurm (:mod:`.slurm`), Open MPI (:mod:`.openmpi`); see :mod:`.schedulers`.

Reading a source gives a :class:`ConfigDocument`: the parsed value, or the
parse error with its line and column. Judging it is the static rules' job
(:mod:`distdoctor.preflight.rules`), which turn a sound document into a :class:`ClusterSpec`.
Only unreadable sources (a missing file) raise here; a broken document is a
finding, because telling the user *where* it is broken is the point.
"""
from __future__ import annotations

import ipaddress
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import ConfigError, InputError, UsageError
from . import schedulers
from .scheduler import DEFAULT_PORT_BASE, Layout
from .slurm import SLURM

__all__ = [
    "TaskRef", "Address", "AddressError", "parse_address", "ClusterSpec", "ParseProblem",
    "ConfigDocument", "SpecError", "read_tf_config_text", "read_cluster_file", "read_slurm", "document_from_layout",
    "load_document", "KNOWN_JOBS",
]

#: The job names TensorFlow accepts in a cluster (multi_worker_util._validate_cluster_spec).
KNOWN_JOBS = ("chief", "worker", "ps", "evaluator")


class SpecError(ConfigError):
    """A cluster spec cannot be used at all; carries the finding that says why."""

    def __init__(self, message: str, findings: tuple = ()):
        super().__init__(message)
        self.findings = findings


@dataclass(frozen=True, order=True)
class TaskRef:
    """One task of the cluster, written ``type:index`` everywhere (``worker:1``)."""

    type: str
    index: int

    def __str__(self) -> str:
        return f"{self.type}:{self.index}"

    @classmethod
    def parse(cls, text: str) -> "TaskRef":
        m = re.fullmatch(r"\s*([A-Za-z_][\w-]*)\s*[:/]\s*(\d+)\s*", text or "")
        if m is None:
            raise UsageError(f"--task {text!r} is not JOB:INDEX (for example worker:1 or chief:0)")
        return cls(m.group(1), int(m.group(2)))


class AddressError(ValueError):
    """A cluster entry is not ``host:port``; ``fix`` says what to write instead."""

    def __init__(self, reason: str, fix: str):
        super().__init__(reason)
        self.reason = reason
        self.fix = fix


_HOST_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


@dataclass(frozen=True)
class Address:
    """A parsed ``host:port`` cluster entry."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def is_loopback(self) -> bool:
        """Reachable only from the same machine: loopback names and ranges, or 0.0.0.0/::."""
        if self.host.lower() in _LOOPBACK_NAMES:
            return True
        try:
            ip = ipaddress.ip_address(self.host)
        except ValueError:
            return False
        return ip.is_loopback or ip.is_unspecified


def parse_address(text: Any) -> Address:
    """Parse one cluster entry the way gRPC will read it; raise :class:`AddressError`."""
    if not isinstance(text, str):
        raise AddressError(f"{text!r} is not a string", 'write each task as a "host:port" string')
    if text != text.strip() or any(c.isspace() for c in text):
        raise AddressError(f"{text!r} contains whitespace", f'write "{text.strip()}" without spaces')
    if "://" in text:
        scheme, _, rest = text.partition("://")
        raise AddressError(f"{text!r} has a {scheme}:// prefix",
                           f'write "{rest}": TF_CONFIG takes host:port, and the protocol goes in "rpc_layer"')
    if text.startswith("["):
        host, sep, port_text = text[1:].partition("]:")
        if not sep:
            raise AddressError(f"{text!r} is not [ipv6]:port", 'write an IPv6 address as "[fd00::1]:2222"')
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise AddressError(f"{host!r} in {text!r} is not an IPv6 address",
                               'write an IPv6 address as "[fd00::1]:2222"') from None
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep:
            raise AddressError(f"{text!r} has no port", f'write "{text}:2222" (every task needs its own port)')
        if ":" in host:
            raise AddressError(f"{text!r} looks like an IPv6 address without brackets",
                               'write an IPv6 address as "[fd00::1]:2222"')
        if not host:
            raise AddressError(f"{text!r} has no host name", 'write "host:port", e.g. "worker-0.svc:2222"')
        if not _HOST_RE.fullmatch(host) or ".." in host:
            raise AddressError(f"host {host!r} in {text!r} is not a valid host name",
                               "use the host's DNS name or IP address (letters, digits, '-' and '.')")
    if not port_text.isdigit():
        raise AddressError(f"port {port_text!r} in {text!r} is not a number", 'write "host:2222"')
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise AddressError(f"port {port} in {text!r} is out of range 1-65535",
                           "pick a free port between 1024 and 65535")
    return Address(host, port)


@dataclass(frozen=True)
class ClusterSpec:
    """A sound cluster: job name -> task addresses (file order), and maybe this task.

    Invariant: every job has a tuple of strings (possibly malformed or empty:
    the static rules judge those); ``task``, when set, names a job in ``jobs``
    or the evaluator (which TensorFlow allows outside the cluster).
    """

    jobs: tuple[tuple[str, tuple[str, ...]], ...]
    task: TaskRef | None
    origin: str
    rpc_layer: str | None = None

    def job(self, name: str) -> tuple[str, ...]:
        return dict(self.jobs).get(name, ())

    @property
    def job_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.jobs)

    def tasks(self) -> tuple[tuple[TaskRef, str], ...]:
        """Every task with its address text, chief first, then in file order."""
        order = sorted(self.jobs, key=lambda j: (j[0] != "chief",))
        return tuple((TaskRef(name, i), addr) for name, addrs in order for i, addr in enumerate(addrs))

    def address_of(self, task: TaskRef) -> str | None:
        addrs = self.job(task.type)
        return addrs[task.index] if 0 <= task.index < len(addrs) else None

    def cluster_dict(self) -> dict[str, list[str]]:
        return {name: list(addrs) for name, addrs in self.jobs}

    def to_tf_config(self) -> dict[str, Any]:
        """The TF_CONFIG TensorFlow would read for this task."""
        out: dict[str, Any] = {"cluster": self.cluster_dict()}
        if self.task is not None:
            out["task"] = {"type": self.task.type, "index": self.task.index}
        if self.rpc_layer:
            out["rpc_layer"] = self.rpc_layer
        return out


@dataclass(frozen=True)
class ParseProblem:
    """Why a document did not parse, with 1-based line and column."""

    message: str
    line: int | None = None
    column: int | None = None

    def where(self) -> str:
        if self.line is None:
            return ""
        return f"line {self.line}, column {self.column}"


@dataclass(frozen=True)
class ConfigDocument:
    """A cluster source as read, before any judgement.

    ``kind`` is ``tf_config`` (TF_CONFIG-shaped), ``cluster_file`` (TF_CONFIG-
    shaped or a bare job mapping) or a scheduler's name (``slurm``, ``openmpi``: built from its variables).
    """

    origin: str
    kind: str
    value: Any = None
    problem: ParseProblem | None = None
    duplicate_keys: tuple[str, ...] = ()
    task_override: TaskRef | None = None
    text: str | None = None


def _pairs_hook(dups: list[str]):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                dups.append(key)
            out[key] = value
        return out
    return hook


def _parse_json(text: str, origin: str, kind: str, task: TaskRef | None) -> ConfigDocument:
    dups: list[str] = []
    if not text.strip():
        return ConfigDocument(origin, kind, problem=ParseProblem("it is empty"), task_override=task, text=text)
    try:
        value = json.loads(text, object_pairs_hook=_pairs_hook(dups))
    except json.JSONDecodeError as exc:
        msg = exc.msg
        if "'" in text and "double quotes" in msg:
            msg += " (single quotes: was it written with str(dict) instead of json.dumps?)"
        return ConfigDocument(origin, kind, problem=ParseProblem(msg, exc.lineno, exc.colno),
                              task_override=task, text=text)
    return ConfigDocument(origin, kind, value=value, duplicate_keys=tuple(dups), task_override=task, text=text)


def _read_file(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        raise InputError(f"{what} {path!r} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{what} {path!r} is a directory, not a file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {what} {path!r}: {exc}") from None


def read_tf_config_text(value: str, origin: str = "--tf-config") -> ConfigDocument:
    """``--tf-config`` takes JSON, or ``@FILE`` to read it from a file. A bare path (not JSON: it does not start
    with ``{``) is read as ``@FILE`` when such a file exists, and is a usage error when none does -- not a JSON
    syntax error at column 1 of what was meant as a file name."""
    if value.startswith("@"):
        path = value[1:]
        return _parse_json(_read_file(path, "TF_CONFIG file"), path, "tf_config", None)
    if origin == "--tf-config" and value.strip() and not value.lstrip().startswith(("{", "[", '"')):
        if os.path.isfile(value):
            return _parse_json(_read_file(value, "TF_CONFIG file"), value, "tf_config", None)
        raise InputError(f"--tf-config {value!r} is neither JSON nor an existing file (pass the JSON itself, or "
                         f"@FILE to read it from a file)")
    return _parse_json(value, origin, "tf_config", None)


def read_cluster_file(path: str, task: TaskRef | None) -> ConfigDocument:
    """A whole-cluster file, JSON or YAML (by extension, else by its first character)."""
    text = _read_file(path, "cluster file")
    is_yaml = path.endswith((".yaml", ".yml")) or (
        not path.endswith(".json") and not text.lstrip().startswith(("{", "[")))
    if not is_yaml:
        return _parse_json(text, path, "cluster_file", task)
    import yaml  # only for YAML files: keeps `check` start-up short
    try:
        value = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        msg = exc.problem or str(exc)
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        return ConfigDocument(path, "cluster_file", problem=ParseProblem(msg, line, col), task_override=task,
                              text=text)
    except yaml.YAMLError as exc:
        return ConfigDocument(path, "cluster_file", problem=ParseProblem(str(exc)), task_override=task, text=text)
    if value is None:
        return ConfigDocument(path, "cluster_file", problem=ParseProblem("it is empty"), task_override=task,
                              text=text)
    return ConfigDocument(path, "cluster_file", value=value, task_override=task, text=text)


def document_from_layout(layout: Layout, kind: str) -> ConfigDocument:
    """A scheduler's layout (:meth:`~.scheduler.Scheduler.layout`) as a cluster source."""
    return ConfigDocument(layout.origin, kind, value=layout.tf_config())


def read_slurm(environ: Mapping[str, str], port_base: int = DEFAULT_PORT_BASE) -> ConfigDocument:
    return document_from_layout(SLURM.layout(environ, port_base), SLURM.name)


def load_document(*, tf_config: str | None, cluster_file: str | None, task: str | None,
                  environ: Mapping[str, str] | None = None,
                  port_base: int = DEFAULT_PORT_BASE) -> ConfigDocument:
    """Pick the source the command line and environment point at (see module doc)."""
    environ = os.environ if environ is None else environ
    task_ref = TaskRef.parse(task) if task is not None else None
    if cluster_file is not None and tf_config is not None:
        raise UsageError("give either --cluster FILE (with --task) or --tf-config, not both")
    if cluster_file is not None:
        return read_cluster_file(cluster_file, task_ref)
    if tf_config is not None:
        doc = read_tf_config_text(tf_config)
    elif "TF_CONFIG" in environ:
        doc = _parse_json(environ["TF_CONFIG"], "TF_CONFIG", "tf_config", None)
    else:
        scheduler = schedulers.detect(environ)
        layout = scheduler.layout(environ, port_base) if scheduler is not None else None
        if layout is None:
            raise UsageError("no cluster spec: set TF_CONFIG, pass --tf-config JSON|@FILE or --cluster FILE "
                             "--task JOB:INDEX, or run inside a Slurm step or under mpirun")
        doc = document_from_layout(layout, scheduler.name)
    if task_ref is not None:
        doc = ConfigDocument(doc.origin, doc.kind, doc.value, doc.problem, doc.duplicate_keys, task_ref, doc.text)
    return doc
