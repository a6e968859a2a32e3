"""Event POSTs served on the connection (`ingest/connection.py`), over real loopback sockets:
which requests skip the ASGI app, pipelining, `Connection: close`, a client that leaves before
its fsync, and a failed journal write."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from endpoint_support import (
    CLIENT_ID,
    MOBILE_KEY,
    Served,
    headers,
    served_with_counts,
    summary,
)
from flagstaff_server.ingest import IngestNode
from support.deadlines import eventually


@pytest.fixture
async def server(node: IngestNode) -> AsyncIterator[Served]:
    async with served_with_counts(node.app) as found:
        yield found


def raw_post(payload_id: str, body: bytes, *, close: bool = False) -> bytes:
    head = (
        f"POST /bulk HTTP/1.1\r\nHost: t\r\nAuthorization: {headers()['Authorization']}\r\n"
        f"Content-Type: application/json\r\nX-LaunchDarkly-Payload-ID: {payload_id}\r\n"
        f"Content-Length: {len(body)}\r\n"
    )
    if close:
        head += "Connection: close\r\n"
    return head.encode() + b"\r\n" + body


async def read_responses(reader: asyncio.StreamReader, count: int) -> list[dict[str, Any]]:
    """`count` responses with empty or Content-Length bodies: status and lowercased headers."""
    found: list[dict[str, Any]] = []
    async with asyncio.timeout(10):
        for _ in range(count):
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            fields: dict[str, Any] = {"status": int(head[0].split()[1])}
            for line in head[1:]:
                if line:
                    name, _, value = line.partition(":")
                    fields[name.strip().lower()] = value.strip()
            fields["body"] = await reader.readexactly(int(fields.get("content-length", 0)))
            found.append(fields)
    return found


@contextlib.asynccontextmanager
async def connection(server: Served) -> AsyncIterator[tuple[asyncio.StreamReader, Any]]:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        yield reader, writer
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def test_posts_of_known_credentials_never_reach_the_asgi_app(
    node: IngestNode, server: Served
) -> None:
    async with httpx.AsyncClient(base_url=server.base_url) as client:
        sdk = await client.post("/bulk", content=summary(1), headers=headers("a"))
        mobile = await client.post(
            "/mobile/events/bulk", content=summary(1), headers=headers("b", key=MOBILE_KEY)
        )
        browser = await client.post(
            f"/events/bulk/{CLIENT_ID}",
            content=summary(1),
            headers={"Origin": "https://app.example", "Content-Type": "application/json"},
        )
        bad = await client.post("/bulk", content=b"[{", headers=headers("c"))
        assert [r.status_code for r in (sdk, mobile, browser, bad)] == [202, 202, 202, 400]
        assert browser.headers["access-control-allow-origin"] == "https://app.example"
        assert sdk.headers["date"]
        assert sdk.headers["content-length"] == "0"
        assert server.asgi_paths == []
        # what the connection cannot decide at once goes to the ASGI app, with the same answers
        unknown = await client.post("/bulk", content=summary(1), headers=headers(key="sdk-no"))
        large = b"[" + b" " * 70_000 + b'{"kind":"custom","key":"k"}]'
        big = await client.post("/bulk", content=large, headers=headers("big"))

        async def chunks() -> AsyncIterator[bytes]:
            yield summary(1)

        chunked = await client.post("/bulk", content=chunks(), headers=headers("chunked"))
        preflight = await client.options(
            f"/events/bulk/{CLIENT_ID}", headers={"Origin": "https://app.example"}
        )
    assert [r.status_code for r in (unknown, big, chunked, preflight)] == [401, 202, 202, 200]
    assert server.asgi_paths == ["/bulk", "/bulk", "/bulk", f"/events/bulk/{CLIENT_ID}"]
    assert node.journal.durable_seq == 5


async def test_pipelined_posts_are_answered_in_order_and_deduplicated(
    node: IngestNode, server: Served
) -> None:
    async with connection(server) as (reader, writer):
        writer.write(
            raw_post("p-1", summary(1)) + raw_post("p-1", summary(1)) + raw_post("p-2", b"[1]")
        )
        responses = await read_responses(reader, 3)
    assert [r["status"] for r in responses] == [202, 202, 400]
    assert b"/0" in responses[2]["body"]
    assert node.journal.durable_seq == 1
    assert server.asgi_paths == []


async def test_connection_close_is_honoured(node: IngestNode, server: Served) -> None:
    async with connection(server) as (reader, writer):
        writer.write(raw_post("c-1", summary(1), close=True))
        (response,) = await read_responses(reader, 1)
        async with asyncio.timeout(10):
            assert await reader.read() == b""  # the server closed the connection
    assert response["status"] == 202
    assert response["connection"] == "close"


async def test_a_client_gone_before_the_fsync_leaves_a_durable_payload_and_a_working_server(
    node: IngestNode, server: Served
) -> None:
    async with connection(server) as (_, writer):
        writer.write(raw_post("gone", summary(1)))
        await writer.drain()
    await eventually(lambda: node.journal.durable_seq == 1)
    async with httpx.AsyncClient(base_url=server.base_url) as client:
        retry = await client.post("/bulk", content=summary(1), headers=headers("gone"))
    assert retry.status_code == 202
    assert node.journal.durable_seq == 1
    assert node.counts["duplicate"] == 1


async def test_a_failed_write_is_503_with_retry_after_and_the_retry_is_appended(
    node: IngestNode, server: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = node.journal._write
    failures = [OSError("disk full")]

    def failing_once(*args: Any) -> None:
        if failures:
            raise failures.pop()
        write(*args)

    monkeypatch.setattr(node.journal, "_write", failing_once)
    async with httpx.AsyncClient(base_url=server.base_url) as client:
        refused = await client.post("/bulk", content=summary(1), headers=headers("w-1"))
        retried = await client.post("/bulk", content=summary(1), headers=headers("w-1"))
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "5"
    assert refused.json()["code"] == "service_unavailable"
    assert retried.status_code == 202
    assert node.counts["accepted"] == 1
    assert server.asgi_paths == []


async def test_requests_served_on_the_connection_are_access_logged_like_the_others(
    node: IngestNode, caplog: pytest.LogCaptureFixture
) -> None:
    access = logging.getLogger("uvicorn.access")
    async with (
        served_with_counts(node.app, access_log=True) as server,
        httpx.AsyncClient(base_url=server.base_url) as client,
    ):
        access.addHandler(caplog.handler)  # after uvicorn configured its loggers (no propagation)
        try:
            accepted = await client.post("/bulk?x=1", content=summary(1), headers=headers("l-1"))
            refused = await client.post("/bulk", content=b"{", headers=headers("l-2"))
        finally:
            access.removeHandler(caplog.handler)
    assert (accepted.status_code, refused.status_code) == (202, 400)
    assert server.asgi_paths == []
    lines = [r.getMessage() for r in caplog.records if r.name == "uvicorn.access"]
    assert any('"POST /bulk?x=1 HTTP/1.1" 202' in line for line in lines), lines
    assert any('"POST /bulk HTTP/1.1" 400' in line for line in lines), lines


async def test_a_failure_inside_the_protocol_is_a_500_never_a_400(
    node: IngestNode,
    server: Served,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(**payload: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(node, "submit", broken)
    async with httpx.AsyncClient(base_url=server.base_url) as client:
        failed = await client.post("/bulk", content=summary(1), headers=headers("b-1"))
        monkeypatch.undo()
        retried = await client.post("/bulk", content=summary(1), headers=headers("b-1"))
    assert failed.status_code == 500
    assert failed.headers["connection"] == "close"
    assert failed.json()["code"] == "internal_error"
    assert "event request failed" in caplog.text
    assert retried.status_code == 202
    assert node.journal.durable_seq == 1
