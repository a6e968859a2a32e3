"""Which LaunchDarkly actions an audit entry stands for (`domain.audit_access`): a toggle is
`updateOn` in its environment, a rename `updateName` in every environment, each setting of an
edit its own action; creations and deletions carry LaunchDarkly's create/delete actions."""

from __future__ import annotations

import copy
from typing import Any

from flagstaff_server.domain.audit_access import Access, accesses, changed_resources, in_environment
from flagstaff_server.domain.flag_change import FlagChange

EVERY = "proj/shop:env/*:flag/flag-a"


def flag_accesses(before: Any, after: Any, resource: str = EVERY) -> list[Access]:
    return accesses(kind="flag", resource=resource, action="updateFlag", before=before, after=after)


def test_a_toggle_is_update_on_in_its_environment(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["environments"]["test"]["on"] = True
    assert flag_accesses(flag, after, "proj/shop:env/test:flag/flag-a") == [
        Access("updateFlag", "proj/shop:env/test:flag/flag-a"),
        Access("updateOn", "proj/shop:env/test:flag/flag-a"),
    ]


def test_each_changed_setting_is_its_own_action(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    production, test = after["environments"]["production"], after["environments"]["test"]
    production["rules"] = []
    production["targets"] = []
    test["offVariation"] = 2
    test["fallthrough"] = {"variation": 2}
    production_flag = "proj/shop:env/production:flag/flag-a"
    test_flag = "proj/shop:env/test:flag/flag-a"
    assert flag_accesses(flag, after) == [
        Access("updateFlag", production_flag),
        Access("updateFlag", test_flag),
        Access("updateRules", production_flag),
        Access("updateTargets", production_flag),
        Access("updateFallthrough", test_flag),
        Access("updateOffVariation", test_flag),
    ]


def test_a_flag_level_edit_concerns_every_environment(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["name"] = "Renamed"
    after["tags"] = ["mobile"]
    after["variations"].append({"_id": "v4", "value": "black"})
    assert flag_accesses(flag, after) == [
        Access("updateFlag", EVERY),
        Access("updateName", EVERY),
        Access("updateTags", EVERY),
        Access("updateFlagVariations", EVERY),
    ]


def test_an_edit_that_changed_nothing_stands_for_nothing(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["_version"] += 1
    after["environments"]["production"]["version"] += 1
    assert flag_accesses(flag, after) == []


def test_creations_and_deletions_carry_launchdarklys_actions(flag: dict[str, Any]) -> None:
    assert accesses(kind="flag", resource=EVERY, action="importFlag", before=None, after=flag) == [
        Access("importFlag", EVERY),
        Access("createFlag", EVERY),
    ]
    assert accesses(kind="flag", resource=EVERY, action="deleteFlag", before=flag, after=None) == [
        Access("deleteFlag", EVERY)
    ]
    segment = "proj/shop:env/test:segment/beta"
    assert accesses(
        kind="segment", resource=segment, action="createSegment", before=None, after={"key": "b"}
    ) == [Access("createSegment", segment)]


def test_other_kinds_are_compared_by_their_own_fields() -> None:
    environment = "proj/shop:env/test"
    found = accesses(
        kind="environment",
        resource=environment,
        action="updateEnvironment",
        before={"name": "Test", "color": "ffffff", "tags": [], "apiKey": "sdk-1"},
        after={"name": "QA", "color": "ffffff", "tags": ["qa"], "apiKey": "sdk-1"},
    )
    assert found == [
        Access("updateEnvironment", environment),
        Access("updateName", environment),
        Access("updateTags", environment),
    ]
    assert accesses(
        kind="project",
        resource="proj/shop",
        action="updateProject",
        before={"name": "Shop"},
        after={"name": "Store"},
    ) == [Access("updateProject", "proj/shop"), Access("updateProjectName", "proj/shop")]
    # a kind without a table: its own action only
    assert accesses(
        kind="token", resource="token/t1", action="createAccessToken", before=None, after={}
    ) == [Access("createAccessToken", "token/t1")]


def test_an_edit_of_several_environments_names_each() -> None:
    change = FlagChange(environments=("production", "test"), flag_level=False)
    assert changed_resources(EVERY, change) == [
        "proj/shop:env/production:flag/flag-a",
        "proj/shop:env/test:flag/flag-a",
    ]
    flag_level = FlagChange(environments=("production",), flag_level=True)
    assert changed_resources(EVERY, flag_level) == [EVERY]
    assert in_environment("proj/shop", "test") == "proj/shop"
    assert in_environment("proj/shop:env/test", "*") == "proj/shop:env/*"
