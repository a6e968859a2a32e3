"""Event forwarding through a relay process: payloads accepted while the event upstream is down
stay in the relay's disk spool (across a relay restart) and arrive after it returns, each with
its payload id, exactly once at a de-duplicating upstream; the official SDK's events included."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import httpx
import pytest
from ldclient import Context
from relay_support import (
    CATCH_UP_SECONDS,
    EventSink,
    RelayProcess,
    Upstream,
    admin_client,
    relay_config,
)
from support.deadlines import wait_until
from support.management import Keys, create_project, sdk_client
from support.processes import running

pytestmark = [pytest.mark.slow]

KEYS = Keys(sdk_key="sdk-relay-events", mobile_key="mob-relay-events", client_side_id="c" * 24)


def _offline_relay(tmp_path: Path, sink: EventSink) -> RelayProcess:
    data = tmp_path / "data.json"
    data.write_text(json.dumps({"flags": {}, "segments": {}}))
    config = relay_config(
        [sink.url],
        KEYS,
        extra=f'offline_file = "{data}"',
        events=f'upstream = ["{sink.url}"]',
    )
    return RelayProcess(data_dir=tmp_path / "relay", config=config)


def _post(relay: RelayProcess, path: str, body: bytes, **headers: str) -> httpx.Response:
    return httpx.post(f"{relay.url}{path}", content=body, headers=headers, timeout=10)


def test_events_sent_while_upstream_is_down_arrive_exactly_once(tmp_path: Path) -> None:
    sink = EventSink()
    relay = _offline_relay(tmp_path, sink)
    relay.start()
    try:
        events = [
            json.dumps([{"kind": "custom", "key": f"e{i}", "creationDate": i}]) for i in range(3)
        ]
        sent = {}
        for i, body in enumerate(events):
            payload_id = f"payload-{i}"
            response = _post(
                relay,
                "/bulk",
                body.encode(),
                Authorization=KEYS.sdk_key,
                **{"X-LaunchDarkly-Payload-ID": payload_id, "Content-Type": "application/json"},
            )
            assert response.status_code == 202, response.text
            sent[payload_id] = ("/bulk", body)
        # an SDK retrying a payload whose answer it lost: the same id again
        retry = _post(
            relay,
            "/bulk",
            events[0].encode(),
            Authorization=KEYS.sdk_key,
            **{"X-LaunchDarkly-Payload-ID": "payload-0"},
        )
        assert retry.status_code == 202
        mobile = gzip.compress(b'[{"kind":"identify","creationDate":1}]')
        response = _post(
            relay,
            "/mobile/events/bulk",
            mobile,
            Authorization=KEYS.mobile_key,
            **{"X-LaunchDarkly-Payload-ID": "payload-mobile", "Content-Encoding": "gzip"},
        )
        assert response.status_code == 202
        browser = _post(
            relay,
            f"/events/bulk/{KEYS.client_side_id}",
            b'[{"kind":"custom","key":"click","creationDate":2}]',
            **{"X-LaunchDarkly-Payload-ID": "payload-browser"},
        )
        assert browser.status_code == 202
        unknown = _post(relay, "/bulk", b"[]", Authorization="sdk-nobody")
        assert unknown.status_code == 401
        # not an array of events: refused by the relay itself, nothing spooled
        bad = _post(relay, "/bulk", b'{"kind":"custom"}', Authorization=KEYS.sdk_key)
        assert bad.status_code == 400
        assert "array" in bad.json()["message"]
        # the same checks and answers as flagstaff serve's endpoints (ingest/body.py, asgi.py)
        assert bad.headers["content-type"] == "application/problem+json"
        assert bad.json()["path"] == ""
        kindless = _post(relay, "/bulk", b'[{"key":"x"}]', Authorization=KEYS.sdk_key)
        assert (kindless.status_code, kindless.json()["path"]) == (400, "/0")
        truncated = _post(
            relay,
            "/bulk",
            gzip.compress(b'[{"kind":"custom"}]')[:-6],
            Authorization=KEYS.sdk_key,
            **{"Content-Encoding": "gzip"},
        )
        assert truncated.status_code == 400
        assert "truncated" in truncated.json()["message"]
        preflight = httpx.options(
            f"{relay.url}/events/bulk/{KEYS.client_side_id}",
            headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
        )
        assert preflight.status_code == 200
        assert "Date" in preflight.headers["access-control-expose-headers"]
        assert relay.status()["events"]["spooled"] == 6

        sdk = sdk_client(relay.url, KEYS.sdk_key, send_events=True)
        try:
            sdk.track("purchase", Context.create("buyer"))
            sdk.flush()
            wait_until(
                lambda: relay.status()["events"]["spooled"] == 7,
                timeout=CATCH_UP_SECONDS,
                what="the SDK's payload",
            )
        finally:
            sdk.close()
        status = relay.status()["events"]
        assert status["upstreamConnected"] is False
        assert status["forwarded"] == 0

        relay.stop()  # the spool must survive a restart
        relay.start()
        assert relay.status()["events"]["spooled"] == 7
        sink.start()
        try:
            wait_until(
                lambda: relay.status()["events"]["spooled"] == 0,
                timeout=CATCH_UP_SECONDS,
                what="forwarding",
            )
            processed = sink.processed
            assert set(processed) >= {*sent, "payload-mobile", "payload-browser"}
            assert len(processed) == 6  # five given ids plus the SDK's own payload
            for payload_id, (path, body) in sent.items():
                assert processed[payload_id][0] == path
                assert processed[payload_id][1] == KEYS.sdk_key
                assert json.loads(processed[payload_id][2]) == json.loads(body)
            assert processed["payload-mobile"][:2] == ("/mobile/events/bulk", KEYS.mobile_key)
            assert json.loads(processed["payload-mobile"][2]) == [
                {"kind": "identify", "creationDate": 1}
            ]
            assert processed["payload-browser"][0] == f"/events/bulk/{KEYS.client_side_id}"
            sdk_payloads = [
                json.loads(body)
                for payload_id, (_path, _auth, body) in processed.items()
                if payload_id not in {*sent, "payload-mobile", "payload-browser"}
            ]
            assert [event["key"] for event in sdk_payloads[0] if event["kind"] == "custom"] == [
                "purchase"
            ]
            # the retried payload reached upstream twice, under one id: processed once
            assert [pid for _path, pid, _body in sink.received].count("payload-0") == 2
            assert relay.status()["events"]["rejected"] == 0
        finally:
            sink.stop()
    finally:
        relay.stop()


def test_events_reach_flagstaffs_ingestion_once_after_it_returns(tmp_path: Path) -> None:
    upstream = Upstream(data_dir=tmp_path / "upstream")
    with running(upstream):
        with admin_client(upstream) as api:
            keys = create_project(api)
        relay = RelayProcess(data_dir=tmp_path / "relay", config=relay_config([upstream.url], keys))
        with running(relay):
            wait_until(
                lambda: relay.status()["environments"]["production"]["serving"],
                timeout=CATCH_UP_SECONDS,
                what="the relay's first data",
            )
            upstream.kill()
            ids = ["ingest-0", "ingest-1", "ingest-2", "ingest-0"]  # the last one is a retry
            for number, payload_id in enumerate(ids):
                body = json.dumps([{"kind": "custom", "key": f"k{number}", "creationDate": 1}])
                response = _post(
                    relay,
                    "/bulk",
                    body.encode(),
                    Authorization=keys.sdk_key,
                    **{"X-LaunchDarkly-Payload-ID": payload_id},
                )
                assert response.status_code == 202
            assert relay.status()["events"]["spooled"] == 4

            upstream.start()
            wait_until(
                lambda: relay.status()["events"]["spooled"] == 0,
                timeout=CATCH_UP_SECONDS,
                what="forwarding",
            )
            ingest = upstream.status()["parts"]["ingest"]
            assert (ingest["accepted"], ingest["duplicates"]) == (3, 1)
            wait_until(
                lambda: upstream.status()["parts"]["ingest"].get("processed") == 3,
                timeout=CATCH_UP_SECONDS,
                what="processing",
            )
