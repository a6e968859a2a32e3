"""The benchmark's cases: LaunchDarkly-format flag data and context JSON, shared by every runner.

Each case names the flag to evaluate and the contexts to evaluate it for; the data of all cases is
merged into one data set so each runner loads it once. Nothing here imports an evaluator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    name: str
    description: str
    flag_key: str
    contexts: tuple[Json, ...]


def build_flag(key: str, **fields: Any) -> Json:
    """A complete flag object, as the official SDK requires (every field present)."""
    flag: Json = {
        "key": key,
        "version": 1,
        "on": True,
        "variations": [True, False],
        "offVariation": 1,
        "fallthrough": {"variation": 0},
        "prerequisites": [],
        "targets": [],
        "contextTargets": [],
        "rules": [],
        "salt": f"{key}-salt",
        "trackEvents": False,
        "trackEventsFallthrough": False,
        "debugEventsUntilDate": None,
        "clientSide": False,
        "clientSideAvailability": {"usingMobileKey": False, "usingEnvironmentId": False},
        "deleted": False,
    }
    flag.update(fields)
    return flag


def build_segment(key: str, **fields: Any) -> Json:
    segment: Json = {
        "key": key,
        "version": 1,
        "included": [],
        "excluded": [],
        "includedContexts": [],
        "excludedContexts": [],
        "rules": [],
        "salt": f"{key}-salt",
        "unbounded": False,
        "deleted": False,
    }
    segment.update(fields)
    return segment


def build_clause(attribute: str, op: str, values: list[Any], *, negate: bool = False) -> Json:
    return {
        "contextKind": "user",
        "attribute": attribute,
        "op": op,
        "values": values,
        "negate": negate,
    }


def build_rule(rule_id: str, clauses: list[Json], variation: int) -> Json:
    return {"id": rule_id, "clauses": clauses, "variation": variation, "trackEvents": False}


def build_user(key: str, **attributes: Any) -> Json:
    return {"kind": "user", "key": key, **attributes}


def simple_boolean() -> tuple[Case, Json]:
    flag = build_flag("bench-simple")
    contexts = tuple(build_user(f"simple-{i}") for i in range(8))
    case = Case(
        name="simple",
        description="boolean flag, on, fixed fallthrough",
        flag_key=flag["key"],
        contexts=contexts,
    )
    return case, {"flags": {flag["key"]: flag}, "segments": {}}


def rules_then_rollout() -> tuple[Case, Json]:
    # Every context misses both rules, so each evaluation checks two clauses and then buckets.
    flag = build_flag(
        "bench-rollout",
        variations=["control", "treatment"],
        offVariation=0,
        rules=[
            build_rule("rule-country", [build_clause("country", "in", ["fr", "de", "nl"])], 1),
            build_rule("rule-staff", [build_clause("email", "endsWith", ["@staff.example"])], 0),
        ],
        fallthrough={
            "rollout": {
                "variations": [{"variation": 0, "weight": 50000}, {"variation": 1, "weight": 50000}]
            }
        },
    )
    contexts = tuple(
        build_user(f"rollout-{i}", country="us", email=f"rollout-{i}@customer.example")
        for i in range(16)
    )
    case = Case(
        name="rules+rollout",
        description="2 rules (both miss) + 50/50 fallthrough rollout",
        flag_key=flag["key"],
        contexts=contexts,
    )
    return case, {"flags": {flag["key"]: flag}, "segments": {}}


def twenty_rules() -> tuple[Case, Json]:
    # Rules 0-18 never match the bench contexts; rule 19 matches half of them, so every
    # evaluation checks all 20 rules (string, regex and semver operators).
    rules = []
    for i in range(19):
        kind = i % 4
        if kind == 0:
            clause = build_clause(
                "email", "endsWith", [f"@partner-{i}.example", f"@vendor-{i}.example"]
            )
        elif kind == 1:
            clause = build_clause("email", "matches", [rf"^admin-{i}\d*@", rf"@ops{i}\."])
        elif kind == 2:
            clause = build_clause("appVersion", "semVerGreaterThan", [f"{10 + i}.0.0"])
        else:
            clause = build_clause("name", "startsWith", [f"Tester{i}", f"QA{i}"])
        second = build_clause("plan", "in", ["enterprise", f"pilot-{i}"])
        rules.append(build_rule(f"rule-{i}", [clause, second], i % 2))
    rules.append(
        build_rule(
            "rule-19",
            [
                build_clause("appVersion", "semVerLessThan", ["4.0.0"]),
                build_clause("email", "matches", [r"^beta-[0-9]+@example\.com$"]),
                build_clause("plan", "in", ["free", "pro"]),
            ],
            1,
        )
    )
    flag = build_flag("bench-twenty-rules", rules=rules)
    contexts = tuple(
        build_user(
            f"twenty-{i}",
            name=f"User {i}",
            email=(f"beta-{i}@example.com" if i % 2 == 0 else f"user-{i}@example.com"),
            appVersion=f"3.{i}.1",
            plan="pro",
        )
        for i in range(8)
    )
    case = Case(
        name="20 rules",
        description="20 rules of endsWith/matches/semver/startsWith/in; match at rule 19 or none",
        flag_key=flag["key"],
        contexts=contexts,
    )
    return case, {"flags": {flag["key"]: flag}, "segments": {}}


def big_segment_list() -> tuple[Case, Json]:
    segment = build_segment("bench-members", included=[f"member-{i}" for i in range(10_000)])
    flag = build_flag(
        "bench-segment",
        rules=[build_rule("rule-members", [build_clause("", "segmentMatch", [segment["key"]])], 1)],
    )
    keys = ["member-0", "member-4999", "member-9999", "member-123"]
    keys += [f"visitor-{i}" for i in range(4)]
    contexts = tuple(build_user(key) for key in keys)
    case = Case(
        name="segment 10k",
        description="segmentMatch on a segment with 10,000 included keys (half the contexts in it)",
        flag_key=flag["key"],
        contexts=contexts,
    )
    return case, {"flags": {flag["key"]: flag}, "segments": {segment["key"]: segment}}


def prerequisite_chain() -> tuple[Case, Json]:
    depth = 5
    keys = [f"bench-chain-{level}" for level in range(depth + 1)]
    flags = {}
    for level, key in enumerate(keys):
        below = keys[level + 1 : level + 2]
        prerequisites = [{"key": child, "variation": 0} for child in below]
        flags[key] = build_flag(key, prerequisites=prerequisites)
    contexts = tuple(build_user(f"chain-{i}") for i in range(8))
    case = Case(
        name="prereq chain 5",
        description="flag whose prerequisites nest 5 deep, all satisfied",
        flag_key=keys[0],
        contexts=contexts,
    )
    return case, {"flags": flags, "segments": {}}


def build_cases() -> tuple[tuple[Case, ...], Json]:
    """All cases and their merged data set `{"flags": ..., "segments": ...}`."""
    cases = []
    data: Json = {"flags": {}, "segments": {}}
    for build in (
        simple_boolean,
        rules_then_rollout,
        twenty_rules,
        big_segment_list,
        prerequisite_chain,
    ):
        case, part = build()
        cases.append(case)
        data["flags"].update(part["flags"])
        data["segments"].update(part["segments"])
    return tuple(cases), data
