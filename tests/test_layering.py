"""The packages depend in one direction: report -> diagnose -> (model, catalogue); diagnose never imports report."""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "distdoctor"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level:   # relative: resolve against the file's package
                base = path.relative_to(PKG.parent).with_suffix("").parts[:-node.level]
                mod = ".".join(base + tuple(x for x in mod.split(".") if x))
            out.add(mod)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_diagnose_never_imports_report_or_supervise():
    bad = {}
    for f in (PKG / "diagnose").rglob("*.py"):
        hits = {m for m in _imports(f) if m.startswith(("distdoctor.report", "distdoctor.supervise"))}
        if hits:
            bad[str(f.relative_to(PKG))] = hits
    assert not bad, bad


def test_the_core_imports_without_tensorflow():
    import subprocess
    import sys
    code = ("import sys, distdoctor.cli, distdoctor.report.diagnose_cli, distdoctor.diagnose.logs.reason; "
            "assert 'tensorflow' not in sys.modules, 'tensorflow imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PKG.parent)


def test_cluster_is_the_bottom_layer():
    """cluster/ is read by every command and reads none of them."""
    bad = {}
    for f in (PKG / "cluster").rglob("*.py"):
        hits = {m for m in _imports(f) if m.startswith(("distdoctor.preflight", "distdoctor.supervise",
                                                         "distdoctor.diagnose", "distdoctor.report"))}
        if hits:
            bad[str(f.relative_to(PKG))] = hits
    assert not bad, bad


def test_preflight_rules_are_below_diagnose():
    """diagnose judges a cluster printed in a log with preflight's pure rules; preflight never reads diagnose."""
    bad = {}
    for f in (PKG / "preflight").rglob("*.py"):
        hits = {m for m in _imports(f) if m.startswith(("distdoctor.diagnose", "distdoctor.report", "distdoctor.supervise"))}
        if hits:
            bad[str(f.relative_to(PKG))] = hits
    assert not bad, bad
    # the rules diagnose uses are pure: they import no preflight module that probes hosts or the network
    for name in ("rules.py", "host_rules.py", "mesh_rules.py"):
        rules = _imports(PKG / "preflight" / name)
        assert not {m for m in rules if m.startswith("distdoctor.preflight")}, (name, rules)


def test_safety_is_below_everything():
    """safety/ (redaction, printable text, the bundle's files) is used by every layer and imports none of them."""
    bad = {}
    for f in (PKG / "safety").rglob("*.py"):
        hits = {m for m in _imports(f) if m.startswith("distdoctor.") and not m.startswith("distdoctor.safety")}
        if hits:
            bad[str(f.relative_to(PKG))] = hits
    assert not bad, bad
