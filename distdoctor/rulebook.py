"""The whole rule catalogue: every module that registers rules, imported, and the catalogue rendered.

:mod:`distdoctor.catalogue` is the bottom of the package (the ``Rule`` type and the registry every rule
module writes into); this module sits on top of all of them, so the catalogue imports none of its users.
``distdoctor rules`` and the tests read the complete table from here.
"""
from __future__ import annotations

from .catalogue import RULES, Rule, code_key
from .diagnose import engine, log_rules, pause_rules, rules  # noqa: F401  (registration)
from .diagnose.logs import kb, verdict  # noqa: F401  (registration)
from .diagnose.logs.signature import by_component
from .model import CATEGORY_DOCS, Category
from .notify import rules as notify_rules  # noqa: F401  (registration)
from .preflight import rules as preflight_rules  # noqa: F401  (registration)

__all__ = ["all_rules", "render_markdown"]


def all_rules() -> list[Rule]:
    return [RULES[c] for c in sorted(RULES, key=code_key)]


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
