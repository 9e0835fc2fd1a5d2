"""Environment fingerprint: what software a task runs, learned without importing TensorFlow.

Importing TensorFlow takes seconds and may itself be what is broken, so the
fingerprint reads package metadata (``importlib.metadata``), TensorFlow's
generated ``tensorflow/python/platform/build_info.py`` (parsed with ``ast``,
never executed), ``/proc/driver/nvidia/version`` and the environment. Tasks
exchange fingerprints in the mesh check and compare them there
(:mod:`.meshjudge`); :func:`judge_environment` holds the known-bad
combinations that one task can see alone.

**Whose environment.** The fingerprint is the *task's*: :func:`collect_for`
finds the interpreter of the task's command (``python``, ``/venv/bin/python3``,
``env X=1 python``, a script whose ``#!`` names a Python) and runs
:mod:`.envprobe` with it, in the task's environment. Only when the command names
no Python does it fall back to distdoctor's own interpreter, and says so.

``collect``/``collect_for`` do the reading; :class:`Fingerprint` is plain data;
``interpreter_of`` and ``judge_environment`` are pure.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..safety.redact import secret_env_name
from ..catalogue import get
from . import host_rules  # noqa: F401  (registers the codes fetched with get)
from ..model import Finding, Severity
from . import envprobe
from .envprobe import read_build_info

__all__ = ["Fingerprint", "collect", "collect_for", "interpreter_of", "from_probe", "judge_environment",
           "read_build_info", "TF_DISTRIBUTIONS", "ENV_PREFIXES", "ENV_NAMES", "legacy_keras_requested",
           "PROBE_TIMEOUT_S"]

#: Distributions that install the ``tensorflow`` package.
TF_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tf-nightly", "tf-nightly-cpu",
                    "tensorflow-macos", "intel-tensorflow", "tensorflow-intel", "tensorflow-aarch64")
#: Variables that change TensorFlow's, NCCL's or gRPC's behaviour.
ENV_PREFIXES = ("TF_", "NCCL_", "GRPC_")
ENV_NAMES = ("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "LD_PRELOAD", "PYTHONPATH", "OMP_NUM_THREADS")
#: Never recorded: TF_CONFIG is compared as a cluster, not as text; secrets stay on the host.
_ENV_EXCLUDED = ("TF_CONFIG",)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def legacy_keras_requested(environ: Mapping[str, str]) -> bool:
    """TensorFlow's own test: TF_USE_LEGACY_KERAS in ("true", "True", "1")."""
    return environ.get("TF_USE_LEGACY_KERAS") in ("true", "True", "1")


@dataclass(frozen=True)
class Fingerprint:
    """One task's software, as exchanged between tasks (sorted tuples so equal means same)."""

    python: str
    platform: str
    hostname: str
    tensorflow: str | None                       # version of the distribution that provides `tensorflow`
    tensorflow_distributions: tuple[tuple[str, str], ...]
    tf_build: tuple[tuple[str, str], ...]        # cuda_version, cudnn_version, is_cuda_build, ...
    keras_flavour: str                           # "keras 3", "tf-keras (legacy)", "keras 2", "none"
    nvidia_driver: str | None
    nccl: str | None
    env: tuple[tuple[str, str], ...]
    packages: tuple[tuple[str, str], ...]
    interpreter: str = ""                        # the Python these facts describe (the task's, when found)

    def package(self, name: str) -> str | None:
        return dict(self.packages).get(_norm(name))

    def to_json(self) -> dict[str, Any]:
        return {
            "python": self.python, "platform": self.platform, "hostname": self.hostname,
            "tensorflow": self.tensorflow,
            "tensorflow_distributions": dict(self.tensorflow_distributions),
            "tf_build": dict(self.tf_build), "keras_flavour": self.keras_flavour,
            "nvidia_driver": self.nvidia_driver, "nccl": self.nccl,
            "env": dict(self.env), "packages": dict(self.packages), "interpreter": self.interpreter,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Fingerprint":
        def pairs(key: str) -> tuple[tuple[str, str], ...]:
            value = data.get(key) or {}
            out = tuple((str(k), str(v)) for k, v in value.items())
            return out if all(a[0] < b[0] for a, b in zip(out, out[1:])) else tuple(sorted(out))
        return cls(python=str(data.get("python", "")), platform=str(data.get("platform", "")),
                   hostname=str(data.get("hostname", "")), tensorflow=data.get("tensorflow"),
                   tensorflow_distributions=pairs("tensorflow_distributions"), tf_build=pairs("tf_build"),
                   keras_flavour=str(data.get("keras_flavour", "")), nvidia_driver=data.get("nvidia_driver"),
                   nccl=data.get("nccl"), env=pairs("env"), packages=pairs("packages"),
                   interpreter=str(data.get("interpreter") or ""))


def _keras_flavour(packages: Mapping[str, str], environ: Mapping[str, str]) -> str:
    """Which Keras ``tf.keras`` resolves to, by TensorFlow's own rule (util/lazy_loader.py)."""
    if legacy_keras_requested(environ):
        return "tf-keras (legacy)" if "tf-keras" in packages else "missing (TF_USE_LEGACY_KERAS set, no tf-keras)"
    keras = packages.get("keras")
    if keras is None:
        return "none"
    return "keras 3" if keras.startswith("3.") else f"keras {keras.split('.')[0]}"


def _env(environ: Mapping[str, str]) -> dict[str, str]:
    out = {}
    for key, value in environ.items():
        if key in _ENV_EXCLUDED or secret_env_name(key):
            continue
        if key.startswith(ENV_PREFIXES) or key in ENV_NAMES:
            out[key] = value
    return out


def from_probe(raw: Mapping[str, Any], environ: Mapping[str, str]) -> Fingerprint:
    """A fingerprint from the probe's facts (:func:`.envprobe.probe`) and the task's environment. Pure."""
    packages = {str(k): str(v) for k, v in (raw.get("packages") or {}).items()}
    tf_dists = {d: packages[d] for d in TF_DISTRIBUTIONS if d in packages}
    tf_version = None
    if tf_dists:
        tf_version = tf_dists.get("tensorflow") or next(iter(tf_dists.values()))
    nccl = next((v for k, v in sorted(packages.items()) if k.startswith("nvidia-nccl")), None)
    build = {str(k): str(v) for k, v in (raw.get("tf_build") or {}).items()}
    return Fingerprint(
        python=str(raw.get("python", "")), platform=str(raw.get("platform", "")),
        hostname=str(raw.get("hostname", "")),
        tensorflow=tf_version, tensorflow_distributions=tuple(sorted(tf_dists.items())),
        tf_build=tuple(sorted(build.items())), keras_flavour=_keras_flavour(packages, environ),
        nvidia_driver=raw.get("nvidia_driver"), nccl=nccl, env=tuple(sorted(_env(environ).items())),
        packages=tuple(sorted(packages.items())), interpreter=str(raw.get("executable") or ""),
    )


def collect(environ: Mapping[str, str] | None = None) -> Fingerprint:
    """distdoctor's own interpreter, in-process; never imports TensorFlow (tested)."""
    environ = os.environ if environ is None else environ
    return from_probe(envprobe.probe(), environ)


_PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)*)?$")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: Seconds the probe may take: it reads metadata only, but a cold disk and a big venv take a while.
PROBE_TIMEOUT_S = 30.0


def _which(name: str, environ: Mapping[str, str]) -> str | None:
    if os.sep in name:
        return name if os.access(name, os.X_OK) else None
    return shutil.which(name, path=environ.get("PATH", os.defpath))


def _shebang_python(path: str, environ: Mapping[str, str]) -> str | None:
    try:
        with open(path, "rb") as fh:
            first = fh.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and not _ENV_ASSIGN.match(w)]
    if words and _PYTHON_NAME.match(os.path.basename(words[0])):
        return _which(words[0], environ)
    return None


def interpreter_of(argv: Sequence[str], environ: Mapping[str, str]) -> str | None:
    """The Python that runs ``argv``, resolved on the task's PATH; None when the command names none.

    ``python train.py``, ``/venv/bin/python3.11 -m pkg``, ``env TF_X=1 python ...`` and a script
    whose ``#!`` line names a Python (``#!/usr/bin/env python3``) are recognised. Reads only the
    script's first line.
    """
    args = list(argv)
    while args and os.path.basename(args[0]) == "env":
        args = args[1:]
        while args and (args[0].startswith("-") or _ENV_ASSIGN.match(args[0])):
            args = args[1:]
    if not args:
        return None
    if _PYTHON_NAME.match(os.path.basename(args[0])):
        return _which(args[0], environ)
    path = _which(args[0], environ)
    return _shebang_python(path, environ) if path else None


def _same_interpreter(a: str, b: str) -> bool:
    # by path, not by resolved file: every venv's python links to one base interpreter, and what
    # tells venvs apart is where the link lies (its pyvenv.cfg)
    return os.path.abspath(a) == os.path.abspath(b)


def collect_for(argv: Sequence[str], environ: Mapping[str, str] | None = None,
                timeout: float = PROBE_TIMEOUT_S) -> tuple[Fingerprint, str | None]:
    """The fingerprint of the interpreter that runs ``argv``, in the task's environment.

    Returns (fingerprint, note); the note says why distdoctor's own interpreter was used instead
    (the command names no Python, or the probe failed), and is None when the task's own was read.
    """
    environ = dict(os.environ if environ is None else environ)
    python = interpreter_of(argv, environ)
    if python is None:
        why = (f"the task's command ({argv[0]}) names no Python interpreter" if argv else "no task command given")
        return collect(environ), f"{why}; environment fingerprint from distdoctor's own {sys.executable}"
    if (_same_interpreter(python, sys.executable) and environ.get("PYTHONPATH") == os.environ.get("PYTHONPATH")
            and environ.get("PYTHONHOME") == os.environ.get("PYTHONHOME")):
        return collect(environ), None
    env = {k: v for k, v in environ.items() if k not in ("PYTHONSTARTUP", "PYTHONINSPECT")}
    env.pop("PYTHONSAFEPATH", None)
    try:
        with open(envprobe.__file__, encoding="utf-8") as fh:
            source = fh.read()
        proc = subprocess.run([python, "-c", source], env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        raw = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 and proc.stdout.strip() else None
        problem = None if isinstance(raw, dict) else (
            f"exit {proc.returncode}: {(proc.stderr.strip().splitlines() or ['no output'])[-1][:200]}")
    except subprocess.TimeoutExpired:
        raw, problem = None, f"no answer within {timeout:.0f} s"
    except (OSError, ValueError) as exc:
        raw, problem = None, str(exc)
    if raw is None:
        return collect(environ), (f"the environment probe failed with {python} ({problem}); environment "
                                  f"fingerprint from distdoctor's own {sys.executable}")
    return from_probe(raw, environ), None


def _minor(version: str | None) -> tuple[str, ...]:
    return tuple((version or "").split(".")[:2])


def judge_environment(fp: Fingerprint, *, multi_worker_mirrored: bool, task: str | None) -> tuple[Finding, ...]:
    """Known-bad combinations one task can see by itself. Pure."""
    out: list[Finding] = []
    env = dict(fp.env)
    keras, tf_keras = fp.package("keras"), fp.package("tf-keras")
    if fp.tensorflow is None:
        out.append(get("DD404").finding(culprit=task, severity=Severity.WARNING,
                                        summary=f"no TensorFlow distribution in {fp.interpreter or sys.executable}"))
    if len({v for _, v in fp.tensorflow_distributions}) > 1:
        listed = ", ".join(f"{k} {v}" for k, v in fp.tensorflow_distributions)
        out.append(get("DD405").finding(culprit=task, severity=Severity.WARNING,
                                        summary=f"several TensorFlow distributions installed: {listed}"))
    legacy = env.get("TF_USE_LEGACY_KERAS") in ("true", "True", "1")
    if legacy and tf_keras is None:
        out.append(get("DD402").finding(
            culprit=task, summary="TF_USE_LEGACY_KERAS is set but tf-keras is not installed: tf.keras will fail "
                                  "to import", remedy=f"pip install tf-keras=={fp.tensorflow or '<TF version>'}"))
    if fp.tensorflow and keras and keras.startswith("3.") and not legacy and multi_worker_mirrored:
        if tf_keras:
            fix = (f"set TF_USE_LEGACY_KERAS=1 on every task (tf-keras {tf_keras} is installed) and use tf.keras "
                   "or `import tf_keras as keras`, not `import keras`")
        else:
            fix = (f"pip install tf-keras=={fp.tensorflow}, set TF_USE_LEGACY_KERAS=1 on every task and use "
                   "tf.keras, not `import keras`")
        out.append(get("DD401").finding(
            culprit=task, severity=Severity.WARNING, remedy=fix,
            summary=f"tf.keras is Keras {keras} here (TF_USE_LEGACY_KERAS not set); with TensorFlow "
                    f"{fp.tensorflow} we observed MultiWorkerMirroredStrategy's model.fit fail with "
                    "\"Attempt to convert a value (PerReplica...)\""))
    if fp.tensorflow and tf_keras and _minor(tf_keras) != _minor(fp.tensorflow) and legacy:
        out.append(get("DD403").finding(
            culprit=task, severity=Severity.WARNING, remedy=f"pip install tf-keras=={fp.tensorflow}",
            summary=f"tf-keras {tf_keras} does not match TensorFlow {fp.tensorflow}"))
    return tuple(out)
