"""`flagstaff audit`: the audit log through the management API, newest first. Argument glue only."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from flagstaff_server.commands import api_client
from flagstaff_server.commands.exit_code import ExitCode
from flagstaff_server.commands.rendering import Column, emit

COLUMNS = [
    Column(
        title="DATE",
        value=lambda e: datetime.fromtimestamp(int(e.get("date", 0)) / 1000, UTC).strftime(
            "%Y-%m-%d %H:%M:%S"
        ),
    ),
    Column(title="KIND", value=lambda e: e.get("kind")),
    Column(title="NAME", value=lambda e: e.get("name")),
    Column(title="WHAT", value=lambda e: e.get("titleVerb") or e.get("shortDescription")),
    Column(title="COMMENT", value=lambda e: e.get("comment")),
]


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "audit", help="list audit log entries, newest first"
    )
    parser.add_argument("--spec", help="resource specifier, e.g. proj/shop:env/production:flag/*")
    parser.add_argument("-q", "--query", help="text in the resource name, spec or comment")
    parser.add_argument("--limit", type=int, default=20, help="at most this many (20)")
    parser.add_argument("--before", type=int, help="only entries before this epoch ms")
    parser.add_argument("--after", type=int, help="only entries after this epoch ms")
    api_client.add_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    params = {
        "spec": args.spec,
        "q": args.query,
        "limit": args.limit,
        "before": args.before,
        "after": args.after,
    }
    with api_client.connect(api_client.resolve(args)) as client:
        page = api_client.request(client, "GET", "/api/v2/auditlog", params=params)
    emit(args.output, page, COLUMNS, page.get("items", []))
    return ExitCode.OK
