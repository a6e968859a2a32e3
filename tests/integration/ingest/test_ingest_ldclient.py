"""The official LaunchDarkly Python SDK (ldclient 9.18.4) pointed at `flagstaff serve`: its
summary, feature, custom, index and diagnostic events arrive and show in the insights with exact
counts."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from ingest_support import evaluation_totals
from integration.scaleout.scaleout_cluster import (
    ServerProcess,
    admin_client,
    create_project,
    switch_on,
)
from ldclient import Context
from ldclient.client import LDClient
from ldclient.config import Config
from support.deadlines import wait_until
from support.management import create_flag, ok, served_flags
from support.processes import running

pytestmark = pytest.mark.slow


def test_official_sdk_events_show_in_insights_with_exact_counts(tmp_path: Path) -> None:
    server = ServerProcess(args=[], data_dir=tmp_path / "node")
    with running(server), admin_client(server.url) as api:
        sdk_key = create_project(api)
        create_flag(api, "checkout")
        switch_on(api, "checkout")
        patch = [{"op": "replace", "path": "/environments/production/trackEvents", "value": True}]
        ok(api.patch("/api/v2/flags/shop/checkout", json=patch))
        # delivery applies the API's writes from the change feed a moment after they are stored:
        # an SDK started before it has the last one would evaluate without trackEvents
        wait_until(
            lambda: _delivered(server.url, sdk_key),
            what="delivery to serve checkout on with trackEvents",
        )
        config = Config(
            sdk_key,
            base_uri=server.url,
            stream_uri=server.url,
            events_uri=server.url,
            diagnostic_opt_out=False,
            flush_interval=1,
        )
        client = LDClient(config=config, start_wait=30)
        try:
            assert client.is_initialized()
            alice = Context.builder("alice").name("Alice").build()
            bob = Context.create("bob", "org")
            for _ in range(7):
                assert client.variation("checkout", alice, "default") == "on"
            for _ in range(5):
                assert client.variation("checkout", bob, "default") == "on"
            for _ in range(3):
                assert client.variation("no-such-flag", alice, "fallback") == "fallback"
            for value in (1.5, 2.5, 3.0, 5.0):
                client.track("purchase", alice, metric_value=value)
            client.flush()

            def arrived() -> bool:
                totals = evaluation_totals(api)
                metric = ok(api.get("/api/v2/insights/shop/production/metrics/purchase"))
                return totals == {"0": 12} and metric["events"] == 4

            wait_until(arrived, timeout=30, what="the SDK's events processed")
        finally:
            client.close()

        assert evaluation_totals(api) == {"0": 12}
        assert evaluation_totals(api, "no-such-flag") == {"none": 3}
        metric = ok(api.get("/api/v2/insights/shop/production/metrics/purchase"))
        assert metric == {
            "eventKey": "purchase",
            "events": 4,
            "withValue": 4,
            "sum": 12.0,
            "mean": 3.0,
        }
        export = api.get("/api/v2/insights/shop/production/events")
        assert export.status_code == 200
        assert export.headers["content-type"].startswith("application/x-ndjson")
        events = [orjson.loads(line) for line in export.content.splitlines()]
        kinds = [event["kind"] for event in events]
        # trackEvents: one full feature event per evaluation of the existing flag
        assert kinds.count("feature") == 12
        assert kinds.count("custom") == 4
        assert kinds.count("diagnostic-init") == 1
        indexed = {event["context"]["key"] for event in events if event["kind"] == "index"}
        assert indexed == {"alice", "bob"}
        summaries = [event for event in events if event["kind"] == "summary"]
        counted = sum(
            counter["count"]
            for summary in summaries
            for counter in summary["features"]["checkout"]["counters"]
        )
        assert counted == 12

        statuses = ok(api.get("/api/v2/insights/shop/production/flag-statuses"))["items"]
        by_key = {item["flagKey"]: item for item in statuses}
        assert by_key["checkout"]["status"] == "launched"
        assert by_key["checkout"]["known"] is True
        assert by_key["no-such-flag"]["known"] is False

        seen = ok(api.get("/api/v2/insights/shop/production/contexts"))
        assert seen["totalCount"] == 2
        assert {item["context"]["key"] for item in seen["items"]} == {"alice", "bob"}
        alice_seen = next(item for item in seen["items"] if item["context"]["key"] == "alice")
        assert alice_seen["context"]["name"] == "Alice"

        fleet = ok(api.get("/api/v2/insights/shop/production/sdk-instances"))["items"]
        assert len(fleet) == 1
        assert fleet[0]["sdk"] == {"name": "python-server-sdk", "version": "9.18.4"}


def _delivered(url: str, sdk_key: str) -> bool:
    flag = served_flags(url, sdk_key).get("checkout")
    return bool(flag and flag["on"] and flag["trackEvents"])
