"""Test support for ingestion: LaunchDarkly-style event payloads with known counts, a sender that
retries with the same payload id until acknowledged, and insight queries. Asserts nothing itself."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import orjson


@dataclass(frozen=True, slots=True)
class Payload:
    payload_id: str
    variation: int
    count: int
    body: bytes


def payload(index: int, *, flag: str = "checkout", now_ms: int | None = None) -> Payload:
    """A summary counting `count` evaluations of `flag` at one variation, plus a custom event."""
    now_ms = now_ms or int(time.time() * 1000)
    variation, count = index % 3, index % 5 + 1
    events: list[dict[str, Any]] = [
        {
            "kind": "custom",
            "creationDate": now_ms,
            "key": "purchase",
            "context": {"kind": "user", "key": f"user-{index % 50}"},
            "metricValue": 1.0,
        },
        {
            "kind": "summary",
            "startDate": now_ms - 1000,
            "endDate": now_ms,
            "features": {
                flag: {
                    "default": "x",
                    "contextKinds": ["user"],
                    "counters": [
                        {
                            "value": f"v{variation}",
                            "variation": variation,
                            "version": 3,
                            "count": count,
                        }
                    ],
                }
            },
        },
    ]
    return Payload(str(uuid.uuid4()), variation, count, orjson.dumps(events))


def expected_totals(payloads: list[Payload]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for item in payloads:
        totals[str(item.variation)] = totals.get(str(item.variation), 0) + item.count
    return totals


def post(client: httpx.Client, url: str, sdk_key: str, item: Payload) -> int:
    """One attempt; the status, or 0 when the connection failed."""
    try:
        response = client.post(
            f"{url}/bulk",
            content=item.body,
            headers={
                "Authorization": sdk_key,
                "Content-Type": "application/json",
                "X-LaunchDarkly-Event-Schema": "4",
                "X-LaunchDarkly-Payload-ID": item.payload_id,
            },
        )
    except httpx.HTTPError:
        return 0
    return response.status_code


def send_until_acknowledged(
    client: httpx.Client, url: str, sdk_key: str, item: Payload, *, deadline: float
) -> bool:
    """Retry with the same payload id (as SDKs do) until a 202 or the deadline, backing off from
    0.05 s doubling to 0.4 s: dozens of senders retrying every 0.05 s while a node restarts took
    a quarter of a core from its cold start on a two-core machine."""
    backoff = 0.05
    while time.monotonic() < deadline:
        status = post(client, url, sdk_key, item)
        if status == 202:
            return True
        assert status in (0, 502, 503), f"unexpected status {status}"
        time.sleep(backoff)  # client backoff between retries, as an SDK would wait
        backoff = min(backoff * 2, 0.4)
    return False


def send_all_alongside(
    payloads: list[Payload],
    send: Callable[[httpx.Client, int, Payload], None],
    alongside: Callable[[], None],
    *,
    workers: int,
    timeout: float,
) -> None:
    """`send(client, index, payload)` for every payload from `workers` threads, while `alongside`
    (the faults) runs in a thread of its own; returns when both are done or `timeout` passed.
    The senders share one client, as an application has one SDK: building an httpx.Client costs
    ~60 ms of CPU (its TLS context), and one per payload spent a minute of a send deadline on
    that on a busy two-core machine."""
    faults = threading.Thread(target=alongside)
    faults.start()
    with httpx.Client(timeout=10) as client, ThreadPoolExecutor(max_workers=workers) as pool:
        for future in [pool.submit(send, client, i, item) for i, item in enumerate(payloads)]:
            future.result()
    faults.join(timeout=timeout)


def evaluation_totals(api: httpx.Client, flag: str = "checkout") -> dict[str, int]:
    response = api.get(f"/api/v2/insights/shop/production/flags/{flag}/evaluations")
    assert response.status_code == 200, response.text
    totals: dict[str, int] = response.json()["totals"]
    return totals


def metric_events(api: httpx.Client, key: str = "purchase") -> int:
    response = api.get(f"/api/v2/insights/shop/production/metrics/{key}")
    assert response.status_code == 200, response.text
    events: int = response.json()["events"]
    return events
