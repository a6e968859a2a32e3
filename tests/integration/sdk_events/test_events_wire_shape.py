"""Our `/bulk` payload beside the official LaunchDarkly Python SDK's (9.18.4) for the same flags,
contexts and calls, both posting to the same loopback sink: the same events with the same fields
and structure (timestamps and ids aside)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flagstaff_sdk import Client, Config
from flagstaff_sdk.events import EventOptions, sink_factory
from ldclient import Context as LdContext
from ldclient.client import LDClient
from ldclient.config import Config as LdConfig
from ldclient.integrations import Files
from sink_server import EventSinkServer
from support.deadlines import wait_until

FAR_FUTURE = 4_102_444_800_000  # 2100-01-01


def _flag(key: str, **fields: Any) -> dict[str, Any]:
    flag: dict[str, Any] = {
        "key": key,
        "version": 3,
        "on": True,
        "variations": ["a", "b"],
        "offVariation": 1,
        "fallthrough": {"variation": 0},
        "salt": key,
        "targets": [],
        "rules": [],
        "prerequisites": [],
    }
    flag.update(fields)
    return flag


FLAGS = {
    "plain": _flag("plain"),
    "tracked": _flag("tracked", trackEvents=True),
    "experiment": _flag("experiment", trackEventsFallthrough=True),
    "rule-tracked": _flag(
        "rule-tracked",
        rules=[
            {
                "id": "r1",
                "variation": 1,
                "trackEvents": True,
                "clauses": [
                    {"attribute": "plan", "op": "in", "values": ["gold"], "contextKind": "user"}
                ],
            }
        ],
    ),
    "parent": _flag("parent", trackEvents=True, prerequisites=[{"key": "child", "variation": 0}]),
    "child": _flag("child", trackEvents=True, version=9),
    "debugged": _flag("debugged", debugEventsUntilDate=FAR_FUTURE),
    "off": _flag("off", on=False, trackEvents=True),
    "hidden": _flag("hidden", excludeFromSummaries=True, trackEvents=True),
}

CONTEXTS: list[dict[str, Any]] = [
    {
        "kind": "user",
        "key": "u1",
        "name": "Ann",
        "email": "ann@example.com",
        "plan": "gold",
        "address": {"street": "1 Main", "city": "Oslo"},
        "_meta": {"privateAttributes": ["plan"]},
    },
    {"kind": "user", "key": "anon", "anonymous": True, "name": "Nobody", "plan": "free"},
    {
        "kind": "multi",
        "user": {"key": "u2", "email": "u2@example.com"},
        "org": {"key": "o1", "name": "Acme", "tier": 3},
    },
]

PRIVATE = ("email", "/address/street")


def _drive(
    variation: Callable[[str, Any, Any], Any],
    variation_detail: Callable[[str, Any, Any], Any],
    track: Callable[[str, Any, Any, Any], None],
    identify: Callable[[Any], None],
    contexts: list[Any],
) -> None:
    identify(contexts[2])
    for context in contexts:
        for key in FLAGS:
            variation(key, context, "default")
        variation_detail("tracked", context, "default")
        variation("missing", context, "fallback")
        track("purchase", context, {"sku": "x"}, 9.5)
        track("view", context, None, None)


def _normalise(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for event in events:
        event = {
            k: v for k, v in event.items() if k not in ("creationDate", "startDate", "endDate")
        }
        if event["kind"] == "summary":
            for feature in event["features"].values():
                feature["contextKinds"] = sorted(feature["contextKinds"])
                feature["counters"] = sorted(feature["counters"], key=json.dumps)
        if "_meta" in event.get("context", {}):
            event["context"]["_meta"]["redactedAttributes"].sort()
        out.append(json.dumps(event, sort_keys=True))
    return sorted(out)


def _wait_for_payload(sink: EventSinkServer) -> list[dict[str, Any]]:
    wait_until(lambda: sink.payloads, timeout=15.0, what="a payload at the event sink")
    return sink.events()


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "flags.json"
    path.write_text(json.dumps({"flags": FLAGS, "segments": {}}))
    return path


@pytest.fixture
def sinks() -> Iterator[tuple[EventSinkServer, EventSinkServer]]:
    ours, theirs = EventSinkServer(), EventSinkServer()
    yield ours, theirs
    ours.close()
    theirs.close()


VARIANTS: dict[str, dict[str, Any]] = {
    "private attributes": {},
    "all attributes private": {"all_attributes_private": True},
    "anonymous contexts omitted": {"omit_anonymous_contexts": True},
    "gzip": {"compress": True},
}
"""Our EventOptions beside the official Config options that mean the same."""

_OFFICIAL_NAMES = {"compress": "enable_event_compression"}


def _ours(data_file: Path, sink: EventSinkServer, variant: dict[str, Any]) -> list[dict[str, Any]]:
    options = EventOptions(
        private_attributes=PRIVATE, flush_interval=3600.0, diagnostic_opt_out=True, **variant
    )
    client = Client(
        Config(
            sdk_key="sdk-wire",
            base_uri=sink.url,
            data_files=(data_file,),
            event_sink=sink_factory(options),
        )
    )
    with client:
        _drive(
            client.variation,
            client.variation_detail,
            client.track,
            client.identify,
            CONTEXTS,
        )
    return _wait_for_payload(sink)


def _official(
    data_file: Path, sink: EventSinkServer, variant: dict[str, Any]
) -> list[dict[str, Any]]:
    official = {_OFFICIAL_NAMES.get(name, name): value for name, value in variant.items()}
    config = LdConfig(
        "sdk-wire",
        events_uri=sink.url,
        update_processor_class=Files.new_data_source(paths=[str(data_file)]),
        send_events=True,
        diagnostic_opt_out=True,
        flush_interval=3600,
        private_attributes=set(PRIVATE),
        **official,
    )
    client = LDClient(config=config)
    try:
        assert client.is_initialized()
        _drive(
            client.variation,
            client.variation_detail,
            client.track,
            client.identify,
            [LdContext.from_dict(c) for c in CONTEXTS],
        )
        client.flush()
        return _wait_for_payload(sink)
    finally:
        client.close()


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_payload_matches_the_official_sdk_field_for_field(
    data_file: Path, sinks: tuple[EventSinkServer, EventSinkServer], variant: str
) -> None:
    ours = _ours(data_file, sinks[0], VARIANTS[variant])
    theirs = _official(data_file, sinks[1], VARIANTS[variant])
    assert _normalise(ours) == _normalise(theirs)
    assert [e["kind"] for e in ours] == [e["kind"] for e in theirs]
    (our_headers,) = sinks[0].headers
    (their_headers,) = sinks[1].headers
    for name in ("x-launchdarkly-event-schema", "content-type", "content-encoding"):
        assert our_headers.get(name) == their_headers.get(name)
    assert len(our_headers["x-launchdarkly-payload-id"]) == len(
        their_headers["x-launchdarkly-payload-id"]
    )
