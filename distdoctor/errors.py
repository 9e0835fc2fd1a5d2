"""Error types. Only ``cli.py`` turns these into exit codes and one-line messages.

Every subsystem raises a subclass of :class:`DistDoctorError`; the message says
what was seen, what was expected and what to do next.
"""

__all__ = ["DistDoctorError", "UsageError", "ConfigError", "InputError"]


class DistDoctorError(Exception):
    """Base of every error distdoctor reports to a user (exit code 2)."""

    exit_code = 2


class UsageError(DistDoctorError):
    """The command line asks for something that cannot be done."""


class ConfigError(DistDoctorError):
    """A cluster specification (TF_CONFIG, cluster file, Slurm variables) is unusable."""


class InputError(DistDoctorError):
    """Input files (logs, bundles) are missing, unreadable or hold nothing usable."""
