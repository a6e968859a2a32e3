"""The flag-work commands' connection to the management API: `--url`, `--token` and `--output`
options, the choice between flag, environment variable and stored login, and exit codes for each
way a request can fail. Knows nothing of flags; rendering is `rendering`.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Any

import httpx

from flagstaff_server.commands.error import CommandError
from flagstaff_server.commands.exit_code import ExitCode
from flagstaff_server.commands.login_store import read_login
from flagstaff_server.commands.management_api import DEFAULT_URL, TOKEN_VARIABLE, describe_failure

URL_VARIABLE = "FLAGSTAFF_URL"
TIMEOUT_SECONDS = 30.0
SEMANTIC_PATCH = "application/json; domain-model=launchdarkly.semanticpatch"


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url", default=None, help=f"server base URL (${URL_VARIABLE}, the login, {DEFAULT_URL})"
    )
    parser.add_argument(
        "--token", default=None, help=f"access token (${TOKEN_VARIABLE}, then the stored login)"
    )
    parser.add_argument(
        "-o",
        "--output",
        choices=("table", "json"),
        default="table",
        help="table fitted to the terminal (default) or JSON for scripts",
    )


class ApiRefused(CommandError):
    """The API answered with an error status (exit code 1)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message, exit_code=ExitCode.REFUSED)
        self.status = status


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    url: str
    token: str


def resolve(args: argparse.Namespace) -> Target:
    """The server and token to use: the option, then the environment, then `flagstaff login`."""
    stored = read_login()
    url = args.url or os.environ.get(URL_VARIABLE) or (stored.url if stored else DEFAULT_URL)
    token = args.token or os.environ.get(TOKEN_VARIABLE) or (stored.token if stored else None)
    if not str(url).startswith(("http://", "https://")):
        raise CommandError(
            f"--url must start with http:// or https://, got {url!r}", exit_code=ExitCode.USAGE
        )
    if not token:
        raise CommandError(
            f"not signed in: run `flagstaff login`, pass --token or set {TOKEN_VARIABLE}",
            exit_code=ExitCode.NOT_SIGNED_IN,
        )
    return Target(url=str(url).rstrip("/"), token=token)


def connect(target: Target) -> httpx.Client:
    return httpx.Client(
        base_url=target.url,
        headers={"Authorization": target.token, "Accept": "application/json"},
        timeout=TIMEOUT_SECONDS,
    )


def request(
    client: httpx.Client,
    method: str,
    path: str,
    *,
    body: Any = None,
    params: dict[str, Any] | None = None,
    content_type: str = "application/json",
) -> Any:
    """The decoded JSON answer (None for an empty one), or a `CommandError` with its exit code."""
    headers = {"Content-Type": content_type} if body is not None else {}
    try:
        response = client.request(
            method,
            path,
            json=body,
            params={k: v for k, v in (params or {}).items() if v is not None},
            headers=headers,
        )
    except httpx.TransportError as exc:
        raise CommandError(
            f"cannot reach the Flagstaff server at {client.base_url}: {exc}",
            exit_code=ExitCode.UNREACHABLE,
        ) from exc
    if not response.is_success:
        raise ApiRefused(one_line(describe_failure(response)), status=response.status_code)
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError as exc:
        raise CommandError(f"the server answered {path} with invalid JSON") from exc


def one_line(text: str) -> str:
    return " ".join(text.split())
