"""The whole server in-process over the in-memory store and SQLite, with an injected clock and a
known admin token (support.api_server_fixtures): the webhook and integration APIs and the outbox
they fill."""

from __future__ import annotations

import pytest
from support.api_server_fixtures import client, clock, server, server_store
from webhook_api import ADMIN_TOKEN

__all__ = ["client", "clock", "server", "server_store"]


@pytest.fixture
def admin_token() -> str:
    return ADMIN_TOKEN


@pytest.fixture
def client_token() -> str:
    return ADMIN_TOKEN
