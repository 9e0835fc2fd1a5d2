"""The whole rule catalogue: every module that defines rules, listed, and the catalogue rendered.

:mod:`distdoctor.catalogue` is the bottom of the package (the ``Rule`` type and ``RuleList``); this module sits on
top of every rule module, so the catalogue imports none of its users. Each module below keeps its rules in its own
explicit ``RULES`` list (``tests/test_catalogue.py`` checks that nothing registers a rule any other way and that
every module with a ``RULES`` list is named here). ``distdoctor rules`` and the tests read the complete table here.
"""
from __future__ import annotations

from .catalogue import Rule, code_key
from .diagnose import engine
from .diagnose import rules as diagnose_rules
from .diagnose.logs import kb, safetynet, signature, verdict
from .diagnose.logs.signature import by_component
from .model import CATEGORY_DOCS, Category
from .notify import rules as notify_rules
from .preflight import host_rules, mesh_rules
from .preflight import rules as preflight_rules

__all__ = ["RULE_MODULES", "all_rules", "render_markdown"]

assert kb   # the knowledge base's component modules add their signatures to signature.RULES when kb is imported

# every module that defines rules, each with its explicit ``RULES`` list
RULE_MODULES = (*diagnose_rules.RULE_MODULES, engine, signature, safetynet, verdict, notify_rules,
                preflight_rules, host_rules, mesh_rules)


def all_rules() -> list[Rule]:
    return sorted((r for module in RULE_MODULES for r in module.RULES), key=lambda r: code_key(r.code))


def render_markdown() -> str:
    lines = ["# Rule catalogue", "", "Generated from `distdoctor/rulebook.py` (`distdoctor rules --markdown`).", "",
             "## Categories", "", "| slug | meaning |", "|---|---|"]
    for cat in Category:
        lines.append(f"| `{cat.value}` | {CATEGORY_DOCS[cat]} |")
    lines += ["", "## Rules", ""]
    for r in all_rules():
        lines += [f"### {r.code} {r.name} — {r.title}", "",
                  f"- **category**: `{r.category.value}` ({r.lifecycle})",
                  f"- **what it detects**: {r.detects}",
                  f"- **why it matters**: {r.why}",
                  f"- **evidence**: {r.evidence}",
                  f"- **remedy**: {r.remedy}", ""]
    lines += ["## Log signatures by component", "",
              "Which component prints each signature's message, and in which of its versions (`versions`).", "",
              "| component | signatures |", "|---|---|"]
    for comp, sigs in by_component().items():
        lines.append(f"| {comp} | " + ", ".join(f"{s.code} ({s.versions})" for s in sigs) + " |")
    lines.append("")
    return "\n".join(lines)
