"""`flagstaff migrate launchdarkly`: copy projects, environments, flags (every environment's
targeting, salts kept) and segments from LaunchDarkly's REST API v2 into Flagstaff's.

Each step reads the target first and writes only what differs, so an interrupted run is resumed by
running it again and a repeated run writes nothing. Targeting goes in through the import endpoint
(SDK JSON, salts and rule ids kept), so every context gets the same variation (docs/cli.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import httpx

from flagstaff_server.commands import api_client
from flagstaff_server.commands.api_client import SEMANTIC_PATCH, ApiRefused, Target
from flagstaff_server.commands.error import CommandError
from flagstaff_server.commands.exit_code import ExitCode
from flagstaff_server.commands.launchdarkly_source import (
    SourceProject,
    paged,
    project_keys,
    read_project,
)
from flagstaff_server.commands.migration_plan import (
    new_flag_body,
    new_segment_body,
    not_carried,
    plan_environment,
)


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "migrate", help="move projects, flags and segments from LaunchDarkly into Flagstaff"
    )
    sources = parser.add_subparsers(dest="source", required=True, metavar="SOURCE")
    ld: argparse.ArgumentParser = sources.add_parser(
        "launchdarkly", help="from LaunchDarkly's REST API v2 (or another Flagstaff)"
    )
    ld.add_argument("--source-url", required=True, help="e.g. https://app.launchdarkly.com")
    ld.add_argument("--source-token", required=True, help="a reader access token of the source")
    ld.add_argument("--project", help="only this project (default: every project)")
    ld.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")
    api_client.add_options(ld)
    ld.set_defaults(run=run)


class Report:
    def __init__(self, dry_run: bool) -> None:
        self.dry_run = dry_run
        self.lines: list[str] = []
        self.changes = 0
        self.unchanged = 0
        self.not_carried: list[str] = []

    def changed(self, line: str, count: int = 1) -> None:
        self.changes += count
        self.lines.append(("would " if self.dry_run else "") + line)

    def summary(self) -> dict[str, Any]:
        return {
            "dryRun": self.dry_run,
            "changes": self.changes,
            "unchanged": self.unchanged,
            "log": self.lines,
            "notCarriedOver": self.not_carried,
        }


def run(args: argparse.Namespace) -> int:
    source_url = str(args.source_url).rstrip("/")
    if not source_url.startswith(("http://", "https://")):
        raise CommandError("--source-url must start with http:// or https://", exit_code=2)
    target = api_client.resolve(args)
    report = Report(args.dry_run)
    source = Target(url=source_url, token=args.source_token)
    with api_client.connect(source) as reader, api_client.connect(target) as writer:
        for key in project_keys(reader, args.project):
            migrate_project(read_project(reader, key), writer, report)
    write_report(args.output, report)
    return ExitCode.OK


def write_report(output: str, report: Report) -> None:
    if output == "json":
        sys.stdout.write(json.dumps(report.summary(), indent=2, sort_keys=True) + "\n")
        return
    for line in report.lines:
        print(line)
    if report.changes == 0:
        print(f"nothing to change: the target already matches ({report.unchanged} items checked)")
    else:
        verb = "would change" if report.dry_run else "changed"
        print(f"{verb} {report.changes} items; {report.unchanged} already matched")
    if report.not_carried:
        print("not carried over:")
        for line in report.not_carried:
            print(f"  {line}")


def migrate_project(source: SourceProject, writer: httpx.Client, report: Report) -> None:
    key = source.key
    report.not_carried += not_carried(key, source.flags, source.context_kinds)
    exists = _exists(writer, f"/api/v2/projects/{key}")
    environments = [
        {
            "key": env["key"],
            "name": env.get("name") or env["key"],
            "color": env.get("color") or "417505",
        }
        for env in source.environments
    ]
    if not exists:
        report.changed(f"create project {key} with {len(environments)} environments")
        if not report.dry_run:
            body = {
                "key": key,
                "name": source.project.get("name") or key,
                "tags": list(source.project.get("tags") or []),
                "environments": environments,
            }
            api_client.request(writer, "POST", "/api/v2/projects", body=body)
    if exists:
        have = _keys(paged(writer, f"/api/v2/projects/{key}/environments"))
        for env in environments:
            if env["key"] in have:
                continue
            report.changed(f"create environment {key}/{env['key']}")
            if not report.dry_run:
                api_client.request(writer, "POST", f"/api/v2/projects/{key}/environments", body=env)
    project_ready = exists or not report.dry_run
    create_flags(source, writer, report, project_ready)
    for env in environments:
        migrate_environment(source, str(env["key"]), writer, report, project_ready)
    archive_flags(source, writer, report, project_ready)


def create_flags(source: SourceProject, writer: httpx.Client, report: Report, ready: bool) -> None:
    path = f"/api/v2/flags/{source.key}"
    have: set[str] = set()
    if ready:
        have = _keys(paged(writer, path)) | _keys(paged(writer, path, {"archived": "true"}))
    for document in source.flags:
        if document["key"] in have:
            continue
        report.changed(f"create flag {source.key}/{document['key']}")
        if not report.dry_run:
            api_client.request(writer, "POST", path, body=new_flag_body(document))


def migrate_environment(
    source: SourceProject, env: str, writer: httpx.Client, report: Report, ready: bool
) -> None:
    where = f"{source.key}/{env}"
    segments = source.segments.get(env, [])
    have: set[str] = set()
    if ready and _exists(writer, f"/api/v2/projects/{source.key}/environments/{env}"):
        have = _keys(paged(writer, f"/api/v2/segments/{where}"))
        served = api_client.request(
            writer, "GET", f"/api/v2/projects/{source.key}/environments/{env}/export"
        )
    else:
        served = {}
    for document in segments:
        if document["key"] not in have:
            report.changed(f"create segment {where}/{document['key']}")
            if not report.dry_run:
                api_client.request(
                    writer, "POST", f"/api/v2/segments/{where}", body=new_segment_body(document)
                )
    plan = plan_environment(env, source.flags, segments, served)
    report.unchanged += plan.unchanged
    if plan.changes == 0:
        return
    report.changed(
        f"write targeting in {where}: {len(plan.flags)} flags, {len(plan.segments)} segments",
        count=0,
    )
    report.changes += plan.changes
    if not report.dry_run:
        api_client.request(
            writer,
            "POST",
            f"/api/v2/projects/{source.key}/environments/{env}/import",
            body=plan.data,
        )


def archive_flags(source: SourceProject, writer: httpx.Client, report: Report, ready: bool) -> None:
    path = f"/api/v2/flags/{source.key}"
    archived = _keys(paged(writer, path, {"archived": "true"})) if ready else set()
    for document in source.flags:
        if document.get("archived") and document["key"] not in archived:
            report.changed(f"archive flag {source.key}/{document['key']}")
            if not report.dry_run:
                api_client.request(
                    writer,
                    "PATCH",
                    f"{path}/{document['key']}",
                    body={
                        "comment": "migrated archived",
                        "instructions": [{"kind": "archiveFlag"}],
                    },
                    content_type=SEMANTIC_PATCH,
                )


def _keys(items: list[Any]) -> set[str]:
    return {str(item["key"]) for item in items}


def _exists(client: httpx.Client, path: str) -> bool:
    try:
        api_client.request(client, "GET", path)
    except ApiRefused as exc:
        if exc.status == 404:
            return False
        raise
    return True
