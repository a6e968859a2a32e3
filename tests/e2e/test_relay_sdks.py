"""Official SDKs through relays: Flagstaff (`flagstaff serve`) → relay A → relay B, as real
processes. The LaunchDarkly Python SDK 9.18.4 streaming and polling (`stream=False`) and the Node
server SDK on relay B see changes made through Flagstaff's management API two hops away; the
mobile evaluation and OFREP endpoints answer on the relay too; `/status` and `/metrics` show the
chain's state."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import httpx
import pytest
from flagstaff_core import decode_flag
from ldclient import Context

sys.path.insert(0, str(Path(__file__).parent.parent / "integration" / "relay"))

from node_sdk import start_node_sdk, stop_node_sdk
from relay_support import CATCH_UP_SECONDS, RelayProcess, Upstream, admin_client, relay_config
from support.deadlines import wait_until
from support.management import (
    create_flag,
    create_project,
    delete_flag,
    sdk_client,
    served_flags,
    switch,
)
from support.processes import running

pytestmark = [pytest.mark.slow]

USER = Context.create("user-1")


def test_official_sdks_follow_changes_through_two_relays(tmp_path: Path, node: str) -> None:
    upstream = Upstream(data_dir=tmp_path / "upstream")
    with running(upstream), admin_client(upstream) as api:
        keys = create_project(api)
        create_flag(api, "banner")
        create_flag(api, "doomed")
        edge = RelayProcess(data_dir=tmp_path / "edge", config=relay_config([upstream.url], keys))
        with running(edge):
            # relay B's upstream list names a dead region first: it fails over to relay A
            inner = RelayProcess(
                data_dir=tmp_path / "inner",
                config=relay_config(["http://127.0.0.1:9", edge.url], keys),
            )
            with running(inner):
                streaming = sdk_client(inner.url, keys.sdk_key)
                node_sdk = start_node_sdk(node, inner.url, keys.sdk_key, "stream")
                try:
                    assert streaming.is_initialized()
                    assert node_sdk.next("ready")["initialized"] is True
                    assert streaming.variation("banner", USER, "x") == "off"
                    assert node_sdk.evaluate("banner")["banner"] == "off"

                    switch(api, "banner", on=True)
                    wait_until(
                        lambda: streaming.variation("banner", USER, "x") == "on",
                        timeout=CATCH_UP_SECONDS,
                        what="py",
                    )
                    node_sdk.wait_for("banner", "on")
                    delete_flag(api, "doomed")
                    wait_until(
                        lambda: streaming.variation("doomed", USER, "x") == "x",
                        timeout=CATCH_UP_SECONDS,
                        what="del",
                    )
                    node_sdk.wait_for("doomed", "default")

                    polling = sdk_client(inner.url, keys.sdk_key, stream=False)
                    try:
                        assert polling.is_initialized()
                        assert polling.variation("banner", USER, "x") == "on"
                        assert polling.variation("doomed", USER, "x") == "x"
                    finally:
                        polling.close()
                finally:
                    streaming.close()
                    stop_node_sdk(node_sdk)

                # every hop serves the flag Flagstaff made (the relay re-encodes what it decoded:
                # the same flag, with every optional field written out)
                relayed = served_flags(inner.url, keys.sdk_key)["banner"]
                assert decode_flag(relayed) == decode_flag(
                    served_flags(upstream.url, keys.sdk_key)["banner"]
                )
                _client_side_endpoints_answer(inner.url, keys.mobile_key, keys.sdk_key)
                _fdv2_poll_resumes(inner.url, keys.sdk_key)

                status = inner.status()
                assert status["status"] == "healthy"
                production = status["environments"]["production"]
                assert production["connectionStatus"]["state"] == "VALID"
                assert production["upstream"] == edge.url
                assert production["dataAgeSeconds"] == 0.0
                metrics = httpx.get(f"{inner.url}/metrics", timeout=10).text
                assert (
                    'flagstaff_relay_connection_state{environment="production",state="VALID"} 1'
                    in metrics
                )
                assert "flagstaff_delivery_open_streams" in metrics


def _client_side_endpoints_answer(url: str, mobile_key: str, sdk_key: str) -> None:
    context = base64.urlsafe_b64encode(json.dumps({"kind": "user", "key": "u"}).encode())
    mobile = httpx.get(
        f"{url}/msdk/evalx/contexts/{context.decode()}",
        headers={"Authorization": mobile_key},
        timeout=10,
    )
    assert mobile.status_code == 200, mobile.text
    assert mobile.json()["banner"]["value"] == "on"
    ofrep = httpx.post(
        f"{url}/ofrep/v1/evaluate/flags/banner",
        json={"context": {"targetingKey": "u"}},
        headers={"Authorization": f"Bearer {sdk_key}"},
        timeout=10,
    )
    assert ofrep.status_code == 200, ofrep.text
    assert ofrep.json()["value"] == "on"


def _fdv2_poll_resumes(url: str, sdk_key: str) -> None:
    """An FDv2 client that polls again with the selector it holds gets intent `none`."""
    headers = {"Authorization": sdk_key}
    full = httpx.get(f"{url}/sdk/poll", headers=headers, timeout=10).json()["events"]
    assert full[0]["data"]["payloads"][0]["intentCode"] == "xfer-full"
    assert full[-1]["event"] == "payload-transferred"
    state = full[-1]["data"]["state"]
    again = httpx.get(f"{url}/sdk/poll", params={"basis": state}, headers=headers, timeout=10)
    assert again.json()["events"][0]["data"]["payloads"][0]["intentCode"] == "none"
