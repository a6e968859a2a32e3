"""Creating flag documents, environments coming and going, JSON Patch on flags, presentation."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from flagstaff_server.domain import (
    IdFactory,
    add_environment_to_flag,
    apply_flag_json_patch,
    apply_flag_merge_patch,
    new_flag_document,
    present_flag,
    remove_environment_from_flag,
    validate_flag_document,
)
from flagstaff_server.errors import AlreadyExists, NotFound, ValidationError, VersionConflict

NOW = 1_700_000_000_000

MakeFlag = Callable[..., dict[str, Any]]


def test_minimal_body_gives_a_boolean_flag_in_every_environment(make_flag: MakeFlag) -> None:
    document = make_flag()
    assert document["kind"] == "boolean"
    assert [v["value"] for v in document["variations"]] == [True, False]
    assert all(v["_id"] for v in document["variations"])
    assert document["_version"] == 1
    assert document["creationDate"] == NOW
    assert document["temporary"] is True
    assert document["defaults"] == {"onVariation": 0, "offVariation": 1}
    assert set(document["environments"]) == {"production", "test"}
    production = document["environments"]["production"]
    assert production["on"] is False
    assert production["fallthrough"] == {"variation": 0}
    assert production["offVariation"] == 1
    assert production["version"] == 1
    assert production["_environmentName"] == "Production"
    assert production["salt"] != document["environments"]["test"]["salt"]
    validate_flag_document(document)


def test_body_options_are_honoured(make_flag: MakeFlag) -> None:
    document = make_flag(
        variations=[
            {"value": "a", "name": "A"},
            {"value": "b", "description": "bee"},
            {"value": "c"},
        ],
        defaults={"onVariation": 2, "offVariation": 1},
        isFlagOn=True,
        temporary=False,
        tags=["b", "a", "b"],
        clientSideAvailability={"usingMobileKey": False, "usingEnvironmentId": True},
        description="d",
    )
    assert document["kind"] == "multivariate"
    assert document["variations"][0]["name"] == "A"
    assert document["variations"][1]["description"] == "bee"
    assert document["tags"] == ["a", "b"]
    assert document["temporary"] is False
    assert document["includeInSnippet"] is True
    for config in document["environments"].values():
        assert config["on"] is True
        assert config["fallthrough"] == {"variation": 2}
        assert config["offVariation"] == 1
    validate_flag_document(document)


def test_initial_prerequisites_resolve_variation_ids(
    make_flag: MakeFlag, new_id: IdFactory
) -> None:
    other = make_flag(key="other")
    wanted = other["variations"][1]["_id"]
    document = new_flag_document(
        {
            "key": "dependent",
            "name": "D",
            "initialPrerequisites": [{"key": "other", "variationId": wanted}],
        },
        [("production", "Production")],
        now_ms=NOW,
        new_id=new_id,
        flag_lookup={"other": other}.get,
    )
    assert document["environments"]["production"]["prerequisites"] == [
        {"key": "other", "variation": 1}
    ]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"name": "x"}, "/key"),
        ({"key": "x"}, "/name"),
        ({"key": "bad key!", "name": "x"}, "/key"),
        ({"key": "x", "name": 3}, "/name"),
        ({"key": "x", "name": "x", "variations": []}, "/variations"),
        ({"key": "x", "name": "x", "variations": [{"name": "no value"}]}, "/variations/0/value"),
        (
            {"key": "x", "name": "x", "defaults": {"onVariation": 5, "offVariation": 0}},
            "/defaults/onVariation",
        ),
        ({"key": "x", "name": "x", "tags": "t"}, "/tags"),
        ({"key": "x", "name": "x", "isFlagOn": "yes"}, "/isFlagOn"),
        (
            {
                "key": "x",
                "name": "x",
                "initialPrerequisites": [{"key": "nope", "variationId": "v"}],
            },
            "/initialPrerequisites/0/key",
        ),
        (
            {"key": "x", "name": "x", "initialPrerequisites": [{"key": "x", "variationId": "v"}]},
            "/initialPrerequisites/0/key",
        ),
        ("not an object", ""),
    ],
)
def test_bad_bodies_name_the_field(body: Any, path: str, new_id: IdFactory) -> None:
    with pytest.raises(ValidationError) as raised:
        new_flag_document(body, [("production", "Production")], now_ms=NOW, new_id=new_id)
    assert raised.value.path == path


def test_environment_added_and_removed(make_flag: MakeFlag, new_id: IdFactory) -> None:
    document = make_flag()
    added = add_environment_to_flag(document, "staging", "Staging", now_ms=NOW + 5, new_id=new_id)
    assert "staging" not in document["environments"]
    assert added["environments"]["staging"]["lastModified"] == NOW + 5
    assert added["environments"]["staging"]["on"] is False
    with pytest.raises(AlreadyExists):
        add_environment_to_flag(added, "staging", "Staging", now_ms=NOW, new_id=new_id)
    removed = remove_environment_from_flag(added, "staging")
    assert set(removed["environments"]) == {"production", "test"}
    with pytest.raises(NotFound):
        remove_environment_from_flag(removed, "staging")


def test_json_patch_toggles_and_appends_target(flag: dict[str, Any], new_id: IdFactory) -> None:
    patched = apply_flag_json_patch(
        flag,
        [
            {"op": "test", "path": "/_version", "value": 1},
            {"op": "replace", "path": "/environments/test/on", "value": True},
            {"op": "add", "path": "/environments/production/targets/0/values/-", "value": "u3"},
        ],
        new_id=new_id,
    )
    assert patched["environments"]["test"]["on"] is True
    assert patched["environments"]["production"]["targets"][0]["values"] == ["u1", "u2", "u3"]
    assert flag["environments"]["test"]["on"] is False


def test_json_patch_gives_added_rules_and_clauses_ids(
    flag: dict[str, Any], new_id: IdFactory
) -> None:
    rule = {
        "variation": 0,
        "clauses": [{"attribute": "email", "op": "endsWith", "values": ["@x.io"]}],
    }
    patched = apply_flag_json_patch(
        flag, [{"op": "add", "path": "/environments/test/rules/0", "value": rule}], new_id=new_id
    )
    added = patched["environments"]["test"]["rules"][0]
    assert added["_id"].startswith("id-")
    assert added["clauses"][0]["_id"].startswith("id-")
    assert added["clauses"][0]["negate"] is False
    assert added["trackEvents"] is False
    validate_flag_document(patched)


@pytest.mark.parametrize(
    "path",
    [
        "/key",
        "/_version",
        "/creationDate",
        "/kind",
        "/_links",
        "/environments",
        "/environments/staging",
        "/environments/production",
        "/environments/production/version",
        "/environments/production/salt",
        "/environments/production/_environmentName",
        # the release's summary is written by its instructions only (docs/rollouts.md)
        "/environments/production/_automatedRelease",
        "/environments/production/_automatedRelease/status",
        "",
    ],
)
def test_json_patch_refuses_read_only_fields(
    flag: dict[str, Any], new_id: IdFactory, path: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        apply_flag_json_patch(flag, [{"op": "replace", "path": path, "value": 1}], new_id=new_id)
    assert raised.value.path == path


def test_json_patch_version_test_conflict(flag: dict[str, Any], new_id: IdFactory) -> None:
    before = copy.deepcopy(flag)
    with pytest.raises(VersionConflict):
        apply_flag_json_patch(
            flag,
            [
                {"op": "replace", "path": "/name", "value": "New"},
                {"op": "test", "path": "/_version", "value": 7},
            ],
            new_id=new_id,
        )
    assert flag == before


def test_merge_patch_on_flag(flag: dict[str, Any], new_id: IdFactory) -> None:
    patched = apply_flag_merge_patch(
        flag, {"description": "new", "environments": {"test": {"on": True}}}, new_id=new_id
    )
    assert patched["description"] == "new"
    assert patched["environments"]["test"]["on"] is True
    assert patched["environments"]["test"]["salt"] == flag["environments"]["test"]["salt"]
    for merge, path in (
        ({"key": "x"}, "/key"),
        ({"environments": {"nope": {"on": True}}}, "/environments/nope"),
        ({"environments": {"test": {"version": 9}}}, "/environments/test/version"),
        (
            {"environments": {"test": {"_automatedRelease": None}}},
            "/environments/test/_automatedRelease",
        ),
    ):
        with pytest.raises(ValidationError) as raised:
            apply_flag_merge_patch(flag, merge, new_id=new_id)
        assert raised.value.path == path


def test_present_flag_adds_links_site_and_summary(flag: dict[str, Any]) -> None:
    shown = present_flag(flag, project_key="default", environment_keys=["production"])
    assert shown["_links"]["self"]["href"] == "/api/v2/flags/default/flag-a"
    assert list(shown["environments"]) == ["production"]
    production = shown["environments"]["production"]
    assert production["_site"]["href"] == "/default/production/features/flag-a"
    summary = production["_summary"]
    assert summary["variations"]["2"] == {
        "rules": 1,
        "nullRules": 0,
        "targets": 2,
        "contextTargets": 0,
    }
    assert summary["variations"]["1"]["isFallthrough"] is True
    assert summary["variations"]["0"]["isOff"] is True
    assert "_links" not in flag


def test_present_flag_summary_leaves_out_rules_targets_and_prerequisites(
    flag: dict[str, Any],
) -> None:
    full = present_flag(flag, project_key="default", environment_keys=["production"])
    short = present_flag(flag, project_key="default", environment_keys=["production"], summary=True)
    production = short["environments"]["production"]
    for name in ("prerequisites", "targets", "contextTargets", "rules"):
        assert name not in production
    # the rest of the configuration, and the counts of what was left out, are unchanged
    kept = {k: v for k, v in full["environments"]["production"].items() if k in production}
    assert production == kept
    assert production["_summary"] == full["environments"]["production"]["_summary"]
    assert {k: v for k, v in short.items() if k != "environments"} == {
        k: v for k, v in full.items() if k != "environments"
    }
    # nothing returned aliases the stored document
    production["fallthrough"]["variation"] = 99
    short["variations"][0]["value"] = "changed"
    assert flag["environments"]["production"]["fallthrough"] != {"variation": 99}
    assert flag["variations"][0]["value"] != "changed"


def test_present_flag_is_readable_by_the_official_api_client(flag: dict[str, Any]) -> None:
    from launchdarkly_api.models import FeatureFlag

    parsed = FeatureFlag.from_dict(present_flag(flag, project_key="default"))
    assert parsed is not None
    assert parsed.key == "flag-a"
    assert parsed.environments is not None
    assert parsed.environments["production"].rules is not None
    assert parsed.environments["production"].rules[0].id == "rule-1"


def test_json_patch_may_copy_from_but_not_move_read_only_fields(
    flag: dict[str, Any], new_id: IdFactory
) -> None:
    copied = apply_flag_json_patch(
        flag, [{"op": "copy", "from": "/key", "path": "/description"}], new_id=new_id
    )
    assert copied["description"] == "flag-a"
    with pytest.raises(ValidationError) as raised:
        apply_flag_json_patch(
            flag, [{"op": "move", "from": "/key", "path": "/description"}], new_id=new_id
        )
    assert raised.value.path == "/key"
