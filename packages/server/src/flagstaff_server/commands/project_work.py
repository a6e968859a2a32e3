"""`flagstaff projects list|get|create` and `flagstaff environments list|get|create` through the
management API. Argument glue and columns only.
"""

from __future__ import annotations

import argparse
from typing import Any

from flagstaff_server.commands import api_client
from flagstaff_server.commands.exit_code import ExitCode
from flagstaff_server.commands.rendering import Column, emit, emit_fields

PROJECT_COLUMNS = [
    Column(title="KEY", value=lambda p: p.get("key")),
    Column(title="NAME", value=lambda p: p.get("name")),
    Column(title="ENVIRONMENTS", value=lambda p: [e.get("key") for e in _envs(p)]),
    Column(title="TAGS", value=lambda p: p.get("tags")),
]
ENVIRONMENT_COLUMNS = [
    Column(title="KEY", value=lambda e: e.get("key")),
    Column(title="NAME", value=lambda e: e.get("name")),
    Column(title="COLOR", value=lambda e: e.get("color")),
    Column(title="CLIENT-SIDE ID", value=lambda e: e.get("_id")),
]


def _envs(project: Any) -> list[Any]:
    environments = project.get("environments") or []
    if isinstance(environments, dict):  # `expand=environments` answers a page
        environments = environments.get("items", [])
    return list(environments)


def register(subparsers: Any) -> None:
    projects: argparse.ArgumentParser = subparsers.add_parser(
        "projects", help="list, show or create projects"
    )
    actions = projects.add_subparsers(dest="action", required=True, metavar="ACTION")
    _action(actions, "list", "list projects", run_list_projects)
    getter = _action(actions, "get", "show one project", run_get_project)
    getter.add_argument("key", help="project key")
    create = _action(actions, "create", "create a project", run_create_project)
    create.add_argument("key", help="project key")
    create.add_argument("--name", help="display name (default: the key)")
    create.add_argument("--tag", action="append", default=[], help="a tag (repeat for more)")
    create.add_argument(
        "--environment",
        action="append",
        dest="environments",
        metavar="KEY",
        help="an environment to create with it (repeat; default: production and test)",
    )

    environments: argparse.ArgumentParser = subparsers.add_parser(
        "environments", help="list, show or create a project's environments"
    )
    actions = environments.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, help_text, run in (
        ("list", "list a project's environments", run_list_environments),
        ("get", "show one environment", run_get_environment),
        ("create", "create an environment", run_create_environment),
    ):
        parser = _action(actions, name, help_text, run)
        parser.add_argument("-p", "--project", required=True, help="project key")
        if name != "list":
            parser.add_argument("key", help="environment key")
        if name == "create":
            parser.add_argument("--name", help="display name (default: the key)")
            parser.add_argument("--color", default="417505", help="hex colour (417505)")


def _action(actions: Any, name: str, help_text: str, run: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = actions.add_parser(name, help=help_text)
    api_client.add_options(parser)
    parser.set_defaults(run=run)
    return parser


def run_list_projects(args: argparse.Namespace) -> int:
    with api_client.connect(api_client.resolve(args)) as client:
        page = api_client.request(
            client, "GET", "/api/v2/projects", params={"expand": "environments"}
        )
    emit(args.output, page, PROJECT_COLUMNS, page.get("items", []))
    return ExitCode.OK


def run_get_project(args: argparse.Namespace) -> int:
    with api_client.connect(api_client.resolve(args)) as client:
        project = api_client.request(
            client, "GET", f"/api/v2/projects/{args.key}", params={"expand": "environments"}
        )
    fields = [(name, project.get(name)) for name in ("key", "name", "tags")]
    fields += [(f"environment {e.get('key')}", e.get("name")) for e in _envs(project)]
    emit_fields(args.output, project, fields)
    return ExitCode.OK


def run_create_project(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"key": args.key, "name": args.name or args.key, "tags": args.tag}
    if args.environments:
        body["environments"] = [
            {"key": key, "name": key, "color": "417505"} for key in args.environments
        ]
    with api_client.connect(api_client.resolve(args)) as client:
        project = api_client.request(client, "POST", "/api/v2/projects", body=body)
    emit(args.output, project, PROJECT_COLUMNS, [project])
    return ExitCode.OK


def _environments_path(args: argparse.Namespace) -> str:
    return f"/api/v2/projects/{args.project}/environments"


def run_list_environments(args: argparse.Namespace) -> int:
    with api_client.connect(api_client.resolve(args)) as client:
        page = api_client.request(client, "GET", _environments_path(args))
    emit(args.output, page, ENVIRONMENT_COLUMNS, page.get("items", []))
    return ExitCode.OK


def run_get_environment(args: argparse.Namespace) -> int:
    with api_client.connect(api_client.resolve(args)) as client:
        env = api_client.request(client, "GET", f"{_environments_path(args)}/{args.key}")
    names = ("key", "name", "color", "_id", "defaultTtl", "secureMode", "tags")
    emit_fields(args.output, env, [(name, env.get(name)) for name in names])
    return ExitCode.OK


def run_create_environment(args: argparse.Namespace) -> int:
    body = {"key": args.key, "name": args.name or args.key, "color": args.color}
    with api_client.connect(api_client.resolve(args)) as client:
        env = api_client.request(client, "POST", _environments_path(args), body=body)
    emit(args.output, env, ENVIRONMENT_COLUMNS, [env])
    return ExitCode.OK
