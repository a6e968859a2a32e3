"""`flagstaff completion bash|zsh|fish|tcsh`: print the shell code that completes `flagstaff`
with argcomplete (argparse's completion package); `cli.main` answers the shell's requests.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from argcomplete.shell_integration import shellcode

from flagstaff_server.commands.exit_code import ExitCode


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "completion",
        help='print shell completion code: eval "$(flagstaff completion bash)"',
    )
    parser.add_argument("shell", choices=("bash", "zsh", "fish", "tcsh"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(shellcode(["flagstaff"], shell=args.shell))
    return ExitCode.OK
