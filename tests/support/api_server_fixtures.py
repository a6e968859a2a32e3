"""Fixtures for suites that drive the whole server in-process (`Flagstaff` started, its root ASGI
app behind httpx's ASGI transport) over the in-memory store and SQLite, with an injected clock.
A suite's conftest imports them by name and gives the `admin_token` its server trusts; `client`
sends no token unless the conftest gives a `client_token`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from flagstaff_server.app import Flagstaff
from flagstaff_server.services.ports import Store

from support.clock import FakeClock
from support.in_process import api_server, asgi_client
from support.stores import LOCAL_KINDS, open_server_store

__all__ = ["client", "client_token", "clock", "server", "server_store"]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=LOCAL_KINDS)
def server_store(request: pytest.FixtureRequest) -> Iterator[Store | None]:
    yield from open_server_store(request, request.param)


@pytest.fixture
async def server(
    server_store: Store | None, tmp_path: Path, clock: FakeClock, admin_token: str
) -> AsyncIterator[Flagstaff]:
    async with api_server(
        tmp_path, admin_token=admin_token, store=server_store, clock=clock
    ) as flagstaff:
        yield flagstaff


@pytest.fixture
def client_token() -> str | None:
    return None


@pytest.fixture
async def client(server: Flagstaff, client_token: str | None) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(server.asgi, token=client_token) as http:
        yield http
