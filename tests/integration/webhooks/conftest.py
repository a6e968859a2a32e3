"""The whole server in-process (its root ASGI app behind httpx's ASGI transport) over the
in-memory store and SQLite, with an injected clock and a known admin token: the webhook and
integration APIs and the outbox they fill."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.app import Flagstaff
from support.clock import FakeClock
from support.in_process import api_server, asgi_client
from webhook_api import ADMIN_TOKEN


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["memory", "sqlite"])
async def server(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock
) -> AsyncIterator[Flagstaff]:
    store = InMemoryStore() if request.param == "memory" else None
    async with api_server(tmp_path, admin_token=ADMIN_TOKEN, store=store, clock=clock) as flagstaff:
        yield flagstaff


@pytest.fixture
async def client(server: Flagstaff) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(server.asgi, token=ADMIN_TOKEN) as http:
        yield http
