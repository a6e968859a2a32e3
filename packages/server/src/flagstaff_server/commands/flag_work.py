"""`flagstaff flags list|get|create|on|off|archive|delete`: flag work through the management API.
on/off and archive are semantic patches (`turnFlagOn`, `turnFlagOff`, `archiveFlag`) with an
optional `--comment`, as LaunchDarkly's API takes them. Argument glue and columns only.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from flagstaff_server.commands import api_client
from flagstaff_server.commands.api_client import SEMANTIC_PATCH
from flagstaff_server.commands.error import CommandError
from flagstaff_server.commands.exit_code import ExitCode
from flagstaff_server.commands.rendering import Column, emit, emit_fields


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "flags", help="list, show, create, switch, archive or delete feature flags"
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = _action(actions, "list", "list a project's flags", run_list, key=False)
    listing.add_argument("-e", "--environment", help="show only this environment's on/off")
    listing.add_argument("--tag", help="only flags with this tag")
    listing.add_argument("--archived", action="store_true", help="archived flags instead")

    getter = _action(actions, "get", "show one flag", run_get)
    getter.add_argument("-e", "--environment", help="show only this environment")

    create = _action(actions, "create", "create a flag (off everywhere)", run_create)
    create.add_argument("--name", help="display name (default: the key)")
    create.add_argument("--description", default="")
    create.add_argument(
        "--variation",
        action="append",
        metavar="JSON",
        help="a variation value as JSON (repeat, 2 or more; default: true and false)",
    )
    create.add_argument("--tag", action="append", default=[], help="a tag (repeat for more)")
    create.add_argument("--temporary", action="store_true", help="mark it temporary")

    for verb, instruction in (("on", "turnFlagOn"), ("off", "turnFlagOff")):
        switch = _action(actions, verb, f"turn a flag {verb} in one environment", run_switch)
        switch.add_argument("-e", "--environment", required=True)
        switch.add_argument("--comment", default=None, help="why (kept in the audit log)")
        switch.set_defaults(instruction=instruction)

    archive = _action(actions, "archive", "archive a flag", run_archive)
    archive.add_argument("--comment", default=None, help="why (kept in the audit log)")

    _action(actions, "delete", "delete a flag from every environment", run_delete)


def _action(
    actions: Any, name: str, help_text: str, run: Any, *, key: bool = True
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = actions.add_parser(name, help=help_text)
    parser.add_argument("-p", "--project", required=True, help="project key")
    if key:
        parser.add_argument("key", help="flag key")
    api_client.add_options(parser)
    parser.set_defaults(run=run)
    return parser


def _environments(flag: dict[str, Any], only: str | None) -> dict[str, Any]:
    environments: dict[str, Any] = flag.get("environments") or {}
    if only is None:
        return environments
    return {only: environments[only]} if only in environments else {}


def _on_column(environment: str) -> Column:
    def value(flag: Any) -> Any:
        config = (flag.get("environments") or {}).get(environment)
        return None if config is None else ("on" if config.get("on") else "off")

    return Column(title=environment.upper(), value=value)


def run_list(args: argparse.Namespace) -> int:
    params = {
        "env": args.environment,
        "tag": args.tag,
        "archived": "true" if args.archived else None,
        "limit": 100,
    }
    items: list[Any] = []
    with api_client.connect(api_client.resolve(args)) as client:
        while True:  # every page, bounded by the total the server reports
            page = api_client.request(
                client,
                "GET",
                f"/api/v2/flags/{args.project}",
                params={**params, "offset": len(items)},
            )
            items += page.get("items", [])
            if not page.get("items") or len(items) >= int(page.get("totalCount", 0)):
                break
    environments = sorted({env for flag in items for env in _environments(flag, args.environment)})
    columns = [
        Column(title="KEY", value=lambda f: f.get("key")),
        Column(title="NAME", value=lambda f: f.get("name")),
        Column(title="KIND", value=lambda f: f.get("kind")),
        *(_on_column(env) for env in environments),
        Column(title="TAGS", value=lambda f: f.get("tags")),
    ]
    emit(args.output, {"items": items, "totalCount": len(items)}, columns, items)
    return ExitCode.OK


def run_get(args: argparse.Namespace) -> int:
    params = {"env": args.environment}
    with api_client.connect(api_client.resolve(args)) as client:
        flag = api_client.request(
            client, "GET", f"/api/v2/flags/{args.project}/{args.key}", params=params
        )
    fields: list[tuple[str, Any]] = [
        (name, flag.get(name))
        for name in ("key", "name", "kind", "description", "tags", "temporary", "archived")
    ]
    fields.append(("variations", [json.dumps(v.get("value")) for v in flag.get("variations", [])]))
    for environment, config in _environments(flag, args.environment).items():
        state = "on" if config.get("on") else "off"
        fields.append((f"{environment}", f"{state}, version {config.get('version')}"))
    emit_fields(args.output, flag, fields)
    return ExitCode.OK


def parse_variations(texts: list[str] | None) -> list[dict[str, Any]] | None:
    if texts is None:
        return None
    variations = []
    for text in texts:
        try:
            variations.append({"value": json.loads(text)})
        except ValueError:
            raise CommandError(
                f"--variation must be JSON (quote strings: '\"red\"'), got {text!r}",
                exit_code=ExitCode.USAGE,
            ) from None
    return variations


def run_create(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {
        "key": args.key,
        "name": args.name or args.key,
        "description": args.description,
        "tags": args.tag,
        "temporary": args.temporary,
    }
    variations = parse_variations(args.variation)
    if variations is not None:
        body["variations"] = variations
    with api_client.connect(api_client.resolve(args)) as client:
        flag = api_client.request(client, "POST", f"/api/v2/flags/{args.project}", body=body)
    return _show_changed(args, flag, "created")


def _semantic_patch(args: argparse.Namespace, instruction: dict[str, Any], env: str | None) -> Any:
    body: dict[str, Any] = {"instructions": [instruction]}
    if env is not None:
        body["environmentKey"] = env
    if args.comment:
        body["comment"] = args.comment
    with api_client.connect(api_client.resolve(args)) as client:
        return api_client.request(
            client,
            "PATCH",
            f"/api/v2/flags/{args.project}/{args.key}",
            body=body,
            content_type=SEMANTIC_PATCH,
        )


def run_switch(args: argparse.Namespace) -> int:
    flag = _semantic_patch(args, {"kind": args.instruction}, args.environment)
    state = "on" if args.instruction == "turnFlagOn" else "off"
    return _show_changed(args, flag, f"{state} in {args.environment}")


def run_archive(args: argparse.Namespace) -> int:
    return _show_changed(args, _semantic_patch(args, {"kind": "archiveFlag"}, None), "archived")


def run_delete(args: argparse.Namespace) -> int:
    with api_client.connect(api_client.resolve(args)) as client:
        api_client.request(client, "DELETE", f"/api/v2/flags/{args.project}/{args.key}")
    return _show_changed(args, {"key": args.key, "deleted": True}, "deleted")


def _show_changed(args: argparse.Namespace, document: Any, what: str) -> int:
    columns = [
        Column(title="FLAG", value=lambda d: d.get("key")),
        Column(title="RESULT", value=lambda d: what),
    ]
    emit(args.output, document, columns, [document])
    return ExitCode.OK
