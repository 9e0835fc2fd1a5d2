#!/usr/bin/env python3
"""Extract TensorFlow's own distributed-runtime vocabulary from its wheels, with the versions that print each message.

TensorFlow's error and log messages are compiled into its shared libraries (``libtensorflow_framework.so``,
``libtensorflow_cc.so`` / ``_pywrap_tensorflow_internal.so``) and written in its Python sources. This script reads
them out of the wheels of several releases -- a message is a fact about what a TF version prints, never code -- and
keeps the ones about distributed execution (collectives, the coordination service, gRPC, rendezvous, sessions,
parameter servers, cluster specs, preemption, memory), each with the releases that carry it and the component it
comes from. The result, ``distdoctor/diagnose/logs/data/tf_messages.tsv``, is read by
:mod:`distdoctor.diagnose.logs.tfvocab`.

    python scripts/tf_vocabulary.py --download            # fetch the default releases' wheels with pip, then extract
    python scripts/tf_vocabulary.py WHEEL [WHEEL ...]     # extract from wheels already here

C++ messages are often built from pieces (``"Collective Op has group_size ", n, " but that group has size "``), so a
library's entry is a *fragment*: a run of text between the values the program fills in. Deterministic: the same
wheels give the same file.
"""
from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "distdoctor" / "diagnose" / "logs" / "data" / "tf_messages.tsv"
# the releases whose vocabulary is kept: (pip requirement, python tag, platform tag)
RELEASES = [
    ("tensorflow==1.15.5", "37", "manylinux2010_x86_64"),
    ("tensorflow-cpu==2.4.4", "38", "manylinux2010_x86_64"),
    ("tensorflow-cpu==2.10.1", "310", "manylinux2014_x86_64"),
    ("tensorflow-cpu==2.15.1", "311", "manylinux2014_x86_64"),
    ("tensorflow-cpu==2.21.0", "312", "manylinux_2_27_x86_64"),
]
LIBS = re.compile(r"(libtensorflow_framework\.so|libtensorflow_cc\.so|_pywrap_tensorflow_internal\.so)")
PY_DIRS = ("tensorflow/python/distribute/", "tensorflow/python/training/", "tensorflow/python/eager/",
           "tensorflow/python/checkpoint/", "tensorflow/python/keras/distribute/", "tensorflow/python/data/")
# the components of distributed execution, by the words their messages use; a fragment names one to be kept
COMPONENTS = [
    ("collective", re.compile(r"[Cc]ollective|all-?reduce|AllReduce|group_size|group_key|instance_key|NCCL|[Nn]ccl")),
    ("coordination", re.compile(r"[Cc]oordination|[Hh]eartbeat|[Bb]arrier|[Ii]ncarnation|PreemptionNotifier|"
                                r"preemption|[Pp]reempted")),
    ("rpc", re.compile(r"gRPC|grpc|\bRPC\b|[Cc]hannel|[Ss]ocket|[Cc]onnect|[Dd]eadline|UNAVAILABLE|[Uu]navailable|"
                       r"[Rr]endezvous|RecvTensor|RecvBuf|[Pp]eer\b")),
    ("session", re.compile(r"CreateSession|MasterSession|[Ww]orker session|[Ss]ession handle|master service|"
                           r"[Ww]orkerService|ClusterSpec|cluster spec|TF_CONFIG|task_type|task_id|/job:|job name")),
    ("parameter_server", re.compile(r"[Pp]arameter server|ClusterCoordinator|[Cc]oordinator|ps task|PS task")),
    ("memory", re.compile(r"\bOOM\b|[Oo]ut of memory|ResourceExhausted|[Aa]llocat(?:or|ion) .*(?:fail|exceed)")),
    ("checkpoint", re.compile(r"[Cc]heckpoint")),
    ("data", re.compile(r"tf\.data|auto_shard|AutoShard|[Dd]ataset .*(?:end|exhaust)|OutOfRange|[Ee]nd of sequence|"
                        r"distribute_datasets|experimental_distribute")),
]
_PRINTABLE = re.compile(rb"[\x20-\x7e]{12,600}")
# compiler-generated text, not a message a running job prints: MLIR op verifiers, template names, proto fields
_NOT_PRINTED = re.compile(r"^'(?:tf|mhlo|sdy|stablehlo|tfg|xla)\.|op (?:requires|attribute)|expected (?:op|key entry)|"
                          r"TypeName\(\)|DictionaryAttr|::mlir|is OK$|\) == |TfCheckOk")
_WORD = re.compile(r"[A-Za-z][a-z]+")


def _is_message(s: str) -> bool:
    """A run of text a person reads: words and spaces, not a symbol, a path, a format table or a proto descriptor."""
    if s.count(" ") < 1 or len(_WORD.findall(s)) < 2 or _NOT_PRINTED.search(s):
        return False
    if sum(c.isalpha() or c == " " for c in s) < 0.75 * len(s):
        return False
    return not any(x in s for x in ("_ZN", "@@", "\\n", "=%", "GLIBC", ".proto", "::tensorflow", "Copyright"))


def component_of(text: str) -> str | None:
    for name, pat in COMPONENTS:
        if pat.search(text):
            return name
    return None


def _continues(raw: str) -> bool:
    """A piece that continues a message built from parts: it starts after a value the program filled in."""
    return raw[:1] in (" ", ",", ";", ")") or raw[:1].islower()


def _library_fragments(data: bytes) -> dict[str, str]:
    """The message pieces of a library about distributed execution, each with its component: those whose words name
    one, and a piece that continues one of them right after it (``", but that group has size "`` after ``"Collective
    Op has group_size "``; a library's strings lie in the order of its source), which takes the same component."""
    out: dict[str, str] = {}
    last: str | None = None
    for m in _PRINTABLE.finditer(data):
        raw = m.group().decode("ascii")
        s = raw.strip(" ,.:;")
        comp = None
        if len(s) >= 10 and " " in s and _is_message(s):
            comp = component_of(s) or (last if last and len(s) >= 15 and _continues(raw) else None)
            if comp:
                out.setdefault(" ".join(s.split()), comp)
        last = comp or (last if len(s) < 10 else None)
    return out


def _python_messages(source: str) -> set[str]:
    """The string constants of ``raise``/``logging`` calls in a module: the whole message, pieces joined by ``…``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("error", "warning", "warn", "fatal", "info", "log_first_n"):
            target = node
        else:
            continue
        pieces = [n.value for n in ast.walk(target) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        text = " ".join(" ".join(pieces).split())
        if len(text) >= 24 and _is_message(text) and component_of(text):
            out.add(text[:600])
    return out


def vocabulary_of_wheel(path: str) -> dict[str, str]:
    msgs: dict[str, str] = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            name = info.filename
            if LIBS.search(os.path.basename(name)):
                with z.open(info) as fh:
                    data = fh.read()
                for msg, comp in _library_fragments(data).items():
                    msgs.setdefault(msg, comp)
            elif name.endswith(".py") and name.startswith(PY_DIRS) and "/test" not in name and "_test" not in name:
                for msg in _python_messages(z.read(info).decode("utf-8", "replace")):
                    msgs.setdefault(msg, component_of(msg) or "")
    return msgs


def _version_of(path: str) -> str:
    m = re.search(r"tensorflow(?:_cpu)?-(\d+\.\d+)", os.path.basename(path))
    if not m:
        raise SystemExit(f"tf_vocabulary: {path}: not a TensorFlow wheel name")
    return m.group(1)


def download(folder: str) -> list[str]:
    for req, py, plat in RELEASES:
        r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", req, "--no-deps", "--only-binary=:all:",
                            "--python-version", py, "--platform", plat, "-d", folder], capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(f"tf_vocabulary: pip could not download {req}: {r.stderr.strip().splitlines()[-1:]}")
    return sorted(str(p) for p in Path(folder).glob("tensorflow*.whl"))


def build(wheels: list[str]) -> list[tuple[str, list[str], str]]:
    seen: dict[str, set[str]] = defaultdict(set)
    comps: dict[str, str] = {}
    for w in wheels:
        v = _version_of(w)
        for msg, comp in vocabulary_of_wheel(w).items():
            seen[msg].add(v)
            comps.setdefault(msg, comp)
    key = lambda v: tuple(int(x) for x in v.split("."))  # noqa: E731
    return sorted((m, sorted(vs, key=key), comps[m]) for m, vs in seen.items())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheels", nargs="*", help="TensorFlow wheels (.whl)")
    ap.add_argument("--download", action="store_true", help="download the default releases' wheels with pip first")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "dd-tf-wheels"), help="where --download puts them")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    wheels = list(args.wheels)
    if args.download:
        os.makedirs(args.cache, exist_ok=True)
        wheels += download(args.cache)
    if not wheels:
        ap.error("name TensorFlow wheels, or --download")
    rows = build(sorted(set(wheels)))
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write("# message\tversions\tcomponent  (scripts/tf_vocabulary.py from the wheels of TensorFlow "
                 + ", ".join(sorted({_version_of(w) for w in wheels}, key=lambda v: tuple(map(int, v.split(".")))))
                 + ")\n")
        for msg, vs, comp in rows:
            fh.write(f"{msg.replace(chr(9), ' ')}\t{','.join(vs)}\t{comp}\n")
    print(f"{len(rows)} messages from {len(wheels)} wheels -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
