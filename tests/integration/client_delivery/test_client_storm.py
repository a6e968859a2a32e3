"""Client-side admission control over real sockets against the whole server: a storm of polls and
stream opens for new contexts beyond the evaluation budget gets 503 + Retry-After, a known context
is still answered (200 from the cache, 304), client streams stop at their own cap while server-side
SDKs still get streams, and /metrics counts all of it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from client_server import Deployment, b64, next_event, running_server, sse_events

STREAM_CAP = 3
RETRY_BASE = 5  # the default Retry-After base: shed answers say 5 to 10 seconds
STORM_POLLS = 40
STORM_STREAMS = 5
PAGE = "http://page.example"


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    # One fresh evaluation allowed (the burst), then one per 1,000 s: nothing refills during
    # the test, so every count below is exact.
    with running_server(
        tmp_path, max_client_streams=STREAM_CAP, client_evaluations_per_second=0.001
    ) as deployment:
        yield deployment


def user(n: int) -> dict[str, str]:
    return {"kind": "user", "key": f"storm-{n}"}


async def storm(deployment: Deployment) -> list[httpx.Response]:
    env_id = deployment.client_side_id
    headers = {"Origin": PAGE}
    async with httpx.AsyncClient(base_url=deployment.url, timeout=10, headers=headers) as client:
        polls = [
            client.get(f"/sdk/evalx/{env_id}/contexts/{b64(user(n))}")
            for n in range(1, STORM_POLLS + 1)
        ]
        # a shed stream open is a plain 503 response, so a GET reads it whole
        opens = [
            client.get(f"/eval/{env_id}/{b64(user(n))}")
            for n in range(STORM_POLLS + 1, STORM_POLLS + STORM_STREAMS + 1)
        ]
        return list(await asyncio.gather(*polls, *opens))


def metric(metrics: str, name: str) -> float:
    for line in metrics.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not in /metrics")


def test_a_storm_of_new_contexts_is_shed_while_known_ones_are_served(
    deployment: Deployment,
) -> None:
    env_id = deployment.client_side_id
    known = f"/sdk/evalx/{env_id}/contexts/{b64(user(0))}"
    with httpx.Client(base_url=deployment.url, timeout=10) as http:
        first = http.get(known)
        assert first.status_code == 200

        answers = asyncio.run(storm(deployment))
        assert [a.status_code for a in answers] == [503] * (STORM_POLLS + STORM_STREAMS)
        for answer in answers:
            assert RETRY_BASE <= int(answer.headers["retry-after"]) <= 2 * RETRY_BASE
            # a page's script can read the shed answer (and its Retry-After)
            assert answer.headers["access-control-allow-origin"] == PAGE
            assert "retry-after" in answer.headers["access-control-expose-headers"].lower()
        assert len({a.headers["retry-after"] for a in answers}) > 1, "Retry-After is jittered"

        again = http.get(known)
        assert (again.status_code, again.json()) == (200, first.json())
        assert http.get(known, headers={"If-None-Match": first.headers["etag"]}).status_code == 304

        with contextlib.ExitStack() as held:
            readers = []  # a dropped line iterator closes its stream, so each is kept
            for _ in range(STREAM_CAP):
                stream = held.enter_context(http.stream("GET", f"/eval/{env_id}/{b64(user(0))}"))
                assert stream.status_code == 200
                lines = stream.iter_lines()
                readers.append(lines)
                assert next(lines).startswith("retry: ")
                _, put = next_event(sse_events(lines), "put")
                assert put == first.json()
            over = http.get(f"/ping/{env_id}")
            assert over.status_code == 503
            assert RETRY_BASE <= int(over.headers["retry-after"]) <= 2 * RETRY_BASE
            # server-side SDKs are not crowded out by browsers
            auth = {"Authorization": deployment.sdk_key}
            with http.stream("GET", "/all", headers=auth) as server_stream:
                assert server_stream.status_code == 200

            metrics = http.get("/metrics").text
            prefix = "flagstaff_delivery_client_"
            assert metric(metrics, prefix + 'open_streams{kind="eval"}') == STREAM_CAP
            assert metric(metrics, prefix + 'streams_opened_total{kind="eval"}') == STREAM_CAP
            shed = STORM_POLLS + STORM_STREAMS
            assert metric(metrics, prefix + 'sheds_total{reason="evaluation_rate"}') == shed
            assert metric(metrics, prefix + 'sheds_total{reason="client_stream_cap"}') == 1
            assert metric(metrics, prefix + 'answers_total{outcome="evaluated"}') == 1
            assert metric(metrics, prefix + 'answers_total{outcome="cached"}') == 1 + STREAM_CAP
            assert metric(metrics, prefix + 'answers_total{outcome="not_modified"}') == 1
