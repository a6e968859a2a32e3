"""`flagstaff export`: download one environment as a LaunchDarkly data file through the API.

Writes exactly what the server's export endpoint answers (the SDK data format delivery serves).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from flagstaff_server.commands import management_api
from flagstaff_server.commands.error import CommandError


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "export",
        help="export an environment as a LaunchDarkly data file",
        description="Write the flags and segments of one environment as a LaunchDarkly data file.",
    )
    management_api.add_options(parser)
    parser.add_argument(
        "-o", "--output", type=Path, default=None, help="file to write (default: standard output)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with management_api.connect(args) as client:
        data = management_api.send(
            client, "GET", f"/api/v2/projects/{args.project}/environments/{args.environment}/export"
        )
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    return 0
