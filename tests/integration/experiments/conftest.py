"""The whole server in-process (role `api`) over memory, SQLite and PostgreSQL, with the project
`p` (`production`, `test`) and the boolean flag `f`, on in production."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest
from experiment_api import ADMIN_TOKEN, FLAG, PROJECT, SEMANTIC, Lab
from flagstaff_server.services.ports import Store
from support.in_process import add_project_with_flag, api_server, asgi_client


@pytest.fixture
async def lab(server_store: Store | None, tmp_path: Path) -> AsyncIterator[Lab]:
    async with (
        api_server(tmp_path, admin_token=ADMIN_TOKEN, store=server_store) as server,
        asgi_client(server.asgi, token=ADMIN_TOKEN) as client,
    ):
        await add_project_with_flag(client, PROJECT, FLAG)
        on = await client.patch(
            f"/api/v2/flags/{PROJECT}/{FLAG}",
            content=orjson.dumps(
                {"environmentKey": "production", "instructions": [{"kind": "turnFlagOn"}]}
            ),
            headers={"Content-Type": SEMANTIC},
        )
        assert on.status_code == 200, on.text
        yield Lab(server=server, client=client)
