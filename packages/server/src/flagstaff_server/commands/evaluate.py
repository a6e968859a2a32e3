"""`flagstaff eval`: evaluate the flags of a LaunchDarkly data file for one or many contexts.

Argument and file glue only: reading, JSON parsing and error messages live here, evaluation in
`flagstaff_server.services.evaluation`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from flagstaff_core import Context

from flagstaff_server.commands.error import CommandError
from flagstaff_server.errors import FlagstaffError
from flagstaff_server.services.evaluation import (
    decode_context_json,
    decode_file_data,
    evaluate_flags,
)

DESCRIPTION = """\
Evaluate the flags of a LaunchDarkly data file ({"flags": {...}, "segments": {...}}, optionally
"flagValues": {KEY: VALUE}) for a context, and print {FLAGKEY: {"value", "variationIndex",
"reason"}} for every flag in key order (or only --flag KEY). "value" is null when no variation
was chosen (an SDK would serve the application's default).

With --context the result is one indented JSON object. With --contexts every line of the file
(JSON Lines; "-" reads standard input) is a context, and the output has one compact JSON object
per input line, in the same order. Every input is checked before anything is printed.
"""

EPILOG = """\
exit status: 0 on success; 1 for an unreadable or invalid data file, an invalid context or an
unknown --flag (with a one-line message on standard error); 2 for wrong usage.

example:
  flagstaff eval --data docs/examples/demo-flags.json \\
    --context '{"kind": "user", "key": "ana", "email": "ana@flagstaff.example"}'
"""


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "eval",
        help="evaluate flags from a LaunchDarkly data file for a context",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", type=Path, required=True, metavar="FILE", help="data file")
    contexts = parser.add_mutually_exclusive_group(required=True)
    contexts.add_argument(
        "--context", metavar="JSON", help="one context as JSON (new format or old user format)"
    )
    contexts.add_argument(
        "--contexts", type=Path, metavar="FILE.jsonl", help="one context JSON per line"
    )
    parser.add_argument("--flag", metavar="KEY", help="evaluate only this flag")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    data_document = read_json(args.data)
    try:
        data = decode_file_data(data_document)
    except FlagstaffError as exc:
        raise CommandError(f"{args.data}: invalid data at {exc.path}: {exc.message}") from exc
    if args.context is not None:
        contexts = [parse_context(args.context, "--context")]
    else:
        contexts = read_contexts(args.contexts)
    try:
        results = [evaluate_flags(data, context, args.flag) for context in contexts]
    except FlagstaffError as exc:
        raise CommandError(f"{exc.message} (see --data {args.data})") from exc
    if args.context is not None:
        print(json.dumps(results[0], indent=2))
    else:
        for result in results:
            print(json.dumps(result, separators=(",", ":")))
    return 0


def read_json(path: Path) -> object:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CommandError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path} is not UTF-8 text: {exc.reason}") from exc


def read_contexts(path: Path) -> list[Context]:
    from_stdin = str(path) == "-"
    try:
        text = sys.stdin.read() if from_stdin else path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path} is not UTF-8 text: {exc.reason}") from exc
    lines = text.splitlines()
    # Trailing blank lines are an editor's habit; a blank line inside would shift the output
    # against the input, so it is an error.
    while lines and not lines[-1].strip():
        lines.pop()
    source = "standard input" if from_stdin else str(path)
    if not lines:
        raise CommandError(f"{source} has no contexts")
    return [parse_context(line, f"{source} line {number}") for number, line in enumerate(lines, 1)]


def parse_context(text: str, origin: str) -> Context:
    if not text.strip():
        raise CommandError(f"{origin}: empty line, expected a context as JSON")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"{origin} is not valid JSON (column {exc.colno}: {exc.msg})") from exc
    try:
        return decode_context_json(document)
    except FlagstaffError as exc:
        raise CommandError(f"{origin} is not a valid context: {exc.message}") from exc
