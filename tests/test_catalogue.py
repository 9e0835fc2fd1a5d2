import ast
import re
from pathlib import Path

from distdoctor.catalogue import CODE_FORMAT, code_key
from distdoctor.rulebook import all_rules, render_markdown
from distdoctor.model import Category


def test_codes_are_stable_and_documented():
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules)
    for r in rules:
        assert re.fullmatch(CODE_FORMAT, r.code) and re.fullmatch(r"DD\d{3,4}", r.code)
        assert isinstance(r.category, Category)
        assert r.detects and r.why and r.evidence and r.remedy


def test_codes_sort_by_number():
    """Four-digit codes (DD1000+) come after DD999 in the catalogue, not between DD100 and DD101."""
    assert sorted(["DD1000", "DD101", "DD999", "DD100"], key=code_key) == ["DD100", "DD101", "DD999", "DD1000"]
    codes = [r.code for r in all_rules()]
    assert [int(c[2:]) for c in codes] == sorted(int(c[2:]) for c in codes)
    assert any(len(c) == 6 for c in codes)


def test_docs_are_generated_from_the_catalogue():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text()
    assert doc.strip() == render_markdown().strip(), "run: distdoctor rules --markdown > docs/rules.md"


def test_rules_carry_their_rank_and_role():
    """The engine's tie-break order and its hang/own-failure sets come from the rules themselves (no parallel lists)."""
    from distdoctor.catalogue import codes_with_role, priority
    from distdoctor.rulebook import all_rules
    from distdoctor.diagnose import engine
    rules = {r.code: r for r in all_rules()}
    assert engine.PRIORITY == priority()
    for code in ("DD151", "DD152", "DD153", "DD156"):
        assert rules[code].rank is not None, code
    assert codes_with_role("hang") >= {"DD150", "DD151", "DD152", "DD153", "DD201", "DD202", "DD203", "DD204"}
    assert all(rules[c].rank is not None for c in codes_with_role("hang") | codes_with_role("own_failure"))


def _package_sources() -> dict[str, ast.Module]:
    """Every module of the package, parsed, by its dotted name."""
    pkg = Path(__file__).resolve().parent.parent / "distdoctor"
    out = {}
    for p in sorted(pkg.rglob("*.py")):
        parts = list(p.relative_to(pkg.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = ast.parse(p.read_text())
    return out


def test_one_way_to_register_a_rule():
    """A rule enters the catalogue one way: its module's explicit ``RULES = RuleList()``, through ``RULES.add`` or
    the ``@RULES.check`` decorator; every such module is listed in ``rulebook.RULE_MODULES``; the engine runs one
    check list, made of the checks of those lists."""
    from distdoctor import catalogue
    from distdoctor.diagnose import rules as diagnose_rules
    from distdoctor.rulebook import RULE_MODULES
    trees = _package_sources()
    other_way, declares = [], set()
    for name, tree in trees.items():
        if name == "distdoctor.catalogue":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("catalogue"):
                hidden = {a.name for a in node.names} & {"_BY_CODE", "_register"}   # the registry's own insides
                if hidden:
                    other_way.append(f"{name}:{node.lineno} imports {sorted(hidden)} from the catalogue")
            if isinstance(node, ast.Call):
                f = node.func
                called = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if called == "Rule" or (isinstance(f, ast.Name) and called in ("register", "rule_registrar")):
                    other_way.append(f"{name}:{node.lineno} calls {called}()")
                if called == "RuleList":
                    declares.add(name)
        for node in tree.body:   # a RuleList is made once, at module level, and named RULES
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call) and getattr(sub.func, "id", "") == "RuleList":
                    ok = isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["RULES"]
                    if not ok:
                        other_way.append(f"{name}:{sub.lineno} makes a RuleList not named RULES at module level")
    assert not other_way, other_way
    listed = {m.__name__ for m in RULE_MODULES}
    assert declares == listed, (sorted(declares - listed), sorted(listed - declares))
    rules = [r for m in RULE_MODULES for r in m.RULES]
    assert len({r.code for r in rules}) == len(rules) == len(catalogue._BY_CODE)
    assert {r.code for r in rules} == set(catalogue._BY_CODE)
    # one check list, consumed one way: the engine's is every listed module's checks, and only diagnose's have any
    checks = [c for m in RULE_MODULES for c in m.RULES.checks]
    assert list(diagnose_rules.CHECKS) == [c for m in diagnose_rules.RULE_MODULES for c in m.RULES.checks]
    assert {id(c) for c in checks} == {id(c) for c in diagnose_rules.CHECKS}


def test_ranks_run_one_way():
    """One rank direction, higher = stronger, for the rules and the log signatures alike: the more direct
    evidence outranks what it caused, and the engine considers the highest rank first."""
    from distdoctor.catalogue import get, priority
    from distdoctor.diagnose import engine
    from distdoctor.diagnose.logs.signature import by_code
    ranked = [get(c).rank for c in priority()]
    assert ranked == sorted(ranked, reverse=True) and len(set(ranked)) == len(ranked)
    assert engine.PRIORITY == priority()
    stronger_than = [("DD103", "DD101"),   # the kernel's OOM verdict over a bare SIGKILL
                     ("DD102", "DD104"),   # a native crash over the exception it raised
                     ("DD105", "DD104"),   # an allocation failure over the exception it raised
                     ("DD104", "DD107"),   # a task's own record over what its peers say of it
                     ("DD203", "DD201"),   # a frozen process over a stalled one
                     ("DD201", "DD150")]   # a hang seen live over logs that merely stop
    for strong, weak in stronger_than:
        assert get(strong).rank > get(weak).rank, (strong, weak)
        assert priority().index(strong) < priority().index(weak), (strong, weak)
    # the log signatures' scale runs the same way: the kernel's OOM kill over the generic exception it triggered
    for strong, weak in [("DD768", "DD860"), ("DD634", "DD860"), ("DD860", "DD861")]:
        assert by_code(strong).rank > by_code(weak).rank, (strong, weak)
