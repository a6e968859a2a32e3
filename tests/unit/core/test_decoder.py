"""Decoding LaunchDarkly SDK JSON: bad data is rejected with its JSON path, leniency as LD has."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_core import (
    Clause,
    DecodeError,
    Flag,
    FlagRule,
    Rollout,
    Segment,
    SegmentRule,
    SegmentTarget,
    Target,
    VariationOrRollout,
    WeightedVariation,
    decode_data,
    decode_flag,
    decode_segment,
    encode_data,
    encode_flag,
    encode_segment,
)


def _flag(**fields: Any) -> dict[str, Any]:
    return {"key": "f", "version": 3, "on": True, "variations": [1, 2], **fields}


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"flags": []}, "$.flags"),
        ({"flags": {"f1": {"on": "yes"}}}, "$.flags.f1.on"),
        ({"flags": {"f1": {"version": "2"}}}, "$.flags.f1.version"),
        ({"flags": {"f1": {"version": True}}}, "$.flags.f1.version"),
        (
            {"flags": {"f1": {"rules": [{"clauses": [{"op": "in"}, {"attribute": "a"}]}]}}},
            "$.flags.f1.rules[0].clauses[1].op",
        ),
        (
            {"flags": {"f1": {"rules": [{"clauses": [{"op": 3, "attribute": "a"}]}]}}},
            "$.flags.f1.rules[0].clauses[0].op",
        ),
        ({"flags": {"f1": {"rules": [{"clauses": {}}]}}}, "$.flags.f1.rules[0].clauses"),
        ({"flags": {"f1": {"rules": ["x"]}}}, "$.flags.f1.rules[0]"),
        (
            {"flags": {"f1": {"prerequisites": [{"key": "p"}]}}},
            "$.flags.f1.prerequisites[0].variation",
        ),
        (
            {"flags": {"f1": {"targets": [{"variation": 0, "values": [1]}]}}},
            "$.flags.f1.targets[0].values[0]",
        ),
        (
            {"flags": {"f1": {"fallthrough": {"rollout": {"variations": [{"variation": 0}]}}}}},
            "$.flags.f1.fallthrough.rollout.variations[0].weight",
        ),
        ({"flags": {"f1": {"offVariation": 0.5}}}, "$.flags.f1.offVariation"),
        ({"flags": {"f1": {"debugEventsUntilDate": "soon"}}}, "$.flags.f1.debugEventsUntilDate"),
        (
            {"flags": {"f1": {"clientSideAvailability": {"usingMobileKey": 1}}}},
            "$.flags.f1.clientSideAvailability.usingMobileKey",
        ),
        ({"flags": {"my.flag": {"salt": 7}}}, '$.flags["my.flag"].salt'),
        ({"flags": {"f1": {"key": "other"}}}, "$.flags.f1.key"),
        ({"segments": {"s": {"included": "k"}}}, "$.segments.s.included"),
        ({"segments": {"s": {"rules": [{"weight": "1"}]}}}, "$.segments.s.rules[0].weight"),
        (
            {"segments": {"s": {"includedContexts": [{"contextKind": 1}]}}},
            "$.segments.s.includedContexts[0].contextKind",
        ),
    ],
)
def test_bad_data_is_rejected_with_the_json_path(data: Any, path: str) -> None:
    with pytest.raises(DecodeError) as raised:
        decode_data(data)
    assert raised.value.path == path
    assert raised.value.message
    assert isinstance(raised.value, ValueError)


def test_standalone_flag_needs_a_key() -> None:
    with pytest.raises(DecodeError) as raised:
        decode_flag({"version": 1})
    assert raised.value.path == "$.key"


def test_key_comes_from_the_map_and_version_defaults_to_one() -> None:
    data = decode_data({"flags": {"f1": {}}, "segments": {"s1": {}}})
    flag = data.flag("f1")
    segment = data.segment("s1")
    assert flag is not None
    assert (flag.key, flag.version) == ("f1", 1)
    assert segment is not None
    assert (segment.key, segment.version) == ("s1", 1)


def test_missing_arrays_are_empty_and_a_missing_attribute_is_blank() -> None:
    flag = decode_flag(
        _flag(rules=[{"id": "r", "variation": 0, "clauses": [{"op": "in"}]}], targets=None)
    )
    assert flag.targets == ()
    assert flag.rules[0].clauses == (Clause(attribute="", op="in", values=()),)


def test_deleted_items_are_hidden_from_lookups() -> None:
    data = decode_data({"flags": {"f": {"deleted": True, "version": 9}}})
    assert data.flag("f") is None
    assert data.flags["f"].deleted


def test_client_side_availability_defaults_from_client_side() -> None:
    legacy = decode_flag(_flag(clientSide=True))
    assert legacy.client_side_availability.using_environment_id
    assert legacy.client_side_availability.using_mobile_key
    modern = decode_flag(
        _flag(clientSideAvailability={"usingMobileKey": False, "usingEnvironmentId": True})
    )
    assert modern.client_side
    assert not modern.client_side_availability.using_mobile_key


FULL_FLAG = Flag(
    key="full",
    version=7,
    on=True,
    variations=("a", {"b": [1, 2]}, None, 3.5),
    off_variation=0,
    fallthrough=VariationOrRollout(
        rollout=Rollout(
            kind="experiment",
            context_kind="org",
            bucket_by="/address/city",
            seed=61,
            variations=(
                WeightedVariation(variation=0, weight=60000),
                WeightedVariation(variation=1, weight=40000, untracked=True),
            ),
        )
    ),
    prerequisites=(),
    targets=(Target(variation=1, values=("k1", "k2")),),
    context_targets=(
        Target(variation=1, values=(), context_kind="user"),
        Target(variation=2, values=("o1",), context_kind="org"),
    ),
    rules=(
        FlagRule(
            id="r0",
            clauses=(
                Clause(attribute="email", op="endsWith", values=("@x.com",), negate=True),
                Clause(attribute="/a~1b", op="in", values=(1,), context_kind="org"),
                Clause(attribute="", op="segmentMatch", values=("s",)),
            ),
            variation=2,
            track_events=True,
        ),
        FlagRule(
            id="r1",
            clauses=(),
            rollout=Rollout(variations=(WeightedVariation(variation=0, weight=1),)),
        ),
    ),
    salt="salty",
    track_events=True,
    track_events_fallthrough=True,
    debug_events_until_date=1700000000000,
    client_side=True,
    sampling_ratio=10,
    exclude_from_summaries=True,
)
FULL_SEGMENT = Segment(
    key="s",
    version=4,
    included=("a",),
    excluded=("b",),
    included_contexts=(SegmentTarget(context_kind="org", values=("o",)),),
    excluded_contexts=(SegmentTarget(context_kind="org", values=("p",)),),
    rules=(
        SegmentRule(
            id="sr",
            clauses=(Clause(attribute="plan", op="in", values=("gold",)),),
            weight=50000,
            bucket_by="name",
            rollout_context_kind="user",
        ),
    ),
    salt="pepper",
    unbounded=True,
    unbounded_context_kind="org",
    generation=3,
)

FLAG_FIELDS = {
    "key", "version", "on", "prerequisites", "salt", "targets", "contextTargets", "rules",
    "fallthrough", "offVariation", "variations", "clientSide", "clientSideAvailability",
    "trackEvents", "trackEventsFallthrough", "debugEventsUntilDate", "excludeFromSummaries",
    "deleted",
}  # fmt: skip
SEGMENT_FIELDS = {
    "key", "version", "included", "excluded", "includedContexts", "excludedContexts", "rules",
    "salt", "unbounded", "deleted",
}  # fmt: skip


def test_encoding_writes_every_field_even_for_a_minimal_flag() -> None:
    encoded = encode_flag(decode_flag({"key": "f", "version": 1}))
    assert set(encoded) >= FLAG_FIELDS
    assert encoded["clientSideAvailability"] == {
        "usingMobileKey": True,
        "usingEnvironmentId": False,
    }
    rule = encode_flag(decode_flag(_flag(rules=[{"clauses": [{"attribute": "a", "op": "in"}]}])))[
        "rules"
    ][0]
    assert rule["clauses"][0] == {"attribute": "a", "op": "in", "values": [], "negate": False}
    assert set(encode_segment(decode_segment({"key": "s", "version": 1}))) >= SEGMENT_FIELDS


def test_decode_of_encode_is_identity_for_a_flag_using_every_field() -> None:
    assert decode_flag(encode_flag(FULL_FLAG)) == FULL_FLAG
    assert decode_segment(encode_segment(FULL_SEGMENT)) == FULL_SEGMENT
    data = decode_data(
        {"flags": {"full": encode_flag(FULL_FLAG)}, "segments": {"s": encode_segment(FULL_SEGMENT)}}
    )
    assert decode_data(encode_data(data)) == data


def test_encoded_flag_is_accepted_by_the_official_sdk_model() -> None:
    from ldclient.impl.model import FeatureFlag
    from ldclient.impl.model import Segment as SdkSegment

    sdk_flag = FeatureFlag(encode_flag(FULL_FLAG))
    assert sdk_flag.key == "full"
    assert sdk_flag.rules[0].clauses[1].attribute.path == "/a~1b"
    assert sdk_flag.fallthrough.rollout is not None
    assert sdk_flag.fallthrough.rollout.seed == 61
    assert SdkSegment(encode_segment(FULL_SEGMENT)).generation == 3


def test_decoding_compiles_without_changing_equality() -> None:
    first = decode_flag(
        _flag(rules=[{"clauses": [{"attribute": "a", "op": "matches", "values": ["("]}]}])
    )
    second = decode_flag(
        _flag(rules=[{"clauses": [{"attribute": "a", "op": "matches", "values": ["("]}]}])
    )
    assert first == second
    assert "_run" not in repr(first)
