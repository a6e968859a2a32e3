"""`flagstaff quarantine`: the event payloads that failed processing on their own, through the
management API: `list` them, `export` them with their bodies (JSON lines), `reprocess` them
(all, or those named) once whatever made them fail is fixed.
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
        "quarantine",
        help="list, export or reprocess quarantined event payloads",
        description=(
            "Event payloads that failed processing on their own are kept in quarantine while "
            "processing goes on: list them, export them (JSON lines, bodies included) or "
            "process them again."
        ),
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="list the payloads held, oldest first (JSON)")
    management_api.add_options(listing)
    listing.add_argument("--limit", type=int, default=100, help="at most this many (1-1000)")
    export = actions.add_parser("export", help="write the payloads held as JSON lines")
    management_api.add_options(export)
    export.add_argument(
        "-o", "--output", type=Path, default=None, help="file to write (default: standard output)"
    )
    again = actions.add_parser("reprocess", help="process the payloads held again")
    management_api.add_options(again)
    again.add_argument(
        "--payload-id",
        action="append",
        dest="payload_ids",
        default=None,
        help="only this payload (repeat for more; default: every payload held)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    base = f"/api/v2/insights/{args.project}/{args.environment}/quarantine"
    with management_api.connect(args) as client:
        if args.action == "export":
            return write(management_api.download(client, f"{base}/export"), args.output)
        if args.action == "list":
            answer = management_api.send(client, "GET", f"{base}?limit={args.limit}")
        else:
            body = {} if args.payload_ids is None else {"payloadIds": args.payload_ids}
            answer = management_api.send(client, "POST", f"{base}/reprocess", body=body)
    sys.stdout.write(json.dumps(answer, indent=2, sort_keys=True) + "\n")
    if args.action == "reprocess" and answer.get("failed"):
        return 1
    return 0


def write(data: bytes, output: Path | None) -> int:
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    try:
        output.write_bytes(data)
    except OSError as exc:
        raise CommandError(f"cannot write {output}: {exc.strerror or exc}") from exc
    return 0
