"""Command line: the only place that turns errors into exit codes and one-line messages.

Subcommands register themselves through ``register_cli(subparsers)`` functions
that live in their own packages; each sets ``func(args) -> int``.
"""
from __future__ import annotations

import argparse
import sys

from . import __version__
from .errors import DistDoctorError

__all__ = ["main", "build_parser", "SUBCOMMANDS"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, no usage dump
        raise DistDoctorError(f"{self.prog}: {message} (see --help)")


# every subcommand is imported by its name in the code (a broken import fails loudly: tests/test_shape.py), inside
# its registrar: a command line that names one subcommand imports only that one (`diagnose` starts without the
# supervisor, the alert senders or the HTML report's code)
def _run(sub) -> None:
    from .supervise import command as run_command
    run_command.register_cli(sub)


def _policy(sub) -> None:
    from .supervise import schedpolicy
    schedpolicy.register_cli(sub)


def _diagnose(sub) -> None:
    from .report import diagnose_cli
    diagnose_cli.register_cli(sub)


def _check(sub) -> None:
    from .preflight import command as check_command
    check_command.register_cli(sub)


def _report(sub) -> None:
    from .report import command as report_command
    report_command.register_cli(sub)


def _rules_cli(sub) -> None:
    rules = sub.add_parser("rules", help="list the diagnosis rule catalogue")
    rules.add_argument("--markdown", action="store_true", help="print the catalogue as Markdown (docs/rules.md)")
    rules.set_defaults(func=_rules)


SUBCOMMANDS = {"run": _run, "policy": _policy, "diagnose": _diagnose, "check": _check, "report": _report,
               "rules": _rules_cli}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or (``only``) the one subcommand a command line names."""
    parser = _Parser(prog="distdoctor", description="Make multi-worker TensorFlow training fail loudly, early and with its real cause named.")
    parser.add_argument("--version", action="version", version=f"distdoctor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, add_subcommand in SUBCOMMANDS.items():
        if only is None or name == only:
            add_subcommand(sub)
    return parser


def _rules(args: argparse.Namespace) -> int:
    from .rulebook import all_rules, render_markdown
    if args.markdown:
        print(render_markdown())
    else:
        for r in all_rules():
            print(f"{r.code}  {r.category.value:32} {r.title}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        parser = build_parser(argv[0] if argv and argv[0] in SUBCOMMANDS else None)
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return int(args.func(args))
    except DistDoctorError as exc:
        print(f"distdoctor: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("distdoctor: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # a bug of ours: still one line, the traceback on request
        import os
        if os.environ.get("DISTDOCTOR_DEBUG"):
            raise
        print(f"distdoctor: internal error: {type(exc).__name__}: {exc} (set DISTDOCTOR_DEBUG=1 for the traceback)",
              file=sys.stderr)
        return 2
