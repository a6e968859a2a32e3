"""Two regions with real processes: region A (PostgreSQL primary, `flagstaff serve --role api` and
`--role delivery`) and region B (a hot standby of A's database, its own API, delivery and ingest
nodes, no Redis anywhere), with the official LaunchDarkly Python SDK 9.18.4 on B's delivery node.

- a flag change made in A reaches the SDK in B through replication and B's outbox poll;
- B's API serves reads (API and UI) and answers writes with 503 and the read-only problem;
- with A's processes and A's PostgreSQL killed, B's SDKs keep evaluating (a new one starts too);
- `flagstaff dr promote` promotes B; B's API takes writes at once (no restart) and a change made
  in B reaches the SDKs in B; promoting again is a no-op;
- on the wire (FDv1 and FDv2 streams held open on B's node throughout) no flag version or feed
  position goes backwards, and the SDK connected throughout ends with the promoted primary's data.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from flagstaff_server.regions.postgres_cluster import PostgresInstance
from ldclient import Context
from regions_support import StreamRecorder, postgres_cluster
from support.deadlines import wait_until
from support.management import admin_client, create_flag, create_project, ok, sdk_client, switch
from support.processes import ServeProcess, flagstaff_command, running

pytestmark = [pytest.mark.service, pytest.mark.slow]

ADMIN = "regions-admin-token-0123456789"
USER = Context.create("user-1")
SETTLE_SECONDS = 20.0
"""How long a change may take to reach B's SDKs: replication lag plus the outbox poll (0.25 s),
far inside this on an idle machine; generous for a loaded one."""


def region_process(tmp: Path, region: str, role: str, database: str) -> ServeProcess:
    return ServeProcess(
        data_dir=tmp / f"{region}-{role}",
        name=f"{region}-{role}",
        admin_token=ADMIN,
        inherit_flagstaff_variables=False,
        env={"FLAGSTAFF_REGION": region, "FLAGSTAFF_HEARTBEAT_SECONDS": "1"},
        args=["--role", role, "--database", database],
    )


def dr(*args: str, region: str = "b") -> dict[str, Any]:
    """`flagstaff dr ... --output json`, which must succeed."""
    done = subprocess.run(
        [*flagstaff_command(), "dr", *args, "--output", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"FLAGSTAFF_REGION": region, "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    body: dict[str, Any] = json.loads(done.stdout)
    return body


def served_flag(url: str, sdk_key: str, key: str) -> dict[str, Any] | None:
    response = httpx.get(f"{url}/sdk/latest-all", headers={"Authorization": sdk_key}, timeout=10)
    if response.status_code != 200:
        return None
    flag: dict[str, Any] | None = response.json()["flags"].get(key)
    return flag


def sdk_version(sdk: Any, key: str) -> int:
    """The version of flag `key` the official SDK holds."""
    state = sdk.all_flags_state(USER).to_json_dict()
    return int(state["$flagsState"][key]["version"])


def never_backwards(versions: list[tuple[str, int]]) -> None:
    """A `put` may repeat the version held (a reconnect); a `patch` is always newer."""
    held = 0
    for event, version in versions:
        assert version >= held if event == "put" else version > held, versions
        held = version


def test_region_b_follows_a_serves_through_its_loss_and_takes_over_when_promoted(
    tmp_path: Path,
) -> None:
    with postgres_cluster() as cluster:
        a = cluster.start_primary("a")
        b = cluster.start_standby(a, "b")
        a_api = region_process(tmp_path, "a", "api", a.url)
        a_delivery = region_process(tmp_path, "a", "delivery", a.url)
        b_api = region_process(tmp_path, "b", "api", b.url)
        b_delivery = region_process(tmp_path, "b", "delivery", b.url)
        b_ingest = region_process(tmp_path, "b", "ingest", b.url)
        with running(a_api, a_delivery):
            # B's API checks its schema at start: A's migrations must have replicated
            b.wait_for_replay(a.wal_lsn())
            with running(b_api, b_delivery, b_ingest):
                # every role starts on a standby and says where it stands
                for process in (b_delivery, b_ingest):
                    region = process.status()["region"]
                    assert (region["name"], region["readOnly"]) == ("b", True), region
                region_b_follows_a_and_takes_over(a, b, a_api, a_delivery, b_api, b_delivery)


def region_b_follows_a_and_takes_over(
    a: PostgresInstance,
    b: PostgresInstance,
    a_api: ServeProcess,
    a_delivery: ServeProcess,
    b_api: ServeProcess,
    b_delivery: ServeProcess,
) -> None:
    with admin_client(a_api.url, ADMIN) as api_a, admin_client(b_api.url, ADMIN) as api_b:
        sdk_key = create_project(api_a).sdk_key
        create_flag(api_a, "banner")
        wait_until(
            lambda: served_flag(b_delivery.url, sdk_key, "banner"),
            timeout=SETTLE_SECONDS,
            what="B's delivery node to serve the flag made in A",
        )
        assert b_delivery.status()["parts"]["changeFeed"]["pollSeconds"] == 0.25
        fdv1 = StreamRecorder(b_delivery.url, sdk_key, "/all").start().wait_for_data()
        fdv2 = StreamRecorder(b_delivery.url, sdk_key, "/sdk/stream").start().wait_for_data()
        sdk = sdk_client(b_delivery.url, sdk_key)
        try:
            assert sdk.variation("banner", USER, "x") == "off"

            # a change in A reaches the SDK in B
            switch(api_a, "banner", on=True)
            wait_until(
                lambda: sdk.variation("banner", USER, "x") == "on",
                timeout=SETTLE_SECONDS,
                what="the SDK in B to see A's change",
            )

            standby_api_reads_and_refuses_writes(api_b, b_api, a_api)

            # region A is lost: its processes and its database
            a_api.kill()
            a_delivery.kill()
            a.kill()
            wait_until(
                lambda: b_api.status()["region"]["database"]["receiving"] is False,
                timeout=SETTLE_SECONDS,
                what="B's standby to notice the primary is gone",
            )
            assert sdk.variation("banner", USER, "x") == "on"
            fresh = sdk_client(b_delivery.url, sdk_key)
            try:
                assert fresh.is_initialized()
                assert fresh.variation("banner", USER, "x") == "on"
            finally:
                fresh.close()
            status = dr("status", "--database", b.url)
            assert status["database"]["role"] == "standby"
            assert status["database"]["receiving"] is False
            assert status["primaryRegion"] == "a"
            problem(switch_off(api_b, "banner"), 503)

            # promote B; its API writes with no restart
            promoted = dr("promote", "--database", b.url)
            assert promoted["promoted"] is True
            assert promoted["database"]["role"] == "primary"
            assert promoted["database"]["timeline"] == 2
            assert promoted["database"]["epoch"] == 2
            assert promoted["primaryRegion"] == "b"
            ok(switch_off(api_b, "banner"))
            wait_until(
                lambda: sdk.variation("banner", USER, "x") == "off",
                timeout=SETTLE_SECONDS,
                what="the SDK in B to see the change made in B",
            )
            region = b_api.status()["region"]
            assert (region["primaryRegion"], region["readOnly"]) == ("b", False)
            assert region["database"]["role"] == "primary"
            again = dr("promote", "--database", b.url)
            assert (again["promoted"], again["database"]["timeline"]) == (False, 2)
            assert again["database"]["epoch"] == 2  # promoting again starts no epoch

            # on the wire: nothing went backwards; the SDK ends with B's data
            stored = ok(api_b.get("/api/v2/flags/shop/banner"))
            wire = served_flag(b_delivery.url, sdk_key, "banner")
            assert wire is not None
            assert wire["on"] is False
            wait_until(
                lambda: fdv1.flag_versions("banner")[-1][1] == wire["version"],
                timeout=SETTLE_SECONDS,
                what="the FDv1 stream to send the promoted primary's version",
            )
            assert sdk_version(sdk, "banner") == wire["version"]
            assert stored["environments"]["production"]["on"] is False
        finally:
            sdk.close()
            fdv1.stop()
            fdv2.stop()
        versions = fdv1.flag_versions("banner")
        assert [event for event, _ in versions] == ["put", "patch", "patch"], versions
        never_backwards(versions)
        positions = fdv2.transferred()
        assert len(positions) >= 3, fdv2.events
        assert positions == sorted(set(positions)), positions
        assert (fdv1.connections, fdv2.connections) == (1, 1)


def switch_off(api: httpx.Client, key: str) -> httpx.Response:
    """PATCH flag `key` off in production; the answer, whatever it is."""
    patch = [{"op": "replace", "path": "/environments/production/on", "value": False}]
    return api.patch(f"/api/v2/flags/shop/{key}", json=patch)


def problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    return body


def standby_api_reads_and_refuses_writes(
    api_b: httpx.Client, b_api: ServeProcess, a_api: ServeProcess
) -> None:
    """B's API on the standby: reads 200 (API and UI), writes 503 with the read-only problem and
    Retry-After, nothing written; /status says which region holds the primary."""

    def switched_on() -> dict[str, Any] | None:
        flag: dict[str, Any] = ok(api_b.get("/api/v2/flags/shop/banner"))
        return flag if flag["environments"]["production"]["on"] else None

    flag = wait_until(switched_on, timeout=SETTLE_SECONDS, what="B's API to read A's change")
    assert [p["key"] for p in ok(api_b.get("/api/v2/projects"))["items"]] == ["shop"]
    page = api_b.get("/ui/")
    assert page.status_code == 200
    assert "text/html" in page.headers["content-type"]

    refused = switch_off(api_b, "banner")
    body = problem(refused, 503)
    assert body["code"] == "region_read_only"
    assert body["type"] == "urn:flagstaff:problem:region_read_only"
    assert body["title"] == "This region is read-only"
    assert body["detail"].startswith("region b is read-only: its database is a standby")
    assert "writes go to the primary region (a)" in body["detail"]
    assert refused.headers["retry-after"] == "30"
    created = api_b.post("/api/v2/projects", json={"key": "other", "name": "Other"})
    assert problem(created, 503)["code"] == "region_read_only"
    assert ok(api_b.get("/api/v2/flags/shop/banner"))["_version"] == flag["_version"]

    region = b_api.status()["region"]
    assert region["name"] == "b"
    assert (region["primaryRegion"], region["readOnly"]) == ("a", True)
    database = region["database"]
    assert (database["role"], database["timeline"], database["receiving"]) == ("standby", 1, True)
    assert database["upstream"].startswith("127.0.0.1:")
    primary = a_api.status()["region"]
    assert (primary["name"], primary["primaryRegion"]) == ("a", "a")
    assert [s["name"] for s in primary["database"]["standbys"]] == ["b"]
