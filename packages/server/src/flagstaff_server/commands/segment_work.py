"""`flagstaff segments list|get|create|delete`: one environment's segments through the management
API. Argument glue and columns only.
"""

from __future__ import annotations

import argparse
from typing import Any

from flagstaff_server.commands import api_client
from flagstaff_server.commands.exit_code import ExitCode
from flagstaff_server.commands.rendering import Column, emit, emit_fields


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "segments", help="list, show, create or delete segments"
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    _action(actions, "list", "list an environment's segments", run_list, key=False)
    _action(actions, "get", "show one segment", run_get)
    create = _action(actions, "create", "create a segment", run_create)
    create.add_argument("--name", help="display name (default: the key)")
    create.add_argument("--description", default="")
    create.add_argument("--tag", action="append", default=[], help="a tag (repeat for more)")
    _action(actions, "delete", "delete a segment", run_delete)


def _action(
    actions: Any, name: str, help_text: str, run: Any, *, key: bool = True
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = actions.add_parser(name, help=help_text)
    parser.add_argument("-p", "--project", required=True, help="project key")
    parser.add_argument("-e", "--environment", required=True, help="environment key")
    if key:
        parser.add_argument("key", help="segment key")
    api_client.add_options(parser)
    parser.set_defaults(run=run)
    return parser


def _base(args: argparse.Namespace) -> str:
    return f"/api/v2/segments/{args.project}/{args.environment}"


COLUMNS = [
    Column(title="KEY", value=lambda s: s.get("key")),
    Column(title="NAME", value=lambda s: s.get("name")),
    Column(title="INCLUDED", value=lambda s: len(s.get("included") or [])),
    Column(title="RULES", value=lambda s: len(s.get("rules") or [])),
    Column(title="TAGS", value=lambda s: s.get("tags")),
]


def run_list(args: argparse.Namespace) -> int:
    items: list[Any] = []
    with api_client.connect(api_client.resolve(args)) as client:
        while True:  # every page, bounded by the total the server reports
            page = api_client.request(
                client, "GET", _base(args), params={"limit": 100, "offset": len(items)}
            )
            items += page.get("items", [])
            if not page.get("items") or len(items) >= int(page.get("totalCount", 0)):
                break
    emit(args.output, {"items": items, "totalCount": len(items)}, COLUMNS, items)
    return ExitCode.OK


def run_get(args: argparse.Namespace) -> int:
    with api_client.connect(api_client.resolve(args)) as client:
        segment = api_client.request(client, "GET", f"{_base(args)}/{args.key}")
    names = ("key", "name", "description", "tags", "included", "excluded", "version")
    fields = [(name, segment.get(name)) for name in names]
    fields.append(("rules", len(segment.get("rules") or [])))
    emit_fields(args.output, segment, fields)
    return ExitCode.OK


def run_create(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {
        "key": args.key,
        "name": args.name or args.key,
        "description": args.description,
        "tags": args.tag,
    }
    with api_client.connect(api_client.resolve(args)) as client:
        segment = api_client.request(client, "POST", _base(args), body=body)
    emit(args.output, segment, COLUMNS, [segment])
    return ExitCode.OK


def run_delete(args: argparse.Namespace) -> int:
    with api_client.connect(api_client.resolve(args)) as client:
        api_client.request(client, "DELETE", f"{_base(args)}/{args.key}")
    document = {"key": args.key, "deleted": True}
    columns = [
        Column(title="SEGMENT", value=lambda d: d["key"]),
        Column(title="RESULT", value=lambda d: "deleted"),
    ]
    emit(args.output, document, columns, [document])
    return ExitCode.OK
