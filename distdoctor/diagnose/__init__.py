"""Diagnosis: parse evidence, run the rule catalogue, pick the root cause.

Everything in this package is pure: it reads recorded observations and
returns findings; it never touches a process, a socket or the clock.
"""
