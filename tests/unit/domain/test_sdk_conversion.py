"""REST documents to SDK JSON and back: complete SDK objects that the evaluation core decodes, and
imports of every LaunchDarkly conformance data set that export to equivalent data."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest
from conformance.launchdarkly_vectors import expand
from flagstaff_core import decode_flag, decode_segment, encode_flag, encode_segment
from flagstaff_server.domain import (
    add_environment_to_flag,
    flag_document_from_sdk,
    merge_sdk_flag,
    new_segment_document,
    segment_document_from_sdk,
    to_sdk_flag,
    to_sdk_segment,
    validate_flag_document,
    validate_segment_document,
)
from flagstaff_server.errors import NotFound, ValidationError
from support.prerequisites import SHARED_DIR, shared_path

NOW = 1_700_000_000_000
SDK_FLAG_FIELDS = {
    "key", "version", "on", "deleted", "variations", "offVariation", "fallthrough", "prerequisites",
    "targets", "contextTargets", "rules", "salt", "trackEvents", "trackEventsFallthrough",
    "debugEventsUntilDate", "clientSide", "clientSideAvailability",
}  # fmt: skip
VECTOR_DIR = SHARED_DIR / "conformance" / "launchdarkly" / "server-side-eval"


def ids() -> Any:
    counter = itertools.count(1)
    return lambda: f"gen-{next(counter)}"


def test_sdk_flag_is_flattened_per_environment(flag: dict[str, Any]) -> None:
    flag["environments"]["production"]["rules"][0]["description"] = "not for SDKs"
    flag["environments"]["production"]["fallthrough"] = {
        "rollout": {
            "variations": [
                {"variation": 0, "weight": 30000, "_untracked": True},
                {"variation": 1, "weight": 70000},
            ],
            "bucketBy": "email",
            "contextKind": "user",
            "seed": 42,
            "experimentAllocation": {"defaultVariation": 0, "canReshuffle": False},
        }
    }
    sdk = to_sdk_flag(flag, "production")
    assert set(sdk) >= SDK_FLAG_FIELDS
    assert sdk["version"] == flag["environments"]["production"]["version"]
    assert sdk["variations"] == ["red", "green", "blue"]
    assert sdk["salt"] == flag["environments"]["production"]["salt"]
    assert sdk["deleted"] is False
    assert sdk["clientSide"] is False
    assert sdk["clientSideAvailability"] == {"usingMobileKey": True, "usingEnvironmentId": False}
    assert sdk["rules"] == [
        {
            "id": "rule-1",
            "clauses": [
                {
                    "attribute": "country",
                    "op": "in",
                    "values": ["se", "no"],
                    "negate": False,
                    "contextKind": "user",
                }
            ],
            "trackEvents": False,
            "variation": 2,
        }
    ]
    assert sdk["fallthrough"] == {
        "rollout": {
            "kind": "experiment",
            "variations": [
                {"variation": 0, "weight": 30000, "untracked": True},
                {"variation": 1, "weight": 70000},
            ],
            "bucketBy": "email",
            "contextKind": "user",
            "seed": 42,
        }
    }
    assert sdk["contextTargets"][0] == {"contextKind": "user", "variation": 2, "values": []}
    decoded = decode_flag(sdk)
    assert decoded.key == "flag-a"
    assert decode_flag(encode_flag(decoded)) == decoded


def test_every_environment_of_a_new_flag_decodes(make_flag: Any) -> None:
    document = make_flag(variations=[{"value": {"a": 1}}, {"value": [1, 2]}, {"value": None}])
    for env_key in document["environments"]:
        decoded = decode_flag(to_sdk_flag(document, env_key))
        assert decoded.version == 1


def test_disabled_rules_are_not_sent_to_sdks(flag: dict[str, Any]) -> None:
    flag["environments"]["production"]["rules"][0]["disabled"] = True
    assert to_sdk_flag(flag, "production")["rules"] == []


def test_unknown_environment_is_not_found(flag: dict[str, Any]) -> None:
    with pytest.raises(NotFound):
        to_sdk_flag(flag, "staging")


def test_flag_round_trips_through_sdk_form(flag: dict[str, Any]) -> None:
    sdk = to_sdk_flag(flag, "production")
    imported = flag_document_from_sdk(
        sdk, environment_key="production", environment_name="Production", now_ms=NOW, new_id=ids()
    )
    validate_flag_document(imported)
    assert all(variation["_id"] for variation in imported["variations"])
    assert imported["environments"]["production"]["rules"][0]["_id"] == "rule-1"
    assert to_sdk_flag(imported, "production") == sdk


def test_merge_sdk_flag_replaces_one_environment(flag: dict[str, Any]) -> None:
    sdk = to_sdk_flag(flag, "production")
    sdk["on"] = False
    sdk["rules"] = []
    merged = merge_sdk_flag(
        flag, sdk, environment_key="test", environment_name="Test", now_ms=NOW, new_id=ids()
    )
    assert (
        merged["environments"]["test"]["targets"] == flag["environments"]["production"]["targets"]
    )
    assert merged["environments"]["test"]["version"] == flag["environments"]["test"]["version"]
    assert merged["environments"]["production"] == flag["environments"]["production"]
    sdk["variations"] = ["red", "green"]
    with pytest.raises(ValidationError) as raised:
        merge_sdk_flag(
            flag, sdk, environment_key="test", environment_name="Test", now_ms=NOW, new_id=ids()
        )
    assert raised.value.path == "/variations"


def test_segment_round_trips_through_sdk_form(new_id: Any) -> None:
    document = new_segment_document({"key": "beta", "name": "Beta"}, now_ms=NOW, new_id=new_id)
    document["included"] = ["u1"]
    document["excludedContexts"] = [{"contextKind": "org", "values": ["o9"]}]
    document["rules"] = [
        {
            "_id": "r1",
            "clauses": [
                {
                    "_id": "c1",
                    "attribute": "email",
                    "op": "endsWith",
                    "values": ["@x.io"],
                    "negate": False,
                }
            ],
            "weight": 50000,
            "bucketBy": "key",
            "rolloutContextKind": "user",
        }
    ]
    validate_segment_document(document)
    sdk = to_sdk_segment(document)
    assert sdk["rules"][0]["id"] == "r1"
    assert "_id" not in sdk["rules"][0]["clauses"][0]
    decoded = decode_segment(sdk)
    assert decoded.key == "beta"
    back = segment_document_from_sdk(sdk, now_ms=NOW, new_id=new_id)
    validate_segment_document(back)
    assert to_sdk_segment(back) == sdk


def _suites() -> list[tuple[str, dict[str, Any]]]:
    if not VECTOR_DIR.is_dir():
        return []
    suites = []
    for path in sorted(VECTOR_DIR.glob("*.yml")):
        for index, suite in enumerate(expand(path.read_text())):
            suites.append((f"{path.stem}[{index}]", suite.get("sdkData") or {}))
    return suites


SUITES = _suites()


def test_conformance_data_is_present() -> None:
    shared_path("conformance", "launchdarkly", "server-side-eval")
    assert len(SUITES) > 27


def _as_loaded(key: str, item: dict[str, Any]) -> dict[str, Any]:
    """An item as LaunchDarkly's loaders read these files: key from the map, version at least 1."""
    loaded = copy.deepcopy(item)
    loaded["key"] = key
    if not loaded.get("version"):
        loaded["version"] = 1
    return loaded


@pytest.mark.parametrize(("name", "sdk_data"), SUITES, ids=[name for name, _ in SUITES])
def test_conformance_data_imports_and_exports_equivalently(
    name: str, sdk_data: dict[str, Any]
) -> None:
    for key, raw in (sdk_data.get("flags") or {}).items():
        original = _as_loaded(key, raw)
        document = flag_document_from_sdk(
            original,
            environment_key="production",
            environment_name="Production",
            now_ms=NOW,
            new_id=ids(),
        )
        validate_flag_document(document, strict=False)
        document = add_environment_to_flag(document, "test", "Test", now_ms=NOW, new_id=ids())
        exported = to_sdk_flag(document, "production")
        for rule, exported_rule in zip(original.get("rules") or [], exported["rules"], strict=True):
            rule.setdefault("id", exported_rule["id"])
        assert encode_flag(decode_flag(exported)) == encode_flag(decode_flag(original)), key
        decode_flag(to_sdk_flag(document, "test"))
    for key, raw in (sdk_data.get("segments") or {}).items():
        original = _as_loaded(key, raw)
        document = segment_document_from_sdk(original, now_ms=NOW, new_id=ids())
        validate_segment_document(document, strict=False)
        exported = to_sdk_segment(document)
        for rule, exported_rule in zip(original.get("rules") or [], exported["rules"], strict=True):
            rule.setdefault("id", exported_rule["id"])
        assert encode_segment(decode_segment(exported)) == encode_segment(
            decode_segment(original)
        ), key
