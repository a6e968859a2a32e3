"""Flagstaff in the test process: the whole server under uvicorn in a background thread
(`serve_flagstaff`), and the management API over a store without a server (`control_plane`,
`asgi_client` for httpx's ASGI transport)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from flagstaff_server.adapters.clock import system_clock
from flagstaff_server.adapters.process_feed import InProcessChangeFeed
from flagstaff_server.app import Flagstaff
from flagstaff_server.delivery.connection import protocol_for
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.ports import Clock, Store
from flagstaff_server.settings import Settings

from support.threaded_servers import ThreadedServer, serve_in_thread


@dataclass(frozen=True, slots=True)
class ThreadedFlagstaff:
    """The whole server started by `serve_flagstaff`, and the uvicorn server it runs under."""

    flagstaff: Flagstaff
    threaded: ThreadedServer

    @property
    def url(self) -> str:
        return self.threaded.url


@contextmanager
def serve_flagstaff(
    settings: Settings, *, direct: bool = False, stop_timeout: float = 15.0, **options: Any
) -> Iterator[ThreadedFlagstaff]:
    """`Flagstaff(settings)` under uvicorn in a thread: no cold start of a process, for tests that
    need no process boundary. With `direct`, the HTTP protocol `flagstaff serve` runs for
    delivery (streams served on the connection itself); else uvicorn's own, every request an
    ASGI task. `options` are further `uvicorn.Config` arguments. A server that fails to start
    says why (its startup error)."""
    flagstaff = Flagstaff(settings, announce=lambda line: None)
    if direct:
        options["http"] = protocol_for(lambda: flagstaff.delivery if flagstaff.ready else None)
    started = False
    try:
        with serve_in_thread(
            flagstaff.asgi, what="flagstaff", stop_timeout=stop_timeout, **options
        ) as threaded:
            started = True
            yield ThreadedFlagstaff(flagstaff=flagstaff, threaded=threaded)
    except AssertionError as exc:
        if started:
            raise  # the test's own failure
        raise AssertionError(f"{exc}: {flagstaff.asgi.startup_error}") from None


def control_plane(
    store: Store,
    *,
    admin_token: str | None = None,
    clock: Clock = system_clock,
    key_grace: timedelta = timedelta(hours=1),
) -> ControlPlane:
    """The management API's services over `store`, with an in-process change feed."""
    return ControlPlane(
        store=store,
        feed=InProcessChangeFeed(store),
        clock=clock,
        key_grace=key_grace,
        admin_token=admin_token,
    )


def asgi_client(
    app: Any, *, token: str | None = None, base_url: str = "http://flagstaff.test"
) -> httpx.AsyncClient:
    """An httpx client of the ASGI `app` without a socket, sending `token` as Authorization."""
    headers = {} if token is None else {"Authorization": token}
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url=base_url, headers=headers
    )


@asynccontextmanager
async def api_server(
    data_dir: Path, *, admin_token: str, store: Store | None = None, clock: Clock = system_clock
) -> AsyncIterator[Flagstaff]:
    """The whole server in process with role `api` (no worker in the background), running over
    `store` (None: SQLite in `data_dir`), no demo data, announcing nothing."""
    settings = Settings(data_dir=data_dir, role="api", admin_token=admin_token, seed_demo=False)
    flagstaff = Flagstaff(settings, store=store, clock=clock, announce=lambda line: None)
    async with flagstaff.running():
        yield flagstaff


async def add_project_with_flag(client: httpx.AsyncClient, project: str, flag: str) -> None:
    """Through the management API: the project with environments `production` and `test`, and
    the boolean flag `flag` in it (off everywhere, as new flags are)."""
    created = await client.post(
        "/api/v2/projects",
        json={
            "key": project,
            "name": project.upper(),
            "environments": [
                {"key": "production", "name": "Production", "color": "ff0000"},
                {"key": "test", "name": "Test", "color": "00ff00"},
            ],
        },
    )
    assert created.status_code == 201, created.text
    made = await client.post(f"/api/v2/flags/{project}", json={"key": flag, "name": flag.upper()})
    assert made.status_code == 201, made.text
