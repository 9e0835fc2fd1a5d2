"""The one list of checks the engine runs over recorded job observations (``run`` and ``diagnose``).

Each rule module keeps its rules in its own explicit :class:`~distdoctor.catalogue.RuleList` (``RULES``);
this module names the modules, in the order their checks run:

* :mod:`.failure_rules` -- how a task ended (DD101-DD120);
* :mod:`.hang_rules` -- a hung job (DD201-DD204);
* :mod:`.training_rules` -- how training went (DD205-DD209);
* :mod:`.log_rules` -- what only logs show (DD150-DD158);
* :mod:`.pause_rules` -- the pauses `run` waited out (DD211).

What they read of a task is in :mod:`.taskfacts`.
"""
from __future__ import annotations

from . import failure_rules, hang_rules, log_rules, pause_rules, training_rules
from .taskfacts import chief_succeeded, completed, signal_name

__all__ = ["CHECKS", "RULE_MODULES", "chief_succeeded", "completed", "signal_name"]

RULE_MODULES = (failure_rules, hang_rules, training_rules, log_rules, pause_rules)
CHECKS = tuple(check for module in RULE_MODULES for check in module.RULES.checks)
