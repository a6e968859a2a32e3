"""Webhook delivery by a real `flagstaff serve` process, to a receiver in the test that verifies
every signature with the webhook's secret:
- the process SIGKILLed while a delivery is in flight (the receiver holds the request) loses
  nothing: after a restart every change arrives, each flag's in the order made;
- a receiver down while changes go on, for as long as the worker takes to fail through its whole
  retry schedule and then probe it twice more at the longest wait (its circuit open), gets every
  change once it is back, each flag's in order, nothing given up.
Short retry waits are injected (`FLAGSTAFF_WEBHOOK_RETRY_SECONDS`): the outage is counted in
failed attempts, so the schedule, not a wall-clock minute, sets how long the tests take."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from flagstaff_server.services.webhook_delivery import RetryPolicy
from receiver import Arrival, Receiver, first_arrivals, receiving
from support.deadlines import wait_until
from support.processes import ServeProcess, running

pytestmark = pytest.mark.slow

TOKEN = "webhook-process-admin"
SECRET = "process-test-secret"
FLAGS = ("alpha", "beta", "gamma")
RETRY_SECONDS = (0.25, 0.5, 1.0, 1.5)
OUTAGE_FAILURES = RetryPolicy().circuit_after + len(RETRY_SECONDS) + 2
"""Failed attempts the outage lasts: those opening the circuit, one probe at each wait of the
schedule, and two more at its last wait (the one that repeats)."""


def serve(tmp_path: Path) -> ServeProcess:
    return ServeProcess(
        data_dir=tmp_path / "flagstaff",
        name="flagstaff",
        admin_token=TOKEN,
        env={
            "FLAGSTAFF_WORKER_POLL_SECONDS": "0.2",
            # a restarted process is a new holder: it takes the job over once the lease ends
            "FLAGSTAFF_WORKER_LEASE_SECONDS": "3",
            "FLAGSTAFF_WEBHOOK_RETRY_SECONDS": ",".join(map(str, RETRY_SECONDS)),
        },
    )


@contextmanager
def api(process: ServeProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=process.url, headers={"Authorization": TOKEN}, timeout=30) as client:
        yield client


def ok(response: httpx.Response) -> Any:
    assert response.is_success, response.text
    return response.json() if response.content else None


def set_up(client: httpx.Client, receiver: Receiver) -> str:
    ok(client.post("/api/v2/projects", json={"key": "shop", "name": "Shop"}))
    webhook = ok(
        client.post(
            "/api/v2/webhooks",
            json={
                "url": receiver.url,
                "sign": True,
                "secret": SECRET,
                "on": True,
                "statements": [
                    {"effect": "allow", "actions": ["*"], "resources": ["proj/*:env/*:flag/*"]}
                ],
            },
        )
    )
    for key in FLAGS:
        ok(client.post("/api/v2/flags/shop", json={"key": key, "name": key}))
    webhook_id: str = webhook["_id"]
    return webhook_id


def toggle(client: httpx.Client, key: str, on: bool) -> None:
    patch = [{"op": "replace", "path": "/environments/production/on", "value": on}]
    ok(client.patch(f"/api/v2/flags/shop/{key}", json=patch))


def flag_entries(client: httpx.Client) -> dict[str, list[str]]:
    """Each flag's audit entries, oldest first: the order its changes were made."""
    items = ok(client.get("/api/v2/auditlog", params={"limit": 1000}))["items"]
    order: dict[str, list[str]] = {}
    for item in reversed(items):
        if item["kind"] == "flag":
            key = item["target"]["resources"][0].rsplit("/", 1)[1]
            order.setdefault(key, []).append(item["_id"])
    return order


def arrival_order(arrivals: list[Arrival]) -> dict[str, list[str]]:
    order: dict[str, list[str]] = {}
    for arrival in first_arrivals(arrivals):
        key = arrival.resources[0].rsplit("/", 1)[1]
        order.setdefault(key, []).append(arrival.entry)
    return order


def wait_for_all(receiver: Receiver, expected: dict[str, list[str]], timeout: float) -> None:
    wanted = {entry for entries in expected.values() for entry in entries}
    wait_until(
        lambda: wanted <= set(receiver.entries()),
        timeout=timeout,
        what="every change to reach the receiver",
        state=lambda: f"{len(wanted - set(receiver.entries()))} of {len(wanted)} missing",
        interval=0.1,
    )


def test_a_process_killed_mid_delivery_loses_no_change(tmp_path: Path) -> None:
    process = serve(tmp_path)
    with receiving(SECRET) as receiver, running(process), api(process) as client:
        set_up(client, receiver)
        wait_until(lambda: len(receiver.entries()) >= len(FLAGS), what="the creations", timeout=30)
        # the next delivery is held by the receiver: the worker is in the middle of it
        receiver.hold_next = True
        for round_ in range(4):
            for key in FLAGS:
                toggle(client, key, round_ % 2 == 0)
        wait_until(receiver.held.is_set, what="a delivery in flight", timeout=30)
        in_flight = receiver.arrivals[-1].entry
        process.kill()
        receiver.release()
        process.start()
        for key in FLAGS:
            toggle(client, key, True)
        expected = flag_entries(client)
        wait_for_all(receiver, expected, timeout=60)
        assert arrival_order(receiver.arrivals) == expected
        assert receiver.all_signed_correctly()
        # the delivery cut short by the kill was sent again after the restart
        assert receiver.entries().count(in_flight) >= 2


def test_a_receiver_down_through_its_retry_schedule_gets_every_change_in_order(
    tmp_path: Path,
) -> None:
    process = serve(tmp_path)
    with receiving(SECRET) as receiver, running(process), api(process) as client:
        webhook_id = set_up(client, receiver)
        wait_until(lambda: len(receiver.entries()) >= len(FLAGS), what="the creations", timeout=30)
        receiver.down()
        on = True
        changes = 0

        def errors() -> int:
            count: int = ok(client.get(f"/api/v2/webhooks/{webhook_id}"))["_status"]["errorCount"]
            return count

        while errors() < OUTAGE_FAILURES:
            for key in FLAGS:
                toggle(client, key, on)
                changes += 1
            on = not on
            # the next round once the worker has tried (and failed) again
            seen = errors()
            wait_until(
                lambda seen=seen: errors() > seen,
                what="another failed attempt",
                timeout=30,
                interval=0.1,
            )
        status = ok(client.get(f"/api/v2/webhooks/{webhook_id}"))["_status"]
        assert status["circuit"] == "open"
        assert status["pending"] >= changes
        receiver.up()
        expected = flag_entries(client)
        wait_for_all(receiver, expected, timeout=60)
        assert arrival_order(receiver.arrivals) == expected
        assert receiver.all_signed_correctly()
        log = ok(client.get(f"/api/v2/webhooks/{webhook_id}/deliveries", params={"limit": 1000}))
        assert log["totalCount"] == sum(len(entries) for entries in expected.values())
        assert {item["status"] for item in log["items"]} == {"delivered"}
        failed_attempts = [
            attempt
            for item in log["items"]
            for attempt in item["attemptLog"]
            if attempt["error"] is not None
        ]
        assert failed_attempts
        assert all(attempt["statusCode"] is None for attempt in failed_attempts)
        healed = ok(client.get(f"/api/v2/webhooks/{webhook_id}"))["_status"]
        assert (healed["circuit"], healed["failures"], healed["pending"]) == ("closed", 0, 0)
