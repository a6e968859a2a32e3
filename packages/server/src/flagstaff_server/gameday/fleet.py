"""Lightweight protocol clients, many per event loop: FDv1 and FDv2 streaming and polling
server-side clients and client-side (`/eval`) streams, each holding what it was last sent of
the probe flag, reconnecting with jittered backoff and honouring `Retry-After`, as SDKs do.
FDv2 clients send the state they hold as `basis`, so a reconnect resumes with a delta. A
streaming client whose stream keeps failing polls between its attempts to stream again, as
SDKs with a polling fallback do, and streams once a stream opens.
They keep their last data through any failure, as SDKs keep theirs.

It speaks the wire protocols only; what a client holds is judged in `recorder`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import ssl
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import orjson

from flagstaff_server.gameday.timeline import Holding
from flagstaff_server.gameday.topology import CONTEXT, PROBE_FLAG

Kind = Literal["fdv1-stream", "fdv1-poll", "fdv2-stream", "fdv2-poll", "client-stream"]
KINDS: tuple[Kind, ...] = ("fdv1-stream", "fdv2-stream", "client-stream", "fdv1-poll", "fdv2-poll")
STREAMING: frozenset[str] = frozenset({"fdv1-stream", "fdv2-stream", "client-stream"})
FALLBACK_POLL: dict[str, str] = {
    "fdv1-stream": "fdv1-poll",
    "fdv2-stream": "fdv2-poll",
    "client-stream": "client-poll",
}
"""What a streaming client polls while its stream is failing."""


@dataclass
class ClientView:
    """What one client holds and has been through."""

    name: str
    kind: str
    region: str
    value: str | None = None
    connected: bool = False
    errors: int = 0
    sheds: int = 0
    resumes: int = 0
    """FDv2 transfers that answered a basis with changes or nothing (the client resumed)."""
    full_transfers: int = 0
    """FDv2 transfers of everything, asked with a basis or not."""
    fallback_polls: int = 0
    """Polls a streaming client made because its stream kept failing."""
    holding: Holding = field(default_factory=Holding)
    error_kinds: Counter[str] = field(default_factory=Counter)
    """Errors by kind: an exception's class name, `status <code>`, or `ended` (the server
    closed a stream)."""

    def hold(self, value: str | None) -> None:
        self.value = value
        self.holding.hold(time.monotonic(), value)


POLLS_PER_SECOND_PER_FLEET = 1000.0


@dataclass(frozen=True, slots=True)
class Tuning:
    poll_seconds: float = 1.0
    read_timeout: float = 5.0
    """No byte for this long on a stream (nodes send heartbeats every second) ends it."""
    initial_backoff: float = 0.2
    max_backoff: float = 2.0
    max_retry_after: float = 5.0
    fallback_after_failures: int = 2
    """A streaming client polls between stream attempts after this many failures in a row."""

    @classmethod
    def for_fleet(cls, clients: int) -> Tuning:
        """Polls every second up to 1,000 clients, then slower in proportion (5 s at 5,000):
        the pollers' requests per second stay at ~400, where a second's interval at 5,000
        clients asked 2,000 a second of one machine (the SDKs' own minimum is 30 s)."""
        return cls(poll_seconds=max(1.0, clients / POLLS_PER_SECOND_PER_FLEET))


def served_value(flag: Any) -> str | None:
    """What a flag with no targeting serves everyone: its fallthrough variation when on, its
    off variation when off (the probe flag's shape)."""
    if not isinstance(flag, dict):
        return None
    variations = flag.get("variations") or []
    if flag.get("on"):
        index = (flag.get("fallthrough") or {}).get("variation")
    else:
        index = flag.get("offVariation")
    if isinstance(index, int) and 0 <= index < len(variations):
        return str(variations[index])
    return None


def shared_tls() -> ssl.SSLContext:
    """One TLS context for every client's pool (building one per pool costs ~1 ms; the
    fleet speaks plain HTTP on loopback, so nothing is verified)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def client_http(tls: ssl.SSLContext) -> httpx.AsyncClient:
    """A pool of its own for one protocol client, as each SDK has: a stream and a poll at
    most. One pool shared by the fleet does not scale: httpcore's pool walks every connection
    it holds on each request and each response's end, so thousands of clients in one pool
    spent the event loop on its bookkeeping and timed out waiting for it."""
    return httpx.AsyncClient(
        verify=tls,
        limits=httpx.Limits(max_connections=2, max_keepalive_connections=2),
        trust_env=False,
    )


def context_path() -> str:
    return base64.urlsafe_b64encode(orjson.dumps(CONTEXT)).decode().rstrip("=")


class ProtocolClient:
    """One client of `kind` against `base_url`; `run` until cancelled."""

    def __init__(
        self,
        view: ClientView,
        *,
        http: Callable[[], httpx.AsyncClient],
        base_url: str,
        sdk_key: str,
        client_side_id: str,
        tuning: Tuning,
        rng: random.Random,
        start_within: float = 0.0,
    ) -> None:
        self.view = view
        self._make_http = http
        """Opens this client's own connection pool (`client_http`) when it starts."""
        self.http: httpx.AsyncClient | None = None
        self.start_within = max(start_within, tuning.poll_seconds)
        """The client starts at a random instant within this many seconds (a fleet's
        ramp: its clients do not all connect in the same instant)."""
        self.base_url = base_url
        self.sdk_key = sdk_key
        self.client_side_id = client_side_id
        self.tuning = tuning
        self.rng = rng
        self._etag: str | None = None
        self._basis: str | None = None
        """The FDv2 state last transferred in full (sent back as `basis`)."""
        self._failures = 0

    async def run(self) -> None:
        await asyncio.sleep(self.rng.uniform(0, self.start_within))
        async with self._make_http() as self.http:
            await self._run()

    async def _run(self) -> None:
        poll = self.view.kind.endswith("poll")
        while True:
            wait = await (self._poll_once(self.view.kind) if poll else self._stream_once())
            if wait is None:
                self._failures = 0
                wait = self.tuning.poll_seconds if poll else 0.0
            elif not poll and self._failures >= self.tuning.fallback_after_failures:
                await self._poll_once(FALLBACK_POLL[self.view.kind], fallback=True)
                wait = max(wait, self.tuning.poll_seconds)
            await asyncio.sleep(wait)

    def _backoff(self) -> float:
        self._failures += 1
        base = min(
            self.tuning.max_backoff,
            self.tuning.initial_backoff * 2.0 ** min(self._failures - 1, 16),
        )
        return base * (1 - self.rng.uniform(0, 0.5))

    def _failed(self, response: httpx.Response | None, kind: str = "") -> float:
        """Count a failure (of `kind` when there is no response); the wait before the next
        attempt."""
        self.view.connected = False
        if response is not None and response.status_code in (429, 503):
            retry_after = response.headers.get("retry-after")
            if retry_after is not None:
                self.view.sheds += 1
                try:
                    delay = min(self.tuning.max_retry_after, float(retry_after))
                    return delay + self.rng.uniform(0, 0.5)
                except ValueError:
                    pass
        self.view.errors += 1
        self.view.error_kinds[kind if response is None else f"status {response.status_code}"] += 1
        return self._backoff()

    def _headers(self) -> dict[str, str]:
        return {"Authorization": self.sdk_key, "User-Agent": "FlagstaffGameDay/1"}

    # polling -------------------------------------------------------------------------------

    def _poll_path(self, kind: str) -> str:
        if kind == "client-poll":
            return f"/sdk/evalx/{self.client_side_id}/contexts/{context_path()}"
        return "/sdk/latest-all" if kind == "fdv1-poll" else "/sdk/poll"

    async def _poll_once(self, kind: str, *, fallback: bool = False) -> float | None:
        """One poll as `kind`; `fallback`: a streaming client's poll, which neither counts
        as its connection nor resets its stream backoff. The wait after a failure, else None."""
        if fallback:
            self.view.fallback_polls += 1
        path = self._poll_path(kind)
        headers = self._headers() if kind != "client-poll" else {"User-Agent": "FlagstaffGameDay/1"}
        if self._etag:
            headers["If-None-Match"] = self._etag
        assert self.http is not None
        try:
            response = await self.http.get(
                f"{self.base_url}{path}",
                headers=headers,
                params=self._basis_params(),
                timeout=self.tuning.read_timeout,
            )
        except httpx.HTTPError as exc:
            return None if fallback else self._failed(None, type(exc).__name__)
        if response.status_code == 304:
            self.view.connected = self.view.connected or not fallback
            return None
        if response.status_code != 200:
            return None if fallback else self._failed(response)
        self._etag = response.headers.get("etag")
        body = response.json()
        if kind == "client-poll":
            if PROBE_FLAG in body:
                self.view.hold(str(body[PROBE_FLAG].get("value")))
            return None
        if kind == "fdv1-poll":
            flag = body.get("flags", {}).get(PROBE_FLAG)
        else:
            flag = None
            for event in body.get("events", []):
                data = event.get("data") or {}
                name = event.get("event")
                if name == "put-object" and data.get("key") == PROBE_FLAG:
                    flag = data.get("object")
                elif name in ("server-intent", "payload-transferred"):
                    self._transfer_event(name, data)
        self.view.connected = self.view.connected or not fallback
        if flag is not None:
            self.view.hold(served_value(flag))
        return None

    def _basis_params(self) -> dict[str, str] | None:
        return {"basis": self._basis} if self._basis and self.view.kind.startswith("fdv2") else None

    def _transfer_event(self, name: str, data: Any) -> None:
        """FDv2 bookkeeping: what kind of transfer answered, and the state to resume from."""
        if name == "server-intent":
            payloads = data.get("payloads") or [{}]
            if payloads[0].get("intentCode") == "xfer-full":
                self.view.full_transfers += 1
            else:
                self.view.resumes += 1
        elif name == "payload-transferred" and isinstance(data.get("state"), str):
            self._basis = data["state"]

    # streaming -----------------------------------------------------------------------------

    def _stream_target(self) -> tuple[str, dict[str, str]]:
        if self.view.kind == "client-stream":
            url = f"{self.base_url}/eval/{self.client_side_id}/{context_path()}"
            return url, {"User-Agent": "FlagstaffGameDay/1"}
        path = "/all" if self.view.kind == "fdv1-stream" else "/sdk/stream"
        return f"{self.base_url}{path}", self._headers()

    async def _stream_once(self) -> float | None:
        url, headers = self._stream_target()
        timeout = httpx.Timeout(self.tuning.read_timeout)
        params = self._basis_params()
        assert self.http is not None
        try:
            async with self.http.stream(
                "GET", url, headers=headers, params=params, timeout=timeout
            ) as response:
                if response.status_code != 200:
                    await response.aread()
                    return self._failed(response)
                self.view.connected = True
                pending: dict[str, Any] = {}
                async for name, data in _events(response.aiter_lines()):
                    self._apply(name, data, pending)
                    self._failures = 0
        except (httpx.HTTPError, ValueError) as exc:
            return self._failed(None, type(exc).__name__)
        # the server ended the stream (a shed, a restart): reconnect after a short backoff
        self.view.connected = False
        self.view.errors += 1
        self.view.error_kinds["ended"] += 1
        return self._backoff()

    def _apply(self, name: str, data: Any, pending: dict[str, Any]) -> None:
        kind = self.view.kind
        if kind == "fdv1-stream":
            if name == "put":
                self.view.hold(served_value(data["data"]["flags"].get(PROBE_FLAG)))
            elif name == "patch" and data.get("path") == f"/flags/{PROBE_FLAG}":
                self.view.hold(served_value(data.get("data")))
        elif kind == "fdv2-stream":
            if name == "put-object" and data.get("key") == PROBE_FLAG:
                pending["flag"] = data.get("object")
            elif name in ("server-intent", "payload-transferred"):
                self._transfer_event(name, data)
                if name == "payload-transferred" and "flag" in pending:
                    self.view.hold(served_value(pending.pop("flag")))
        elif name == "put" and PROBE_FLAG in data:
            self.view.hold(str(data[PROBE_FLAG].get("value")))
        elif name == "patch" and data.get("key") == PROBE_FLAG:
            self.view.hold(str(data.get("value")))


async def _events(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, Any]]:
    """SSE events as (name, parsed data); comments (heartbeats) are skipped."""
    name, data = "", ""
    async for line in lines:
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data += line[5:].strip()
        elif not line and name:
            yield name, json.loads(data) if data else None
            name, data = "", ""
