"""The exit codes of the `flagstaff` command line, a contract scripts rely on (docs/cli.md)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    REFUSED = 1  # the API (or the command) refused: bad input, unknown key, conflict, no right
    USAGE = 2  # argparse's own code for bad arguments
    UNREACHABLE = 3  # no connection to the server, or a timeout
    NOT_SIGNED_IN = 4  # no token from --token, FLAGSTAFF_TOKEN or `flagstaff login`
