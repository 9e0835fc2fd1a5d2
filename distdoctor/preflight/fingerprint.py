"""Environment fingerprint: what software a task runs, learned without importing TensorFlow.

Importing TensorFlow takes seconds and may itself be what is broken, so the
fingerprint reads package metadata (``importlib.metadata``), TensorFlow's
generated ``tensorflow/python/platform/build_info.py`` (parsed with ``ast``,
never executed), ``/proc/driver/nvidia/version`` and the environment. Tasks
exchange fingerprints in the mesh check and compare them there
(:mod:`.meshjudge`); :func:`judge_environment` holds the known-bad
combinations that one task can see alone.

``collect`` does the reading; :class:`Fingerprint` is plain data;
``judge_environment`` is pure.
"""
from __future__ import annotations

import ast
import importlib.metadata as md
import importlib.util
import os
import platform
import re
import socket
import sys
from dataclasses import dataclass
from typing import Any, Mapping

from ..catalogue import get
from . import rules as _rules  # noqa: F401  (registers the codes fetched with get)
from ..model import Finding, Severity

__all__ = ["Fingerprint", "collect", "judge_environment", "TF_DISTRIBUTIONS", "ENV_PREFIXES", "ENV_NAMES",
           "legacy_keras_requested"]

#: Distributions that install the ``tensorflow`` package.
TF_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tf-nightly", "tf-nightly-cpu",
                    "tensorflow-macos", "intel-tensorflow", "tensorflow-intel", "tensorflow-aarch64")
#: Variables that change TensorFlow's, NCCL's or gRPC's behaviour.
ENV_PREFIXES = ("TF_", "NCCL_", "GRPC_")
ENV_NAMES = ("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "LD_PRELOAD", "PYTHONPATH", "OMP_NUM_THREADS")
#: Never recorded: TF_CONFIG is compared as a cluster, not as text; secrets stay on the host.
_ENV_EXCLUDED = ("TF_CONFIG",)
_SECRET = re.compile(r"TOKEN|SECRET|PASSW|CREDENTIAL|(^|_)KEY($|_)", re.I)


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

    def package(self, name: str) -> str | None:
        return dict(self.packages).get(_norm(name))

    def to_json(self) -> dict[str, Any]:
        return {
            "python": self.python, "platform": self.platform, "hostname": self.hostname,
            "tensorflow": self.tensorflow,
            "tensorflow_distributions": dict(self.tensorflow_distributions),
            "tf_build": dict(self.tf_build), "keras_flavour": self.keras_flavour,
            "nvidia_driver": self.nvidia_driver, "nccl": self.nccl,
            "env": dict(self.env), "packages": dict(self.packages),
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
                   nccl=data.get("nccl"), env=pairs("env"), packages=pairs("packages"))


def _packages() -> dict[str, str]:
    out: dict[str, str] = {}
    for dist in md.distributions():
        name = dist.metadata["Name"] if dist.metadata else None
        if name:
            out.setdefault(_norm(name), dist.version)
    return out


def read_build_info(path: str) -> dict[str, str]:
    """The literal dict in TensorFlow's generated build_info.py, without executing it."""
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
    except (OSError, SyntaxError, ValueError):
        return {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "build_info"
                                                for t in node.targets):
            value = node.value
            if isinstance(value, ast.Call) and value.args:  # collections.OrderedDict([...])
                value = value.args[0]
            try:
                literal = ast.literal_eval(value)
            except ValueError:
                return {}
            items = literal.items() if isinstance(literal, dict) else literal
            return {str(k): (",".join(map(str, v)) if isinstance(v, list) else str(v)) for k, v in items}
    return {}


def _tf_location() -> str | None:
    # find_spec on a top-level name locates the package without running its __init__.
    try:
        found = importlib.util.find_spec("tensorflow")
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    return list(found.submodule_search_locations)[0]


def _nvidia_driver() -> str | None:
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as fh:
            m = re.search(r"Kernel Module\s+(?:for \S+\s+)?([\d.]+)", fh.read())
    except OSError:
        return None
    return m.group(1) if m else None


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
        if key in _ENV_EXCLUDED or _SECRET.search(key):
            continue
        if key.startswith(ENV_PREFIXES) or key in ENV_NAMES:
            out[key] = value
    return out


def collect(environ: Mapping[str, str] | None = None) -> Fingerprint:
    """Read this process's environment; never imports TensorFlow (tested)."""
    environ = os.environ if environ is None else environ
    packages = _packages()
    tf_dists = {d: packages[d] for d in TF_DISTRIBUTIONS if d in packages}
    location = _tf_location()
    build = read_build_info(os.path.join(location, "python", "platform", "build_info.py")) if location else {}
    tf_version = None
    if tf_dists:
        tf_version = tf_dists.get("tensorflow") or next(iter(tf_dists.values()))
    nccl = next((v for k, v in sorted(packages.items()) if k.startswith("nvidia-nccl")), None)
    return Fingerprint(
        python=platform.python_version(), platform=platform.platform(), hostname=socket.gethostname(),
        tensorflow=tf_version, tensorflow_distributions=tuple(sorted(tf_dists.items())),
        tf_build=tuple(sorted(build.items())), keras_flavour=_keras_flavour(packages, environ),
        nvidia_driver=_nvidia_driver(), nccl=nccl, env=tuple(sorted(_env(environ).items())),
        packages=tuple(sorted(packages.items())),
    )


def _minor(version: str | None) -> tuple[str, ...]:
    return tuple((version or "").split(".")[:2])


def judge_environment(fp: Fingerprint, *, multi_worker_mirrored: bool, task: str | None) -> tuple[Finding, ...]:
    """Known-bad combinations one task can see by itself. Pure."""
    out: list[Finding] = []
    env = dict(fp.env)
    keras, tf_keras = fp.package("keras"), fp.package("tf-keras")
    if fp.tensorflow is None:
        out.append(get("DD404").finding(culprit=task, severity=Severity.WARNING,
                                        summary=f"no TensorFlow distribution in {sys.executable}"))
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
