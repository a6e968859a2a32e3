"""The whole server in-process over the in-memory store and SQLite, with an injected clock and a
known admin token (support.api_server_fixtures)."""

from __future__ import annotations

import pytest
from platform_api import ADMIN_TOKEN
from support.api_server_fixtures import client, client_token, clock, server, server_store

__all__ = ["client", "client_token", "clock", "server", "server_store"]


@pytest.fixture
def admin_token() -> str:
    return ADMIN_TOKEN
