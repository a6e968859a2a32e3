"""Hostile evaluation requests against `flagstaff serve` as a real process, over real sockets: with
only the public client-side id, a `(a+)+$` rule against a long attribute (evalx GET and REPORT,
OFREP) and oversized contexts run in a loop while `/status` keeps answering and a server-side
SDK's `/all` stream still gets each flag change, every answer within a generous 2 s bound (an
8 MB request line too: uvicorn alone would gather it for seconds).

Issue 13 item 1: on Python's backtracking `re` one such request held the whole process.
"""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import httpx
import pytest
from client_server import sse_events
from support.deadlines import wait_until
from support.management import (
    Keys,
    admin_client,
    create_flag,
    create_project,
    ok,
    served_flags,
    switch,
)
from support.processes import ServeProcess, running

pytestmark = pytest.mark.slow

ADMIN = "hostile-evaluation-admin-token-0123"
PROMPT = 2.0
"""Seconds within which `/status` and the SDK stream must answer while the attack runs."""
ATTACK_SECONDS = 6.0
EVIL = "(a+)+$"
EVIL_VALUE = "a" * 40 + "!"
"""~2^40 backtracking steps for Python's `re`: the process would not answer again."""


def b64(obj: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def regex_flag(api: httpx.Client) -> None:
    """`regex`, visible to browsers, on, with one rule: `email` matches `(a+)+$`."""
    body = {
        "key": "regex",
        "name": "regex",
        "variations": [{"value": "plain"}, {"value": "matched"}],
        "clientSideAvailability": {"usingEnvironmentId": True, "usingMobileKey": True},
    }
    ok(api.post("/api/v2/flags/shop", json=body))
    rule = {"clauses": [{"attribute": "email", "op": "matches", "values": [EVIL]}], "variation": 1}
    env = "/environments/production"
    operations = [
        {"op": "replace", "path": f"{env}/on", "value": True},
        {"op": "replace", "path": f"{env}/fallthrough", "value": {"variation": 0}},
        {"op": "add", "path": f"{env}/rules/-", "value": rule},
    ]
    ok(api.patch("/api/v2/flags/shop/regex", json=operations))


def attacks(url: str, keys: Keys) -> list[Callable[[httpx.Client], tuple[str, int, set[int]]]]:
    """Requests a browser's credential is enough for, each with the statuses it must get."""
    env = keys.client_side_id
    evil = {"kind": "user", "key": "attacker", "email": EVIL_VALUE}
    json_type = {"Content-Type": "application/json"}
    ofrep = {"Authorization": env, **json_type}

    def evalx(client: httpx.Client) -> tuple[str, int, set[int]]:
        context = {**evil, "key": f"attacker-{time.monotonic_ns()}"}  # never from the cache
        answer = client.get(f"{url}/sdk/evalx/{env}/contexts/{b64(context)}")
        assert answer.status_code != 200 or answer.json()["regex"]["value"] == "plain"
        return "evalx GET", answer.status_code, {200, 503}

    def report(client: httpx.Client) -> tuple[str, int, set[int]]:
        body = json.dumps({**evil, "key": f"attacker-{time.monotonic_ns()}"})
        answer = client.request(
            "REPORT", f"{url}/sdk/evalx/{env}/context", content=body, headers=json_type
        )
        return "evalx REPORT", answer.status_code, {200, 503}

    def ofrep_flag(client: httpx.Client) -> tuple[str, int, set[int]]:
        body = {"context": {"targetingKey": f"a-{time.monotonic_ns()}", "email": EVIL_VALUE}}
        answer = client.post(f"{url}/ofrep/v1/evaluate/flags/regex", json=body, headers=ofrep)
        return "OFREP flag", answer.status_code, {200, 429}

    def huge_path(client: httpx.Client) -> tuple[str, int, set[int]]:
        context = {"kind": "user", "key": "k", "email": "a" * 40_000}
        answer = client.get(f"{url}/sdk/evalx/{env}/contexts/{b64(context)}")
        return "40 kB context in the path", answer.status_code, {414}

    def huge_body(client: httpx.Client) -> tuple[str, int, set[int]]:
        body = json.dumps({"kind": "user", "key": "k", "tags": ["a" * 100] * 50_000})
        answer = client.request(
            "REPORT", f"{url}/sdk/evalx/{env}/context", content=body, headers=json_type
        )
        return "5 MB REPORT body", answer.status_code, {413}

    def many_items(client: httpx.Client) -> tuple[str, int, set[int]]:
        context = {"kind": "user", "key": "k", "email": ["a"] * 5_000}  # 25 kB of JSON
        answer = client.get(f"{url}/sdk/evalx/{env}/contexts/{b64(context)}")
        return "array of 5,000 items", answer.status_code, {400}

    def deep(client: httpx.Client) -> tuple[str, int, set[int]]:
        nested: Any = 1
        for _ in range(500):
            nested = [nested]
        body = {"context": {"targetingKey": "k", "n": nested}}
        answer = client.post(f"{url}/ofrep/v1/evaluate/flags", json=body, headers=ofrep)
        return "OFREP context nested 500 deep", answer.status_code, {400}

    def request_line(client: httpx.Client) -> tuple[str, int, set[int]]:
        # past what httpx sends: 8 MB of URL on a raw socket. The node answers 414 and closes
        # once 64 KiB are in, so the rest of the send may meet a reset instead (status 0).
        host, port = url.removeprefix("http://").split(":")
        status = 0
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            try:
                raw.sendall(b"GET /sdk/evalx/" + env.encode() + b"/contexts/" + b"a" * 8_000_000)
                raw.sendall(b" HTTP/1.1\r\nHost: x\r\n\r\n")
                status = int(raw.recv(64).split(b" ")[1])
            except (ConnectionResetError, BrokenPipeError):
                pass
        return "8 MB request line", status, {414, 0}

    return [evalx, report, ofrep_flag, huge_path, huge_body, many_items, deep, request_line]


@pytest.fixture
def server(tmp_path: Any) -> Iterator[ServeProcess]:
    process = ServeProcess(data_dir=tmp_path, admin_token=ADMIN)
    with running(process):
        yield process


def test_hostile_evaluation_requests_leave_status_and_sdk_streams_answering(
    server: ServeProcess, request: pytest.FixtureRequest
) -> None:
    url = server.url
    api = admin_client(url, ADMIN)
    request.addfinalizer(api.close)
    keys = create_project(api)
    regex_flag(api)
    create_flag(api, "watched")
    wait_until(lambda: {"regex", "watched"} <= set(served_flags(url, keys.sdk_key)), timeout=30)

    events: list[tuple[float, str, Any]] = []
    stop = threading.Event()
    failures: list[str] = []
    answered: list[str] = []
    sdk = httpx.Client(
        headers={"Authorization": keys.sdk_key}, timeout=httpx.Timeout(10, read=None)
    )

    def watch() -> None:
        try:
            with sdk.stream("GET", f"{url}/all") as stream:
                for name, data in sse_events(stream.iter_lines()):
                    events.append((time.monotonic(), name, json.loads(data)))
        except httpx.HTTPError:
            pass  # closed at the end of the test

    def attack(run: Callable[[httpx.Client], tuple[str, int, set[int]]]) -> None:
        with httpx.Client(timeout=30) as client:
            while not stop.is_set():
                try:
                    what, status, expected = run(client)
                except Exception as exc:  # reported as the failure it is, not lost in a thread
                    failures.append(f"{run.__name__}: {exc!r}")
                    return
                if status not in expected:
                    failures.append(f"{what}: {status}, expected one of {sorted(expected)}")
                    return
                answered.append(what)

    def patched(key: str, on: bool, since: float) -> bool:
        return any(
            at >= since
            and name == "patch"
            and data["data"]["key"] == key
            and data["data"]["on"] is on
            for at, name, data in events
        )

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    wait_until(lambda: any(name == "put" for _, name, _ in events), timeout=10, what="the put")
    attackers = [
        threading.Thread(target=attack, args=(run,), daemon=True) for run in attacks(url, keys)
    ]
    for thread in attackers:
        thread.start()
    try:
        deadline = time.monotonic() + ATTACK_SECONDS
        on = True
        with httpx.Client(timeout=PROMPT) as probe:
            while time.monotonic() < deadline:
                started = time.monotonic()
                try:
                    assert probe.get(f"{url}/status").status_code == 200
                except httpx.TimeoutException:
                    pytest.fail(f"/status did not answer within {PROMPT} s during the attack")
                changed = time.monotonic()
                switch(api, "watched", on=on)
                wait_until(
                    partial(patched, "watched", on, changed),
                    timeout=PROMPT,
                    what="the SDK stream's patch for the change, during the attack",
                    state=lambda: [name for _, name, _ in events],
                )
                assert time.monotonic() - started < 3 * PROMPT
                on = not on
    finally:
        stop.set()
        for thread in attackers:
            thread.join(timeout=40)
        sdk.close()
        watcher.join(timeout=10)
    assert not failures, failures
    # every kind of hostile request was answered, several times over
    assert set(answered) == {
        "evalx GET",
        "evalx REPORT",
        "OFREP flag",
        "40 kB context in the path",
        "5 MB REPORT body",
        "array of 5,000 items",
        "OFREP context nested 500 deep",
        "8 MB request line",
    }
