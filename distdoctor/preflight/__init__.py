"""Preflight: ``distdoctor check``, the mistakes a multi-worker job makes before its first step.

Modules, by concern:

* cluster specs (TF_CONFIG, cluster files, Slurm variables, a TFJob pod) are
  read by :mod:`distdoctor.cluster`, shared with ``run --node``;
* :mod:`.rules` — the cluster-configuration rules (DD3xx) and the static checks; :mod:`.host_rules`,
  :mod:`.mesh_rules` — the catalogue entries of the host (DD4xx) and mesh (DD5xx) rules;
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

def __getattr__(name: str) -> Any:
    """The package's names, imported when first asked for (explicit imports: a broken one fails loudly)."""
    if name in ("run_mesh",):
        from . import mesh
        return getattr(mesh, name)
    if name in ("MeshResult",):
        from . import meshmodel
        return getattr(meshmodel, name)
    if name in ("ClusterSpec", "TaskRef", "load_document"):
        from ..cluster import spec
        return getattr(spec, name)
    if name in ("check_document",):
        from . import rules
        return getattr(rules, name)
    if name in ("run_check", "CheckOptions", "CheckReport"):
        from . import check
        return getattr(check, name)
    raise AttributeError(name)
