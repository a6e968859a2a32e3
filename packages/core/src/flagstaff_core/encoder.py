"""Encodes the model back into complete LaunchDarkly SDK JSON (parsed form, not bytes).

Every field the official SDKs read is written, arrays and booleans included, as LaunchDarkly's
own servers do; optional values that are unset are written as null or left out where SDKs
treat absence and null alike. `decode_*(encode_*(x)) == x`.
"""

from __future__ import annotations

from typing import Any

from flagstaff_core.model import (
    Clause,
    Flag,
    FlagData,
    FlagRule,
    Rollout,
    Segment,
    SegmentRule,
    SegmentTarget,
    Target,
    VariationOrRollout,
)


def _clause(clause: Clause) -> dict[str, Any]:
    out: dict[str, Any] = {
        "attribute": clause.attribute,
        "op": clause.op,
        "values": list(clause.values),
        "negate": clause.negate,
    }
    # Presence of contextKind changes how `attribute` is read, so absence is preserved.
    if clause.context_kind is not None:
        out["contextKind"] = clause.context_kind
    return out


def _rollout(rollout: Rollout) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": rollout.kind,
        "variations": [
            {"variation": w.variation, "weight": w.weight, "untracked": w.untracked}
            for w in rollout.variations
        ],
    }
    if rollout.context_kind is not None:
        out["contextKind"] = rollout.context_kind
    if rollout.bucket_by is not None:
        out["bucketBy"] = rollout.bucket_by
    if rollout.seed is not None:
        out["seed"] = rollout.seed
    return out


def _variation_or_rollout(out: dict[str, Any], choice: VariationOrRollout | FlagRule) -> None:
    if choice.variation is not None:
        out["variation"] = choice.variation
    if choice.rollout is not None:
        out["rollout"] = _rollout(choice.rollout)


def _target(target: Target) -> dict[str, Any]:
    out: dict[str, Any] = {"variation": target.variation, "values": list(target.values)}
    if target.context_kind is not None:
        out["contextKind"] = target.context_kind
    return out


def _rule(rule: FlagRule) -> dict[str, Any]:
    out: dict[str, Any] = {
        "clauses": [_clause(c) for c in rule.clauses],
        "trackEvents": rule.track_events,
    }
    if rule.id is not None:
        out["id"] = rule.id
    _variation_or_rollout(out, rule)
    return out


def encode_flag(flag: Flag) -> dict[str, Any]:
    """The flag's complete SDK JSON."""
    fallthrough: dict[str, Any] = {}
    _variation_or_rollout(fallthrough, flag.fallthrough)
    out: dict[str, Any] = {
        "key": flag.key,
        "version": flag.version,
        "on": flag.on,
        "prerequisites": [{"key": p.key, "variation": p.variation} for p in flag.prerequisites],
        "salt": flag.salt,
        "targets": [_target(t) for t in flag.targets],
        "contextTargets": [_target(t) for t in flag.context_targets],
        "rules": [_rule(r) for r in flag.rules],
        "fallthrough": fallthrough,
        "offVariation": flag.off_variation,
        "variations": list(flag.variations),
        "clientSide": flag.client_side,
        "clientSideAvailability": {
            "usingMobileKey": flag.client_side_availability.using_mobile_key,
            "usingEnvironmentId": flag.client_side_availability.using_environment_id,
        },
        "trackEvents": flag.track_events,
        "trackEventsFallthrough": flag.track_events_fallthrough,
        "debugEventsUntilDate": flag.debug_events_until_date,
        "excludeFromSummaries": flag.exclude_from_summaries,
        "deleted": flag.deleted,
    }
    if flag.sampling_ratio is not None:
        out["samplingRatio"] = flag.sampling_ratio
    if flag.migration is not None:
        migration: dict[str, Any] = {}
        if flag.migration.check_ratio is not None:
            migration["checkRatio"] = flag.migration.check_ratio
        out["migration"] = migration
    return out


def _segment_target(target: SegmentTarget) -> dict[str, Any]:
    out: dict[str, Any] = {"values": list(target.values)}
    if target.context_kind is not None:
        out["contextKind"] = target.context_kind
    return out


def _segment_rule(rule: SegmentRule) -> dict[str, Any]:
    out: dict[str, Any] = {"clauses": [_clause(c) for c in rule.clauses]}
    if rule.id is not None:
        out["id"] = rule.id
    if rule.weight is not None:
        out["weight"] = rule.weight
    if rule.bucket_by is not None:
        out["bucketBy"] = rule.bucket_by
    if rule.rollout_context_kind is not None:
        out["rolloutContextKind"] = rule.rollout_context_kind
    return out


def encode_segment(segment: Segment) -> dict[str, Any]:
    """The segment's complete SDK JSON."""
    out: dict[str, Any] = {
        "key": segment.key,
        "version": segment.version,
        "included": list(segment.included),
        "excluded": list(segment.excluded),
        "includedContexts": [_segment_target(t) for t in segment.included_contexts],
        "excludedContexts": [_segment_target(t) for t in segment.excluded_contexts],
        "rules": [_segment_rule(r) for r in segment.rules],
        "salt": segment.salt,
        "unbounded": segment.unbounded,
        "deleted": segment.deleted,
    }
    if segment.unbounded_context_kind is not None:
        out["unboundedContextKind"] = segment.unbounded_context_kind
    if segment.generation is not None:
        out["generation"] = segment.generation
    return out


def encode_data(data: FlagData) -> dict[str, Any]:
    """`{"flags": {...}, "segments": {...}}` with every item complete (tombstones included)."""
    return {
        "flags": {key: encode_flag(flag) for key, flag in data.flags.items()},
        "segments": {key: encode_segment(seg) for key, seg in data.segments.items()},
    }
