"""`flagstaff code-refs --dir REPO`: find the flag keys of one or more projects (and their
aliases) in every file git tracks, and upload them in LaunchDarkly's code-references shapes: the
repository (created when missing), the branch's references, and on the default branch an
extinction event for each key that was referenced before and is not any more. `--dry-run` reads
the flags and scans, and writes nothing. Argument glue; the scan is `code_refs.scan`'s.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from flagstaff_server.code_refs.config import ConfigError, ScanConfig, load_config
from flagstaff_server.code_refs.repository import Commit, GitError, head_commit
from flagstaff_server.code_refs.scan import ScanResult, referenced_keys, scan
from flagstaff_server.commands import api_client
from flagstaff_server.commands.api_client import ApiRefused
from flagstaff_server.commands.error import CommandError
from flagstaff_server.commands.exit_code import ExitCode
from flagstaff_server.commands.rendering import Column, emit

REPOS = "/api/v2/code-refs/repositories"


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "code-refs",
        help="find flag keys in a git repository and upload where they are used",
        description="Scan every file git tracks for the projects' flag keys and their aliases "
        "(.flagstaff/coderefs.toml; docs/code-references.md) and upload the references.",
    )
    parser.add_argument("--dir", required=True, type=Path, help="the git work tree to scan")
    parser.add_argument(
        "-p",
        "--project",
        action="append",
        default=None,
        help="project key (repeat for more; default: every project the token can read)",
    )
    parser.add_argument("--repo-name", help="repository name (default: the directory's name)")
    parser.add_argument("--branch", help="branch name (default: the checked-out branch)")
    parser.add_argument(
        "--default-branch", help="the repository's default branch (kept once set; default main)"
    )
    parser.add_argument("--source-link", default=None, help="the repository's web address")
    parser.add_argument(
        "--hunk-url-template",
        default=None,
        help="link to a line: {{sha}}, {{filePath}}, {{lineNumber}} are filled in",
    )
    parser.add_argument(
        "--context-lines", type=int, default=None, help="lines around each reference (-1 to 5)"
    )
    parser.add_argument("--config", type=Path, default=None, help="configuration file (TOML)")
    parser.add_argument(
        "--update-sequence-id",
        type=int,
        default=None,
        help="a number that grows with each upload (a CI build number): older uploads are refused",
    )
    parser.add_argument("--dry-run", action="store_true", help="scan and report; upload nothing")
    api_client.add_options(parser)
    parser.set_defaults(run=run)


def _config(args: argparse.Namespace, root: Path) -> ScanConfig:
    try:
        config = load_config(root, args.config)
    except ConfigError as exc:
        raise CommandError(str(exc), exit_code=ExitCode.USAGE) from exc
    if args.context_lines is None:
        return config
    if not -1 <= args.context_lines <= 5:
        raise CommandError("--context-lines is from -1 to 5", exit_code=ExitCode.USAGE)
    return replace(config, context_lines=args.context_lines)


def _flag_keys(client: httpx.Client, project: str) -> list[str]:
    """Every flag key of the project, archived ones too (their references still matter)."""
    keys: list[str] = []
    for archived in (None, "true"):
        offset = 0
        while True:
            page = api_client.request(
                client,
                "GET",
                f"/api/v2/flags/{quote(project, safe='')}",
                params={"summary": "true", "archived": archived, "limit": 100, "offset": offset},
            )
            items = page.get("items", [])
            keys += [item["key"] for item in items]
            offset += len(items)
            if not items or offset >= int(page.get("totalCount", 0)):
                break
    return sorted(set(keys))


def _projects(client: httpx.Client, given: list[str] | None) -> list[str]:
    if given:
        return sorted(set(given))
    listed = api_client.request(client, "GET", "/api/v2/projects", params={"limit": 1000})
    return sorted(item["key"] for item in listed.get("items", []))


def _ensure_repository(client: httpx.Client, args: argparse.Namespace, name: str) -> Any:
    wanted = {
        k: v
        for k, v in {
            "sourceLink": args.source_link,
            "hunkUrlTemplate": args.hunk_url_template,
            "defaultBranch": args.default_branch,
        }.items()
        if v is not None
    }
    try:
        current = api_client.request(client, "GET", f"{REPOS}/{quote(name, safe='')}")
    except ApiRefused as exc:
        if exc.status != 404:
            raise
        body = {"name": name, "type": "custom", **wanted}
        return api_client.request(client, "POST", REPOS, body=body)
    if not current.get("enabled", True):
        raise CommandError(f"the code-references repository {name!r} is disabled")
    changed = {k: v for k, v in wanted.items() if current.get(k) != v}
    if not changed:
        return current
    return api_client.request(client, "PATCH", f"{REPOS}/{quote(name, safe='')}", body=changed)


def _previous_keys(client: httpx.Client, repo: str, branch: str) -> set[tuple[str, str]]:
    try:
        stored = api_client.request(
            client, "GET", f"{REPOS}/{quote(repo, safe='')}/branches/{quote(branch, safe='')}"
        )
    except ApiRefused as exc:
        if exc.status == 404:
            return set()
        raise
    return referenced_keys(stored.get("references", []))


def _upload(
    client: httpx.Client,
    args: argparse.Namespace,
    *,
    repo: str,
    branch: str,
    commit: Commit,
    result: ScanResult,
    projects: list[str],
) -> list[dict[str, Any]]:
    """Upload the branch; the extinction events recorded (default branch only)."""
    repository = _ensure_repository(client, args, repo)
    path = f"{REPOS}/{quote(repo, safe='')}/branches/{quote(branch, safe='')}"
    extinct: list[dict[str, Any]] = []
    if branch == repository.get("defaultBranch"):
        now = referenced_keys(result.references)
        gone = sorted(k for k in _previous_keys(client, repo, branch) - now if k[0] in projects)
        extinct = [
            {
                "revision": commit.sha,
                "message": commit.subject,
                "time": commit.time_ms,
                "projKey": project,
                "flagKey": key,
            }
            for project, key in gone
        ]
    body = {
        "name": branch,
        "head": commit.sha,
        "updateSequenceId": args.update_sequence_id,
        "syncTime": int(time.time() * 1000),
        "commitTime": commit.time_ms,
        "references": result.references,
    }
    api_client.request(client, "PUT", path, body=body)
    if extinct:
        api_client.request(client, "POST", f"{path}/extinction-events", body=extinct)
    return extinct


def run(args: argparse.Namespace) -> int:
    root: Path = args.dir
    if not root.is_dir():
        raise CommandError(f"--dir {root}: no such directory", exit_code=ExitCode.USAGE)
    config = _config(args, root)
    try:
        commit = head_commit(root)
    except GitError as exc:
        raise CommandError(f"--dir {root}: {exc}", exit_code=ExitCode.USAGE) from exc
    branch = args.branch or commit.branch
    if branch == "HEAD":
        raise CommandError("the checkout is detached: name the branch with --branch")
    repo = args.repo_name or root.resolve().name
    with api_client.connect(api_client.resolve(args)) as client:
        projects = _projects(client, args.project)
        keys = {project: _flag_keys(client, project) for project in projects}
        try:
            result = scan(root, keys, config)
        except GitError as exc:
            raise CommandError(str(exc)) from exc
        extinct: list[dict[str, Any]] = []
        if not args.dry_run:
            extinct = _upload(
                client,
                args,
                repo=repo,
                branch=branch,
                commit=commit,
                result=result,
                projects=projects,
            )
    _report(args, repo=repo, branch=branch, commit=commit, result=result, extinct=extinct)
    return ExitCode.OK


def _report(
    args: argparse.Namespace,
    *,
    repo: str,
    branch: str,
    commit: Commit,
    result: ScanResult,
    extinct: list[dict[str, Any]],
) -> None:
    counts: dict[tuple[str, str], list[int]] = {}
    for reference in result.references:
        seen: set[tuple[str, str]] = set()
        for hunk in reference["hunks"]:
            key = (hunk["projKey"], hunk["flagKey"])
            entry = counts.setdefault(key, [0, 0])
            entry[0] += 1
            if key not in seen:
                entry[1] += 1
                seen.add(key)
    rows = [
        {"project": p, "flag": f, "hunks": h, "files": n}
        for (p, f), (h, n) in sorted(counts.items())
    ]
    document = {
        "repository": repo,
        "branch": branch,
        "head": commit.sha,
        "dryRun": bool(args.dry_run),
        "filesRead": result.files_read,
        "filesSkipped": result.files_skipped,
        "flags": rows,
        "references": result.references,
        "extinctions": extinct,
    }
    columns = [
        Column(title="PROJECT", value=lambda r: r["project"]),
        Column(title="FLAG", value=lambda r: r["flag"]),
        Column(title="HUNKS", value=lambda r: r["hunks"]),
        Column(title="FILES", value=lambda r: r["files"]),
    ]
    emit(args.output, document, columns, rows)
    if args.output == "table":
        what = "found (dry run, nothing uploaded)" if args.dry_run else "uploaded"
        print(
            f"{len(rows)} flags in {len(result.references)} files of {repo}@{branch} {what}; "
            f"{result.files_read} files read, {result.files_skipped} skipped (binary or large)"
        )
        for event in extinct:
            print(f"extinct: {event['projKey']}/{event['flagKey']} (no longer referenced)")
