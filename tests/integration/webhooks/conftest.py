"""The whole server in-process (its root ASGI app behind httpx's ASGI transport) over the
in-memory store and SQLite, with an injected clock and a known admin token: the webhook and
integration APIs and the outbox they fill."""

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
from webhook_api import ADMIN_TOKEN


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=LOCAL_KINDS)
def server_store(request: pytest.FixtureRequest) -> Iterator[Store | None]:
    yield from open_server_store(request, request.param)


@pytest.fixture
async def server(
    server_store: Store | None, tmp_path: Path, clock: FakeClock
) -> AsyncIterator[Flagstaff]:
    async with api_server(
        tmp_path, admin_token=ADMIN_TOKEN, store=server_store, clock=clock
    ) as flagstaff:
        yield flagstaff


@pytest.fixture
async def client(server: Flagstaff) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(server.asgi, token=ADMIN_TOKEN) as http:
        yield http
