"""Properties: bad input only ever raises the domain's own errors, edits never touch their input,
whatever passes validation decodes in the evaluation core, and SDK data survives import/export."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import strategies
from flagstaff_core import decode_flag, decode_segment, encode_flag, encode_segment
from flagstaff_server.domain import (
    FLAG_INSTRUCTIONS,
    apply_flag_json_patch,
    apply_semantic_patch,
    bump_versions,
    flag_document_from_sdk,
    new_flag_document,
    segment_document_from_sdk,
    to_sdk_flag,
    to_sdk_segment,
    validate_flag_document,
)
from flagstaff_server.domain import (
    validate_flag_document as validate,
)
from flagstaff_server.errors import ValidationError, VersionConflict
from hypothesis import given, settings
from hypothesis import strategies as st

NOW = 1_700_000_000_000
EXAMPLES = settings(max_examples=150, deadline=None)


def id_factory(prefix: str = "id") -> Any:
    counter = itertools.count(1)
    return lambda: f"{prefix}-{next(counter)}"


def make_flag(key: str = "flag-a") -> dict[str, Any]:
    document = new_flag_document(
        {
            "key": key,
            "name": key,
            "variations": [{"value": "red"}, {"value": "green"}, {"value": "blue"}],
        },
        [("production", "Production"), ("test", "Test")],
        now_ms=NOW,
        new_id=id_factory(key),
    )
    production = document["environments"]["production"]
    production["targets"] = [{"values": ["u1"], "variation": 2}]
    production["contextTargets"] = [
        {"contextKind": "user", "values": [], "variation": 2},
        {"contextKind": "org", "values": ["o1"], "variation": 0},
    ]
    production["rules"] = [
        {
            "_id": "rule-1",
            "clauses": [
                {
                    "_id": "clause-1",
                    "contextKind": "user",
                    "attribute": "country",
                    "op": "in",
                    "values": ["se"],
                    "negate": False,
                }
            ],
            "variation": 1,
            "trackEvents": False,
        }
    ]
    validate(document)
    return document


FLAG = make_flag()
OTHER = make_flag("other")
LOOKUP = {"other": OTHER, "flag-a": FLAG}.get
VARIATION_IDS = [v["_id"] for v in FLAG["variations"]]
OTHER_IDS = [v["_id"] for v in OTHER["variations"]]

JUNK = st.sampled_from([None, 3, -1, 1.5, True, "", "x", [], {}, ["a"], {"a": 1}])
CLAUSE = st.fixed_dictionaries(
    {
        "attribute": st.sampled_from(["country", "/a/b", "//", "", "key"]),
        "op": st.sampled_from(
            ["in", "matches", "semVerEqual", "before", "bogus", "segmentMatch", "lessThan"]
        ),
        "values": st.lists(
            st.sampled_from(["se", "(", "1.2.3", "2024-01-01T00:00:00Z", 5, True]), max_size=2
        ),
    },
    optional={
        "contextKind": st.sampled_from(["user", "org", "multi", ""]),
        "negate": st.booleans(),
    },
)
PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "variationId": st.sampled_from([*VARIATION_IDS, "nope"]),
    "values": st.lists(st.sampled_from(["u1", "u2", "o1", "o2", "tag", 7]), max_size=3),
    "contextKind": st.sampled_from(["user", "org", "device", "kind", ""]),
    "ruleId": st.sampled_from(["rule-1", "nope"]),
    "beforeRuleId": st.sampled_from(["rule-1", "nope"]),
    "clauseId": st.sampled_from(["clause-1", "nope"]),
    "clauseIds": st.lists(st.sampled_from(["clause-1", "nope"]), max_size=2),
    "ruleIds": st.lists(st.sampled_from(["rule-1", "nope"]), max_size=2),
    "clauses": st.lists(CLAUSE, max_size=2),
    "clause": CLAUSE,
    "rolloutWeights": st.dictionaries(
        st.sampled_from([*VARIATION_IDS, "nope"]),
        st.sampled_from([0, 50000, 100000, -5, 100001]),
        max_size=3,
    ),
    "rolloutBucketBy": st.sampled_from(["key", "/", "email"]),
    "rolloutContextKind": st.sampled_from(["user", "org", "multi"]),
    "description": st.sampled_from(["d", 3]),
    "trackEvents": st.sampled_from([True, False, "yes"]),
    "key": st.sampled_from(["other", "flag-a", "missing"]),
    "value": st.sampled_from(
        ["red", "purple", "usingMobileKey", "usingEnvironmentId", 1, {"x": 1}, " "]
    ),
    "name": st.sampled_from(["n", 4]),
    "targets": st.lists(
        st.fixed_dictionaries(
            {
                "variationId": st.sampled_from([*VARIATION_IDS, "nope"]),
                "values": st.lists(st.sampled_from(["u1", "u9", "o1"]), max_size=2),
            },
            optional={"contextKind": st.sampled_from(["user", "org"])},
        ),
        max_size=2,
    ),
    "rules": st.lists(
        st.fixed_dictionaries(
            {"clauses": st.lists(CLAUSE, max_size=1)},
            optional={
                "variationId": st.sampled_from([*VARIATION_IDS, "nope"]),
                "trackEvents": st.booleans(),
            },
        ),
        max_size=2,
    ),
    "prerequisites": st.lists(
        st.fixed_dictionaries(
            {
                "key": st.sampled_from(["other", "missing"]),
                "variationId": st.sampled_from([*OTHER_IDS, "x"]),
            }
        ),
        max_size=2,
    ),
    "onVariationValue": st.sampled_from(["red", "pink"]),
    "offVariationValue": st.sampled_from(["blue", 0]),
}


@st.composite
def instructions(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from([*FLAG_INSTRUCTIONS, "bogus"]))
    names = draw(st.lists(st.sampled_from(sorted(PARAMS)), max_size=5, unique=True))
    instruction: dict[str, Any] = {"kind": kind}
    for name in names:
        instruction[name] = draw(
            st.one_of(PARAMS[name], JUNK) if draw(st.integers(0, 5)) == 0 else PARAMS[name]
        )
    if kind in ("addPrerequisite", "updatePrerequisite") and "variationId" in instruction:
        instruction["variationId"] = draw(st.sampled_from([*OTHER_IDS, instruction["variationId"]]))
    return instruction


def _check_decodes(document: dict[str, Any]) -> None:
    for env_key in document["environments"]:
        decode_flag(to_sdk_flag(document, env_key))


@EXAMPLES
@given(
    st.lists(instructions(), min_size=1, max_size=4), st.sampled_from(["production", "test", None])
)
def test_semantic_patch_keeps_a_valid_flag_valid_or_refuses(
    batch: list[dict[str, Any]], env: str | None
) -> None:
    before = copy.deepcopy(FLAG)
    refusal: ValidationError | None = None
    try:
        result = apply_semantic_patch(
            FLAG,
            batch,
            environment_key=env,
            now_ms=NOW + 1,
            new_id=id_factory("new"),
            flag_lookup=LOOKUP,
        )
    except ValidationError as error:
        refusal = error
    if refusal is not None:
        assert str(refusal.path).startswith(("/instructions", "/environmentKey"))
    else:
        validate_flag_document(result.document, flag_lookup=LOOKUP)
        _check_decodes(result.document)
        bump_versions(FLAG, result.document, NOW + 1)
    assert before == FLAG


PATHS = [
    "/name",
    "/description",
    "/tags/-",
    "/tags/0",
    "/variations/0/value",
    "/variations/-",
    "/variations/1",
    "/environments/production/on",
    "/environments/production/rules/0",
    "/environments/production/rules/-",
    "/environments/production/rules/0/clauses/0/op",
    "/environments/production/rules/0/variation",
    "/environments/production/targets/0/values/-",
    "/environments/production/targets/0/variation",
    "/environments/production/fallthrough",
    "/environments/production/offVariation",
    "/environments/test/rules/0",
    "/environments/production/prerequisites/-",
    "/_version",
    "/key",
    "/environments/production/version",
    "/nope/deeper",
    "/environments/production/contextTargets/1",
    "",
    "/environments/production/salt",
]
VALUES = st.one_of(
    JUNK,
    st.sampled_from(
        [
            "renamed",
            {"variation": 0},
            {"rollout": {"variations": [{"variation": 0, "weight": 100000}]}},
            {"clauses": [{"attribute": "a", "op": "in", "values": [1]}], "variation": 1},
            {"key": "other", "variation": 0},
            {"value": "purple"},
            "matches",
            7,
        ]
    ),
)
OPERATION = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
        "path": st.sampled_from(PATHS),
    },
    optional={"value": VALUES, "from": st.sampled_from(PATHS)},
)


@EXAMPLES
@given(st.lists(OPERATION, min_size=1, max_size=4))
def test_json_patch_raises_only_domain_errors_and_never_touches_input(
    operations: list[dict[str, Any]],
) -> None:
    before = copy.deepcopy(FLAG)
    try:
        patched = apply_flag_json_patch(FLAG, operations, new_id=id_factory("new"))
    except (ValidationError, VersionConflict):
        pass
    else:
        try:
            validate_flag_document(patched, flag_lookup=LOOKUP)
        except ValidationError:
            pass
        else:
            _check_decodes(patched)
            bump_versions(FLAG, patched, NOW + 1)
    assert before == FLAG


def _with_rule_ids(original: dict[str, Any], exported: dict[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(original)
    for rule, exported_rule in zip(result.get("rules") or [], exported["rules"], strict=True):
        if not rule.get("id"):
            rule["id"] = exported_rule["id"]
    return result


@EXAMPLES
@given(strategies.data_sets())
def test_sdk_data_survives_import_and_export(data: dict[str, Any]) -> None:
    # Tombstones (`deleted: true`) are not imported: the import service skips them, so the round
    # trip is defined for live items only.
    for key, sdk_flag in data["flags"].items():
        if sdk_flag.get("deleted"):
            continue
        document = flag_document_from_sdk(
            sdk_flag,
            environment_key="production",
            environment_name="P",
            now_ms=NOW,
            new_id=id_factory(),
        )
        validate_flag_document(document, strict=False)
        exported = to_sdk_flag(document, "production")
        assert encode_flag(decode_flag(exported)) == encode_flag(
            decode_flag(_with_rule_ids(sdk_flag, exported))
        ), key
    for key, sdk_segment in data["segments"].items():
        if sdk_segment.get("deleted"):
            continue
        document = segment_document_from_sdk(sdk_segment, now_ms=NOW, new_id=id_factory())
        exported = to_sdk_segment(document)
        expected = decode_segment(_with_rule_ids(sdk_segment, exported))
        assert encode_segment(decode_segment(exported)) == encode_segment(expected), key
