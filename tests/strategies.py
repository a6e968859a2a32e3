"""Hypothesis strategies for LaunchDarkly SDK-format data sets, flags, segments and contexts (JSON).

Values come from small shared pools, so clauses, targets, segments and rollouts meet generated
contexts often enough to reach every branch of evaluation. Only generates data; asserts nothing.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, note, settings
from hypothesis import strategies as st

# Failing examples are replayed locally from .hypothesis/; CI starts clean, so it keeps no database.
settings.register_profile(
    "flagstaff-ci",
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
if os.environ.get("CI", "").lower() == "true":
    settings.load_profile("flagstaff-ci")

Json = Any


def note_inputs(**inputs: Json) -> None:
    """Print a failing example's inputs as JSON; Hypothesis's own report shows them blank here."""
    for name, value in inputs.items():
        note(f"{name} = {json.dumps(value)}")


FLAG_KEYS = ("f0", "f1", "f2", "f3", "f4")
SEGMENT_KEYS = ("s0", "s1", "s2", "s3")
MISSING_FLAG_KEY = "no-such-flag"
MISSING_SEGMENT_KEY = "no-such-segment"
KINDS = ("user", "org", "device")
CONTEXT_KEYS = ("k0", "k1", "k2", "k3", "a:b", "x%y", "\u00fc\u00f1\u00ee")
SALTS = ("", "salt", "5f2c8e")

STRINGS = (
    "",
    "alpha",
    "Alpha",
    "alphabet",
    "beta",
    "gold",
    "silver",
    "a@example.com",
    "b@test.org",
    "k0",
    "org",
    "user",
    "1",
)
SEMVERS = (
    "1.2.3",
    "1.2",
    "2",
    "1.2.3-rc.1",
    "1.2.3-rc.2",
    "1.2.3+build.5",
    "2.0.0-alpha",
    "10.0.0",
    "02.0.0",
    "v1.0.0",
    "1.2.3.4",
    "2-rc",
    "1.2-beta",
    "1.0.0-0a",
    "1.0.0-rc.01",
    "1.2.3\n",
)
# The first three name the same instant, so `before`/`after` meet equal instants; the last four are
# invalid. Not here: forms RFC 3339 forbids but the Python SDK's parser accepts (space for `T`, no
# seconds, `,` fraction, `+0100`), which Go and Flagstaff reject.
TIMESTAMPS = (
    "2024-01-01T00:00:00Z",
    "2024-01-01T02:00:00+02:00",
    "2024-01-01t00:00:00z",
    "2023-12-31T23:59:59Z",
    "2024-06-15T12:30:00.5Z",
    "2024-01-01",
    "1704067200000",
    "2024-01-01T00:00:00",
    "2024-01-01T23:59:60Z",
    "2024-01-01T00:00:00Z\n",
)
# Unix milliseconds: 2024-01-01T00:00:00Z, one second earlier, 2024-06-15T12:30:00.5Z.
MILLIS = (1704067200000, 1704067199000, 1718454600500, 1704067200000.5)
# Integers next to equal floats (1 and 1.0) and bools elsewhere: `in` must equate numbers only.
NUMBERS = (0, 1, -1, 2, 1.5, 1.0, 0.0, 3.0, 10, 100, -2.25, 1e20, 1e-07)
REGEXES = ("^al", "pha$", "a.c", "[0-9]+", "gold|silver", "^$", r"\.", "@example\\.com$", "(")
SCALARS: tuple[Json, ...] = (
    STRINGS + SEMVERS + TIMESTAMPS + NUMBERS + MILLIS + KINDS + CONTEXT_KEYS + (True, False)
)

VARIATION_VALUES: tuple[Json, ...] = (
    True,
    False,
    0,
    1,
    2.5,
    "on",
    "off",
    "",
    None,
    [1, "a"],
    {"a": 1, "b": [True]},
)

OPERATORS = (
    "in",
    "startsWith",
    "endsWith",
    "contains",
    "matches",
    "lessThan",
    "lessThanOrEqual",
    "greaterThan",
    "greaterThanOrEqual",
    "before",
    "after",
    "semVerEqual",
    "semVerLessThan",
    "semVerGreaterThan",
    "segmentMatch",
)

# Custom attributes a context may carry, each with the pool its value usually comes from.
ATTRIBUTE_POOLS: dict[str, tuple[Json, ...]] = {
    "email": STRINGS,
    "plan": STRINGS,
    "age": NUMBERS + MILLIS,
    "score": NUMBERS,
    "version": SEMVERS,
    "created": TIMESTAMPS + MILLIS,
    "beta": (True, False),
    "a/b": STRINGS,
}
# Top-level names a clause without contextKind reads literally (slashes included).
LITERAL_ATTRIBUTES = (
    "key",
    "name",
    "kind",
    "anonymous",
    "tags",
    "address",
    "missing",
    "/address/city",
    *ATTRIBUTE_POOLS,
)
# Attribute references for clauses and rollouts that have a context kind.
REFERENCE_ATTRIBUTES = (
    "key",
    "name",
    "kind",
    "/kind",
    "anonymous",
    "tags",
    "missing",
    "/address/city",
    "/address/street",
    "/address/city/x",
    "/a~1b",
    "/email",
    "/key",
    "/anonymous",
    *(name for name in ATTRIBUTE_POOLS if "/" not in name),
)
BUCKET_BY_LITERALS = ("key", "name", "email", "plan", "age", "score", "beta", "missing", "a/b")
BUCKET_BY_REFERENCES = ("key", "name", "email", "age", "score", "/address/city", "/a~1b", "missing")
# Decodable but unusable: evaluation that reaches them must give MALFORMED_FLAG (or, for an empty
# bucketBy, bucket by key as the official SDKs do).
INVALID_REFERENCES = ("", "/", "//x", "/address/", "/a~2b", "/a~")
UNKNOWN_OPERATOR = "isFriendOf"


def rarely(draw: st.DrawFn, one_in: int = 10) -> bool:
    """True about once in `one_in` draws, for the unusual cases that should still appear.

    The rare case is a high draw, so failing examples shrink toward the common case; the wide range
    keeps Hypothesis's extra weight on boundary values from making rare cases common.
    """
    return draw(st.integers(0, 999)) >= 1000 - 1000 // one_in


# The generators below draw integers and pick from tuples instead of building nested strategy
# objects: a fresh strategy per draw costs Hypothesis a validation pass, and dominated run time.
def coin(draw: st.DrawFn) -> bool:
    return draw(st.booleans())


def pick(draw: st.DrawFn, pool: Sequence[Json]) -> Json:
    return pool[draw(st.integers(0, len(pool) - 1))]


def pick_some(
    draw: st.DrawFn, pool: Sequence[Json], max_size: int, *, min_size: int = 0, unique: bool = False
) -> list[Json]:
    """`min_size`..`max_size` items of `pool`; distinct ones when `unique`."""
    remaining = list(pool)
    if unique:
        max_size = min(max_size, len(remaining))
    chosen = []
    for _ in range(draw(st.integers(min_size, max_size))):
        index = draw(st.integers(0, len(remaining) - 1))
        chosen.append(remaining.pop(index) if unique else remaining[index])
    return chosen


def variation_index(draw: st.DrawFn, count: int) -> int:
    """A valid index into `count` variations, or rarely one outside them (a malformed flag)."""
    if count == 0 or rarely(draw, 40):
        return pick(draw, (count, -1))
    return draw(st.integers(0, count - 1))


def clause_value_pool(op: str, segment_keys: Sequence[str] = ()) -> tuple[Json, ...]:
    """Values a clause with operator `op` draws from: mostly fitting ones, a few of other types."""
    if op == "segmentMatch":
        return (*segment_keys, MISSING_SEGMENT_KEY)
    if op in ("startsWith", "endsWith", "contains"):
        return (*STRINGS, *KINDS, *CONTEXT_KEYS, 1)
    if op == "matches":
        return (*REGEXES, 1)
    if op in ("lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual"):
        return (*NUMBERS, *MILLIS, "1", True)
    if op in ("before", "after"):
        return (*TIMESTAMPS, *MILLIS, True)
    if op.startswith("semVer"):
        return (*SEMVERS, 1)
    # `in` compares type-strictly. Clause values are scalars: the Python SDK deep-compares arrays
    # and objects while Go never matches them, so composites have no agreed meaning.
    return SCALARS


def draw_clause_values(draw: st.DrawFn, op: str, segment_keys: Sequence[str]) -> list[Json]:
    return pick_some(draw, clause_value_pool(op, segment_keys), 3, min_size=1)


def draw_clause(draw: st.DrawFn, segment_keys: Sequence[str]) -> dict[str, Json]:
    # segmentMatch gets extra weight: it is the only way flags reach segments.
    if segment_keys and rarely(draw, 5):
        op = "segmentMatch"
    else:
        op = UNKNOWN_OPERATOR if rarely(draw, 40) else pick(draw, OPERATORS)
    clause: dict[str, Json] = {
        "attribute": "",
        "op": op,
        "values": draw_clause_values(draw, op, segment_keys),
        "negate": coin(draw),
    }
    if op == "segmentMatch":
        return clause
    if coin(draw):
        clause["contextKind"] = pick(draw, KINDS)
        references = INVALID_REFERENCES if rarely(draw, 40) else REFERENCE_ATTRIBUTES
        clause["attribute"] = pick(draw, references)
    else:
        clause["attribute"] = "" if rarely(draw, 60) else pick(draw, LITERAL_ATTRIBUTES)
    return clause


def draw_clauses(draw: st.DrawFn, segment_keys: Sequence[str], max_size: int) -> list[Json]:
    return [draw_clause(draw, segment_keys) for _ in range(draw(st.integers(0, max_size)))]


def draw_weighted_variations(draw: st.DrawFn, variation_count: int) -> list[dict[str, Json]]:
    """1-3 weighted variations summing to 100000, or rarely any weights (or none: malformed)."""
    if rarely(draw, 25):
        return []
    count = draw(st.integers(1, 3))
    if rarely(draw, 5):
        weights = [draw(st.integers(0, 100000)) for _ in range(count)]
    else:
        cuts = sorted(draw(st.integers(0, 100000)) for _ in range(count - 1))
        weights = [high - low for low, high in itertools.pairwise([0, *cuts, 100000])]
    return [
        {
            "variation": variation_index(draw, variation_count),
            "weight": weight,
            "untracked": coin(draw),
        }
        for weight in weights
    ]


def draw_rollout(draw: st.DrawFn, variation_count: int) -> dict[str, Json]:
    rollout: dict[str, Json] = {"variations": draw_weighted_variations(draw, variation_count)}
    kind = pick(draw, (None, "rollout", "experiment"))
    if kind is not None:
        rollout["kind"] = kind
    if coin(draw):
        rollout["contextKind"] = pick(draw, KINDS)
        bucket_by_pool = BUCKET_BY_REFERENCES
    else:
        bucket_by_pool = BUCKET_BY_LITERALS
    if coin(draw):
        rollout["bucketBy"] = pick(draw, INVALID_REFERENCES if rarely(draw, 30) else bucket_by_pool)
    if rarely(draw, 3):
        rollout["seed"] = draw(st.integers(-(2**31), 2**31 - 1))
    return rollout


def draw_variation_or_rollout(draw: st.DrawFn, variation_count: int) -> dict[str, Json]:
    if coin(draw):
        return {"variation": variation_index(draw, variation_count)}
    return {"rollout": draw_rollout(draw, variation_count)}


def draw_flag_rules(
    draw: st.DrawFn, variation_count: int, segment_keys: Sequence[str]
) -> list[Json]:
    rules = []
    for index in range(draw(st.integers(0, 3))):
        rule: dict[str, Json] = {
            "id": f"rule-{index}",
            "clauses": draw_clauses(draw, segment_keys, 3),
            "trackEvents": coin(draw),
        }
        rule.update(draw_variation_or_rollout(draw, variation_count))
        rules.append(rule)
    return rules


def draw_targets(draw: st.DrawFn, variation_count: int) -> tuple[list[Json], list[Json]]:
    """`targets` and `contextTargets` over the small key pool.

    A user-kind contextTargets entry always has empty `values` (its keys live in `targets`), as
    LaunchDarkly writes them: Python ignores such an entry's own values while Go reads them, so
    non-empty ones have no agreed meaning.
    """
    # One past the end (a malformed target) only rarely.
    variations = range(variation_count + 1 if rarely(draw, 20) else variation_count)
    targets = [
        {"variation": variation, "values": pick_some(draw, CONTEXT_KEYS, 3)}
        for variation in pick_some(draw, variations, 2, unique=True)
    ]
    context_targets: list[Json] = []
    if coin(draw):
        for kind in pick_some(draw, KINDS, 3, unique=True):
            variation = pick(draw, variations)
            values = [] if kind == "user" else pick_some(draw, CONTEXT_KEYS, 3)
            context_targets.append({"contextKind": kind, "variation": variation, "values": values})
    return targets, context_targets


def draw_prerequisites(draw: st.DrawFn, index: int, flag_keys: Sequence[str]) -> list[Json]:
    """Prerequisites on later flags (acyclic), rarely on any key, itself or a missing key."""
    later = flag_keys[index + 1 :]
    result = []
    for _ in range(pick(draw, (0, 0, 1, 2))):
        if later and not rarely(draw, 8):
            key = pick(draw, later)
        else:
            key = pick(draw, (*flag_keys, MISSING_FLAG_KEY))
        result.append({"key": key, "variation": pick(draw, (0, 1, 0, 2))})
    return result


def draw_flag(
    draw: st.DrawFn, key: str, index: int, flag_keys: Sequence[str], segment_keys: Sequence[str]
) -> dict[str, Json]:
    variations = pick_some(draw, VARIATION_VALUES, 3, min_size=1)
    count = len(variations)
    targets, context_targets = draw_targets(draw, count)
    client_side = coin(draw)
    return {
        "key": key,
        "version": draw(st.integers(1, 5)),
        "on": not rarely(draw, 5),
        "variations": variations,
        "offVariation": None if rarely(draw, 4) else variation_index(draw, count),
        "fallthrough": draw_variation_or_rollout(draw, count),
        "prerequisites": draw_prerequisites(draw, index, flag_keys),
        "targets": targets,
        "contextTargets": context_targets,
        "rules": draw_flag_rules(draw, count, segment_keys),
        "salt": pick(draw, SALTS),
        "trackEvents": coin(draw),
        "trackEventsFallthrough": coin(draw),
        "debugEventsUntilDate": None,
        "clientSide": client_side,
        "clientSideAvailability": {"usingMobileKey": coin(draw), "usingEnvironmentId": client_side},
        "deleted": rarely(draw, 25),
    }


def draw_segment_rules(draw: st.DrawFn, index: int, segment_keys: Sequence[str]) -> list[Json]:
    """Rules whose segmentMatch clauses name later segments (acyclic), rarely any (cycles)."""
    later = segment_keys[index + 1 :]
    nested = segment_keys if rarely(draw, 8) else later
    rules = []
    for rule_index in range(draw(st.integers(0, 2))):
        rule: dict[str, Json] = {
            "id": f"segment-rule-{rule_index}",
            "clauses": draw_clauses(draw, nested, 2),
        }
        if coin(draw):
            rule["weight"] = draw(st.integers(0, 100000))
            kind = "user"
            if coin(draw):
                kind = rule["rolloutContextKind"] = pick(draw, KINDS)
                references = INVALID_REFERENCES if rarely(draw, 30) else BUCKET_BY_REFERENCES
                rule["bucketBy"] = pick(draw, references)
            elif coin(draw):
                rule["bucketBy"] = pick(draw, BUCKET_BY_LITERALS)
            # The references disagree on a weighted rule for a context without its rollout kind
            # (Go: no match; Python: a negative bucket, so a match). Flagstaff follows Go; a leading
            # clause "the context has that kind" keeps generated data off the disputed case.
            has_kind = {"attribute": "kind", "op": "in", "values": [kind], "negate": False}
            rule["clauses"] = [has_kind, *rule["clauses"]]
        rules.append(rule)
    return rules


def draw_kinded_keys(draw: st.DrawFn) -> list[Json]:
    return [
        {"contextKind": pick(draw, KINDS), "values": pick_some(draw, CONTEXT_KEYS, 2)}
        for _ in range(draw(st.integers(0, 2)))
    ]


def draw_segment(
    draw: st.DrawFn, key: str, index: int, segment_keys: Sequence[str]
) -> dict[str, Json]:
    segment: dict[str, Json] = {
        "key": key,
        "version": draw(st.integers(1, 5)),
        "included": pick_some(draw, CONTEXT_KEYS, 2),
        "excluded": pick_some(draw, CONTEXT_KEYS, 2),
        "includedContexts": draw_kinded_keys(draw),
        "excludedContexts": draw_kinded_keys(draw),
        "rules": draw_segment_rules(draw, index, segment_keys),
        "salt": pick(draw, SALTS),
        "deleted": rarely(draw, 25),
    }
    if rarely(draw, 6):
        segment["unbounded"] = True
        segment["unboundedContextKind"] = pick(draw, KINDS)
        if coin(draw):
            segment["generation"] = draw(st.integers(1, 3))
    return segment


@st.composite
def flags(
    draw: st.DrawFn,
    key: str = "f0",
    index: int = 0,
    flag_keys: Sequence[str] = ("f0",),
    segment_keys: Sequence[str] = (),
) -> dict[str, Json]:
    """A complete flag object (every field present, as the official SDKs require)."""
    return draw_flag(draw, key, index, flag_keys, segment_keys)


@st.composite
def segments(
    draw: st.DrawFn, key: str = "s0", index: int = 0, segment_keys: Sequence[str] = ("s0",)
) -> dict[str, Json]:
    """A complete segment object; rarely a big (unbounded) one, with or without a generation."""
    return draw_segment(draw, key, index, segment_keys)


@st.composite
def data_sets(draw: st.DrawFn, max_flags: int = 4, max_segments: int = 3) -> dict[str, Json]:
    """`{"flags": {...}, "segments": {...}}` whose flags reference each other and the segments."""
    flag_keys = FLAG_KEYS[: draw(st.integers(1, max_flags))]
    segment_keys = SEGMENT_KEYS[: draw(st.integers(0, max_segments))]
    return {
        "flags": {
            key: draw_flag(draw, key, index, flag_keys, segment_keys)
            for index, key in enumerate(flag_keys)
        },
        "segments": {
            key: draw_segment(draw, key, index, segment_keys)
            for index, key in enumerate(segment_keys)
        },
    }


def draw_attribute_value(draw: st.DrawFn, name: str) -> Json:
    """Usually a value from the attribute's own pool, sometimes any scalar, or an array of them."""
    if rarely(draw, 5):
        return pick_some(draw, SCALARS, 3)
    if rarely(draw, 5):
        return pick(draw, SCALARS)
    return pick(draw, ATTRIBUTE_POOLS[name])


def draw_context_body(draw: st.DrawFn) -> dict[str, Json]:
    """The attributes of one individual context, without `kind`."""
    body: dict[str, Json] = {"key": pick(draw, CONTEXT_KEYS)}
    if coin(draw):
        body["name"] = pick(draw, STRINGS)
    if rarely(draw, 4):
        body["anonymous"] = coin(draw)
    for name in pick_some(draw, tuple(ATTRIBUTE_POOLS), 4, unique=True):
        body[name] = draw_attribute_value(draw, name)
    if coin(draw):
        body["tags"] = pick_some(draw, (*STRINGS, *NUMBERS), 3)
    if coin(draw):
        if rarely(draw, 4):
            body["address"] = pick(draw, STRINGS)
        else:
            body["address"] = {"city": pick(draw, STRINGS), "street": pick(draw, STRINGS)}
    if rarely(draw, 4):
        private = pick_some(draw, ("email", "/address/street", "/a~1b"), 2)
        body["_meta"] = {"privateAttributes": private}
    return body


@st.composite
def single_contexts(draw: st.DrawFn) -> dict[str, Json]:
    return {"kind": pick(draw, KINDS), **draw_context_body(draw)}


@st.composite
def multi_contexts(draw: st.DrawFn) -> dict[str, Json]:
    # A single member is allowed: such a "multi" context is the single context it holds.
    kinds = pick_some(draw, KINDS, 3, min_size=1, unique=True)
    return {"kind": "multi", **{kind: draw_context_body(draw) for kind in kinds}}


def contexts() -> st.SearchStrategy[dict[str, Json]]:
    """New-format context JSON: single of kind user/org/device, or multi-kind."""
    return st.one_of(single_contexts(), multi_contexts())


# One edit each, applied to an individual context; most make it invalid, a few are only unusual.
CONTEXT_EDITS: tuple[tuple[str, Json], ...] = (
    ("key", ""),
    ("key", 7),
    ("key", None),
    ("name", 1),
    ("name", None),
    ("anonymous", "yes"),
    ("anonymous", 0),
    ("anonymous", None),
    ("_meta", "private"),
    ("_meta", None),
    ("_meta", {"privateAttributes": "email"}),
    ("_meta", {"privateAttributes": [1]}),
    ("_meta", {}),
    ("", "empty name"),
)
# No edit removes `kind`: without it the JSON is an old-style user, which the core accepts and the
# official Python SDK (9.x) no longer does.
KIND_EDITS: tuple[Json, ...] = (
    "",
    "kind",
    "multi",
    "us er",
    "\u00fcmlaut",
    5,
    "a.b_c-9",
    "user\n",
)


@st.composite
def questionable_contexts(draw: st.DrawFn) -> dict[str, Json]:
    """Context JSON with one edit that may make it invalid (bad key, kind, name, _meta, ...)."""
    context = draw(contexts())
    members = (
        [context] if context["kind"] != "multi" else [v for k, v in context.items() if k != "kind"]
    )
    target = pick(draw, members)
    choice = draw(st.integers(0, 3))
    if choice == 0 and context["kind"] != "multi":
        context["kind"] = pick(draw, KIND_EDITS)
    elif choice == 1 and context["kind"] == "multi":
        member_kind = pick(draw, [k for k in context if k != "kind"])
        context[pick(draw, ("", "multi", "us er"))] = context.pop(member_kind)
    elif choice == 2 and context["kind"] == "multi":
        member_kind = pick(draw, [k for k in context if k != "kind"])
        context[member_kind] = pick(draw, ("not an object", [], None))
    else:
        name, value = pick(draw, CONTEXT_EDITS)
        if value is None and coin(draw):
            target.pop(name, None)
        else:
            target[name] = value
    return context


# Fields the official Python SDK lets data omit (it fills a default); `sparse_data_sets` drops some.
OPTIONAL_FLAG_FIELDS = (
    "on",
    "variations",
    "offVariation",
    "fallthrough",
    "prerequisites",
    "targets",
    "contextTargets",
    "rules",
    "salt",
    "trackEvents",
    "trackEventsFallthrough",
    "debugEventsUntilDate",
    "clientSide",
    "clientSideAvailability",
    "deleted",
)
OPTIONAL_SEGMENT_FIELDS = (
    "included",
    "excluded",
    "includedContexts",
    "excludedContexts",
    "rules",
    "salt",
    "deleted",
)
# Not `rolloutContextKind`: a weighted segment rule's leading clause names that kind (see above).
OPTIONAL_RULE_FIELDS = ("id", "trackEvents", "weight", "bucketBy")
OPTIONAL_CLAUSE_FIELDS = ("contextKind", "negate")
OPTIONAL_ROLLOUT_FIELDS = ("kind", "contextKind", "bucketBy", "seed")


def drop_fields(draw: st.DrawFn, item: Json, optional: Sequence[str]) -> None:
    """Remove about a third of the `optional` fields present in `item` (in place)."""
    for name in optional:
        if name in item and rarely(draw, 3):
            del item[name]


def drop_nested_fields(draw: st.DrawFn, item: Json) -> None:
    """Thin out the rules, clauses, rollouts and weighted variations of a flag or segment."""
    rollouts = [item.get("fallthrough")]
    for rule in item.get("rules", ()):
        for clause in rule["clauses"]:
            drop_fields(draw, clause, OPTIONAL_CLAUSE_FIELDS)
        drop_fields(draw, rule, OPTIONAL_RULE_FIELDS)
        rollouts.append(rule)
    for holder in rollouts:
        rollout = (holder or {}).get("rollout")
        if rollout is not None:
            drop_fields(draw, rollout, OPTIONAL_ROLLOUT_FIELDS)
            for weighted in rollout["variations"]:
                drop_fields(draw, weighted, ("untracked",))


@st.composite
def sparse_data_sets(draw: st.DrawFn) -> dict[str, Json]:
    """Data sets with optional fields left out, as older writers and hand-written files do."""
    data = draw(data_sets())
    for flag in data["flags"].values():
        drop_nested_fields(draw, flag)
        drop_fields(draw, flag, OPTIONAL_FLAG_FIELDS)
    for segment in data["segments"].values():
        drop_nested_fields(draw, segment)
        drop_fields(draw, segment, OPTIONAL_SEGMENT_FIELDS)
    return data


# Replacements of another JSON type than most fields expect.
WRONG_VALUES: tuple[Json, ...] = ("text", 1.5, -1, None, True, [], {}, [1])


def describe_step(name: str | int) -> str:
    """One step of a JSON path in the `$.flags.f0.rules[0].op` style of DecodeError."""
    if isinstance(name, int):
        return f"[{name}]"
    return f".{name}" if name.isidentifier() else f"[{json.dumps(name)}]"


@st.composite
def corrupted_data_sets(draw: st.DrawFn) -> tuple[dict[str, Json], str]:
    """A data set with one value inside a flag or segment replaced, and that value's JSON path."""
    data = draw(data_sets(max_segments=2))
    section = "segments" if data["segments"] and coin(draw) else "flags"
    key = pick(draw, sorted(data[section]))
    parent: Json = data[section]
    step: str | int = key
    path = f"$.{section}{describe_step(key)}"
    while True:
        node = parent[step]
        if not isinstance(node, dict | list) or not node:
            break
        # Stop somewhere below the flag or segment object itself, at any depth.
        if path.count(".") > 2 and rarely(draw, 3):
            break
        parent, step = node, pick(draw, list(node) if isinstance(node, dict) else range(len(node)))
        path += describe_step(step)
    parent[step] = pick(draw, WRONG_VALUES)
    return data, path
