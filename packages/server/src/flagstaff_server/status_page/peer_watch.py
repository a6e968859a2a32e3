"""What the other nodes of the platform say about themselves: an actor that reads this node's own
`/status` and each peer's (`FLAGSTAFF_STATUS_PEERS`) every few seconds, each with a timeout,
and keeps the last answer of each with when it came. A peer that does not answer keeps its last
answer, marked unreachable, so the page can say what it was and when it was last seen; the
peers' readings are kept in the node's data directory for a restart during an outage.

A relay also reads its upstream's status feed here for the operator notices the upstream shows
(`notice_feeds`): a set that replaces the previous one only when an upstream answers.

The page never waits on any of this: it renders what the last round left.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

from flagstaff_server.durable import replace_file
from flagstaff_server.errors import ValidationError
from flagstaff_server.notice import Notice, decode_notice
from flagstaff_server.status_page.components import SELF, Reading
from flagstaff_server.tasks import cancel_and_wait

log = logging.getLogger(__name__)

OwnStatus = Callable[[], Awaitable[tuple[int, dict[str, Any]]]]
"""This node's `GET /status`: its HTTP status and body, computed in the process."""
NoticeSink = Callable[[list[Notice]], None]
"""Takes the notices an upstream's feed lists now."""

FILE_NAME = "peers.json"
MAX_BODY_BYTES = 256 * 1024
"""A `/status` body is a few kB (a relay lists its environments); more is refused."""
PERSIST_SECONDS = 30.0


@dataclass(slots=True, kw_only=True)
class PeerWatch:
    own_status: OwnStatus
    peers: tuple[str, ...] = ()
    notice_feeds: tuple[str, ...] = ()
    """Status feed URLs (an upstream's `/status/feed.json`), tried in order each round."""
    on_notices: NoticeSink | None = None
    interval_seconds: float = 2.0
    timeout_seconds: float = 2.0
    directory: Path | None = None
    """Where the peers' readings are kept across restarts; None: in memory only."""
    wall: Callable[[], float] = time.time
    transport: httpx.AsyncBaseTransport | None = None
    readings: dict[str, Reading] = field(default_factory=dict)
    rounds: int = 0
    """Completed rounds (a test waits for one more)."""
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _persisted: float = float("-inf")
    _dirty: bool = False
    _write_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.readings = {SELF: Reading(source=SELF)}
        for url in self.peers:
            self.readings[url] = Reading(source=url)

    def now_ms(self) -> int:
        return int(self.wall() * 1000)

    # lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        if self.directory is not None:
            await asyncio.to_thread(self._load, self.directory)
        self._tasks = [asyncio.create_task(self._run(), name="status-peers")]

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []
        if self.directory is not None and self._dirty:
            try:
                await asyncio.to_thread(self._write, self.directory, self._encode())
            except OSError as exc:
                log.error("could not keep the status peers' readings: %s", exc)

    async def _run(self) -> None:
        async with httpx.AsyncClient(
            timeout=self.timeout_seconds, transport=self.transport, follow_redirects=False
        ) as client:
            while True:
                try:
                    await self.poll_once(client)
                    await self._persist()
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("status page: a round of peer checks failed")
                await asyncio.sleep(self.interval_seconds)

    # one round ---------------------------------------------------------------------------------

    async def poll_once(self, client: httpx.AsyncClient) -> None:
        checks = [self._check_self(), *(self._check_peer(client, url) for url in self.peers)]
        if self.notice_feeds and self.on_notices is not None:
            checks.append(self._read_notices(client))
        await asyncio.gather(*checks)
        self.rounds += 1

    async def _check_self(self) -> None:
        reading = self.readings[SELF]
        started = self.now_ms()
        try:
            async with asyncio.timeout(self.timeout_seconds * 2):
                _, body = await self.own_status()
        except TimeoutError:
            self._failed(reading, started, "this node's status took too long")
            return
        self._answered(reading, started, body)

    async def _check_peer(self, client: httpx.AsyncClient, url: str) -> None:
        reading = self.readings[url]
        started = self.now_ms()
        try:
            body = await _get_json(client, url)
        except (httpx.HTTPError, ValueError) as exc:
            was_reachable = reading.error is None and reading.checked_ms is not None
            self._failed(reading, started, _describe(exc))
            if was_reachable:
                log.warning("status peer %s stopped answering: %s", url, reading.error)
                self._dirty = True
            return
        if not reading.reachable:
            self._dirty = True
        self._answered(reading, started, body)

    def _answered(self, reading: Reading, at_ms: int, body: dict[str, Any]) -> None:
        reading.body = body
        reading.checked_ms = at_ms
        reading.last_seen_ms = at_ms
        reading.error = None
        if reading.source != SELF:
            self._dirty = True

    def _failed(self, reading: Reading, at_ms: int, error: str) -> None:
        reading.checked_ms = at_ms
        reading.error = error

    async def _read_notices(self, client: httpx.AsyncClient) -> None:
        assert self.on_notices is not None
        for url in self.notice_feeds:
            try:
                body = await _get_json(client, url, accept=(200,))
            except (httpx.HTTPError, ValueError) as exc:
                log.debug("status feed %s: %s", url, _describe(exc))
                continue
            self.on_notices(_notices_of(body, url))
            return

    # the file ----------------------------------------------------------------------------------

    async def _persist(self) -> None:
        if self.directory is None or not self._dirty:
            return
        now = time.monotonic()
        if now - self._persisted < PERSIST_SECONDS:
            return
        self._persisted = now
        self._dirty = False
        try:
            await asyncio.to_thread(self._write, self.directory, self._encode())
        except asyncio.CancelledError:
            self._dirty = True  # stopped mid-write: `stop` writes again, after this one
            raise
        except OSError as exc:
            log.error("could not keep the status peers' readings: %s", exc)

    def _encode(self) -> bytes:
        kept = {
            url: {"body": r.body, "lastSeen": r.last_seen_ms}
            for url, r in self.readings.items()
            if url != SELF and r.body is not None
        }
        return orjson.dumps({"format": 1, "peers": kept})

    def _write(self, directory: Path, content: bytes) -> None:
        # one write at a time: a write cancelled on the loop still runs in its thread
        with self._write_lock:
            directory.mkdir(parents=True, exist_ok=True)
            replace_file(directory / FILE_NAME, content)

    def _load(self, directory: Path) -> None:
        """Last answers of the configured peers from before a restart: shown as not checked yet
        (unreachable until they answer), with when they were last seen."""
        path = directory / FILE_NAME
        try:
            data = orjson.loads(path.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, orjson.JSONDecodeError) as exc:
            log.error("ignoring unreadable status peers file %s: %s", path, exc)
            return
        kept = data.get("peers") if isinstance(data, Mapping) else None
        for url, item in (kept or {}).items():
            reading = self.readings.get(url)
            if reading is None or not isinstance(item, Mapping):
                continue  # no longer a peer
            body, seen = item.get("body"), item.get("lastSeen")
            if isinstance(body, dict) and isinstance(seen, int):
                reading.body, reading.last_seen_ms = body, seen
                reading.error = "not checked since this node started"


async def _get_json(
    client: httpx.AsyncClient, url: str, *, accept: tuple[int, ...] = (200, 503)
) -> dict[str, Any]:
    """The JSON object `url` answers (a `/status` answers 503 while its node starts)."""
    async with client.stream("GET", url, headers={"accept": "application/json"}) as response:
        if response.status_code not in accept:
            raise ValueError(f"answered {response.status_code}")
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise ValueError(f"answered more than {MAX_BODY_BYTES} bytes")
            chunks.append(chunk)
    try:
        body = orjson.loads(b"".join(chunks))
    except orjson.JSONDecodeError:
        raise ValueError("answered something that is not JSON") from None
    if not isinstance(body, dict):
        raise ValueError("answered JSON that is not an object")
    return body


def _notices_of(feed: Mapping[str, Any], url: str) -> list[Notice]:
    notices: list[Notice] = []
    items = feed.get("notices")
    for item in items if isinstance(items, list) else ():
        try:
            notices.append(decode_notice(item))
        except ValidationError as exc:
            log.warning("status feed %s: skipping a notice (%s at %s)", url, exc.message, exc.path)
    return notices


def _describe(exc: Exception) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return "no answer in time"
    if isinstance(exc, httpx.ConnectError):
        return "connection refused or unreachable"
    return str(exc) or type(exc).__name__
