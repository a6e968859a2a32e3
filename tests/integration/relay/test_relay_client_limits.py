"""The relay's client-side admission limits (`relay.max_client_streams`,
`relay.client_evaluations_per_second`), over real sockets against a relay serving an offline data
file under `flagstaff relay`'s HTTP protocol: beyond them browsers get 503 + `Retry-After` (with
CORS), while a cached context and server-side SDK streams are still served."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from delivery_support import flag
from flagstaff_server.delivery.connection import protocol_for
from flagstaff_server.relay.config_source import parse_config
from flagstaff_server.relay.edge import Relay
from support.deadlines import wait_until
from support.threaded_servers import ThreadedServer, serve_in_thread

SDK_KEY = "sdk-relay-client-limits"
CLIENT_SIDE_ID = "d" * 24
PAGE = "http://page.example"


def b64(context: dict[str, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(context).encode()).decode().rstrip("=")


@contextmanager
def relay_with(tmp_path: Path, environ: dict[str, str]) -> Iterator[ThreadedServer]:
    browser_flag = {
        **flag("banner"),
        "clientSideAvailability": {"usingMobileKey": True, "usingEnvironmentId": True},
    }
    data = tmp_path / "data.json"
    data.write_text(json.dumps({"flags": {"banner": browser_flag}, "segments": {}}))
    document = {
        "relay": {"data_dir": str(tmp_path / "relay")},
        "environments": {
            "production": {
                "sdk_key": SDK_KEY,
                "client_side_id": CLIENT_SIDE_ID,
                "offline_file": str(data),
            }
        },
    }
    relay = Relay(parse_config(document, environ, base=tmp_path))
    with serve_in_thread(
        relay.asgi,
        what="relay",
        http=protocol_for(lambda: relay.node),
        timeout_graceful_shutdown=1,
    ) as server:
        first = f"{server.url}/sdk/evalx/{CLIENT_SIDE_ID}/contexts/{b64({'key': 'warm-up'})}"
        wait_until(lambda: httpx.get(first).status_code == 200, what="the relay serving its file")
        yield server


def test_client_streams_and_new_contexts_beyond_the_relay_limits_get_503_retry_after(
    tmp_path: Path,
) -> None:
    # the warm-up poll takes the only fresh evaluation (the burst: 2 s of the rate, at least 1)
    environ = {
        "FLAGSTAFF_RELAY_MAX_CLIENT_STREAMS": "1",
        "FLAGSTAFF_RELAY_CLIENT_EVALUATIONS_PER_SECOND": "0.0001",
    }
    with (
        relay_with(tmp_path, environ) as server,
        httpx.Client(base_url=server.url, timeout=10, headers={"Origin": PAGE}) as http,
    ):
        warm = b64({"key": "warm-up"})
        with http.stream("GET", f"/eval/{CLIENT_SIDE_ID}/{warm}") as held:
            assert held.status_code == 200
            lines = held.iter_lines()
            assert any(line == "event: put" for line in lines)
            refused = http.get(f"/eval/{CLIENT_SIDE_ID}/{warm}")
            assert refused.status_code == 503
            assert 5 <= int(refused.headers["retry-after"]) <= 10
            assert refused.headers["access-control-allow-origin"] == PAGE
            # server-side SDKs keep their room: the client cap is within max_streams
            with http.stream("GET", "/all", headers={"Authorization": SDK_KEY}) as sdk:
                assert sdk.status_code == 200
        new = http.get(f"/sdk/evalx/{CLIENT_SIDE_ID}/contexts/{b64({'key': 'new'})}")
        assert new.status_code == 503
        assert 5 <= int(new.headers["retry-after"]) <= 10
        cached = http.get(f"/sdk/evalx/{CLIENT_SIDE_ID}/contexts/{warm}")
        assert cached.status_code == 200  # an evaluation already made costs nothing


def test_without_limits_in_the_config_the_relay_uses_serve_defaults(tmp_path: Path) -> None:
    with (
        relay_with(tmp_path, {}) as server,
        httpx.Client(base_url=server.url, timeout=10) as http,
    ):
        context = b64({"key": "warm-up"})
        with (
            http.stream("GET", f"/eval/{CLIENT_SIDE_ID}/{context}") as first,
            http.stream("GET", f"/eval/{CLIENT_SIDE_ID}/{context}") as second,
        ):
            assert (first.status_code, second.status_code) == (200, 200)
        fresh = http.get(f"/sdk/evalx/{CLIENT_SIDE_ID}/contexts/{b64({'key': 'new'})}")
        assert fresh.status_code == 200
