"""Webhook delivery by the whole server in this process (under uvicorn in a thread, the worker
role in it) to receivers on loopback: a receiver checking signatures with the webhook's secret
finds every one right (and one with another secret finds every one wrong); an endpoint that
accepts connections and never answers does not slow the writes, its attempt ending as a timeout
in the attempts log."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
from flagstaff_server.settings import Settings
from receiver import receiving
from support.deadlines import wait_until
from support.in_process import serve_flagstaff
from support.ports import listening_port

TOKEN = "webhook-live-admin"
FLAG_CHANGES = [{"effect": "allow", "actions": ["*"], "resources": ["proj/*:env/*:flag/*"]}]


@contextmanager
def flagstaff(tmp_path: Path, **settings: Any) -> Iterator[httpx.Client]:
    values: dict[str, Any] = {
        "data_dir": tmp_path,
        "admin_token": TOKEN,
        "seed_demo": False,
        "worker_poll_seconds": 0.2,
        **settings,
    }
    with (
        serve_flagstaff(Settings(**values)) as server,
        httpx.Client(base_url=server.url, headers={"Authorization": TOKEN}, timeout=30) as client,
    ):
        yield client


def ok(response: httpx.Response) -> Any:
    assert response.is_success, response.text
    return response.json() if response.content else None


def add_webhook(client: httpx.Client, url: str, secret: str = "right-secret") -> str:
    body = {"url": url, "sign": True, "secret": secret, "on": True, "statements": FLAG_CHANGES}
    webhook_id: str = ok(client.post("/api/v2/webhooks", json=body))["_id"]
    return webhook_id


def toggle(client: httpx.Client, key: str, on: bool) -> None:
    patch = [{"op": "replace", "path": "/environments/production/on", "value": on}]
    ok(client.patch(f"/api/v2/flags/shop/{key}", json=patch))


def test_a_receiver_verifies_every_signature(tmp_path: Path) -> None:
    with (
        receiving("right-secret") as right,
        receiving("another-secret") as wrong,
        flagstaff(tmp_path) as client,
    ):
        ok(client.post("/api/v2/projects", json={"key": "shop", "name": "Shop"}))
        add_webhook(client, right.url)
        add_webhook(client, wrong.url)
        ok(client.post("/api/v2/flags/shop", json={"key": "checkout", "name": "Checkout"}))
        for on in (True, False, True, False):
            toggle(client, "checkout", on)
        for receiver in (right, wrong):
            wait_until(lambda r=receiver: len(r.entries()) >= 5, what="five deliveries")
        assert right.all_signed_correctly()
        assert not any(arrival.signed_correctly for arrival in wrong.arrivals)
        # both got the same bodies: only the key differs
        assert right.entries() == wrong.entries()


def test_a_silent_endpoint_does_not_slow_writes(tmp_path: Path) -> None:
    with (
        listening_port() as port,
        flagstaff(
            # no second attempt within the test: a worker stopping mid-attempt waits for it
            tmp_path,
            webhook_timeout_seconds=20,
            worker_lease_seconds=90,
            webhook_retry_seconds=(600.0,),
        ) as client,
    ):
        ok(client.post("/api/v2/projects", json={"key": "shop", "name": "Shop"}))
        webhook_id = add_webhook(client, f"http://127.0.0.1:{port}/hook")
        ok(client.post("/api/v2/flags/shop", json={"key": "checkout", "name": "Checkout"}))

        def delivering() -> bool:
            # the worker's connection to the endpoint is open, its request unanswered
            connections = psutil.Process().net_connections(kind="tcp")
            return any(
                c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
                for c in connections
            )

        wait_until(delivering, what="the worker to be stuck in a delivery", timeout=30)
        for round_ in range(20):
            toggle(client, "checkout", round_ % 2 == 0)
        # twenty writes done while the one attempt still hangs: they never waited for it
        assert delivering()
        href = f"/api/v2/webhooks/{webhook_id}/deliveries"
        log = ok(client.get(href, params={"limit": 100}))
        assert log["totalCount"] == 21
        assert all(item["attemptLog"] == [] for item in log["items"])

        def timed_out() -> list[dict[str, Any]]:
            items = ok(client.get(href, params={"limit": 100}))["items"]
            return [attempt for item in items for attempt in item["attemptLog"]]

        (attempt,) = wait_until(timed_out, what="the attempt to time out", timeout=60)
        assert attempt["statusCode"] is None
        assert attempt["error"] == "no answer within 20s"
        assert attempt["latencyMs"] >= 19_000
