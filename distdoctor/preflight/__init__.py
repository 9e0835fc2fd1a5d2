"""Preflight: ``distdoctor check``, the mistakes a multi-worker job makes before its first step.

Modules, by concern:

* cluster specs (TF_CONFIG, cluster files, Slurm variables, a TFJob pod) are
  read by :mod:`distdoctor.cluster`, shared with ``run --node``;
* :mod:`.rules` — the DD3xx-DD5xx catalogue entries and the static checks;
* :mod:`.host`, :mod:`.fingerprint` — this host and this environment (facts
  gathered apart from the pure judgement of them);
* :mod:`.wire`, :mod:`.meshchannel`, :mod:`.mesh`, :mod:`.meshmodel`,
  :mod:`.meshjudge` — the cross-task mesh check (protocol and handshake, one
  connection, the node, its data, the judgement);
* :mod:`.check`, :mod:`.render`, :mod:`.command` — the command.

``run --node`` calls :func:`run_mesh` before it starts TensorFlow. Names are
imported lazily so that importing the package costs nothing.
"""
from __future__ import annotations

from typing import Any

__all__ = ["run_mesh", "MeshResult", "ClusterSpec", "TaskRef", "load_document", "check_document", "run_check",
           "CheckOptions", "CheckReport"]

_WHERE = {"run_mesh": ".mesh", "MeshResult": ".meshmodel", "ClusterSpec": "..cluster.spec",
          "TaskRef": "..cluster.spec", "load_document": "..cluster.spec", "check_document": ".rules", "run_check": ".check", "CheckOptions": ".check",
          "CheckReport": ".check"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib
        return getattr(importlib.import_module(_WHERE[name], __name__), name)
    raise AttributeError(name)
