"""The environment probe: run by the task's own interpreter, it prints what that interpreter has.

The fingerprint a task exchanges must describe the Python that runs the task (its TensorFlow, its
CUDA build, its Keras), not distdoctor's: the two are often different virtual environments or
images. So :mod:`.fingerprint` runs this file's source with the command's interpreter
(``python -c SOURCE``) and reads one JSON object from its stdout.

Rules for this file, because it runs in an interpreter that may not have distdoctor installed:
standard library only, no relative imports, no TensorFlow import (it takes seconds and may itself
be what is broken): versions come from package metadata (``importlib.metadata``), the CUDA/cuDNN
build from TensorFlow's generated ``build_info.py`` parsed with ``ast``, never executed.
"""
from __future__ import annotations

import ast
import importlib.metadata as md
import importlib.util
import json
import platform
import re
import socket
import sys

__all__ = ["probe", "read_build_info", "PROBE_VERSION"]

#: Bumped when the probe's output changes shape.
PROBE_VERSION = 1


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _packages() -> dict:
    out: dict = {}
    for dist in md.distributions():
        try:
            name = dist.metadata["Name"] if dist.metadata else None
        except Exception:  # a broken dist-info must not hide the rest
            name = None
        if name:
            out.setdefault(_norm(name), dist.version)
    return out


def read_build_info(path: str) -> dict:
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


def _tf_location():
    # find_spec on a top-level name locates the package without running its __init__.
    try:
        found = importlib.util.find_spec("tensorflow")
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    return list(found.submodule_search_locations)[0]


def _nvidia_driver():
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as fh:
            m = re.search(r"Kernel Module\s+(?:for \S+\s+)?([\d.]+)", fh.read())
    except OSError:
        return None
    return m.group(1) if m else None


def probe() -> dict:
    """This interpreter's facts (environment variables are read by the caller, from the task's env)."""
    location = _tf_location()
    build = read_build_info(location + "/python/platform/build_info.py") if location else {}
    return {"probe": PROBE_VERSION, "executable": sys.executable, "python": platform.python_version(),
            "platform": platform.platform(), "hostname": socket.gethostname(), "tf_location": location,
            "tf_build": build, "nvidia_driver": _nvidia_driver(), "packages": _packages()}


if __name__ == "__main__":
    sys.stdout.write(json.dumps(probe()) + "\n")
