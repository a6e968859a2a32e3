"""The management API's body limit (`FLAGSTAFF_API_MAX_BODY_BYTES`, 1 MiB by default): a body
over it is a 413 problem before any token is looked at, decided from `Content-Length` before
reading or while counting a chunked body, over a real socket too. Before the limit a 50 MB flag
name was stored (201) and a 50 MB body without any token was read whole before the 401."""

from __future__ import annotations

import select
import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.app import Flagstaff
from flagstaff_server.settings import Settings
from platform_api import ADMIN, ADMIN_TOKEN, create_project, problem
from support.clock import FakeClock
from support.in_process import asgi_client
from support.threaded_servers import ThreadedServer, serve_in_thread

MIB = 1 << 20


def flag_body(name_length: int) -> bytes:
    return b'{"key":"big","name":"' + b"n" * name_length + b'"}'


async def chunks(body: bytes, size: int = 64 << 10) -> AsyncIterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


@pytest.mark.parametrize("headers", [ADMIN, {}], ids=["token", "no token"])
async def test_a_body_over_the_limit_is_413_with_or_without_a_token(
    client: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    await create_project(client, "shop")
    sent = {**headers, "Content-Type": "application/json"}
    declared = await client.post("/api/v2/flags/shop", content=flag_body(2 * MIB), headers=sent)
    body = problem(declared, 413)
    assert body["code"] == "payload_too_large"
    assert "larger than 1048576 bytes" in body["message"]  # 1 MiB, the default
    streamed = await client.post(
        "/api/v2/flags/shop", content=chunks(flag_body(2 * MIB)), headers=sent
    )
    assert "content-length" not in streamed.request.headers
    assert problem(streamed, 413)["code"] == "payload_too_large"
    listed = await client.get("/api/v2/flags/shop", headers=ADMIN)
    assert listed.json()["items"] == []


async def test_a_body_within_the_limit_reaches_the_route(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop")
    sent = {**ADMIN, "Content-Type": "application/json"}
    near = await client.post("/api/v2/flags/shop", content=flag_body(MIB - 100), headers=sent)
    assert problem(near, 400)["path"] == "/name"  # the route's own answer: the name is too long
    streamed = await client.post(
        "/api/v2/flags/shop", content=chunks(b'{"key":"small","name":"Small"}', 4), headers=sent
    )
    assert streamed.status_code == 201, streamed.text


async def test_the_limit_is_configurable(tmp_path: Path, clock: FakeClock) -> None:
    assert Settings.from_env({"FLAGSTAFF_API_MAX_BODY_BYTES": "4096"}).api_max_body_bytes == 4096
    settings = Settings(
        data_dir=tmp_path,
        role="api",
        admin_token=ADMIN_TOKEN,
        seed_demo=False,
        api_max_body_bytes=64,
    )
    flagstaff = Flagstaff(settings, store=InMemoryStore(), clock=clock, announce=lambda line: None)
    async with (
        flagstaff.running(),
        asgi_client(flagstaff.asgi) as small,
    ):
        body = {"key": "shop", "name": "Shop", "description": "d" * 64}
        problem(await small.post("/api/v2/projects", json=body, headers=ADMIN), 413)
        assert (
            await small.post("/api/v2/projects", json={"key": "s", "name": "S"}, headers=ADMIN)
        ).status_code == 201


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ThreadedServer]:
    settings = Settings(data_dir=tmp_path, role="api", admin_token=ADMIN_TOKEN, seed_demo=False)
    flagstaff = Flagstaff(settings, announce=lambda line: None)
    with serve_in_thread(flagstaff.asgi, what="flagstaff") as server:
        yield server


def answer_within(connection: socket.socket, seconds: float) -> bytes:
    """What the server has begun to answer within `seconds` (empty when nothing), read until it
    closes the connection, as it does after a 413."""
    readable, _, _ = select.select([connection], [], [], seconds)
    if not readable:
        return b""
    answer = b""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            chunk = connection.recv(65536)
        except ConnectionResetError:  # closed with our unsent body still in its buffer
            break
        if not chunk:
            break
        answer += chunk
    return answer


def test_a_declared_50_mb_body_is_refused_before_it_is_sent(served: ThreadedServer) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as connection:
        connection.sendall(
            b"POST /api/v2/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 50000000\r\n\r\n{"
        )
        answer = answer_within(connection, 10)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"payload_too_large" in answer


def test_a_chunked_50_mb_body_is_refused_once_it_passes_the_limit(served: ThreadedServer) -> None:
    chunk = b"x" * (64 << 10)
    framed = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    sent = 0
    answer = b""
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as connection:
        connection.sendall(
            b"POST /api/v2/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        deadline = time.monotonic() + 30
        while sent < 50_000_000 and time.monotonic() < deadline:
            answer = answer_within(connection, 0)
            if answer:
                break
            try:
                connection.sendall(framed)
            except OSError:  # the server closed the connection after answering
                break
            sent += len(chunk)
        answer = answer or answer_within(connection, 10)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    # the server stopped reading just past the limit; what the client sent beyond it sat in
    # socket buffers, a few MiB at most on loopback
    assert sent < 16 * MIB, sent
