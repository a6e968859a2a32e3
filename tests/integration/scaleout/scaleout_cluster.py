"""Test support for scale-out: `flagstaff serve` as real processes (API and delivery roles) or in
this process, with this module's admin token, and the management calls that seed a project with
it (private PostgreSQL, Redis databases and the rest of the management API come from the kit:
`support.private_postgres`, `support.services`, `support.management`).

Shared by the scale-out and ingestion tests; asserts nothing about Flagstaff itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
from flagstaff_server.settings import Settings
from support import management
from support.in_process import serve_flagstaff
from support.management import switch
from support.processes import ServeProcess

ADMIN = "scaleout-admin-token-0123456789"
SETTLE_SECONDS = 20.0
"""How long a test waits for a change to reach the nodes and the SDKs."""


@dataclass(kw_only=True)
class ServerProcess(ServeProcess):
    """One `flagstaff serve` process with the scale-out admin token; its output goes to
    `<data_dir>/server.log`."""

    name: str = "server"
    admin_token: str | None = ADMIN


@contextmanager
def in_process(settings: Settings) -> Iterator[str]:
    """The whole server in this process (uvicorn in a thread): no cold start of its own, for
    tests that need no process boundary. Yields its URL."""
    with serve_flagstaff(settings, stop_timeout=20) as served:
        yield served.url


# the management API ---------------------------------------------------------------------------


def admin_client(url: str) -> httpx.Client:
    """The management API at `url` with this module's admin token."""
    return management.admin_client(url, ADMIN)


def create_project(api: httpx.Client, key: str = "shop") -> str:
    """A project with one environment `production`; returns its SDK key."""
    return management.create_project(api, key).sdk_key


def switch_on(api: httpx.Client, key: str, *, on: bool = True) -> None:
    switch(api, key, on=on)


def switch_off(api: httpx.Client, key: str) -> None:
    switch(api, key, on=False)
