"""`GET /status`: 503 until the server has started, then 200 with each part's state; "degraded"
(still 200) when a part such as the store stops answering."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from flagstaff_server.adapters.memory import InMemoryStore, InMemoryUnitOfWork
from flagstaff_server.app import Flagstaff
from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.settings import Settings
from platform_api import ADMIN_TOKEN, problem
from support.in_process import asgi_client


class FlakyStore(InMemoryStore):
    """An in-memory store that fails like an unreachable database while `down` is set."""

    down = False

    def ping(self) -> None:
        if self.down:
            raise StoreUnavailable("database unreachable (test)")

    @contextmanager
    def unit_of_work(self, *, read_only: bool = False) -> Iterator[InMemoryUnitOfWork]:
        self.ping()
        with super().unit_of_work(read_only=read_only) as uow:
            yield uow


def client_for(server: Flagstaff) -> httpx.AsyncClient:
    return asgi_client(server.asgi, base_url="http://t")


def settings(tmp_path: Path, role: str = "all") -> Settings:
    return Settings(data_dir=tmp_path, role=role, admin_token=ADMIN_TOKEN, seed_demo=False)  # type: ignore[arg-type]


async def status(client: httpx.AsyncClient) -> tuple[int, dict[str, Any]]:
    response = await client.get("/status")
    assert response.headers["content-type"] == "application/json"
    body: dict[str, Any] = response.json()
    return response.status_code, body


async def test_status_is_503_before_start_and_200_healthy_after(tmp_path: Path) -> None:
    server = Flagstaff(settings(tmp_path), store=InMemoryStore(), announce=lambda line: None)
    async with client_for(server) as client:
        code, body = await status(client)
        assert code == 503
        assert body["ready"] is False
        assert body["status"] == "degraded"
        problem(await client.get("/api/v2/projects", headers={"Authorization": ADMIN_TOKEN}), 503)
        async with server.running():
            code, body = await status(client)
            assert code == 200, body
            assert body["ready"] is True
            assert body["version"]
            assert set(body["parts"]) == {
                "store",
                "changeFeed",
                "api",
                "delivery",
                "ingest",
                "worker",
            }
            assert body["parts"]["worker"]["status"] == "ok"
            assert body["parts"]["store"]["status"] == "ok"
            assert body["parts"]["changeFeed"]["latestSeq"] == 0
        code, body = await status(client)
        assert code == 503


async def test_status_reports_a_store_outage_as_degraded(tmp_path: Path) -> None:
    store = FlakyStore()
    server = Flagstaff(settings(tmp_path, role="api"), store=store, announce=lambda line: None)
    async with client_for(server) as client, server.running():
        code, body = await status(client)
        assert (code, body["status"]) == (200, "healthy")
        store.down = True
        code, body = await status(client)
        assert (code, body["status"]) == (200, "degraded")
        assert body["parts"]["store"] == {"status": "down", "error": "database unreachable (test)"}
        store.down = False
        code, body = await status(client)
        assert body["status"] == "healthy"


async def test_store_outage_makes_the_api_answer_503_with_retry_after(tmp_path: Path) -> None:
    store = FlakyStore()
    server = Flagstaff(settings(tmp_path, role="api"), store=store, announce=lambda line: None)
    headers = {"Authorization": ADMIN_TOKEN}
    async with client_for(server) as client, server.running():
        store.down = True
        response = await client.post(
            "/api/v2/projects", json={"key": "shop", "name": "Shop"}, headers=headers
        )
        body = problem(response, 503)
        assert body["code"] == "service_unavailable"
        assert response.headers["retry-after"] == "1"
        store.down = False
        listed = await client.get("/api/v2/projects", headers=headers)
        assert listed.json()["items"] == []


async def test_status_on_sqlite_names_the_backend(tmp_path: Path) -> None:
    server = Flagstaff(settings(tmp_path, role="api"), announce=lambda line: None)
    async with client_for(server) as client, server.running():
        code, body = await status(client)
    assert code == 200
    assert body["parts"]["store"] == {"status": "ok", "backend": "sqlite"}
    assert (tmp_path / "flagstaff.db").is_file()
    assert "delivery" not in body["parts"]


async def test_first_start_seeds_demo_and_admin_token_once(tmp_path: Path) -> None:
    lines: list[str] = []
    fresh = Settings(data_dir=tmp_path, role="api")
    async with Flagstaff(fresh, announce=lines.append).running() as server:
        token_file = tmp_path / "admin-token"
        secret = token_file.read_text().strip()
        assert token_file.stat().st_mode & 0o777 == 0o600
        assert any(secret in line for line in lines)
        async with client_for(server) as client:
            demo = await client.get(
                "/api/v2/projects/demo?expand=environments", headers={"Authorization": secret}
            )
            assert demo.status_code == 200, demo.text
            envs = {env["key"] for env in demo.json()["environments"]["items"]}
            assert envs == {"production", "test"}
            flags = await client.get("/api/v2/flags/demo", headers={"Authorization": secret})
            assert flags.json()["totalCount"] >= 3
            for flag in flags.json()["items"]:
                # a human name and a line on what the flag demonstrates, not the key again
                assert flag["name"] != flag["key"], flag["key"]
                assert flag["description"], flag["key"]
            for env in envs:
                listed = await client.get(
                    f"/api/v2/segments/demo/{env}", headers={"Authorization": secret}
                )
                assert listed.status_code == 200, listed.text
                assert listed.json()["items"], env
                for segment in listed.json()["items"]:
                    assert segment["name"] != segment["key"], (env, segment["key"])
                    assert segment["description"], (env, segment["key"])
    lines.clear()
    async with Flagstaff(fresh, announce=lines.append).running() as server:
        assert token_file.read_text().strip() == secret
        assert not any(secret in line for line in lines)
        assert any("admin-token" in line for line in lines)
