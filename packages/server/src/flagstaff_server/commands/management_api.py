"""The CLI's connection to a running Flagstaff management API: options, token and error messages.

Shared by the `import`, `export` and `quarantine` commands. It turns transport failures and
problem-JSON answers into `CommandError`s; it must not know anything about flags or data files.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import httpx

from flagstaff_server.commands.error import CommandError

DEFAULT_URL = "http://127.0.0.1:8030"
TOKEN_VARIABLE = "FLAGSTAFF_TOKEN"
TIMEOUT_SECONDS = 60.0


def add_options(parser: argparse.ArgumentParser) -> None:
    """Add the options every management-API command takes."""
    parser.add_argument("--project", required=True, help="project key")
    parser.add_argument("--environment", required=True, help="environment key")
    parser.add_argument(
        "--url", default=DEFAULT_URL, help=f"Flagstaff server base URL (default {DEFAULT_URL})"
    )
    parser.add_argument("--token", default=None, help=f"access token (default: ${TOKEN_VARIABLE})")


def connect(args: argparse.Namespace) -> httpx.Client:
    """An HTTP client for the server named in `args`, authenticated with the access token."""
    token = args.token or os.environ.get(TOKEN_VARIABLE)
    if not token:
        # a first-time user has one token: the admin token `flagstaff serve` saved at first start
        raise CommandError(
            f"no access token: pass --token or set {TOKEN_VARIABLE} (the first start of "
            "`flagstaff serve` saved an admin token in DATA_DIR/admin-token, ./data by default)"
        )
    url = str(args.url).rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise CommandError(f"--url must start with http:// or https://, got {args.url!r}")
    return httpx.Client(
        base_url=url,
        headers={"Authorization": token, "Accept": "application/json"},
        timeout=TIMEOUT_SECONDS,
    )


def send(client: httpx.Client, method: str, path: str, *, body: Any = None) -> Any:
    """Send one request and return the decoded JSON answer, or raise a `CommandError`."""
    try:
        response = client.request(method, path, json=body)
    except httpx.TransportError as exc:
        where = client.base_url
        raise CommandError(f"cannot reach the Flagstaff server at {where}: {exc}") from exc
    if response.is_success:
        try:
            return response.json()
        except ValueError as exc:
            raise CommandError(f"the server answered {path} with invalid JSON") from exc
    raise CommandError(describe_failure(response))


def download(client: httpx.Client, path: str) -> bytes:
    """GET a body that is not one JSON document (JSON lines), or raise a `CommandError`."""
    try:
        response = client.get(path)
    except httpx.TransportError as exc:
        raise CommandError(
            f"cannot reach the Flagstaff server at {client.base_url}: {exc}"
        ) from exc
    if response.is_success:
        return response.content
    raise CommandError(describe_failure(response))


def describe_failure(response: httpx.Response) -> str:
    """One line saying why the server refused a request, using its problem-JSON when present."""
    status = response.status_code
    if status == 401:
        return "the server rejected the access token (401 Unauthorized)"
    if status == 403:
        return "the access token may not do this (403 Forbidden)"
    try:
        problem = response.json()
    except ValueError:
        problem = None
    if isinstance(problem, dict):
        message = problem.get("message") or problem.get("detail") or problem.get("title")
        path = problem.get("path")
        if message:
            where = f" at {path}" if path else ""
            return f"server answered {status}: {message}{where}"
    return f"server answered {status} {response.reason_phrase}"
