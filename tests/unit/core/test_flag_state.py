"""All-flags state (server bootstrap shape) and client-side results (evalx shape)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flagstaff_core import (
    Availability,
    Stopped,
    all_flags_state,
    decode_client_results,
    decode_context,
    decode_data,
    evaluate_for_client,
    read_client_result,
)
from flagstaff_core.flag_state import KEEP_GOING_STRIDE
from ldclient import Context as SdkContext
from ldclient.client import LDClient
from ldclient.config import Config
from ldclient.integrations import Files

ALWAYS = {"attribute": "key", "op": "in", "values": [""], "negate": True}


def _flag(variations: list[Any], variation: int, **fields: Any) -> dict[str, Any]:
    return {"on": True, "variations": variations, "fallthrough": {"variation": variation}, **fields}


EXPERIMENT = {"kind": "experiment", "variations": [{"variation": 1, "weight": 100000}]}
DATA: dict[str, Any] = {
    "flags": {
        "plain": _flag([1, 2], 0, clientSide=True),
        "tracked": _flag([1, 2], 1, trackEvents=True),
        "debugged": _flag([1, 2], 1, debugEventsUntilDate=2000),
        "experiment": {
            **_flag(["a", "b"], 0, salt="s"),
            "fallthrough": {"rollout": EXPERIMENT},
            # Both forms, consistent, as LaunchDarkly writes them (the official Python SDK
            # filters `client_side_only` on `clientSide` alone; Flagstaff derives it when
            # absent, as Go does).
            "clientSideAvailability": {"usingMobileKey": False, "usingEnvironmentId": True},
            "clientSide": True,
        },
        "ruled": _flag(
            [True, False],
            1,
            rules=[{"id": "r", "variation": 0, "trackEvents": True, "clauses": [ALWAYS]}],
        ),
        "off": {"on": False, "variations": [True, False]},
        "prereq": _flag(
            [1, 2],
            0,
            offVariation=1,
            prerequisites=[{"key": "plain", "variation": 0}, {"key": "missing", "variation": 0}],
        ),
        "deleted": {"deleted": True, "version": 3},
    }
}
for _key, _flag in DATA["flags"].items():
    _flag.setdefault("key", _key)
    _flag.setdefault("version", 5)


@pytest.fixture(scope="module")
def official(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LDClient]:
    path = Path(tmp_path_factory.mktemp("data")) / "flags.json"
    path.write_text(json.dumps(DATA))
    config = Config(
        "sdk-key",
        update_processor_class=Files.new_data_source(paths=[str(path)]),
        send_events=False,
    )
    client = LDClient(config=config, start_wait=5)
    assert client.is_initialized()
    yield client
    client.close()


CONTEXT = {"kind": "user", "key": "u1"}


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"with_reasons": True},
        {"client_side_only": True},
        {"details_only_for_tracked_flags": True},
        {"with_reasons": True, "details_only_for_tracked_flags": True},
    ],
)
def test_all_flags_state_matches_the_official_sdk(
    official: LDClient, options: dict[str, bool]
) -> None:
    theirs = official.all_flags_state(SdkContext.from_dict(CONTEXT), **options).to_json_dict()
    # The debug date (2000 ms after the epoch) lies in the past for the official SDK's clock.
    ours = all_flags_state(decode_data(DATA), decode_context(CONTEXT), now_ms=10**13, **options)
    assert ours == theirs


def test_all_flags_state_without_a_context_is_invalid() -> None:
    assert all_flags_state(decode_data(DATA), None) == {"$flagsState": {}, "$valid": False}


def test_client_results_carry_what_client_sdks_need() -> None:
    results = evaluate_for_client(
        decode_data(DATA), decode_context(CONTEXT), availability=Availability.ALL
    )
    assert set(results) == {"plain", "tracked", "debugged", "experiment", "ruled", "off", "prereq"}
    assert results["plain"] == {"value": 1, "variation": 0, "version": 5, "flagVersion": 5}
    assert results["tracked"]["trackEvents"] is True
    assert "trackReason" not in results["tracked"]
    assert results["experiment"]["trackReason"] is True
    assert results["experiment"]["reason"] == {"kind": "FALLTHROUGH", "inExperiment": True}
    assert results["debugged"]["debugEventsUntilDate"] == 2000
    assert results["off"] == {"value": None, "variation": None, "version": 5, "flagVersion": 5}
    assert results["prereq"]["prerequisites"] == ["plain", "missing"]
    assert results["prereq"]["value"] == 2


def test_client_results_are_filtered_by_availability() -> None:
    data, context = decode_data(DATA), decode_context(CONTEXT)
    browser = evaluate_for_client(data, context, availability=Availability.CLIENT_SIDE)
    mobile = evaluate_for_client(data, context, availability=Availability.MOBILE)
    assert set(browser) == {"plain", "experiment"}
    assert "experiment" not in mobile
    assert "plain" in mobile
    assert "tracked" in mobile
    with_reasons = evaluate_for_client(data, context, with_reasons=True)
    assert with_reasons["plain"]["reason"] == {"kind": "FALLTHROUGH"}


def test_client_results_read_back_as_a_client_sdk_reads_them() -> None:
    results = decode_client_results(
        json.loads(
            json.dumps(
                evaluate_for_client(
                    decode_data(DATA),
                    decode_context(CONTEXT),
                    availability=Availability.ALL,
                    with_reasons=True,
                )
            )
        )
    )
    ruled = read_client_result(results, "ruled", None)
    assert (ruled.value, ruled.variation_index, ruled.reason) == (
        True,
        0,
        {"kind": "RULE_MATCH", "ruleIndex": 0, "ruleId": "r"},
    )
    off = read_client_result(results, "off", "fallback")
    assert (off.value, off.variation_index, off.reason) == ("fallback", None, {"kind": "OFF"})
    missing = read_client_result(results, "nope", 7)
    assert (missing.value, missing.variation_index, missing.reason) == (
        7,
        None,
        {"kind": "ERROR", "errorKind": "FLAG_NOT_FOUND"},
    )


def test_evaluate_for_client_stops_between_flags_when_told() -> None:
    flags = {
        f"f{i}": {"on": False, "variations": [i], "offVariation": 0, "clientSide": True}
        for i in range(3 * KEEP_GOING_STRIDE)
    }
    data = decode_data({"flags": flags})
    context = decode_context({"key": "k"})
    asked = []

    def twice() -> bool:
        asked.append(1)
        return len(asked) <= 2

    every = Availability.ALL
    with pytest.raises(Stopped, match=f"{2 * KEEP_GOING_STRIDE} flags evaluated"):
        evaluate_for_client(data, context, availability=every, keep_going=twice)
    assert len(asked) == 3  # before flags 0, 16 and 32
    bounded = evaluate_for_client(data, context, availability=every, keep_going=lambda: True)
    assert bounded == evaluate_for_client(data, context, availability=every)
    assert len(bounded) == 3 * KEEP_GOING_STRIDE
