"""Client streams served on the connection itself (`delivery.connection` + `ClientDelivery
.open_direct`) over real sockets against the whole server: no ASGI task per stream, the same
head, CORS and events as the ASGI path, REPORT bodies (split, `Expect: 100-continue`, too large),
the client stream cap, slow-client eviction, disconnect bookkeeping and shutdown."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import pytest
from client_server import Deployment, b64, next_event, serving, sse_events
from flagstaff_server.delivery.fanout import Channel, DirectStream
from support.deadlines import wait_until

USER = {"kind": "user", "key": "direct-1"}
PAGE = "http://page.example"


def channels(deployment: Deployment) -> list[type]:
    client = deployment.flagstaff.client_delivery
    assert client is not None
    streams = [s for group in list(client.reevaluator.streams.values()) for s in list(group)]
    return [type(stream.channel) for stream in streams]


def admission_counts(deployment: Deployment) -> dict[str, int]:
    node = deployment.flagstaff.delivery
    assert node is not None
    return {
        "open_streams": node.admission.open_streams,
        "open_client_streams": node.admission.open_client_streams,
        **node.admission.counts,
    }


@pytest.mark.parametrize("direct", [True, False], ids=["on-connection", "asgi"])
def test_a_browser_stream_holds_no_asgi_task_on_the_connection(
    tmp_path: Path, direct: bool
) -> None:
    with (
        serving(tmp_path, direct=direct) as (deployment, server),
        httpx.Client(base_url=deployment.url, timeout=10) as http,
    ):
        url = f"/eval/{deployment.client_side_id}/{b64(USER)}"
        with http.stream("GET", url, headers={"Origin": PAGE}) as stream:
            assert stream.status_code == 200
            headers = stream.headers
            assert headers["content-type"] == "text/event-stream; charset=utf-8"
            assert (headers["cache-control"], headers["x-accel-buffering"]) == ("no-cache", "no")
            assert headers["transfer-encoding"] == "chunked"
            # a stream on the connection ends the connection with it; uvicorn's keeps it alive
            assert headers.get("connection") == ("close" if direct else None)
            assert headers["access-control-allow-origin"] == PAGE
            assert "Retry-After" in headers["access-control-expose-headers"]
            lines = stream.iter_lines()
            assert next(lines).startswith("retry: ")
            events = sse_events(lines)
            _, put = next_event(events, "put")
            assert put["bool-flag"]["value"] is True
            assert "server-flag" not in put
            wait_until(lambda: deployment.streams() == 1, what="the stream registered")
            tasks = len(server.server.server_state.tasks)
            if direct:
                assert channels(deployment) == [DirectStream]
                assert tasks == 0  # the stream is the connection's protocol: nothing awaits
            else:
                assert channels(deployment) == [Channel]
                assert tasks == 1
            deployment.set_fallthrough("bool-flag", 0)
            _, patch = next_event(events, "patch", "put", "delete")
            assert (patch["key"], patch["value"]) == ("bool-flag", False)
        wait_until(lambda: deployment.streams() == 0, what="the stream forgotten")
        counts = admission_counts(deployment)
        assert (counts["open_streams"], counts["open_client_streams"]) == (0, 0)
        assert counts["client_stream_eval"] == 1


def test_report_streams_wait_for_their_body_on_the_connection(tmp_path: Path) -> None:
    with serving(tmp_path) as (deployment, server):
        path = f"/eval/{deployment.client_side_id}"
        body = json.dumps(USER).encode()
        head = (
            f"REPORT {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(head)
            # the head alone: nothing is opened, only the interim answer comes back
            assert read_until(sock, b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
            assert deployment.streams() == 0
            sock.sendall(body[:5])
            sock.sendall(body[5:])
            received = read_until(sock, b"event: put")
            assert received.startswith(b"HTTP/1.1 200 OK\r\n")
            wait_until(lambda: deployment.streams() == 1, what="the REPORT stream registered")
            assert channels(deployment) == [DirectStream]
            assert len(server.server.server_state.tasks) == 0
            deployment.set_fallthrough("string-flag", 0)
            assert b'"key":"string-flag"' in read_until(sock, b"event: patch", b'"red"')
        wait_until(lambda: deployment.streams() == 0, what="the stream forgotten")


def test_requests_the_connection_cannot_answer_at_once_go_to_the_app(tmp_path: Path) -> None:
    with (
        serving(tmp_path) as (deployment, _server),
        httpx.Client(base_url=deployment.url, timeout=10) as http,
    ):
        env = deployment.client_side_id
        origin = {"Origin": PAGE}
        unknown = http.get(f"/eval/{'0' * 24}/{b64(USER)}", headers=origin)
        assert (unknown.status_code, unknown.json()["path"]) == (404, "envId")
        broken = http.get(f"/eval/{env}/not-base64!", headers=origin)
        assert (broken.status_code, broken.json()["path"]) == (400, "context")
        assert broken.headers["access-control-allow-origin"] == PAGE
        plain = http.request("REPORT", f"/eval/{env}", content=b"{}", headers={"Content-Type": "x"})
        assert plain.status_code == 415
        big = json.dumps({**USER, "padding": "x" * 70_000})
        json_type = {"Content-Type": "application/json"}
        large = http.request("REPORT", f"/eval/{env}", content=big, headers=json_type)
        assert (large.status_code, large.json()["path"]) == (413, "body")
        mobile = http.get(f"/meval/{b64(USER)}", headers={"Authorization": "mob-unknown"})
        assert mobile.status_code == 401
        assert deployment.streams() == 0
        counts = admission_counts(deployment)
        assert (counts["open_streams"], counts.get("client_stream_eval", 0)) == (0, 0)


def test_streams_beyond_the_client_cap_get_503_with_retry_after_and_cors(tmp_path: Path) -> None:
    with (
        serving(tmp_path, max_client_streams=2) as (deployment, _server),
        httpx.Client(base_url=deployment.url, timeout=10) as http,
    ):
        env = deployment.client_side_id
        mobile = {"Authorization": deployment.mobile_key}
        with (
            http.stream("GET", f"/ping/{env}") as ping,
            http.stream("GET", f"/meval/{b64(USER)}", headers=mobile) as meval,
        ):
            # the readers are kept: a dropped one closes its response
            pings, puts = sse_events(ping.iter_lines()), sse_events(meval.iter_lines())
            assert next_event(pings, "ping")[0] == "ping"
            assert next_event(puts, "put")[0] == "put"
            wait_until(lambda: deployment.streams() == 2, what="both streams open")
            refused = http.get(f"/eval/{env}/{b64(USER)}", headers={"Origin": PAGE})
            assert refused.status_code == 503
            assert refused.headers["content-type"] == "application/problem+json"
            assert 5 <= int(refused.headers["retry-after"]) <= 10
            assert refused.headers["access-control-allow-origin"] == PAGE
            assert refused.json()["status"] == 503
            assert channels(deployment) == [DirectStream, DirectStream]
            # server-side SDKs keep their own room
            with http.stream("GET", "/all", headers={"Authorization": deployment.sdk_key}) as sdk:
                assert sdk.status_code == 200
        counts = admission_counts(deployment)
        assert counts["client_stream_shed"] == 1
        assert (counts["client_stream_ping"], counts["client_stream_eval"]) == (1, 1)


def test_a_client_stream_that_stops_reading_is_evicted_and_others_keep_receiving(
    tmp_path: Path,
) -> None:
    big = {"blob": "x" * 200_000}
    with (
        serving(tmp_path) as (deployment, server),
        httpx.Client(base_url=deployment.url, timeout=10) as http,
        http.stream("GET", f"/eval/{deployment.client_side_id}/{b64(USER)}") as reader,
        socket.socket() as stuck,
    ):
        events = sse_events(reader.iter_lines())
        next_event(events, "put")
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(("127.0.0.1", server.port))
        other = b64({"kind": "user", "key": "never-reads"})
        path = f"/eval/{deployment.client_side_id}/{other}"
        stuck.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        wait_until(lambda: deployment.streams() == 2, what="both streams open")
        for n in range(1, 60):  # never read from `stuck`
            value = {**big, "n": n}
            deployment.api.patch(
                "/api/v2/flags/web/object-flag",
                json=[{"op": "replace", "path": "/variations/1/value", "value": value}],
            ).raise_for_status()
            _, patch = next_event(events, "patch", "put")
            assert (patch["key"], patch["value"]["n"]) == ("object-flag", n)
            if admission_counts(deployment).get("evicted"):
                break
        assert admission_counts(deployment)["evicted"] == 1
        wait_until(lambda: deployment.streams() == 1, what="the stuck stream dropped")
        deployment.set_fallthrough("bool-flag", 0)
        _, patch = next_event(events, "patch")
        assert patch["key"] == "bool-flag"


def test_a_server_shutdown_ends_client_streams_on_the_connection(tmp_path: Path) -> None:
    with (
        serving(tmp_path) as (deployment, server),
        httpx.Client(base_url=deployment.url, timeout=10) as http,
        http.stream("GET", f"/eval/{deployment.client_side_id}/{b64(USER)}") as stream,
    ):
        lines = stream.iter_lines()
        next_event(sse_events(lines), "put")
        server.server.should_exit = True
        list(lines)  # returns only once the server has ended the stream
        wait_until(lambda: deployment.streams() == 0, what="the ended stream forgotten")


def read_until(sock: socket.socket, *markers: bytes) -> bytes:
    """Bytes from `sock` until every marker has been seen (the socket's timeout bounds it)."""
    received = b""
    while not all(marker in received for marker in markers):
        data = sock.recv(65536)
        if not data:
            raise AssertionError(f"connection closed before {markers}: {received[-200:]!r}")
        received += data
    return received
