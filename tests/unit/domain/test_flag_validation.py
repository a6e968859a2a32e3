"""Strict and lenient validation of REST flag documents: each problem is reported at its pointer."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from flagstaff_server.domain import validate_flag_document
from flagstaff_server.domain.clause_validation import is_semver, is_timestamp
from flagstaff_server.domain.validation import is_attribute_reference
from flagstaff_server.errors import ValidationError

P = "/environments/production"
Edit = Callable[[dict[str, Any]], None]


def _set(path: str, value: Any) -> Edit:
    def edit(document: dict[str, Any]) -> None:
        *parents, last = path.strip("/").split("/")
        target: Any = document
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return edit


def _delete(path: str) -> Edit:
    def edit(document: dict[str, Any]) -> None:
        *parents, last = path.strip("/").split("/")
        target: Any = document
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        del target[int(last) if isinstance(target, list) else last]

    return edit


CLAUSE = f"{P}/rules/0/clauses/0"

CASES: list[tuple[str, Edit, str]] = [
    ("missing key", _delete("/key"), "/key"),
    ("bad key", _set("/key", "has space"), "/key"),
    ("key not a string", _set("/key", 7), "/key"),
    ("missing name", _delete("/name"), "/name"),
    ("empty name", _set("/name", "  "), "/name"),
    ("variations not a list", _set("/variations", {}), "/variations"),
    ("no variations", _set("/variations", []), "/variations"),
    ("variation without value", _delete("/variations/1/value"), "/variations/1/value"),
    ("duplicate variation value", _set("/variations/2/value", "red"), "/variations/2/value"),
    ("duplicate variation id", _set("/variations/1/_id", "id-1"), "/variations/1/_id"),
    ("tags wrong type", _set("/tags", [1]), "/tags/0"),
    ("temporary wrong type", _set("/temporary", "yes"), "/temporary"),
    ("bad kind", _set("/kind", "json"), "/kind"),
    ("defaults out of range", _set("/defaults/onVariation", 3), "/defaults/onVariation"),
    (
        "availability wrong type",
        _set("/clientSideAvailability/usingMobileKey", 1),
        "/clientSideAvailability/usingMobileKey",
    ),
    (
        "custom property value",
        _set("/customProperties", {"a": {"name": "A", "value": "x"}}),
        "/customProperties/a/value",
    ),
    ("environments wrong type", _set("/environments", []), "/environments"),
    ("on missing", _delete(f"{P}/on"), f"{P}/on"),
    ("on wrong type", _set(f"{P}/on", "true"), f"{P}/on"),
    ("salt wrong type", _set(f"{P}/salt", 5), f"{P}/salt"),
    ("off variation too high", _set(f"{P}/offVariation", 3), f"{P}/offVariation"),
    ("off variation negative", _set(f"{P}/offVariation", -1), f"{P}/offVariation"),
    ("off variation a float", _set(f"{P}/offVariation", 1.5), f"{P}/offVariation"),
    ("fallthrough missing", _delete(f"{P}/fallthrough"), f"{P}/fallthrough"),
    ("fallthrough empty", _set(f"{P}/fallthrough", {}), f"{P}/fallthrough/variation"),
    (
        "fallthrough both",
        _set(f"{P}/fallthrough", {"variation": 0, "rollout": {"variations": []}}),
        f"{P}/fallthrough/variation",
    ),
    (
        "fallthrough out of range",
        _set(f"{P}/fallthrough", {"variation": 9}),
        f"{P}/fallthrough/variation",
    ),
    ("target out of range", _set(f"{P}/targets/0/variation", 3), f"{P}/targets/0/variation"),
    (
        "target values wrong type",
        _set(f"{P}/targets/0/values", ["u1", 2]),
        f"{P}/targets/0/values/1",
    ),
    ("target missing values", _delete(f"{P}/targets/0/values"), f"{P}/targets/0/values"),
    (
        "duplicate target key",
        _set(
            f"{P}/targets", [{"values": ["a"], "variation": 0}, {"values": ["a"], "variation": 1}]
        ),
        f"{P}/targets/1/values/0",
    ),
    (
        "duplicate key in one target",
        _set(f"{P}/targets/0/values", ["u1", "u1"]),
        f"{P}/targets/0/values/1",
    ),
    (
        "duplicate context target key",
        _set(f"{P}/contextTargets/1/values", ["o1", "o1"]),
        f"{P}/contextTargets/1/values/1",
    ),
    (
        "org kind in user targets",
        _set(f"{P}/targets/0/contextKind", "org"),
        f"{P}/targets/0/contextKind",
    ),
    (
        "context target without kind",
        _delete(f"{P}/contextTargets/1/contextKind"),
        f"{P}/contextTargets/1/contextKind",
    ),
    (
        "context target bad kind",
        _set(f"{P}/contextTargets/1/contextKind", "multi"),
        f"{P}/contextTargets/1/contextKind",
    ),
    (
        "context target out of range",
        _set(f"{P}/contextTargets/1/variation", 7),
        f"{P}/contextTargets/1/variation",
    ),
    ("rules wrong type", _set(f"{P}/rules", {}), f"{P}/rules"),
    ("rule without clauses", _delete(f"{P}/rules/0/clauses"), f"{P}/rules/0/clauses"),
    ("rule variation out of range", _set(f"{P}/rules/0/variation", 3), f"{P}/rules/0/variation"),
    ("rule without variation", _delete(f"{P}/rules/0/variation"), f"{P}/rules/0/variation"),
    ("rule track events type", _set(f"{P}/rules/0/trackEvents", "no"), f"{P}/rules/0/trackEvents"),
    (
        "duplicate rule id",
        lambda d: d["environments"]["production"]["rules"].append(
            copy.deepcopy(d["environments"]["production"]["rules"][0])
        ),
        f"{P}/rules/1/_id",
    ),
    ("unknown operator", _set(f"{CLAUSE}/op", "equals"), f"{CLAUSE}/op"),
    ("clause without op", _delete(f"{CLAUSE}/op"), f"{CLAUSE}/op"),
    ("clause without attribute", _delete(f"{CLAUSE}/attribute"), f"{CLAUSE}/attribute"),
    ("clause empty attribute", _set(f"{CLAUSE}/attribute", ""), f"{CLAUSE}/attribute"),
    ("clause values not a list", _set(f"{CLAUSE}/values", "se"), f"{CLAUSE}/values"),
    ("clause negate type", _set(f"{CLAUSE}/negate", 0), f"{CLAUSE}/negate"),
    ("clause bad context kind", _set(f"{CLAUSE}/contextKind", "kind"), f"{CLAUSE}/contextKind"),
    ("bad attribute reference", _set(f"{CLAUSE}/attribute", "/a//b"), f"{CLAUSE}/attribute"),
    ("bad attribute escape", _set(f"{CLAUSE}/attribute", "/a~2"), f"{CLAUSE}/attribute"),
    ("bad regex", lambda d: _clause(d, "matches", ["ok", "(unclosed"]), f"{CLAUSE}/values/1"),
    ("regex not a string", lambda d: _clause(d, "matches", [3]), f"{CLAUSE}/values/0"),
    # RE2 syntax, as evaluation reads it: these compile in Python's `re` but never match
    ("regex lookahead", lambda d: _clause(d, "matches", ["^(?=a)"]), f"{CLAUSE}/values/0"),
    ("regex backreference", lambda d: _clause(d, "matches", [r"(a)\1"]), f"{CLAUSE}/values/0"),
    ("regex \\Z", lambda d: _clause(d, "matches", [r"end\Z"]), f"{CLAUSE}/values/0"),
    ("bad semver", lambda d: _clause(d, "semVerEqual", ["1.2.3", "v1.0.0"]), f"{CLAUSE}/values/1"),
    (
        "semver leading zero",
        lambda d: _clause(d, "semVerLessThan", ["01.0.0"]),
        f"{CLAUSE}/values/0",
    ),
    (
        "semver four parts",
        lambda d: _clause(d, "semVerGreaterThan", ["1.2.3.4"]),
        f"{CLAUSE}/values/0",
    ),
    ("date only", lambda d: _clause(d, "before", ["2024-01-01"]), f"{CLAUSE}/values/0"),
    (
        "date without zone",
        lambda d: _clause(d, "after", ["2024-01-01T00:00:00"]),
        f"{CLAUSE}/values/0",
    ),
    (
        "impossible date",
        lambda d: _clause(d, "after", ["2024-02-30T00:00:00Z"]),
        f"{CLAUSE}/values/0",
    ),
    (
        "numeric string date",
        lambda d: _clause(d, "before", ["1512543600000"]),
        f"{CLAUSE}/values/0",
    ),
    ("boolean date", lambda d: _clause(d, "before", [True]), f"{CLAUSE}/values/0"),
    ("number operator with string", lambda d: _clause(d, "lessThan", ["5"]), f"{CLAUSE}/values/0"),
    ("string operator with number", lambda d: _clause(d, "startsWith", [5]), f"{CLAUSE}/values/0"),
    ("in with object", lambda d: _clause(d, "in", [{"a": 1}]), f"{CLAUSE}/values/0"),
    ("segment match with number", lambda d: _clause(d, "segmentMatch", [1]), f"{CLAUSE}/values/0"),
    (
        "rollout empty",
        _set(f"{P}/fallthrough", {"rollout": {"variations": []}}),
        f"{P}/fallthrough/rollout/variations",
    ),
    (
        "rollout missing variations",
        _set(f"{P}/fallthrough", {"rollout": {}}),
        f"{P}/fallthrough/rollout/variations",
    ),
    (
        "rollout sum",
        _set(
            f"{P}/fallthrough",
            {
                "rollout": {
                    "variations": [
                        {"variation": 0, "weight": 60000},
                        {"variation": 1, "weight": 30000},
                    ]
                }
            },
        ),
        f"{P}/fallthrough/rollout/variations",
    ),
    (
        "rollout weight range",
        _set(
            f"{P}/fallthrough",
            {
                "rollout": {
                    "variations": [
                        {"variation": 0, "weight": 100001},
                        {"variation": 1, "weight": -1},
                    ]
                }
            },
        ),
        f"{P}/fallthrough/rollout/variations/0/weight",
    ),
    (
        "rollout weight type",
        _set(f"{P}/fallthrough", {"rollout": {"variations": [{"variation": 0, "weight": "all"}]}}),
        f"{P}/fallthrough/rollout/variations/0/weight",
    ),
    (
        "rule with variation and rollout",
        _set(f"{P}/rules/0/rollout", {"variations": [{"variation": 0, "weight": 100000}]}),
        f"{P}/rules/0/variation",
    ),
    (
        "rollout variation range",
        lambda d: _rule_rollout(d, 5),
        f"{P}/rules/0/rollout/variations/0/variation",
    ),
    (
        "rollout bad bucketBy",
        _set(
            f"{P}/fallthrough",
            {
                "rollout": {
                    "contextKind": "user",
                    "bucketBy": "/",
                    "variations": [{"variation": 0, "weight": 100000}],
                }
            },
        ),
        f"{P}/fallthrough/rollout/bucketBy",
    ),
    (
        "rollout bad context kind",
        _set(
            f"{P}/fallthrough",
            {"rollout": {"contextKind": "", "variations": [{"variation": 0, "weight": 100000}]}},
        ),
        f"{P}/fallthrough/rollout/contextKind",
    ),
    (
        "rollout untracked type",
        _set(
            f"{P}/fallthrough",
            {"rollout": {"variations": [{"variation": 0, "weight": 100000, "_untracked": "no"}]}},
        ),
        f"{P}/fallthrough/rollout/variations/0/_untracked",
    ),
    (
        "rollout kind",
        _set(
            f"{P}/fallthrough",
            {"rollout": {"kind": "split", "variations": [{"variation": 0, "weight": 100000}]}},
        ),
        f"{P}/fallthrough/rollout/kind",
    ),
    ("prerequisite not an object", _set(f"{P}/prerequisites", ["other"]), f"{P}/prerequisites/0"),
    (
        "prerequisite without variation",
        _set(f"{P}/prerequisites", [{"key": "other"}]),
        f"{P}/prerequisites/0/variation",
    ),
    (
        "prerequisite on itself",
        _set(f"{P}/prerequisites", [{"key": "flag-a", "variation": 0}]),
        f"{P}/prerequisites/0/key",
    ),
    (
        "prerequisite twice",
        _set(
            f"{P}/prerequisites",
            [{"key": "other", "variation": 0}, {"key": "other", "variation": 1}],
        ),
        f"{P}/prerequisites/1/key",
    ),
    (
        "prerequisite missing flag",
        _set(f"{P}/prerequisites", [{"key": "ghost", "variation": 0}]),
        f"{P}/prerequisites/0/key",
    ),
    (
        "prerequisite variation range",
        _set(f"{P}/prerequisites", [{"key": "other", "variation": 2}]),
        f"{P}/prerequisites/0/variation",
    ),
    ("debug date type", _set(f"{P}/_debugEventsUntilDate", "soon"), f"{P}/_debugEventsUntilDate"),
]


def _rule_rollout(document: dict[str, Any], variation: int) -> None:
    rule = document["environments"]["production"]["rules"][0]
    del rule["variation"]
    rule["rollout"] = {"variations": [{"variation": variation, "weight": 100000}]}


def _clause(document: dict[str, Any], op: str, values: list[Any]) -> None:
    clause = document["environments"]["production"]["rules"][0]["clauses"][0]
    clause["op"] = op
    clause["values"] = values


@pytest.mark.parametrize(
    ("edit", "path"), [(edit, path) for _, edit, path in CASES], ids=[c[0] for c in CASES]
)
def test_strict_validation_reports_path(
    flag: dict[str, Any], make_flag: Any, edit: Edit, path: str
) -> None:
    other = make_flag(key="other")
    validate_flag_document(flag, flag_lookup={"other": other}.get)
    document = copy.deepcopy(flag)
    edit(document)
    with pytest.raises(ValidationError) as raised:
        validate_flag_document(document, flag_lookup={"other": other}.get)
    assert raised.value.path == path
    assert raised.value.message


LENIENT_ACCEPTS = [
    "off variation too high",
    "fallthrough empty",
    "duplicate target key",
    "unknown operator",
    "bad regex",
    "bad semver",
    "date only",
    "rollout sum",
    "bad attribute reference",
    "prerequisite on itself",
    "rollout empty",
    "duplicate variation value",
    "no variations",
]


@pytest.mark.parametrize("name", LENIENT_ACCEPTS)
def test_lenient_validation_accepts_what_sdks_can_decode(flag: dict[str, Any], name: str) -> None:
    edit = next(edit for case, edit, _ in CASES if case == name)
    document = copy.deepcopy(flag)
    edit(document)
    validate_flag_document(document, strict=False)


@pytest.mark.parametrize(
    "name",
    ["on wrong type", "clause values not a list", "rollout weight type", "target missing values"],
)
def test_lenient_validation_still_checks_json_types(flag: dict[str, Any], name: str) -> None:
    edit = next(edit for case, edit, _ in CASES if case == name)
    document = copy.deepcopy(flag)
    edit(document)
    with pytest.raises(ValidationError):
        validate_flag_document(document, strict=False)


def test_prerequisites_are_only_shape_checked_without_a_lookup(flag: dict[str, Any]) -> None:
    flag["environments"]["production"]["prerequisites"] = [{"key": "ghost", "variation": 4}]
    validate_flag_document(flag)


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("1.2.3", True),
        ("2", True),
        ("2.0", True),
        ("2-rc.1", True),
        ("1.2.3+build.5", True),
        ("1.2.3-beta+exp", True),
        ("v1.2.3", False),
        ("02.0.0", False),
        ("1.2.3.4", False),
        ("", False),
        ("1..2", False),
        ("1.2.3-", False),
    ],
)
def test_semver_syntax(text: str, valid: bool) -> None:
    assert is_semver(text) is valid


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        (1512543600000, True),
        (1.5, True),
        ("2024-01-01T00:00:00Z", True),
        ("2024-01-01t10:00:00.123456789+02:00", True),
        ("2024-01-01", False),
        ("2024-01-01T00:00Z", False),
        ("1512543600000", False),
        (True, False),
        (None, False),
        ("2024-13-01T00:00:00Z", False),
    ],
)
def test_timestamp_syntax(value: Any, valid: bool) -> None:
    assert is_timestamp(value) is valid


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("name", True),
        ("/name", True),
        ("/a/b", True),
        ("/a~1b/c~0", True),
        ("/", False),
        ("", False),
        ("//", False),
        ("/a/", False),
        ("/a~2", False),
        ("/a~", False),
        ("plain/with~slash", True),
    ],
)
def test_attribute_reference_syntax(text: str, valid: bool) -> None:
    assert is_attribute_reference(text) is valid


def test_prerequisite_cycles_are_refused(flag: dict[str, Any], make_flag: Any) -> None:
    middle = make_flag(key="middle")
    last = make_flag(key="last")
    middle["environments"]["production"]["prerequisites"] = [{"key": "last", "variation": 0}]
    last["environments"]["production"]["prerequisites"] = [{"key": "flag-a", "variation": 0}]
    lookup = {"middle": middle, "last": last}.get
    flag["environments"]["production"]["prerequisites"] = [{"key": "middle", "variation": 1}]
    with pytest.raises(ValidationError) as raised:
        validate_flag_document(flag, flag_lookup=lookup)
    assert raised.value.path == f"{P}/prerequisites/0/key"
    assert "cycle" in raised.value.message


def test_a_chain_into_another_environment_is_not_a_cycle(
    flag: dict[str, Any], make_flag: Any
) -> None:
    other = make_flag(key="other")
    other["environments"]["test"]["prerequisites"] = [{"key": "flag-a", "variation": 0}]
    flag["environments"]["production"]["prerequisites"] = [{"key": "other", "variation": 1}]
    validate_flag_document(flag, flag_lookup={"other": other}.get)


@pytest.mark.parametrize("pattern", [r"end\z", r"\p{Greek}", r"\Qa.b\E", "(?<name>x)"])
def test_patterns_in_re2_syntax_are_accepted(flag: dict[str, Any], pattern: str) -> None:
    # Python's `re` rejects each of these; evaluation (RE2) reads them
    document = copy.deepcopy(flag)
    _clause(document, "matches", [pattern])
    validate_flag_document(document)
