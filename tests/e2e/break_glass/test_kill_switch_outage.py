"""The break-glass kill switch with real processes and the control plane gone: `flagstaff serve
--role api` and `--role delivery` on a private PostgreSQL and a private Redis feed, a
`flagstaff relay` in front of the delivery node. With the API, the database and Redis all
stopped, `flagstaff killswitch sign` + `push` turns a flag off, through both, for the official
LaunchDarkly Python server SDK (streaming), LaunchDarkly's browser SDK
(`@launchdarkly/js-client-sdk`, streaming, in headless Chromium: one browser, a page per
target) and OpenFeature's Python SDK with its OFREP provider, each connected before the outage;
tampered, expired and replayed documents are refused; a restart of the node with nothing else
up still serves it off (a fresh browser page starts from it); once the database and the API are
back the audit log has the override."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from break_glass_support import Operator, now_ms
from ldclient import Context
from openfeature import api as openfeature_api
from openfeature.contrib.provider.ofrep import OFREPProvider
from openfeature.evaluation_context import EvaluationContext
from support.deadlines import wait_until
from support.management import Keys, admin_client, ok, sdk_client, switch
from support.management import create_project as create_project_keys
from support.private_postgres import private_postgres
from support.private_redis import private_redis
from support.processes import FlagstaffProcess, ServeProcess, flagstaff_command, running

pytestmark = [pytest.mark.service, pytest.mark.slow]

FLAG = "kill-me"
USER = Context.create("user-1")
SETTLE = 30.0
ADMIN = "break-glass-admin-token-0123456789"


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


def open_page(browser: Any, page_origin: str, url: str, keys: Keys) -> Any:
    """A fresh browser context (its own localStorage, where the SDK caches flags) with
    tests/e2e/browser/pages/ld.html streaming `FLAG` from `url`; the page, started."""
    from playwright.sync_api import expect

    context = browser.new_context()
    page = context.new_page()
    query = {"api": url, "env": keys.client_side_id, "streaming": "1", "flag": FLAG}
    page.goto(f"{page_origin}/pages/ld.html?" + str(httpx.QueryParams(query)))
    expect(page.locator("#status")).to_have_text("complete", timeout=SETTLE * 1000)
    return page


def shows(page: Any, value: str) -> None:
    """The page's flag value becomes `value` (the DOM polled until the deadline)."""
    from playwright.sync_api import expect

    expect(page.locator("#flag")).to_have_text(json.dumps(value), timeout=SETTLE * 1000)


class Ofrep:
    """OpenFeature's Python SDK with the OFREP provider on `url` (a domain of its own)."""

    def __init__(self, url: str, keys: Keys) -> None:
        self.domain = f"break-glass-{url}"
        provider = OFREPProvider(
            url, headers_factory=lambda: {"Authorization": f"Bearer {keys.sdk_key}"}
        )
        openfeature_api.set_provider(provider, domain=self.domain)
        self.client = openfeature_api.get_client(self.domain)

    def value(self) -> str:
        details = self.client.get_string_details(
            FLAG, "default", EvaluationContext(targeting_key="user-1")
        )
        assert details.error_code is None, details.error_message
        return details.value


def test_a_pushed_override_kills_a_flag_with_api_database_and_feed_stopped(
    tmp_path: Path, browser: Any, page_origin: str
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
                urls = (delivery.url, relay.url)
                sdks = [sdk_client(url, keys.sdk_key) for url in urls]
                pages: list[Any] = []
                try:
                    for sdk in sdks:
                        wait_until(
                            lambda sdk=sdk: sdk.variation(FLAG, USER, "x") == "on",  # type: ignore[misc]
                            timeout=SETTLE,
                            what="the SDKs to see the flag on",
                        )
                    pages = [open_page(browser, page_origin, url, keys) for url in urls]
                    for page in pages:
                        shows(page, "on")
                    ofreps = [Ofrep(url, keys) for url in urls]
                    assert [ofrep.value() for ofrep in ofreps] == ["on", "on"]

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
                    assert [ofrep.value() for ofrep in ofreps] == ["on", "on"]  # none applied
                    push = ("push", "--to", delivery.url, "--to", relay.url, str(signed))
                    result = killswitch(*push)
                    assert result.returncode == 0, result.stdout + result.stderr
                    assert result.stdout.count("accepted") == 2

                    for sdk in sdks:
                        wait_until(
                            lambda sdk=sdk: sdk.variation(FLAG, USER, "x") == "off",  # type: ignore[misc]
                            timeout=SETTLE,
                            what="the streaming SDKs to see the flag off",
                        )
                    for page in pages:  # over the streams they opened before the outage
                        shows(page, "off")
                    assert [ofrep.value() for ofrep in ofreps] == ["off", "off"]

                    # replayed, tampered and expired documents are refused, nothing changes
                    again = killswitch(*push)
                    assert again.returncode == 1
                    assert again.stderr.count("refused 409") == 2, again.stderr
                    for name, (code, pointer) in refused_first.items():
                        assert code == (403 if name == "tampered" else 400), name
                        assert pointer == ("/signature" if name == "tampered" else "/expiresAt")
                    assert sdks[0].variation(FLAG, USER, "x") == "off"
                    listed = httpx.get(f"{delivery.url}/break-glass/overrides", timeout=10).json()
                    assert [item["flag"] for item in listed["items"]] == [FLAG]
                    assert listed["auditWaiting"] == 1  # the database is down
                finally:
                    openfeature_api.clear_providers()
                    for page in pages:
                        page.context.close()
                    for sdk in sdks:
                        sdk.close()

            # a restart of the node, with nothing else up, still serves the flag off
            delivery.stop()
            delivery.start()
            restarted_sdk = sdk_client(delivery.url, keys.sdk_key)
            try:
                assert restarted_sdk.is_initialized()
                assert restarted_sdk.variation(FLAG, USER, "x") == "off"
            finally:
                restarted_sdk.close()
            page = open_page(browser, page_origin, delivery.url, keys)
            try:
                shows(page, "off")
            finally:
                page.context.close()

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
