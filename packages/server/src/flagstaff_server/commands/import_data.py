"""`flagstaff import`: upload a LaunchDarkly data file into one environment through the API.

A client of the running server's import endpoint; it checks only that the file is JSON and leaves
validation (and the all-or-nothing write) to the server.
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
        "import",
        help="import a LaunchDarkly data file into an environment",
        description="Create or update the flags and segments of a LaunchDarkly data file "
        '({"flags": {...}, "segments": {...}}) in one environment. All or nothing.',
    )
    management_api.add_options(parser)
    parser.add_argument("file", type=Path, help="the data file (JSON)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    data = read_data_file(args.file)
    with management_api.connect(args) as client:
        summary = management_api.send(
            client,
            "POST",
            f"/api/v2/projects/{args.project}/environments/{args.environment}/import",
            body=data,
        )
    flags = summary.get("flags", 0) if isinstance(summary, dict) else 0
    segments = summary.get("segments", 0) if isinstance(summary, dict) else 0
    print(
        f"imported {counted(flags, 'flag')} and {counted(segments, 'segment')} "
        f"into {args.project}/{args.environment}",
        file=sys.stderr,
    )
    return 0


def counted(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def read_data_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
