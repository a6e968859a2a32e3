"""The relay's parts without processes: configuration (file and environment, errors naming the
setting, the CLI's exit status), the diff from upstream data to per-item changes, and the event
forwarder against a fake upstream transport (retry on 503, set aside on 401, never dropped)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import httpx
import pytest
from delivery_support import flag, segment
from flagstaff_core import decode_data, decode_flag
from flagstaff_server.cli import main
from flagstaff_server.delivery import DeliveryConfig
from flagstaff_server.delivery.snapshot import apply_change, build_snapshot
from flagstaff_server.relay.config import EventsConfig, RelayConfig
from flagstaff_server.relay.config_source import load_config, parse_config
from flagstaff_server.relay.feed import RelayFeed
from flagstaff_server.relay.forwarder import EventForwarder
from flagstaff_server.relay.node import RelayNode
from flagstaff_server.relay.reconcile import ItemChange, changes_from_data, changes_from_json
from flagstaff_server.relay.spool import EventSpool
from flagstaff_server.settings import SettingsError

BASE = Path("/etc/relay")


def _parse(text: str, environ: dict[str, str] | None = None) -> RelayConfig:
    import tomllib

    return parse_config(tomllib.loads(text), environ or {}, base=BASE)


def test_a_config_file_with_environment_overrides() -> None:
    config = parse_config(
        {
            "relay": {"upstream": ["http://a:8030/", "http://b:8030"], "port": 9000},
            "redis": {"url": "redis://127.0.0.1:6379/0"},
            "environments": {"production": {"sdk_key": "sdk-1", "mobile_key": "mob-1"}},
        },
        {
            "FLAGSTAFF_RELAY_PORT": "9100",
            "FLAGSTAFF_RELAY_ENV_PRODUCTION_SECURE_MODE": "true",
            "FLAGSTAFF_RELAY_ENV_STAGING_SDK_KEY": "sdk-2",
            "FLAGSTAFF_RELAY_ENV_STAGING_REDIS_PREFIX": "staging",
            "FLAGSTAFF_RELAY_REDIS_PREFIX": "edge",
        },
        base=BASE,
    )
    assert config.upstream == ("http://a:8030", "http://b:8030")
    assert config.port == 9100
    production, staging = config.environments
    assert (production.name, production.sdk_key, production.secure_mode) == (
        "production",
        "sdk-1",
        True,
    )
    assert (staging.name, staging.sdk_key) == ("staging", "sdk-2")
    assert config.redis is not None
    assert [config.redis_prefix(env) for env in config.environments] == ["edge", "staging"]
    assert config.data_dir == BASE / "relay-data"


def test_the_status_page_settings_from_the_file_and_the_environment() -> None:
    text = (
        "[relay]\nupstream=['http://a']\n[status]\nregion='eu'\n"
        "peers=['http://api-a:8030/status']\n[environments.p]\nsdk_key='k'\n"
    )
    config = _parse(text)
    assert (config.region, config.status_peers, config.status_poll_seconds) == (
        "eu",
        ("http://api-a:8030/status",),
        2.0,
    )
    overridden = _parse(
        text,
        {
            "FLAGSTAFF_REGION": "us",
            "FLAGSTAFF_STATUS_PEERS": "http://x:1/status, http://y:2/status",
            "FLAGSTAFF_STATUS_POLL_SECONDS": "0.5",
        },
    )
    assert (overridden.region, overridden.status_peers, overridden.status_poll_seconds) == (
        "us",
        ("http://x:1/status", "http://y:2/status"),
        0.5,
    )


def test_client_side_admission_limits_from_the_file_and_the_environment() -> None:
    text = (
        "[relay]\nupstream=['http://a']\nmax_client_streams=40\n"
        "client_evaluations_per_second=25\n[environments.p]\nsdk_key='k'\n"
    )
    limits = _parse(text).limits
    assert (limits.max_client_streams, limits.evaluations_per_second) == (40, 25.0)
    assert limits.evaluation_burst == 50  # two seconds' worth, as `flagstaff serve` sets it
    overridden = _parse(
        text,
        {
            "FLAGSTAFF_RELAY_MAX_CLIENT_STREAMS": "7",
            "FLAGSTAFF_RELAY_CLIENT_EVALUATIONS_PER_SECOND": "0.5",
        },
    ).limits
    assert (overridden.max_client_streams, overridden.evaluations_per_second) == (7, 0.5)
    assert overridden.evaluation_burst == 1
    defaults = _parse("[relay]\nupstream=['http://a']\n[environments.p]\nsdk_key='k'\n")
    assert defaults.limits.max_client_streams == 15_000


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[relay]\nupstream=['http://a']\n", "environments"),
        (
            "[relay]\nupstream=['http://a']\nmax_client_streams=0\n[environments.p]\nsdk_key='k'\n",
            "max_client_streams",
        ),
        (
            "[relay]\nupstream=['http://a']\nclient_evaluations_per_second=0\n"
            "[environments.p]\nsdk_key='k'\n",
            "client_evaluations_per_second",
        ),
        ("[relay]\nupstream=['http://a']\n[environments.p]\nmobile_key='m'\n", "sdk_key"),
        ("[environments.p]\nsdk_key='k'\n", "upstream"),
        ("[relay]\nupstream=['ftp://a']\n[environments.p]\nsdk_key='k'\n", "upstream"),
        ("[relay]\nupstream=['http://a']\nport='x'\n[environments.p]\nsdk_key='k'\n", "port"),
        (
            "[relay]\nupstream=['http://a']\n[redis]\nurl='redis://r'\n"
            "[environments.p]\nsdk_key='k'\n[environments.q]\nsdk_key='j'\n",
            "redis_prefix",
        ),
        (
            "[relay]\nupstream=['http://a']\nprotocol='v9'\n[environments.p]\nsdk_key='k'\n",
            "protocol",
        ),
        (
            "[relay]\nupstream=['http://a', 'http://b']\nstream_upstream=['http://s']\n"
            "[environments.p]\nsdk_key='k'\n",
            "stream_upstream",
        ),
        (
            "[relay]\nupstream=['http://a']\n[relay.upstream_timing]\npoll_intervall=1\n"
            "[environments.p]\nsdk_key='k'\n",
            "poll_intervall",
        ),
        (
            "[relay]\nupstream=['http://a']\n[relay.upstream_timing]\npoll_interval=-1\n"
            "[environments.p]\nsdk_key='k'\n",
            "poll_interval",
        ),
        (
            "[relay]\nupstream=['http://a']\n[status]\npeers=['a:8030/status']\n"
            "[environments.p]\nsdk_key='k'\n",
            "status.peers",
        ),
        (
            "[relay]\nupstream=['http://a']\n[status]\nregion='EU'\n[environments.p]\nsdk_key='k'\n",
            "status.region",
        ),
        (
            "[relay]\nupstream=['http://a']\n[status]\npoll_seconds=0\n"
            "[environments.p]\nsdk_key='k'\n",
            "status.poll_seconds",
        ),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(text: str, named: str) -> None:
    with pytest.raises(SettingsError, match=named):
        _parse(text)


def test_the_cli_refuses_a_bad_config_with_exit_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [name for name in os.environ if name.startswith("FLAGSTAFF_RELAY_")]:
        monkeypatch.delenv(name)
    assert main(["relay"]) == 2
    assert "pass --config FILE" in capsys.readouterr().err
    path = tmp_path / "relay.toml"
    path.write_text("[relay\nport = 1\n")
    assert main(["relay", "--config", str(path)]) == 2
    assert "not valid TOML" in capsys.readouterr().err
    assert main(["relay", "--config", str(tmp_path / "missing.toml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_the_example_config_in_the_docs_is_valid() -> None:
    example = Path(__file__).resolve().parents[3] / "docs" / "examples" / "relay.toml"
    config = load_config(example, {})
    assert config.environments
    assert config.upstream


# the diff -----------------------------------------------------------------------------------


def test_the_diff_keeps_upstream_versions_and_orders_by_them() -> None:
    snapshot = build_snapshot(
        "p", "e", seq=1, flags={"a": flag("a", 2), "b": flag("b", 5)}, segments={}
    )
    upstream = decode_data(
        {
            "flags": {"a": flag("a", 3, on=False), "b": flag("b", 5), "c": flag("c", 1)},
            "segments": {"s": segment("s", 4)},
        }
    )
    changes = sorted(changes_from_data(snapshot, upstream), key=lambda c: (c.kind, c.key))
    assert [(c.kind, c.key, c.version) for c in changes] == [
        ("flag", "a", 3),
        ("flag", "c", 1),
        ("segment", "s", 4),
    ]
    assert decode_flag(changes[0].item or {}) == upstream.flags["a"]


def test_items_gone_from_upstream_are_deleted_above_the_held_version() -> None:
    snapshot = build_snapshot("p", "e", seq=1, flags={"a": flag("a", 7)}, segments={})
    # a put without `a`, and a poll that tombstoned it at the same version
    assert changes_from_data(snapshot, decode_data({"flags": {}, "segments": {}})) == [
        ItemChange("flag", "a", 8, None)
    ]
    tombstone = decode_data({"flags": {"a": {"key": "a", "version": 7, "deleted": True}}})
    assert changes_from_data(snapshot, tombstone) == [ItemChange("flag", "a", 8, None)]


def test_an_upstream_restored_to_older_versions_still_reaches_sdks() -> None:
    snapshot = build_snapshot("p", "e", seq=1, flags={"a": flag("a", 9)}, segments={})
    restored = decode_data({"flags": {"a": flag("a", 4, on=False)}, "segments": {}})
    [change] = changes_from_data(snapshot, restored)
    assert change.version == 10
    applied = apply_change(
        snapshot,
        seq=2,
        kind="flag",
        key="a",
        version=change.version,
        item=change.item,
        log_limit=10,
    )
    assert applied is not None
    assert applied.snapshot.decoded()["flags"]["a"]["on"] is False
    # and applying the diff again changes nothing
    assert changes_from_data(applied.snapshot, restored) == []


def test_a_data_file_edited_without_a_version_bump_is_a_change() -> None:
    snapshot = build_snapshot("p", "e", seq=1, flags={"a": flag("a", 2)}, segments={})
    assert changes_from_json(snapshot, {"a": flag("a", 2)}, {}) == []
    [change] = changes_from_json(snapshot, {"a": flag("a", 2, on=False)}, {})
    assert (change.key, change.version) == ("a", 3)
    assert change.item is not None
    assert change.item["on"] is False


# the forwarder ------------------------------------------------------------------------------


async def test_the_forwarder_retries_while_upstream_fails_and_sets_refused_payloads_aside(
    tmp_path: Path,
) -> None:
    answers = {"p-ok": [503, 503, 202], "p-refused": [401]}
    seen: list[tuple[str, str, str]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        payload_id = request.headers["x-launchdarkly-payload-id"]
        seen.append((request.url.path, payload_id, request.headers.get("authorization", "")))
        return httpx.Response(answers[payload_id].pop(0))

    spool = EventSpool(tmp_path / "events")
    await asyncio.to_thread(spool.recover)
    config = parse_config(
        {"relay": {"upstream": ["http://up"]}, "environments": {"e": {"sdk_key": "sdk-e"}}},
        {},
        base=tmp_path,
    )
    events = EventsConfig(retry_seconds=0.01, retry_max_seconds=0.02)
    forwarder = EventForwarder(
        spool,
        events,
        config.upstream,
        {"e": config.environments[0]},
        transport=httpx.MockTransport(handle),
    )
    for payload_id in ("p-ok", "p-refused"):
        await spool.append(
            route="bulk",
            environment="e",
            payload_id=payload_id,
            received_ms=0,
            headers={},
            payload=json.dumps([{"kind": "custom"}]).encode(),
        )
    task = asyncio.create_task(forwarder.run())
    try:
        for _ in range(1000):  # a poll with a 10 s deadline
            if not spool.pending:
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError(f"still spooled after 10 s: {spool.pending}")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        spool.close()
    assert seen == [
        ("/bulk", "p-ok", "sdk-e"),
        ("/bulk", "p-ok", "sdk-e"),
        ("/bulk", "p-ok", "sdk-e"),
        ("/bulk", "p-refused", "sdk-e"),
    ]
    assert forwarder.counts["forwarded"] == 1
    assert forwarder.counts["retry"] == 2
    assert spool.rejected == 1
    assert [p.name for p in (tmp_path / "events" / "rejected").iterdir()] == [
        "00000000000000000002.event"
    ]


async def test_the_forwarder_fails_over_to_the_upstream_that_answers_and_returns_after_a_probe(
    tmp_path: Path,
) -> None:
    down = {"a"}
    seen: list[tuple[str, str]] = []
    now = [1_000.0]

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.host, request.headers["x-launchdarkly-payload-id"]))
        if request.url.host in down:
            raise httpx.ConnectError("region down", request=request)
        return httpx.Response(202)

    spool = EventSpool(tmp_path / "events")
    await asyncio.to_thread(spool.recover)
    config = parse_config(
        {
            "relay": {"upstream": ["http://a", "http://b"]},
            "environments": {"e": {"sdk_key": "sdk-e"}},
        },
        {},
        base=tmp_path,
    )
    forwarder = EventForwarder(
        spool,
        EventsConfig(retry_seconds=0.01, retry_max_seconds=0.02, probe_seconds=60.0),
        config.upstream,
        {"e": config.environments[0]},
        transport=httpx.MockTransport(handle),
        monotonic=lambda: now[0],
    )

    async def forward(payload_id: str) -> None:
        await spool.append(
            route="bulk",
            environment="e",
            payload_id=payload_id,
            received_ms=0,
            headers={},
            payload=json.dumps([{"kind": "custom"}]).encode(),
        )
        for _ in range(1000):  # a poll with a 10 s deadline
            if not spool.pending:
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"still spooled after 10 s: {spool.pending}")

    task = asyncio.create_task(forwarder.run())
    try:
        await forward("during")  # a refuses: b, at once
        await forward("next")  # stays with b
        assert forwarder.current_upstream == "http://b"
        down.clear()  # region a is back
        await forward("before-the-probe")
        now[0] += 60.0
        await forward("probe")  # offered to a first: taken there
        await forward("after")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        spool.close()
    assert seen == [
        ("a", "during"),
        ("b", "during"),
        ("b", "next"),
        ("b", "before-the-probe"),
        ("a", "probe"),
        ("a", "after"),
    ]
    assert forwarder.current_upstream == "http://a"
    assert forwarder.counts["forwarded"] == 5
    assert forwarder.counts["retry"] == 0


# disk snapshots and readiness ---------------------------------------------------------------


async def _node(directory: Path) -> tuple[RelayNode, RelayFeed]:
    feed = RelayFeed()
    node = RelayNode(feed, DeliveryConfig(data_dir=directory))
    await node.start()
    feed.start_at(node.position)
    return node, feed


async def test_a_disk_snapshot_is_served_after_a_restart_only_when_it_was_complete(
    tmp_path: Path,
) -> None:
    node, feed = await _node(tmp_path)
    credentials = {"sdkKey": "sdk-k", "mobileKey": "", "clientSideId": ""}
    node.apply(
        feed.next_change(
            project="p", environment="e", kind="environment", key="e", version=0, item=credentials
        )
    )
    await node.stop()  # written with credentials and no data: never complete
    env_file = tmp_path / "environments" / "p~e.json"
    incomplete = env_file.read_bytes()

    node, feed = await _node(tmp_path)
    assert node.complete_on_disk() == set()
    node.apply(
        feed.next_change(
            project="p", environment="e", kind="flag", key="f", version=1, item=flag("f", 1)
        )
    )
    node.mark_ready(("p", "e"))
    await node.stop()
    # the debounced snapshot write lost in a crash: the file on disk predates the mark
    complete = env_file.read_bytes()
    env_file.write_bytes(incomplete)
    node, _ = await _node(tmp_path)
    assert node.complete_on_disk() == set()
    await node.stop()

    env_file.write_bytes(complete)
    node, _ = await _node(tmp_path)
    try:
        assert node.complete_on_disk() == {("p", "e")}
        env = node.store.get("p", "e")
        assert env is not None
        assert set(env.snapshot.flags) == {"f"}
    finally:
        await node.stop()
