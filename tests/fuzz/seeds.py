"""Valid inputs the fuzzer mutates: a context of each form, an OFREP request, event payloads as
the official SDKs send them, a flag and a segment body, a JSON Patch, semantic patches and the
demo data file. `demo_documents` gives the demo project's stored flag and segment documents
(what patches apply to), read from an in-memory control plane."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from flagstaff_server import demo
from flagstaff_server.adapters.memory import InMemoryStore
from support.in_process import control_plane

Json = Any

CONTEXTS: tuple[Json, ...] = (
    {"kind": "user", "key": "u1", "email": "a@flagstaff.example", "plan": "beta"},
    {
        "kind": "multi",
        "user": {"key": "u1", "name": "U", "_meta": {"privateAttributes": ["/name"]}},
        "org": {"key": "acme", "anonymous": False, "tier": [1, 2, {"x": None}]},
    },
    {"key": "old-user", "email": "e", "custom": {"plan": "beta"}, "privateAttributeNames": ["x"]},
)
OFREP_REQUEST: Json = {"context": {"targetingKey": "u1", "kind": "user", "plan": "beta"}}

ANALYTICS_EVENTS: Json = [
    {"kind": "index", "creationDate": 1_700_000_000_000, "context": CONTEXTS[1]},
    {
        "kind": "feature",
        "creationDate": 1_700_000_000_000,
        "key": "staff-banner",
        "version": 1,
        "variation": 0,
        "value": True,
        "default": False,
        "contextKeys": {"user": "u1"},
        "reason": {"kind": "RULE_MATCH", "ruleIndex": 0, "ruleId": "r"},
    },
    {
        "kind": "summary",
        "startDate": 1_700_000_000_000,
        "endDate": 1_700_000_001_000,
        "features": {
            "staff-banner": {
                "default": False,
                "contextKinds": ["user"],
                "counters": [{"value": True, "count": 3, "variation": 0, "version": 1}],
            }
        },
    },
    {
        "kind": "custom",
        "creationDate": 1_700_000_000_000,
        "key": "purchase",
        "contextKeys": {"user": "u1"},
        "data": {"sku": "a"},
        "metricValue": 9.5,
    },
]
DIAGNOSTIC_EVENTS: tuple[Json, ...] = (
    {
        "kind": "diagnostic-init",
        "id": {"diagnosticId": "d1", "sdkKeySuffix": "abcdef"},
        "creationDate": 1_700_000_000_000,
        "sdk": {"name": "python-server-sdk", "version": "9.0.0"},
        "configuration": {"streamingDisabled": False, "eventsCapacity": 10_000},
        "platform": {"name": "CPython", "osName": "Linux"},
    },
    {
        "kind": "diagnostic",
        "id": {"diagnosticId": "d1", "sdkKeySuffix": "abcdef"},
        "creationDate": 1_700_000_060_000,
        "dataSinceDate": 1_700_000_000_000,
        "droppedEvents": 0,
        "deduplicatedUsers": 1,
        "eventsInLastBatch": 4,
        "streamInits": [{"timestamp": 1_700_000_000_000, "failed": False, "durationMillis": 20}],
    },
)

FLAG_BODY: Json = {
    "key": "fuzzed",
    "name": "Fuzzed",
    "description": "made by the fuzzer",
    "variations": [{"value": "a", "name": "A"}, {"value": {"n": [1, 2]}}, {"value": "c"}],
    "defaults": {"onVariation": 0, "offVariation": 2},
    "tags": ["fuzz"],
    "temporary": True,
    "clientSideAvailability": {"usingMobileKey": True, "usingEnvironmentId": False},
    "customProperties": {"team": {"name": "Team", "value": ["core"]}},
}
SEGMENT_BODY: Json = {
    "key": "fuzzed-segment",
    "name": "Fuzzed segment",
    "description": "made by the fuzzer",
    "tags": ["fuzz"],
}
RULE: Json = {
    "variation": 0,
    "clauses": [
        {"attribute": "email", "op": "endsWith", "values": ["@x"], "contextKind": "user"},
        {"attribute": "/plan", "op": "matches", "values": ["^b.*"], "negate": True},
    ],
}
JSON_PATCHES: tuple[Json, ...] = (
    [
        {"op": "replace", "path": "/environments/production/on", "value": True},
        {"op": "add", "path": "/environments/production/rules/-", "value": RULE},
        {"op": "add", "path": "/tags/-", "value": "fuzz"},
    ],
    {"comment": "c", "patch": [{"op": "test", "path": "/name", "value": "x"}]},
    {"merge": {"description": "new", "environments": {"production": {"on": False}}}},
)
SEGMENT_JSON_PATCHES: tuple[Json, ...] = (
    [
        {"op": "add", "path": "/included/-", "value": "k"},
        {"op": "add", "path": "/rules/-", "value": {"clauses": RULE["clauses"], "weight": 5}},
    ],
)


@functools.cache
def demo_documents() -> tuple[Json, Json]:
    """The demo project's stored `staff-banner` flag and `beta-testers` segment (production)."""
    plane = control_plane(InMemoryStore())
    demo.create_demo(plane)
    with plane.read() as uow:
        flag = uow.flags.get(demo.PROJECT, "staff-banner")
        segment = uow.segments.get(demo.PROJECT, demo.ENVIRONMENT, "beta-testers")
        assert flag is not None
        assert segment is not None
        return flag.doc, segment.doc


def semantic_patches(flag: Json) -> tuple[Json, ...]:
    """Instructions of most kinds, naming the demo flag's real variation and rule ids."""
    variations = [variation["_id"] for variation in flag["variations"]]
    rules = flag["environments"]["production"]["rules"]
    rule_id = rules[0]["_id"] if rules else "no-rule"
    clause_id = rules[0]["clauses"][0]["_id"] if rules else "no-clause"
    return (
        {
            "environmentKey": "production",
            "instructions": [
                {"kind": "turnFlagOn"},
                {"kind": "addRule", "clauses": RULE["clauses"], "variationId": variations[0]},
                {"kind": "addUserTargets", "values": ["u1", "u2"], "variationId": variations[1]},
                {"kind": "updateFallthroughVariationOrRollout", "rolloutWeights": {
                    variations[0]: 60_000, variations[1]: 40_000}},
            ],
        },
        {
            "environmentKey": "production",
            "instructions": [
                {"kind": "addValuesToClause", "ruleId": rule_id, "clauseId": clause_id,
                 "values": ["z"]},
                {"kind": "reorderRules", "ruleIds": [rule_id]},
                {"kind": "addPrerequisite", "key": "payments-enabled", "variationId": "x"},
                {"kind": "updateOffVariation", "variationId": variations[1]},
            ],
        },
        {
            "instructions": [
                {"kind": "updateName", "value": "New name"},
                {"kind": "addVariation", "value": "third", "name": "Third"},
                {"kind": "addTags", "values": ["t"]},
                {"kind": "deleteFlag"},
            ]
        },
    )  # fmt: skip


SEGMENT_SEMANTIC_PATCH: Json = {
    "instructions": [
        {"kind": "addIncludedTargets", "contextKind": "org", "values": ["o1"]},
        {"kind": "addExcludedUsers", "values": ["u9"]},
        {"kind": "addRule", "clauses": RULE["clauses"], "weight": 50_000, "bucketBy": "key"},
        {"kind": "updateName", "value": "renamed"},
    ]
}


@functools.cache
def demo_data_file() -> Json:
    path = demo.demo_data_file()
    assert path is not None, "the demo data file is part of the source checkout"
    data: Json = json.loads(Path(path).read_text(encoding="utf-8"))
    return data
