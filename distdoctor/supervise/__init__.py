"""Supervision of a running job: launch tasks, observe them, detect failures.

``launch`` and ``probe`` touch processes; ``observe`` samples them into tracks; ``detect`` and ``step`` are pure
(the loop's one state and its step); ``runevents`` is the event stream whose sinks (``sinks``, ``bundle``) are
the run's effects; ``supervisor`` ties them together; ``mirror``/``nodelink`` are ``run --node``'s roles;
``bootstrap/`` is injected into the tasks themselves.
"""
