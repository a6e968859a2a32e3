"""The break-glass kill switch with real processes and the control plane gone: `flagstaff serve
--role api` and `--role delivery` on a private PostgreSQL and a private Redis feed, a
`flagstaff relay` in front of the delivery node. With the API, the database and Redis all
stopped, `flagstaff killswitch sign` + `push` turns a flag off for the official LaunchDarkly
Python SDK (streaming, on the node and on the relay), a client-side client (evalx polls and an
`/eval` stream over HTTP) and an OpenFeature OFREP client, through both; tampered, expired and
replayed documents are refused; a restart of the node with nothing else up still serves it off;
once the database and the API are back the audit log has the override."""

from __future__ import annotations

import base64
import json
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from break_glass_support import Operator, now_ms
from flagstaff_server.regions.postgres_cluster import (
    ClusterError,
    PostgresBinaries,
    PostgresCluster,
    PostgresInstance,
    run_as_user,
)
from ldclient import Context
from openfeature import api as openfeature_api
from openfeature.contrib.provider.ofrep import OFREPProvider
from openfeature.evaluation_context import EvaluationContext
from support.deadlines import wait_until
from support.management import Keys, admin_client, ok, sdk_client, switch
from support.management import create_project as create_project_keys
from support.prerequisites import missing_prerequisite
from support.private_redis import private_redis
from support.processes import FlagstaffProcess, ServeProcess, flagstaff_command, running

pytestmark = [pytest.mark.service, pytest.mark.slow]

FLAG = "kill-me"
USER = Context.create("user-1")
CONTEXT = {"kind": "user", "key": "user-1"}
SETTLE = 30.0
ADMIN = "break-glass-admin-token-0123456789"


@contextmanager
def private_postgres() -> Iterator[PostgresInstance]:
    """A PostgreSQL server of this test's own (the product's cluster harness), to stop."""
    try:
        binaries = PostgresBinaries.find()
        run_as_user()
    except ClusterError as exc:
        missing_prerequisite(str(exc))
        raise
    with PostgresCluster(binaries=binaries) as cluster:
        yield cluster.start_primary()


@dataclass(kw_only=True)
class RelayProcess(FlagstaffProcess):
    """`flagstaff relay` in front of `upstream` for the shop/production environment."""

    name: str = "relay"
    upstream: str = ""
    keys: Keys | None = None

    def arguments(self) -> list[str]:
        assert self.keys is not None
        config = self.data_dir / "relay.toml"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        config.write_text(
            f"""
[relay]
upstream = ["{self.upstream}"]
heartbeat_seconds = 5

[relay.upstream_timing]
initial_retry_delay = 0.1
max_retry_delay = 0.5

[environments.production]
project = "shop"
sdk_key = "{self.keys.sdk_key}"
mobile_key = "{self.keys.mobile_key}"
client_side_id = "{self.keys.client_side_id}"
""",
            encoding="utf-8",
        )
        return [
            *("relay", "--config", str(config), "--port", str(self.port)),
            *("--data-dir", str(self.data_dir / "state"), "--shutdown-seconds", "1"),
        ]


def killswitch(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*flagstaff_command(), "killswitch", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def create_flag(api: httpx.Client) -> None:
    body = {
        "key": FLAG,
        "name": FLAG,
        "variations": [{"value": "on"}, {"value": "off"}],
        "clientSideAvailability": {"usingEnvironmentId": True, "usingMobileKey": True},
    }
    ok(api.post("/api/v2/flags/shop", json=body))
    switch(api, FLAG, on=True)


def context_path() -> str:
    return base64.urlsafe_b64encode(orjson.dumps(CONTEXT)).decode().rstrip("=")


def evalx(url: str, keys: Keys) -> Any:
    response = httpx.get(
        f"{url}/sdk/evalx/{keys.client_side_id}/contexts/{context_path()}", timeout=10
    )
    assert response.status_code == 200, response.text
    return response.json()[FLAG]["value"]


class EvalStream:
    """A browser-protocol stream (`GET /eval/{envId}/{context}`) read in a thread: the flag's
    value after every `put` and `patch`."""

    def __init__(self, url: str, keys: Keys) -> None:
        self.url = f"{url}/eval/{keys.client_side_id}/{context_path()}"
        self.values: list[Any] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)

    def _read(self) -> None:
        timeout = httpx.Timeout(10, read=None)
        with httpx.Client(timeout=timeout) as client, client.stream("GET", self.url) as response:
            event = ""
            for line in response.iter_lines():
                if self._stop.is_set():
                    return
                if line.startswith("event:"):
                    event = line.removeprefix("event:").strip()
                elif line.startswith("data:") and event in ("put", "patch"):
                    data = json.loads(line.removeprefix("data:"))
                    if event == "put" and FLAG in data:
                        self.values.append(data[FLAG]["value"])
                    elif event == "patch" and data.get("key") == FLAG:
                        self.values.append(data["value"])

    @contextmanager
    def open(self) -> Iterator[EvalStream]:
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()


def ofrep_value(url: str, keys: Keys, domain: str) -> str:
    provider = OFREPProvider(
        url, headers_factory=lambda: {"Authorization": f"Bearer {keys.sdk_key}"}
    )
    openfeature_api.set_provider(provider, domain=domain)
    try:
        client = openfeature_api.get_client(domain)
        details = client.get_string_details(
            FLAG, "default", EvaluationContext(targeting_key="user-1")
        )
        assert details.error_code is None, details.error_message
        return details.value
    finally:
        openfeature_api.clear_providers()


def test_a_pushed_override_kills_a_flag_with_api_database_and_feed_stopped(
    tmp_path: Path,
) -> None:
    operator = Operator.create(tmp_path / "keys")  # the operator's key, as `keygen` writes it
    trust = {"FLAGSTAFF_BREAK_GLASS_KEYS": str(operator.public_path)}
    (tmp_path / "redis").mkdir()
    with private_postgres() as postgres, private_redis(tmp_path / "redis") as redis:
        backend = ["--database", postgres.url, "--redis", redis.url]
        api = ServeProcess(
            data_dir=tmp_path / "api",
            name="api",
            admin_token=ADMIN,
            args=["--role", "api", *backend],
        )
        delivery = ServeProcess(
            data_dir=tmp_path / "delivery",
            name="delivery",
            admin_token=ADMIN,
            args=["--role", "delivery", *backend],
            env=trust,
        )
        with running(api, delivery), admin_client(api.url, ADMIN) as client:
            keys = create_project_keys(client)
            create_flag(client)
            relay = RelayProcess(
                data_dir=tmp_path / "relay", upstream=delivery.url, keys=keys, env=trust
            )
            with running(relay):
                node_sdk = sdk_client(delivery.url, keys.sdk_key)
                relay_sdk = sdk_client(relay.url, keys.sdk_key)
                try:
                    for sdk in (node_sdk, relay_sdk):
                        wait_until(
                            lambda sdk=sdk: sdk.variation(FLAG, USER, "x") == "on",  # type: ignore[misc]
                            timeout=SETTLE,
                            what="the SDKs to see the flag on",
                        )
                    with (
                        EvalStream(delivery.url, keys).open() as node_stream,
                        EvalStream(relay.url, keys).open() as relay_stream,
                    ):
                        wait_until(
                            lambda: (
                                node_stream.values[-1:] == ["on"]
                                and relay_stream.values[-1:] == ["on"]
                            ),
                            timeout=SETTLE,
                            what="the eval streams' first put",
                            state=lambda: (node_stream.values, relay_stream.values),
                        )

                        # the control plane goes away: API, database, feed
                        api.stop()
                        postgres.stop()
                        redis.stop()

                        signed = tmp_path / "off.json"
                        result = killswitch(
                            "sign", "--key", str(operator.private_path), "--project", "shop",
                            "--environment", "production", "--flag", FLAG, "--off",
                            "--expires", "2h", "-o", str(signed),
                        )  # fmt: skip
                        assert result.returncode == 0, result.stderr
                        refused_first = _refusals(tmp_path, operator, signed, delivery.url)
                        result = killswitch(
                            "push", "--to", delivery.url, "--to", relay.url, str(signed)
                        )
                        assert result.returncode == 0, result.stdout + result.stderr
                        assert result.stdout.count("accepted") == 2

                        for sdk in (node_sdk, relay_sdk):
                            wait_until(
                                lambda sdk=sdk: sdk.variation(FLAG, USER, "x") == "off",  # type: ignore[misc]
                                timeout=SETTLE,
                                what="the streaming SDKs to see the flag off",
                            )
                        wait_until(
                            lambda: (
                                node_stream.values[-1] == "off" and relay_stream.values[-1] == "off"
                            ),
                            timeout=SETTLE,
                            what="the eval streams' patch",
                            state=lambda: (node_stream.values, relay_stream.values),
                        )
                    for url in (delivery.url, relay.url):
                        assert evalx(url, keys) == "off"
                        assert ofrep_value(url, keys, f"break-glass-{url}") == "off"

                    # replayed, tampered and expired documents are refused, nothing changes
                    again = killswitch("push", "--to", delivery.url, "--to", relay.url, str(signed))
                    assert again.returncode == 1
                    assert again.stderr.count("refused 409") == 2, again.stderr
                    for name, (code, pointer) in refused_first.items():
                        assert code == (403 if name == "tampered" else 400), name
                        assert pointer == ("/signature" if name == "tampered" else "/expiresAt")
                    assert node_sdk.variation(FLAG, USER, "x") == "off"
                    listed = httpx.get(f"{delivery.url}/break-glass/overrides", timeout=10).json()
                    assert [item["flag"] for item in listed["items"]] == [FLAG]
                    assert listed["auditWaiting"] == 1  # the database is down
                finally:
                    node_sdk.close()
                    relay_sdk.close()

            # a restart of the node, with nothing else up, still serves the flag off
            delivery.stop()
            delivery.start()
            restarted_sdk = sdk_client(delivery.url, keys.sdk_key)
            try:
                assert restarted_sdk.is_initialized()
                assert restarted_sdk.variation(FLAG, USER, "x") == "off"
            finally:
                restarted_sdk.close()
            assert evalx(delivery.url, keys) == "off"

            # the control plane returns: the audit log gets the override
            postgres.start()
            redis.start()
            api.start()
            document = json.loads(signed.read_text())
            spec = f"proj/shop:env/production:flag/{FLAG}"

            def audited() -> list[dict[str, Any]]:
                response = client.get("/api/v2/auditlog", params={"spec": spec})
                if response.status_code != 200:
                    return []
                items: list[dict[str, Any]] = response.json()["items"]
                return [item for item in items if item["_id"] == document["id"]]

            wait_until(lambda: bool(audited()), timeout=60, what="the override in the audit log")
            (entry,) = audited()
            assert entry["accesses"] == [{"action": "breakGlassTurnOff", "resource": spec}]
            assert entry["token"]["_id"] == f"break-glass:{operator.key_id}"
            full = ok(client.get(f"/api/v2/auditlog/{document['id']}"))
            assert full["delta"]["after"]["signature"] == document["signature"]
            assert full["titleVerb"] == "turned off (break-glass) the flag"
            wait_until(
                lambda: (
                    httpx.get(f"{delivery.url}/break-glass/overrides", timeout=10).json()[
                        "auditWaiting"
                    ]
                    == 0
                ),
                timeout=30,
                what="the node to see it recorded",
            )
            # the stored flag did not change: the override lives on the delivery plane
            flag = ok(client.get(f"/api/v2/flags/shop/{FLAG}"))
            assert flag["environments"]["production"]["on"] is True


def _refusals(
    tmp_path: Path, operator: Operator, signed: Path, url: str
) -> dict[str, tuple[int, str]]:
    """Push a tampered copy of `signed` and an expired override; status and pointer of each."""
    tampered = {**json.loads(signed.read_text()), "flag": "another-flag"}
    expired = operator.override(
        FLAG,
        project="shop",
        issued_at=now_ms() - 7_200_000,
        expires_at=now_ms() - 3_600_000,
    )
    answers = {}
    for name, document in (("tampered", tampered), ("expired", expired)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(document))
        result = killswitch("push", "--to", url, str(path))
        assert result.returncode == 1, name
        response = httpx.post(f"{url}/break-glass/overrides", content=path.read_bytes(), timeout=10)
        answers[name] = (response.status_code, response.json()["path"])
    return answers
