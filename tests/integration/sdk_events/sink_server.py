"""A LaunchDarkly-style event receiver on loopback for tests: accepts `/bulk` and `/diagnostic`,
de-duplicates bulk payloads by `X-LaunchDarkly-Payload-ID`, and can be switched down (503,
acknowledgement lost, connection refused) and back up. Asserts nothing itself."""

from __future__ import annotations

import gzip
import json
import threading
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

from support.threaded_servers import serve_http

Mode = Literal["up", "503", "ack_lost", "refused"]


class EventSinkServer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.mode: Mode = "up"
        self.payloads: dict[str, list[dict[str, Any]]] = {}
        """Accepted bulk payloads by payload id, each stored once."""
        self.order: list[str] = []
        self.duplicates = 0
        self.rejected = 0
        self.diagnostics: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._serving: ExitStack | None = None
        self.port = 0
        self._listen()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _listen(self) -> None:
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                headers = {name.lower(): value for name, value in self.headers.items()}
                status = sink._receive(self.path, headers, body)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._serving = ExitStack()
        self.port = self._serving.enter_context(serve_http(Handler, port=self.port)).port

    def _receive(self, path: str, headers: dict[str, str], body: bytes) -> int:
        with self._lock:
            mode = self.mode
            if path.endswith("/diagnostic"):
                self.diagnostics.append(json.loads(body))
                return 202
            if not path.endswith("/bulk"):
                return 404
            if mode == "503":
                self.rejected += 1
                return 503
            self.headers.append(headers)
            payload_id = headers.get("x-launchdarkly-payload-id", "")
            if payload_id in self.payloads:
                self.duplicates += 1
            else:
                self.payloads[payload_id] = json.loads(body)
                self.order.append(payload_id)
            # ack_lost: the events are kept but the sender sees a failure and will retry
            return 503 if mode == "ack_lost" else 202

    def events(self) -> list[dict[str, Any]]:
        with self._lock:
            return [event for pid in self.order for event in self.payloads[pid]]

    def set_mode(self, mode: Mode) -> None:
        """`refused` closes the listening socket; leaving it listens again on the same port."""
        with self._lock:
            previous, self.mode = self.mode, mode
        if mode == "refused" and previous != "refused":
            self._stop_listening()
        elif previous == "refused" and mode != "refused":
            self._listen()

    def _stop_listening(self) -> None:
        if self._serving is not None:
            self._serving.close()
            self._serving = None

    def close(self) -> None:
        self._stop_listening()
