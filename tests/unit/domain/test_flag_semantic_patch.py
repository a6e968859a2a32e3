"""Every flag semantic patch instruction, its parameter errors, and all-or-nothing application."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest
from flagstaff_server.domain import (
    FLAG_INSTRUCTIONS,
    apply_semantic_patch,
    parse_semantic_patch_body,
    validate_flag_document,
)
from flagstaff_server.errors import InvalidInput, ValidationError

NOW = 1_700_000_000_000
LATER = NOW + 1000

Flag = dict[str, Any]


def run(
    flag: Flag, *instructions: dict[str, Any], env: str | None = "production", **kw: Any
) -> Flag:
    counter = itertools.count(1)
    result = apply_semantic_patch(
        flag,
        list(instructions),
        environment_key=env,
        now_ms=LATER,
        new_id=lambda: f"new-{next(counter)}",
        **kw,
    )
    assert result.delete is False
    validate_flag_document(result.document, flag_lookup=kw.get("flag_lookup"))
    return result.document


def fails(
    flag: Flag, *instructions: dict[str, Any], env: str | None = "production", **kw: Any
) -> str:
    before = copy.deepcopy(flag)
    with pytest.raises(ValidationError) as raised:
        apply_semantic_patch(
            flag, list(instructions), environment_key=env, now_ms=LATER, new_id=lambda: "x", **kw
        )
    assert flag == before
    return str(raised.value.path)


def vid(flag: Flag, index: int) -> str:
    return str(flag["variations"][index]["_id"])


def prod(flag: Flag) -> dict[str, Any]:
    config: dict[str, Any] = flag["environments"]["production"]
    return config


def test_turn_flag_on_and_off(flag: Flag) -> None:
    assert prod(run(flag, {"kind": "turnFlagOff"}))["on"] is False
    test = run(flag, {"kind": "turnFlagOn"}, env="test")["environments"]["test"]
    assert test["on"] is True


def test_env_scoped_instruction_needs_environment_key(flag: Flag) -> None:
    assert fails(flag, {"kind": "turnFlagOn"}, env=None) == "/environmentKey"
    assert fails(flag, {"kind": "turnFlagOn"}, env="nowhere") == "/environmentKey"


def test_flag_level_instruction_needs_no_environment(flag: Flag) -> None:
    assert run(flag, {"kind": "updateName", "value": "Renamed"}, env=None)["name"] == "Renamed"


def test_add_rule_with_variation_before_existing_rule(flag: Flag) -> None:
    clause = {"contextKind": "org", "attribute": "plan", "op": "in", "values": ["gold"]}
    result = run(
        flag,
        {
            "kind": "addRule",
            "clauses": [clause],
            "variationId": vid(flag, 1),
            "beforeRuleId": "rule-1",
            "description": "gold orgs",
        },
    )
    rules = prod(result)["rules"]
    assert [rule["_id"] for rule in rules] == ["new-1", "rule-1"]
    assert rules[0]["variation"] == 1
    assert rules[0]["description"] == "gold orgs"
    assert rules[0]["trackEvents"] is False
    assert rules[0]["clauses"] == [{"_id": "new-2", "negate": False, **clause}]


def test_add_rule_with_rollout(flag: Flag) -> None:
    result = run(
        flag,
        {
            "kind": "addRule",
            "clauses": [{"attribute": "country", "op": "in", "values": ["fi"]}],
            "rolloutWeights": {vid(flag, 2): 15000, vid(flag, 0): 85000},
            "rolloutBucketBy": "email",
            "rolloutContextKind": "user",
        },
    )
    rule = prod(result)["rules"][-1]
    assert "variation" not in rule
    assert rule["rollout"] == {
        "variations": [{"variation": 0, "weight": 85000}, {"variation": 2, "weight": 15000}],
        "contextKind": "user",
        "bucketBy": "email",
    }
    assert rule["clauses"][0]["contextKind"] == "user"


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"clauses": []}, "/instructions/0/variationId"),
        ({"variationId": "nope"}, "/instructions/0/variationId"),
        ({"variationId": 3}, "/instructions/0/variationId"),
        ({"rolloutWeights": {"nope": 100000}}, "/instructions/0/rolloutWeights/nope"),
        ({"rolloutWeights": "half"}, "/instructions/0/rolloutWeights"),
        ({"beforeRuleId": "nope", "variationId": "V0"}, "/instructions/0/beforeRuleId"),
        ({"clauses": "x", "variationId": "V0"}, "/instructions/0/clauses"),
        (
            {"clauses": [{"attribute": "a", "op": "bogus", "values": []}], "variationId": "V0"},
            "/instructions/0/clauses/0/op",
        ),
        (
            {
                "clauses": [{"attribute": "a", "op": "matches", "values": ["("]}],
                "variationId": "V0",
            },
            "/instructions/0/clauses/0/values/0",
        ),
        (
            {
                "clauses": [{"attribute": "v", "op": "semVerEqual", "values": ["1.x"]}],
                "variationId": "V0",
            },
            "/instructions/0/clauses/0/values/0",
        ),
        (
            {
                "clauses": [{"attribute": "d", "op": "before", "values": ["2024-01-01"]}],
                "variationId": "V0",
            },
            "/instructions/0/clauses/0/values/0",
        ),
        (
            {"clauses": [{"attribute": "//x", "op": "in", "values": [1]}], "variationId": "V0"},
            "/instructions/0/clauses/0/attribute",
        ),
        ({"rolloutWeights": {"V0": 60000, "V1": 30000}}, "/instructions/0/rolloutWeights"),
        ({"rolloutWeights": {"V0": 100001, "V1": -1}}, "/instructions/0/rolloutWeights/V0"),
        (
            {"rolloutWeights": {"V0": 100000}, "rolloutContextKind": "multi"},
            "/instructions/0/rolloutContextKind",
        ),
    ],
)
def test_add_rule_parameter_errors(flag: Flag, params: dict[str, Any], path: str) -> None:
    resolved = {
        name: (
            vid(flag, int(value[1])) if name == "variationId" and value in ("V0", "V1") else value
        )
        for name, value in params.items()
    }
    if isinstance(resolved.get("rolloutWeights"), dict):
        resolved["rolloutWeights"] = {
            (vid(flag, int(k[1])) if k in ("V0", "V1") else k): w
            for k, w in resolved["rolloutWeights"].items()
        }
        path = path.replace("/V0", "/" + vid(flag, 0))
    assert fails(flag, {"kind": "addRule", **resolved}) == path


def test_remove_reorder_and_replace_rules(flag: Flag) -> None:
    two = run(flag, {"kind": "addRule", "clauses": [], "variationId": vid(flag, 0)})
    assert [r["_id"] for r in prod(two)["rules"]] == ["rule-1", "new-1"]
    reordered = run(two, {"kind": "reorderRules", "ruleIds": ["new-1", "rule-1"]})
    assert [r["_id"] for r in prod(reordered)["rules"]] == ["new-1", "rule-1"]
    assert fails(two, {"kind": "reorderRules", "ruleIds": ["rule-1"]}) == "/instructions/0/ruleIds"
    removed = run(two, {"kind": "removeRule", "ruleId": "rule-1"})
    assert [r["_id"] for r in prod(removed)["rules"]] == ["new-1"]
    assert fails(two, {"kind": "removeRule", "ruleId": "nope"}) == "/instructions/0/ruleId"
    replaced = run(
        two,
        {
            "kind": "replaceRules",
            "rules": [
                {
                    "variationId": vid(flag, 1),
                    "description": "segment",
                    "clauses": [
                        {"attribute": "segmentMatch", "op": "segmentMatch", "values": ["beta"]}
                    ],
                    "trackEvents": True,
                }
            ],
        },
    )
    rules = prod(replaced)["rules"]
    assert len(rules) == 1
    assert (rules[0]["variation"], rules[0]["trackEvents"], rules[0]["description"]) == (
        1,
        True,
        "segment",
    )
    bad = {
        "kind": "replaceRules",
        "rules": [{"variationId": vid(flag, 0)}, {"variationId": "nope"}],
    }
    assert fails(two, bad) == "/instructions/0/rules/1/variationId"


def test_update_rule_variation_description_and_track_events(flag: Flag) -> None:
    result = run(
        flag,
        {
            "kind": "updateRuleVariationOrRollout",
            "ruleId": "rule-1",
            "rolloutWeights": {vid(flag, 0): 100000},
        },
        {"kind": "updateRuleDescription", "ruleId": "rule-1", "description": "now a rollout"},
        {"kind": "updateRuleTrackEvents", "ruleId": "rule-1", "trackEvents": True},
    )
    rule = prod(result)["rules"][0]
    assert "variation" not in rule
    assert rule["rollout"]["variations"] == [{"variation": 0, "weight": 100000}]
    assert rule["description"] == "now a rollout"
    assert rule["trackEvents"] is True
    back = run(
        result,
        {"kind": "updateRuleVariationOrRollout", "ruleId": "rule-1", "variationId": vid(flag, 1)},
    )
    assert prod(back)["rules"][0]["variation"] == 1
    assert "rollout" not in prod(back)["rules"][0]
    assert fails(
        flag, {"kind": "updateRuleTrackEvents", "ruleId": "rule-1", "trackEvents": "y"}
    ) == ("/instructions/0/trackEvents")


def test_clause_instructions(flag: Flag) -> None:
    result = run(
        flag,
        {
            "kind": "addClauses",
            "ruleId": "rule-1",
            "clauses": [{"attribute": "age", "op": "greaterThan", "values": [18]}],
        },
        {
            "kind": "addValuesToClause",
            "ruleId": "rule-1",
            "clauseId": "clause-1",
            "values": ["dk", "se"],
        },
        {
            "kind": "removeValuesFromClause",
            "ruleId": "rule-1",
            "clauseId": "clause-1",
            "values": ["no"],
        },
    )
    clauses = prod(result)["rules"][0]["clauses"]
    assert clauses[0]["values"] == ["se", "dk"]
    assert clauses[1]["op"] == "greaterThan"
    updated = run(
        result,
        {
            "kind": "updateClause",
            "ruleId": "rule-1",
            "clauseId": "clause-1",
            "clause": {
                "contextKind": "org",
                "attribute": "name",
                "op": "startsWith",
                "values": ["A"],
                "negate": True,
            },
        },
    )
    clause = prod(updated)["rules"][0]["clauses"][0]
    assert clause == {
        "_id": "clause-1",
        "contextKind": "org",
        "attribute": "name",
        "op": "startsWith",
        "values": ["A"],
        "negate": True,
    }
    second_id = clauses[1]["_id"]
    removed = run(updated, {"kind": "removeClauses", "ruleId": "rule-1", "clauseIds": [second_id]})
    assert [c["_id"] for c in prod(removed)["rules"][0]["clauses"]] == ["clause-1"]
    assert fails(updated, {"kind": "removeClauses", "ruleId": "rule-1", "clauseIds": ["zz"]}) == (
        "/instructions/0/clauseIds/0"
    )
    assert fails(
        flag, {"kind": "updateClause", "ruleId": "rule-1", "clauseId": "zz", "clause": {}}
    ) == ("/instructions/0/clauseId")
    assert (
        fails(
            flag,
            {"kind": "addValuesToClause", "ruleId": "rule-9", "clauseId": "clause-1", "values": []},
        )
        == "/instructions/0/ruleId"
    )


def test_add_targets_for_users_and_other_kinds(flag: Flag) -> None:
    result = run(
        flag,
        {
            "kind": "addTargets",
            "contextKind": "user",
            "variationId": vid(flag, 0),
            "values": ["u9"],
        },
        {"kind": "addUserTargets", "variationId": vid(flag, 2), "values": ["u3", "u1"]},
        {"kind": "addTargets", "contextKind": "org", "variationId": vid(flag, 0), "values": ["o2"]},
        {
            "kind": "addTargets",
            "contextKind": "device",
            "variationId": vid(flag, 1),
            "values": ["d1"],
        },
    )
    config = prod(result)
    assert config["targets"] == [
        {"values": ["u1", "u2", "u3"], "variation": 2},
        {"values": ["u9"], "variation": 0},
    ]
    assert {"contextKind": "user", "values": [], "variation": 0} in config["contextTargets"]
    assert {"contextKind": "org", "values": ["o1", "o2"], "variation": 0} in config[
        "contextTargets"
    ]
    assert {"contextKind": "device", "values": ["d1"], "variation": 1} in config["contextTargets"]


def test_targeting_a_key_in_two_variations_is_refused(flag: Flag) -> None:
    path = fails(
        flag, {"kind": "addUserTargets", "variationId": vid(flag, 0), "values": ["ok", "u2"]}
    )
    assert path == "/instructions/0/values/1"
    org = {
        "kind": "addTargets",
        "contextKind": "org",
        "variationId": vid(flag, 1),
        "values": ["o1"],
    }
    assert fails(flag, org) == "/instructions/0/values/0"


def test_remove_replace_and_clear_targets(flag: Flag) -> None:
    removed = run(
        flag,
        {"kind": "removeUserTargets", "variationId": vid(flag, 2), "values": ["u1", "u2"]},
        {
            "kind": "removeTargets",
            "contextKind": "org",
            "variationId": vid(flag, 0),
            "values": ["o1"],
        },
    )
    assert prod(removed)["targets"] == []
    assert prod(removed)["contextTargets"] == []
    replaced = run(
        flag,
        {
            "kind": "replaceTargets",
            "targets": [
                {"contextKind": "user", "variationId": vid(flag, 1), "values": ["a"]},
                {"contextKind": "device", "variationId": vid(flag, 0), "values": ["d"]},
            ],
        },
    )
    assert prod(replaced)["targets"] == [{"values": ["a"], "variation": 1}]
    assert prod(replaced)["contextTargets"] == [
        {"contextKind": "user", "values": [], "variation": 1},
        {"contextKind": "device", "values": ["d"], "variation": 0},
    ]
    users = run(
        flag,
        {"kind": "replaceUserTargets", "targets": [{"variationId": vid(flag, 0), "values": ["z"]}]},
    )
    assert prod(users)["targets"] == [{"values": ["z"], "variation": 0}]
    assert {"contextKind": "org", "values": ["o1"], "variation": 0} in prod(users)["contextTargets"]
    cleared = run(flag, {"kind": "clearTargets", "variationId": vid(flag, 0)})
    assert prod(cleared)["contextTargets"] == [
        {"contextKind": "user", "values": [], "variation": 2}
    ]
    assert prod(cleared)["targets"] == [{"values": ["u1", "u2"], "variation": 2}]
    cleared_users = run(flag, {"kind": "clearUserTargets", "variationId": vid(flag, 2)})
    assert prod(cleared_users)["targets"] == []
    assert prod(cleared_users)["contextTargets"] == [
        {"contextKind": "org", "values": ["o1"], "variation": 0}
    ]
    bad = {
        "kind": "replaceTargets",
        "targets": [{"contextKind": "user", "variationId": "nope", "values": []}],
    }
    assert fails(flag, bad) == "/instructions/0/targets/0/variationId"


def test_prerequisite_instructions(flag: Flag, make_flag: Any) -> None:
    other = make_flag(key="other")
    third = make_flag(key="third")
    lookup = {"other": other, "third": third}.get
    added = run(
        flag,
        {"kind": "addPrerequisite", "key": "other", "variationId": other["variations"][1]["_id"]},
        flag_lookup=lookup,
    )
    assert prod(added)["prerequisites"] == [{"key": "other", "variation": 1}]
    updated = run(
        added,
        {
            "kind": "updatePrerequisite",
            "key": "other",
            "variationId": other["variations"][0]["_id"],
        },
        flag_lookup=lookup,
    )
    assert prod(updated)["prerequisites"] == [{"key": "other", "variation": 0}]
    replaced = run(
        updated,
        {
            "kind": "replacePrerequisites",
            "prerequisites": [{"key": "third", "variationId": third["variations"][1]["_id"]}],
        },
        flag_lookup=lookup,
    )
    assert prod(replaced)["prerequisites"] == [{"key": "third", "variation": 1}]
    removed = run(replaced, {"kind": "removePrerequisite", "key": "third"})
    assert prod(removed)["prerequisites"] == []
    again = {
        "kind": "addPrerequisite",
        "key": "other",
        "variationId": other["variations"][0]["_id"],
    }
    assert fails(added, again, flag_lookup=lookup) == "/instructions/0/key"
    assert fails(flag, {**again, "key": "missing"}, flag_lookup=lookup) == "/instructions/0/key"
    assert fails(flag, {**again, "key": "flag-a"}, flag_lookup=lookup) == "/instructions/0/key"
    assert (
        fails(flag, {**again, "variationId": "zz"}, flag_lookup=lookup)
        == "/instructions/0/variationId"
    )
    assert fails(flag, {"kind": "removePrerequisite", "key": "other"}) == "/instructions/0/key"
    assert fails(
        flag,
        {"kind": "updatePrerequisite", **{k: v for k, v in again.items() if k != "kind"}},
        flag_lookup=lookup,
    ) == ("/instructions/0/key")


def test_fallthrough_off_variation_and_track_events(flag: Flag) -> None:
    result = run(
        flag,
        {
            "kind": "updateFallthroughVariationOrRollout",
            "rolloutWeights": {vid(flag, 0): 50000, vid(flag, 1): 50000},
        },
        {"kind": "updateOffVariation", "variationId": vid(flag, 2)},
        {"kind": "updateTrackEvents", "trackEvents": True},
        {"kind": "updateTrackEventsFallthrough", "trackEvents": True},
    )
    config = prod(result)
    assert config["fallthrough"]["rollout"]["variations"] == [
        {"variation": 0, "weight": 50000},
        {"variation": 1, "weight": 50000},
    ]
    assert config["offVariation"] == 2
    assert (config["trackEvents"], config["trackEventsFallthrough"]) == (True, True)
    single = run(
        result, {"kind": "updateFallthroughVariationOrRollout", "variationId": vid(flag, 2)}
    )
    assert prod(single)["fallthrough"] == {"variation": 2}


def test_variation_instructions(flag: Flag) -> None:
    added = run(flag, {"kind": "addVariation", "value": "purple", "name": "Purple"}, env=None)
    assert added["variations"][-1] == {"_id": "new-1", "value": "purple", "name": "Purple"}
    updated = run(
        added,
        {"kind": "updateVariation", "variationId": "new-1", "value": "violet", "description": "d"},
    )
    assert updated["variations"][-1]["value"] == "violet"
    assert updated["variations"][-1]["description"] == "d"
    assert fails(flag, {"kind": "addVariation", "value": "red"}) == "/instructions/0/value"
    assert fails(flag, {"kind": "addVariation"}) == "/instructions/0/value"
    assert fails(
        flag, {"kind": "updateVariation", "variationId": vid(flag, 0), "value": "blue"}
    ) == ("/instructions/0/value")


def test_remove_variation_renumbers_indices(flag: Flag) -> None:
    added = run(flag, {"kind": "addVariation", "value": "first-unused"}, env=None)
    moved = run(
        added,
        {"kind": "updateRuleVariationOrRollout", "ruleId": "rule-1", "variationId": "new-1"},
        {"kind": "removeUserTargets", "variationId": vid(flag, 2), "values": ["u1", "u2"]},
    )
    removed = run(moved, {"kind": "removeVariation", "variationId": vid(flag, 2)}, env=None)
    assert [v["value"] for v in removed["variations"]] == ["red", "green", "first-unused"]
    assert prod(removed)["rules"][0]["variation"] == 2
    assert prod(removed)["contextTargets"] == [
        {"contextKind": "org", "values": ["o1"], "variation": 0}
    ]
    assert (
        fails(flag, {"kind": "removeVariation", "variationId": vid(flag, 2)})
        == "/instructions/0/variationId"
    )


def test_update_default_variation_by_value(flag: Flag) -> None:
    result = run(
        flag,
        {
            "kind": "updateDefaultVariation",
            "onVariationValue": "blue",
            "OffVariationValue": "green",
        },
    )
    assert result["defaults"] == {"onVariation": 2, "offVariation": 1}
    assert fails(flag, {"kind": "updateDefaultVariation", "onVariationValue": "pink"}) == (
        "/instructions/0/onVariationValue"
    )
    assert fails(flag, {"kind": "updateDefaultVariation"}) == "/instructions/0/onVariationValue"


def test_flag_settings_instructions(flag: Flag) -> None:
    result = run(
        flag,
        {"kind": "updateName", "value": "New name"},
        {"kind": "updateDescription", "value": "words"},
        {"kind": "addTags", "values": ["b", "a"]},
        {"kind": "removeTags", "values": ["b"]},
        {"kind": "makeFlagPermanent"},
        {"kind": "turnOnClientSideAvailability", "value": "usingEnvironmentId"},
        {"kind": "turnOffClientSideAvailability", "value": "usingMobileKey"},
        {"kind": "deprecateFlag"},
        {"kind": "updateMaintainerMember", "value": "member-1"},
        {"kind": "addCustomProperties", "key": "jira", "name": "Jira", "values": ["X-1", "X-2"]},
        {"kind": "removeCustomProperties", "key": "jira", "values": ["X-1"]},
        env=None,
    )
    assert (result["name"], result["description"], result["tags"]) == ("New name", "words", ["a"])
    assert result["temporary"] is False
    assert result["clientSideAvailability"] == {"usingMobileKey": False, "usingEnvironmentId": True}
    assert result["includeInSnippet"] is True
    assert (result["deprecated"], result["deprecatedDate"]) == (True, LATER)
    assert result["maintainerId"] == "member-1"
    assert result["customProperties"] == {"jira": {"name": "Jira", "value": ["X-2"]}}
    restored = run(
        result,
        {"kind": "restoreDeprecatedFlag"},
        {"kind": "makeFlagTemporary"},
        {"kind": "removeMaintainer"},
        {"kind": "replaceCustomProperties", "key": "jira", "values": ["Y"]},
        env=None,
    )
    assert restored["deprecated"] is False
    assert "deprecatedDate" not in restored
    assert restored["temporary"] is True
    assert "maintainerId" not in restored
    assert restored["customProperties"]["jira"] == {"name": "Jira", "value": ["Y"]}
    assert (
        fails(flag, {"kind": "turnOnClientSideAvailability", "value": "both"})
        == "/instructions/0/value"
    )
    assert fails(flag, {"kind": "updateName", "value": " "}) == "/instructions/0/value"


def test_archive_and_restore_mark_every_environment(flag: Flag) -> None:
    archived = run(flag, {"kind": "archiveFlag"}, env=None)
    assert (archived["archived"], archived["archivedDate"]) == (True, LATER)
    assert all(config["archived"] for config in archived["environments"].values())
    restored = run(archived, {"kind": "restoreFlag"}, env=None)
    assert restored["archived"] is False
    assert not any(config["archived"] for config in restored["environments"].values())


def test_delete_flag_returns_a_marker(flag: Flag) -> None:
    result = apply_semantic_patch(
        flag, [{"kind": "deleteFlag"}], environment_key=None, now_ms=LATER, new_id=lambda: "x"
    )
    assert result.delete is True


def test_unknown_kind_and_malformed_instructions(flag: Flag) -> None:
    assert fails(flag, {"kind": "turnFlagOn"}, {"kind": "fly"}) == "/instructions/1/kind"
    assert fails(flag, {"nokind": 1}) == "/instructions/0/kind"
    with pytest.raises(ValidationError) as raised:
        apply_semantic_patch(
            flag, [], environment_key="production", now_ms=LATER, new_id=lambda: "x"
        )
    assert raised.value.path == "/instructions"


def test_failing_late_instruction_changes_nothing(flag: Flag) -> None:
    path = fails(
        flag,
        {"kind": "turnFlagOff"},
        {"kind": "addUserTargets", "variationId": vid(flag, 0), "values": ["new-user"]},
        {"kind": "updateName", "value": "x"},
        {"kind": "removeRule", "ruleId": "missing"},
    )
    assert path == "/instructions/3/ruleId"


def test_every_documented_instruction_kind_is_supported() -> None:
    required = [
        "turnFlagOn",
        "turnFlagOff",
        "addRule",
        "removeRule",
        "reorderRules",
        "replaceRules",
        "updateRuleVariationOrRollout",
        "updateRuleDescription",
        "updateRuleTrackEvents",
        "addClauses",
        "removeClauses",
        "updateClause",
        "addValuesToClause",
        "removeValuesFromClause",
        "addTargets",
        "removeTargets",
        "replaceTargets",
        "clearTargets",
        "addUserTargets",
        "removeUserTargets",
        "replaceUserTargets",
        "clearUserTargets",
        "addPrerequisite",
        "removePrerequisite",
        "updatePrerequisite",
        "replacePrerequisites",
        "updateFallthroughVariationOrRollout",
        "updateOffVariation",
        "updateDefaultVariation",
        "addVariation",
        "removeVariation",
        "updateVariation",
        "updateTrackEvents",
        "updateTrackEventsFallthrough",
        "turnOnClientSideAvailability",
        "turnOffClientSideAvailability",
        "updateName",
        "updateDescription",
        "addTags",
        "removeTags",
        "makeFlagPermanent",
        "makeFlagTemporary",
        "archiveFlag",
        "restoreFlag",
        "deprecateFlag",
        "restoreDeprecatedFlag",
        "deleteFlag",
    ]
    assert set(required) <= set(FLAG_INSTRUCTIONS)


def test_semantic_patch_body_is_parsed() -> None:
    body = parse_semantic_patch_body(
        {"comment": "c", "environmentKey": "production", "instructions": [{"kind": "turnFlagOn"}]}
    )
    assert (body.comment, body.environment_key, body.instructions) == (
        "c",
        "production",
        [{"kind": "turnFlagOn"}],
    )
    for bad, path in (
        ({"instructions": "x"}, "/instructions"),
        ({"instructions": [{"kind": 1}]}, "/instructions/0/kind"),
        ({"environmentKey": 3, "instructions": [{"kind": "turnFlagOn"}]}, "/environmentKey"),
        ({"comment": [], "instructions": [{"kind": "turnFlagOn"}]}, "/comment"),
    ):
        with pytest.raises(ValidationError) as raised:
            parse_semantic_patch_body(bad)
        assert raised.value.path == path
    with pytest.raises(InvalidInput):
        parse_semantic_patch_body([{"kind": "turnFlagOn"}])


def test_remove_variation_renumbers_rollouts_and_drops_its_zero_weight(flag: Flag) -> None:
    weights = {vid(flag, 0): 50000, vid(flag, 1): 0, vid(flag, 2): 50000}
    prepared = run(
        flag,
        {"kind": "updateDefaultVariation", "onVariationValue": "blue"},
        {"kind": "updateFallthroughVariationOrRollout", "rolloutWeights": weights},
    )
    prepared = run(
        prepared,
        {"kind": "updateFallthroughVariationOrRollout", "variationId": vid(flag, 2)},
        env="test",
    )
    removed = run(prepared, {"kind": "removeVariation", "variationId": vid(flag, 1)}, env=None)
    assert [v["value"] for v in removed["variations"]] == ["red", "blue"]
    assert prod(removed)["fallthrough"]["rollout"]["variations"] == [
        {"variation": 0, "weight": 50000},
        {"variation": 1, "weight": 50000},
    ]
    assert prod(removed)["rules"][0]["variation"] == 1
    assert prod(removed)["targets"] == [{"values": ["u1", "u2"], "variation": 1}]
    assert removed["environments"]["test"]["fallthrough"] == {"variation": 1}
    assert removed["defaults"] == {"onVariation": 1, "offVariation": 0}


def test_remove_variation_names_where_it_is_used(flag: Flag) -> None:
    with pytest.raises(ValidationError) as raised:
        apply_semantic_patch(
            flag,
            [{"kind": "removeVariation", "variationId": vid(flag, 0)}],
            environment_key=None,
            now_ms=LATER,
            new_id=lambda: "x",
        )
    assert "defaults.offVariation" in raised.value.message
    assert "production off variation" in raised.value.message
