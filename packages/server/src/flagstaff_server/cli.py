# PYTHON_ARGCOMPLETE_OK
"""The `flagstaff` command line: builds the parser from the command modules and runs one command.

Each command module under `flagstaff_server.commands` exposes `register(subparsers)`, adding a
subparser whose `run` default takes the parsed arguments and returns an exit code.
Argument errors and `CommandError` become a one-line message and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

import argcomplete

from flagstaff_server.commands.error import CommandError

# Module names under flagstaff_server.commands; each registers one subcommand.
COMMANDS: tuple[str, ...] = (
    "evaluate",
    "serve",
    "import_data",
    "export_data",
    "quarantine",
    "user",
    "relay",
    "dr",
    "killswitch",
    "login",
    "flag_work",
    "segment_work",
    "project_work",
    "audit_log",
    "completion",
    "migrate",
    "code_references",
    "gameday",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flagstaff", description="Flagstaff feature management platform"
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"flagstaff_server.commands.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argcomplete.autocomplete(parser)  # answers only when the shell asks (_ARGCOMPLETE set)
    args = parser.parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except CommandError as exc:
        print(f"flagstaff {args.command}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
