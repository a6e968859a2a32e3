"""The kit's servers in threads: a standard-library handler answers on loopback until the block
ends, and an ASGI app under uvicorn does the same."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx
import pytest
from support.threaded_servers import serve_http, serve_in_thread


class Teapot(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        self.send_response(418)
        self.send_header("Content-Length", "0")
        self.end_headers()


async def teapot(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 418, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def test_a_handler_answers_until_the_block_ends() -> None:
    with serve_http(Teapot) as server:
        assert httpx.get(server.url, timeout=5).status_code == 418
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url, timeout=5)


def test_an_asgi_app_answers_until_the_block_ends() -> None:
    with serve_in_thread(teapot, lifespan="off") as server:
        assert httpx.get(server.url, timeout=5).status_code == 418
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url, timeout=5)
