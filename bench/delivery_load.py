"""The load generator `bench.delivery` runs in separate processes (never inside a server):
`python -m bench.delivery_load MODE PORT COUNT PATH KEY OUTPUT ARG` (results go to the JSON file
OUTPUT; ARG is CHANGES for `fanout` and `changes`, START for `storm`).

Streams are plain asyncio protocols (no task, no parser per connection) that only look for byte
markers, so one process holds thousands of them cheaply. Modes:
- `fanout`: open COUNT streams at a bounded pace; print `ready <n>` once each has its opening
  payload; then record when each sees each of CHANGES stamped changes; write the results and
  exit. `changes` is the same for unstamped change events (a real server's).
- `storm`: at wall-clock START, open COUNT streams at once; a 503 is retried after its
  `Retry-After`; record when each has its whole opening payload, its FDv2 intent code and the
  bytes it took; write the results and exit.
Every phase has a deadline, so a broken server ends the run instead of hanging it.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import cast

import orjson

STAMP = re.compile(rb'ts-([0-9]+\.[0-9]+)"')
INTENT = re.compile(rb'"intentCode":"([a-z-]+)"')
RETRY_AFTER = re.compile(rb"retry-after: *([0-9]+)", re.IGNORECASE)
OPENED = (b"event: put\n", b"event: payload-transferred\n", b'"intentCode":"none"')
CHANGED = (b"event: patch\n", b"event: put-object\n")
TAIL = 64
CONNECT_SECONDS = 120.0
CHANGE_SECONDS = 45.0
"""From `ready` until every change has arrived (the changes are sent within ~10 s of it)."""
STORM_SECONDS = 90.0


class Tally:
    """Counts shared by the streams of one process, so waiting costs no per-stream polling."""

    def __init__(self) -> None:
        self.opened = 0
        self.changed = 0


class StreamClient(asyncio.Protocol):
    """One SSE stream: notes when the opening payload is complete and when a change arrives."""

    def __init__(
        self, request: bytes, tally: Tally, changes: int = 1, stamped: bool = False
    ) -> None:
        self.request = request
        self.tally = tally
        self.changes = changes
        self.stamped = stamped
        """Changes carry a `ts-` stamp (the bench servers): a change is a new stamp. Otherwise a
        change is a change-event marker (a real server)."""
        self.settled: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Resolved once the opening payload is complete, the stream was shed or it ended."""
        self.tail = b""
        self.state = 0
        """0: waiting for the status line, 1: in the opening payload, 2: its end seen, 3: done."""
        self.opened_at = 0.0
        self.arrivals: list[tuple[float, float]] = []
        """(when a change event arrived, the `ts-` stamp it carried or 0)."""
        self.retry_after = 0
        self.intent = ""
        """The FDv2 intent code of the opening payload (empty for FDv1)."""
        self.received = 0
        """Bytes received until the opening payload was complete."""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        now = time.time()
        scanned = self.tail
        seen = scanned + data
        self.tail = seen[-TAIL:]
        if self.state == 0:
            if seen.startswith(b"HTTP/1.1 503"):
                found = RETRY_AFTER.search(seen)
                self.retry_after = int(found.group(1)) if found else 1
                self.state = 3
                self._settle()
                if self.transport is not None:
                    self.transport.close()
                return
            self.state = 1
        if self.state == 1:
            self.received += len(data)
            if not self.intent:
                found = INTENT.search(seen)
                self.intent = found.group(1).decode() if found else ""
            # The opening payload ends at the blank line after its last marker.
            for marker in OPENED:
                at = seen.rfind(marker)
                if at >= 0 and seen.find(b"\n\n", at) >= 0:
                    self.state = 2
                    self.opened_at = now
                    self.tally.opened += 1
                    self._settle()
                    # what follows the opening payload in this read may be a change already
                    scanned, seen = b"", seen[seen.find(b"\n\n", at) + 2 :]
                    break
            else:
                return
        if self.state == 2:
            for stamp in self._new_changes(scanned, seen):
                self.arrivals.append((now, stamp))
                self.tally.changed += 1
            if len(self.arrivals) >= self.changes:
                self.state = 3
                if self.transport is not None:
                    self.transport.close()

    def _new_changes(self, scanned: bytes, seen: bytes) -> list[float]:
        """Stamps (or zeros) of the changes in `seen` that do not lie wholly in `scanned`, the
        tail already looked at: several changes may arrive in one read, or one across two."""
        if self.stamped:
            return [float(m.group(1)) for m in STAMP.finditer(seen) if m.end() > len(scanned)]
        count = sum(seen.count(marker) - scanned.count(marker) for marker in CHANGED)
        return [0.0] * count

    def connection_lost(self, exc: Exception | None) -> None:
        self._settle()

    def _settle(self) -> None:
        if not self.settled.done():
            self.settled.set_result(None)


def stream_request(path: str, key: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: {key}\r\n\r\n".encode()


async def connect(port: int, client: StreamClient) -> bool:
    loop = asyncio.get_running_loop()
    try:
        await loop.create_connection(lambda: client, "127.0.0.1", port)
    except OSError:
        return False
    return True


async def wait_for(predicate: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not predicate():  # noqa: ASYNC110 - one counter check beats an event per stream
        await asyncio.sleep(0.05)


async def fanout(
    port: int, count: int, path: str, key: str, changes: int, stamped: bool
) -> dict[str, object]:
    request = stream_request(path, key)
    tally = Tally()
    clients = [StreamClient(request, tally, changes, stamped) for _ in range(count)]
    for start in range(0, count, 250):
        await asyncio.gather(*(connect(port, c) for c in clients[start : start + 250]))
    await wait_for(lambda: tally.opened >= count, CONNECT_SECONDS)
    print(f"ready {tally.opened}", flush=True)
    await wait_for(lambda: tally.changed >= tally.opened * changes, CHANGE_SECONDS)
    return {
        "connected": sum(c.opened_at > 0 for c in clients),
        "arrivals": [c.arrivals for c in clients if c.opened_at > 0],
    }


async def storm(port: int, count: int, path: str, key: str, start: float) -> dict[str, object]:
    request = stream_request(path, key)
    tally = Tally()
    await asyncio.sleep(max(0.0, start - time.time()))
    sheds = 0
    refused = 0
    done: list[float] = []
    intents: Counter[str] = Counter()
    received: list[int] = []
    deadline = time.monotonic() + STORM_SECONDS

    async def one() -> None:
        nonlocal sheds, refused
        while time.monotonic() < deadline:
            client = StreamClient(request, tally)
            if not await connect(port, client):
                refused += 1
                await asyncio.sleep(0.5)
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(client.settled, deadline - time.monotonic())
            if client.state == 2:
                done.append(client.opened_at - start)
                intents[client.intent or "fdv1"] += 1
                received.append(client.received)
                # Reconnected clients stay connected until the storm is over, as SDKs would.
                await wait_for(lambda: len(done) >= count, deadline - time.monotonic())
                if client.transport is not None:
                    client.transport.close()
                return
            if client.retry_after:
                sheds += 1
                await asyncio.sleep(client.retry_after)

    await asyncio.gather(*(one() for _ in range(count)))
    return {
        "done": done,
        "sheds": sheds,
        "refused": refused,
        "intents": dict(intents),
        "received": received,
    }


def main() -> None:
    import uvloop

    mode, port, count, path, key, output = sys.argv[1:7]
    if mode in ("fanout", "changes"):
        changes = int(sys.argv[7])
        result = uvloop.run(fanout(int(port), int(count), path, key, changes, mode == "fanout"))
    else:
        result = uvloop.run(storm(int(port), int(count), path, key, float(sys.argv[7])))
    Path(output).write_bytes(orjson.dumps(result))


if __name__ == "__main__":
    main()
