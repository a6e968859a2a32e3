"""Event senders and the count of what arrived: senders post payloads of custom events to an
ingest node (`POST /bulk`, with a payload id), retrying the same payload to the other region
until a 202, as the project's SDK does; each event carries a unique metric value, so the
analytics store tells exactly which acknowledged events are missing or counted twice.

The senders stop generating at the end of the run and keep retrying what is unacknowledged
for a bounded drain.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from dataclasses import dataclass, field

import httpx
import psycopg

from flagstaff_server.gameday.topology import CONTEXT, ENVIRONMENT, PROJECT

METRIC = "gameday-event"


@dataclass
class EventLedger:
    """Every event generated (by metric value), and those acknowledged."""

    sent: int = 0
    acknowledged: set[int] = field(default_factory=set)
    unacknowledged: int = 0
    errors: int = 0
    sheds: int = 0


@dataclass(frozen=True, slots=True)
class Counted:
    lost: int
    duplicated: int
    counted: int


class EventSender:
    """Posts a payload of `batch` events every `interval` seconds to `urls[0]`, failing over
    to the next url on any failure."""

    def __init__(
        self,
        *,
        http: httpx.AsyncClient,
        urls: list[str],
        sdk_key: str,
        ledger: EventLedger,
        numbers: itertools.count[int],
        interval: float = 0.5,
        batch: int = 5,
    ) -> None:
        self.http = http
        self.urls = urls
        self.sdk_key = sdk_key
        self.ledger = ledger
        self.numbers = numbers
        self.interval = interval
        self.batch = batch
        self.generating = True
        self._backlog: list[tuple[str, list[int]]] = []

    async def run(self, drain_until: list[float]) -> None:
        """Until cancelled while generating; afterwards until the backlog is empty or the
        monotonic time in `drain_until[0]` passes."""
        target = 0
        while self.generating or (self._backlog and time.monotonic() < drain_until[0]):
            if self.generating:
                numbers = [next(self.numbers) for _ in range(self.batch)]
                self.ledger.sent += len(numbers)
                self._backlog.append((str(uuid.uuid4()), numbers))
            kept = []
            for payload_id, numbers in self._backlog:
                if await self._post(self.urls[target], payload_id, numbers):
                    self.ledger.acknowledged.update(numbers)
                else:
                    target = (target + 1) % len(self.urls)
                    kept.append((payload_id, numbers))
            self._backlog = kept
            self.ledger.unacknowledged = sum(len(n) for _, n in kept)
            await asyncio.sleep(self.interval)

    async def _post(self, url: str, payload_id: str, numbers: list[int]) -> bool:
        now = time.time_ns() // 1_000_000
        body = [
            {
                "kind": "custom",
                "creationDate": now,
                "key": METRIC,
                "context": CONTEXT,
                "metricValue": number,
            }
            for number in numbers
        ]
        headers = {
            "Authorization": self.sdk_key,
            "X-LaunchDarkly-Payload-ID": payload_id,
            "X-LaunchDarkly-Event-Schema": "4",
            "Content-Type": "application/json",
        }
        try:
            response = await self.http.post(f"{url}/bulk", json=body, headers=headers, timeout=5)
        except httpx.HTTPError:
            self.ledger.errors += 1
            return False
        if response.status_code == 202:
            return True
        if response.status_code in (429, 503):
            self.ledger.sheds += 1
        else:
            self.ledger.errors += 1
        return False


def count_stored(analytics_url: str, ledger: EventLedger) -> Counted:
    """Which acknowledged events the analytics store holds, and how often."""
    with psycopg.connect(analytics_url, connect_timeout=5) as connection:
        rows = connection.execute(
            "SELECT metric_value, count(*) FROM ingest_custom_events"
            " WHERE project = %s AND environment = %s AND key = %s GROUP BY metric_value",
            (PROJECT, ENVIRONMENT, METRIC),
        ).fetchall()
    stored = {int(value): int(count) for value, count in rows if value is not None}
    lost = len(ledger.acknowledged - stored.keys())
    duplicated = sum(count - 1 for count in stored.values() if count > 1)
    return Counted(lost=lost, duplicated=duplicated, counted=sum(stored.values()))
