"""Poison payloads end to end. On PostgreSQL a payload that yields a value no column holds (a
flag key longer than its `varchar`, which only a tally bug lets through now) is quarantined by the
real driver's error instead of failing its batch forever as "the store down".
A whole server in this process, with a tally that fails on a marked payload handed to its
analytics store: the SDK-facing endpoint accepts everything, processing goes on past the poison,
`/status` and `/metrics` count it, the API and the `flagstaff quarantine` command list, export and
reprocess it, and every payload is counted exactly once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from flagstaff_server.app import Flagstaff
from flagstaff_server.cli import main as flagstaff
from flagstaff_server.ingest import quarantine
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.journal import Journal
from flagstaff_server.ingest.payload_values import HOUR_MS
from flagstaff_server.ingest.processor import Processor
from flagstaff_server.ingest.record import Kind, Record
from flagstaff_server.ingest.tally import Tally, tally
from flagstaff_server.settings import Settings
from flagstaff_server.tasks import cancel_and_wait
from ingest_support import Payload, evaluation_totals, expected_totals, payload
from integration.scaleout.scaleout_cluster import ADMIN, admin_client, create_project
from support.deadlines import eventually, wait_until
from support.services import postgres_database
from support.threaded_servers import serve_in_thread

HOUR = 1_800_000_000_000 - 1_800_000_000_000 % HOUR_MS
POISON = b"poison-pill"


def summary_payload(seq: int, flag: str) -> Record:
    counter = {"variation": 0, "count": 1}
    body = [{"kind": "summary", "endDate": HOUR, "features": {flag: {"counters": [counter]}}}]
    return Record(
        seq=seq,
        received_ms=HOUR,
        kind=Kind.ANALYTICS,
        project="shop",
        environment="production",
        payload_id=f"payload-{seq}",
        payload=orjson.dumps(body),
    )


@pytest.mark.service
async def test_a_value_postgresql_refuses_is_quarantined_not_taken_for_the_store_down(
    tmp_path: Path,
) -> None:
    long_key = "k" * 300

    def unbounded(records: Iterable[Record]) -> Tally:
        """The tally as if it let a key too long for its column through (it skips one)."""
        batch = list(records)
        result = tally(batch)
        for record in batch:
            if b"unbounded" in record.payload:
                result.activity[(record.project, record.environment, long_key)] = (HOUR, HOUR)
        return result

    with postgres_database("flagstaff_poison") as url:
        store = AnalyticsStore(url, tally=unbounded)
        journal = Journal(tmp_path / "journal")
        journal.recover()
        processor = Processor(journal, store, node_id="node", idle_seconds=0.01)
        last = 0
        for index in range(20):
            record = summary_payload(index, "unbounded" if index == 11 else "good")
            last = await journal.submit(
                kind=record.kind,
                project=record.project,
                environment=record.environment,
                payload_id=record.payload_id,
                payload=record.payload,
                received_ms=record.received_ms,
            )
        task = asyncio.create_task(processor.run())
        try:
            await eventually(
                lambda: processor.position == last,
                within=20,
                what="processing past the payload PostgreSQL refuses",
                state=lambda: (processor.position, processor.counts),
            )
        finally:
            await cancel_and_wait([task])
        try:
            assert processor.store_ok
            assert processor.counts["error"] == 0
            series = store.evaluation_series(
                "shop", "production", "good", start_ms=HOUR, end_ms=HOUR + 1
            )
            assert series == [(HOUR, 0, 19)]
            held = quarantine.listing(store, "shop", "production", limit=5)
            assert [item["payloadId"] for item in held] == ["payload-11"]
            assert "DataError" in held[0]["error"]
        finally:
            store.close()
            journal.close()


class Poisoned:
    """The real tally, except that a batch holding a marked payload raises (until `fixed`)."""

    def __init__(self) -> None:
        self.fixed = False

    def __call__(self, records: Iterable[Record]) -> Tally:
        batch = list(records)
        if not self.fixed and any(POISON in record.payload for record in batch):
            raise RuntimeError("the tally trips over a poison pill")
        return tally(batch)


def poisoned_payload(index: int) -> Payload:
    item = payload(index)
    events = orjson.loads(item.body)
    events.append({"kind": "custom", "key": POISON.decode(), "context": {"key": "x"}})
    return Payload(item.payload_id, item.variation, item.count, orjson.dumps(events))


def send(client: httpx.Client, url: str, sdk_key: str, item: Payload) -> None:
    response = client.post(
        f"{url}/bulk",
        content=item.body,
        headers={
            "Authorization": sdk_key,
            "Content-Type": "application/json",
            "X-LaunchDarkly-Payload-ID": item.payload_id,
        },
    )
    assert response.status_code == 202, response.text


def ingest_status(url: str) -> dict[str, Any]:
    part: dict[str, Any] = httpx.get(f"{url}/status", timeout=10).json()["parts"]["ingest"]
    return part


def metric(url: str, name: str) -> float:
    for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
        if line.startswith(f"{name} "):
            return float(line.split()[1])
    raise AssertionError(f"/metrics has no {name}")


def cli(url: str, *argv: str) -> int:
    common = ["--project", "shop", "--environment", "production", "--url", url, "--token", ADMIN]
    return flagstaff(["quarantine", argv[0], *common, *argv[1:]])


def test_poison_payloads_are_quarantined_counted_exported_and_reprocessed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    poisoned = Poisoned()
    analytics = AnalyticsStore(f"sqlite:///{tmp_path / 'analytics.db'}", tally=poisoned)
    settings = Settings(data_dir=tmp_path / "node", admin_token=ADMIN, seed_demo=False)
    app = Flagstaff(settings, analytics=analytics, announce=lambda line: None)
    with (
        serve_in_thread(app.asgi, what="flagstaff", stop_timeout=20) as server,
        admin_client(server.url) as api,
        httpx.Client(timeout=10) as client,
    ):
        url = server.url
        sdk_key = create_project(api)
        good = [payload(index) for index in range(30)]
        bad = [poisoned_payload(index) for index in (100, 101)]
        for item in [*good[:10], bad[0], *good[10:20], bad[1], *good[20:]]:
            send(client, url, sdk_key, item)

        wait_until(
            lambda: ingest_status(url)["processedSeq"] == 32,
            timeout=20,
            what="processing past the poison",
            interval=0.1,
        )
        assert evaluation_totals(api) == expected_totals(good)
        status = ingest_status(url)
        assert (status["processed"], status["quarantined"], status["quarantineHeld"]) == (30, 2, 2)
        assert status["analyticsStore"] == "ok"
        assert metric(url, "flagstaff_ingest_quarantined_total") == 2
        assert metric(url, "flagstaff_ingest_quarantine_held") == 2

        listed = api.get("/api/v2/insights/shop/production/quarantine").json()
        assert listed["totalCount"] == 2
        assert [item["payloadId"] for item in listed["items"]] == [b.payload_id for b in bad]
        assert "RuntimeError: the tally trips over a poison pill" in listed["items"][0]["error"]

        export = tmp_path / "quarantine.ndjson"
        assert cli(url, "export", "-o", str(export)) == 0
        lines = [orjson.loads(line) for line in export.read_bytes().splitlines()]
        assert [line["payload"].encode() for line in lines] == [b.body for b in bad]

        # still failing: kept, one more attempt, the command exits non-zero
        capsys.readouterr()
        assert cli(url, "reprocess") == 1
        answer = json.loads(capsys.readouterr().out)
        assert (answer["reprocessed"], answer["remaining"]) == (0, 2)

        poisoned.fixed = True
        assert cli(url, "reprocess", "--payload-id", bad[1].payload_id) == 0
        assert json.loads(capsys.readouterr().out)["remaining"] == 1
        done = api.post("/api/v2/insights/shop/production/quarantine/reprocess", json={})
        assert done.status_code == 200, done.text
        assert done.json() == {"reprocessed": 1, "failed": [], "remaining": 0}
        assert evaluation_totals(api) == expected_totals([*good, *bad])
        wait_until(
            lambda: ingest_status(url)["quarantineHeld"] == 0,
            timeout=20,
            what="the node to see the quarantine emptied",
            interval=0.2,
        )

        # a repeat of a reprocessed payload is a duplicate, not a second count
        send(client, url, sdk_key, bad[0])
        assert evaluation_totals(api) == expected_totals([*good, *bad])

        refused = api.post(
            "/api/v2/insights/shop/production/quarantine/reprocess", json={"payloadId": "x"}
        )
        assert refused.status_code == 400
        assert refused.json()["path"] == "/payloadId"
        wrong = api.post(
            "/api/v2/insights/shop/production/quarantine/reprocess", json={"payloadIds": [7]}
        )
        assert (wrong.status_code, wrong.json()["path"]) == (400, "/payloadIds/0")
