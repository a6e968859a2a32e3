"""Sends one webhook or chat message over HTTP (httpx) and says what came of it: the status, how
long it took, and why it failed. Never raises for the receiver's faults (refused, timed out,
reset, a redirect, a non-2xx status): they are outcomes the worker records. The response body is
not read, so a receiver cannot make the worker hold megabytes."""

from __future__ import annotations

import time

import httpx

from flagstaff_server.domain.notification import Message
from flagstaff_server.services.webhook_ports import Outcome

ERROR_MAX_LENGTH = 500


class HttpSender:
    def __init__(self, *, timeout: float) -> None:
        self.timeout = timeout
        # one pool for every worker thread (httpx's client is thread-safe); redirects are not
        # followed: a webhook URL that moved is the operator's to fix, not ours to guess
        self._client = httpx.Client(timeout=timeout, follow_redirects=False)

    def send(self, message: Message) -> Outcome:
        started = time.perf_counter()
        status: int | None = None
        error: str | None = None
        try:
            with self._client.stream(
                "POST", message.url, content=message.body, headers=list(message.headers)
            ) as response:
                status = response.status_code
        except httpx.TimeoutException:
            error = f"no answer within {self.timeout:g}s"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        latency_ms = round((time.perf_counter() - started) * 1000)
        if status is not None and not 200 <= status < 300:
            error = f"HTTP {status}"
        return Outcome(
            status_code=status,
            latency_ms=latency_ms,
            error=None if error is None else error[:ERROR_MAX_LENGTH],
        )

    def close(self) -> None:
        self._client.close()
