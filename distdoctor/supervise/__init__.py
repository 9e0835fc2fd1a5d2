"""Supervision of a running job: launch tasks, observe them, detect failures.

``launch`` and ``probe`` touch processes; ``detect`` is pure; ``supervisor``
ties them together; ``bootstrap/`` is injected into the tasks themselves.
"""
