"""The `flagstaff` command line: argument parsing only; each command calls one function."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    del argv
    print("flagstaff: no commands yet", file=sys.stderr)
    return 2
