"""The shape of the package: no import circles between modules, no import by name, modules of a readable size.

No module is over the size bound and no circle is left; KNOWN_CIRCLES and OVERSIZE stay, empty, as the place to
list one with a reason if it ever must be tolerated for a while (a ratchet: it may shrink, never grow). Pure and fast.
"""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "distdoctor"
MAX_LINES = 500
# circles still there, through a lazy import inside a function (a ratchet: take one out when it is broken)
KNOWN_CIRCLES: set[frozenset[str]] = set()
OVERSIZE: dict[str, int] = {}   # module -> the most lines it may have until it is split


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        rel = p.relative_to(PKG.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _top_level_imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of the package that ``name`` imports, at module level or inside its functions."""
    tree = ast.parse(path.read_text())
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    skip = {id(n) for top in tree.body if isinstance(top, ast.If) for n in ast.walk(top)}  # `if TYPE_CHECKING:`
    for st in ast.walk(tree):   # imports inside functions too: a lazy import hides a circle, it does not break it
        if id(st) in skip:
            continue
        if True:
            if isinstance(st, ast.Import):
                found |= {a.name for a in st.names if a.name in known}
            elif isinstance(st, ast.ImportFrom):
                base = st.module or ""
                if st.level:
                    up = pkg.split(".")
                    up = up[: len(up) - (st.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                for a in st.names:
                    cand = f"{base}.{a.name}"
                    found.add(cand if cand in known else base)
    return {m for m in found if m in known and m != name}


def test_no_import_circles_between_modules():
    mods = _modules()
    graph = {n: _top_level_imports(n, p, set(mods)) for n, p in mods.items()}
    # a package's __init__ importing its own submodules is how a package exposes them: not a circle
    for n in graph:
        graph[n] = {m for m in graph[n] if not m.startswith(n + ".")}
    seen, stack, cycles = set(), [], []

    def visit(n):
        if n in stack:
            cycles.append(stack[stack.index(n):] + [n])
            return
        if n in seen:
            return
        seen.add(n)
        stack.append(n)
        for m in sorted(graph[n]):
            visit(m)
        stack.pop()

    for n in sorted(graph):
        visit(n)
    found = {frozenset(c) for c in cycles}
    assert found <= KNOWN_CIRCLES, [sorted(c) for c in found - KNOWN_CIRCLES][:5]


def test_no_import_by_name():
    bad = []
    for p in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name in ("import_module", "__import__"):
                    bad.append(f"{p.relative_to(PKG)}:{node.lineno}")
    assert not bad, bad


def test_modules_stay_readable():
    too_big = {}
    for p in PKG.rglob("*.py"):
        rel = str(p.relative_to(PKG))
        n = len(p.read_text().splitlines())
        if n > OVERSIZE.get(rel, MAX_LINES):
            too_big[rel] = n
    assert not too_big, f"modules over {MAX_LINES} lines (or over their listed size): {too_big}"
    for rel, limit in OVERSIZE.items():
        assert (PKG / rel).exists(), f"{rel} is listed in OVERSIZE but gone: take it out"


def test_every_subcommand_imports():
    from distdoctor.cli import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"run", "diagnose", "check", "report", "policy", "rules"} <= set(sub.choices)


def test_one_class_per_concept():
    """No two classes of the package share a name: one concept, one class (issue 19: six names were defined twice)."""
    where: dict[str, list[str]] = {}
    for p in PKG.rglob("*.py"):
        for node in ast.parse(p.read_text()).body:
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(str(p.relative_to(PKG)))
    twice = {name: files for name, files in where.items() if len(files) > 1}
    assert not twice, twice


def test_a_command_line_imports_its_own_subcommand_only(tmp_path):
    """`distdoctor diagnose` starts without the supervisor, the alert senders or the HTML report's code (start-up is
    part of diagnose's throughput); the full parser (--help, an unknown command) still has every subcommand."""
    import subprocess
    import sys
    log = tmp_path / "worker-0.log"
    log.write_text("Epoch 1/2\n10/10 [==============================] - 1s 10ms/step - loss: 0.5\n")
    code = ("import sys; from distdoctor.cli import main; main(['diagnose', %r, '--json']); "
            "print(sorted(m for m in ('distdoctor.supervise.supervisor', 'distdoctor.notify.sender', "
            "'distdoctor.report.html') if m in sys.modules), file=sys.stderr)" % str(log))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.stderr.strip().splitlines()[-1] == "[]", p.stderr[-2000:]
    p = subprocess.run([sys.executable, "-m", "distdoctor", "nosuch"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "invalid choice" in p.stderr and "diagnose" in p.stderr and "Traceback" not in p.stderr
