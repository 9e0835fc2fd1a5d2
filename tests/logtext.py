"""Diagnose short logs written for a test: each named text becomes a file in a temporary folder and
``distdoctor diagnose`` reads them as a user's files (no --task-map). One helper for the reasoning tests."""
from __future__ import annotations

from pathlib import Path

from distdoctor.diagnose.command import diagnose_paths
from distdoctor.model import Diagnosis


def diagnose_texts(files: dict[str, str], tmp: Path, *, learned: bool = True) -> Diagnosis:
    """``diagnose`` of these texts (one file each); ``learned`` False: the hand-written reasoning's alternatives."""
    paths = []
    for name, text in files.items():
        p = tmp / name
        p.write_text(text)
        paths.append(str(p))
    diag, _ = diagnose_paths(sorted(paths), detected_at=0.0, learned=learned)
    return diag
