"""Decodes LaunchDarkly SDK flag/segment JSON (already parsed) into the model, and compiles it.

Rejects wrong types with the JSON path of the offending value. Lenient where LaunchDarkly's own
loaders are: `key` from the enclosing map key, absent `version` → 1, absent arrays → empty,
absent clause `attribute` → "" (which evaluates as a malformed reference).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from flagstaff_core.errors import DecodeError
from flagstaff_core.flag_program import compiled_flag
from flagstaff_core.model import (
    Clause,
    ClientSideAvailability,
    Flag,
    FlagData,
    FlagRule,
    Migration,
    Prerequisite,
    Rollout,
    Segment,
    SegmentRule,
    SegmentTarget,
    Target,
    VariationOrRollout,
    WeightedVariation,
)
from flagstaff_core.segment_program import compiled_segment

_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def _child(path: str, name: str) -> str:
    if _PLAIN_NAME.match(name):
        return f"{path}.{name}"
    return f"{path}[{json.dumps(name)}]"


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _object(value: object, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DecodeError(path, f"expected an object, got {_type_name(value)}")
    return value


def _opt_str(obj: Mapping[str, Any], name: str, path: str) -> str | None:
    value = obj.get(name)
    if value is not None and not isinstance(value, str):
        raise DecodeError(_child(path, name), f"expected a string, got {_type_name(value)}")
    return value


def _req_str(obj: Mapping[str, Any], name: str, path: str) -> str:
    value = _opt_str(obj, name, path)
    if value is None:
        raise DecodeError(_child(path, name), "required string is missing")
    return value


def _opt_int(obj: Mapping[str, Any], name: str, path: str) -> int | None:
    value = obj.get(name)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)  # JSON has one number type; 2.0 is the integer 2
    if not isinstance(value, int) or isinstance(value, bool):
        raise DecodeError(_child(path, name), f"expected an integer, got {_type_name(value)}")
    return value


def _req_int(obj: Mapping[str, Any], name: str, path: str) -> int:
    value = _opt_int(obj, name, path)
    if value is None:
        raise DecodeError(_child(path, name), "required integer is missing")
    return value


def _opt_number(obj: Mapping[str, Any], name: str, path: str) -> int | float | None:
    value = obj.get(name)
    if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool)):
        raise DecodeError(_child(path, name), f"expected a number, got {_type_name(value)}")
    return value


def _opt_bool(obj: Mapping[str, Any], name: str, path: str) -> bool:
    value = obj.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise DecodeError(_child(path, name), f"expected a boolean, got {_type_name(value)}")
    return value


def _opt_list(obj: Mapping[str, Any], name: str, path: str) -> list[Any]:
    value = obj.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise DecodeError(_child(path, name), f"expected an array, got {_type_name(value)}")
    return value


def _opt_str_list(obj: Mapping[str, Any], name: str, path: str) -> tuple[str, ...]:
    items = _opt_list(obj, name, path)
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise DecodeError(
                f"{_child(path, name)}[{index}]", f"expected a string, got {_type_name(item)}"
            )
    return tuple(items)


def _objects(obj: Mapping[str, Any], name: str, path: str) -> list[tuple[dict[str, Any], str]]:
    base = _child(path, name)
    return [
        (_object(item, f"{base}[{index}]"), f"{base}[{index}]")
        for index, item in enumerate(_opt_list(obj, name, path))
    ]


def _version(obj: Mapping[str, Any], path: str) -> int:
    version = _opt_int(obj, "version", path)
    return 1 if version is None else version


def _key(obj: Mapping[str, Any], path: str, map_key: str | None, deleted: bool) -> str:
    key = _opt_str(obj, "key", path)
    if key is None:
        if map_key is not None:
            return map_key
        if deleted:
            return ""
        raise DecodeError(_child(path, "key"), "required string is missing")
    if map_key is not None and key != map_key:
        raise DecodeError(_child(path, "key"), f"key {key!r} differs from its map key {map_key!r}")
    return key


def _decode_clause(obj: dict[str, Any], path: str) -> Clause:
    return Clause(
        context_kind=_opt_str(obj, "contextKind", path),
        attribute=_opt_str(obj, "attribute", path) or "",
        op=_req_str(obj, "op", path),
        values=tuple(_opt_list(obj, "values", path)),
        negate=_opt_bool(obj, "negate", path),
    )


def _decode_clauses(obj: dict[str, Any], path: str) -> tuple[Clause, ...]:
    return tuple(_decode_clause(item, p) for item, p in _objects(obj, "clauses", path))


def _decode_rollout(obj: dict[str, Any], path: str) -> Rollout:
    return Rollout(
        kind=_opt_str(obj, "kind", path) or "rollout",
        context_kind=_opt_str(obj, "contextKind", path),
        bucket_by=_opt_str(obj, "bucketBy", path),
        seed=_opt_int(obj, "seed", path),
        variations=tuple(
            WeightedVariation(
                variation=_req_int(item, "variation", p),
                weight=_req_int(item, "weight", p),
                untracked=_opt_bool(item, "untracked", p),
            )
            for item, p in _objects(obj, "variations", path)
        ),
    )


def _opt_rollout(obj: dict[str, Any], path: str) -> Rollout | None:
    rollout = obj.get("rollout")
    if rollout is None:
        return None
    return _decode_rollout(_object(rollout, _child(path, "rollout")), _child(path, "rollout"))


def decode_flag(obj: object, *, key: str | None = None, path: str = "$") -> Flag:
    """A Flag from its SDK JSON; `key` is the map key it was stored under, if any."""
    flag = _object(obj, path)
    deleted = _opt_bool(flag, "deleted", path)
    fallthrough_path = _child(path, "fallthrough")
    fallthrough_obj = flag.get("fallthrough")
    fallthrough = VariationOrRollout()
    if fallthrough_obj is not None:
        fallthrough_obj = _object(fallthrough_obj, fallthrough_path)
        fallthrough = VariationOrRollout(
            variation=_opt_int(fallthrough_obj, "variation", fallthrough_path),
            rollout=_opt_rollout(fallthrough_obj, fallthrough_path),
        )
    client_side = flag.get("clientSide")
    if client_side is not None and not isinstance(client_side, bool):
        raise DecodeError(_child(path, "clientSide"), "expected a boolean")
    availability_obj = flag.get("clientSideAvailability")
    if availability_obj is None:
        availability = ClientSideAvailability(
            using_mobile_key=True, using_environment_id=bool(client_side)
        )
    else:
        availability_path = _child(path, "clientSideAvailability")
        availability_obj = _object(availability_obj, availability_path)
        availability = ClientSideAvailability(
            using_mobile_key=_opt_bool(availability_obj, "usingMobileKey", availability_path),
            using_environment_id=_opt_bool(
                availability_obj, "usingEnvironmentId", availability_path
            ),
        )
        if client_side is None:
            client_side = availability.using_environment_id
    migration = None
    if flag.get("migration") is not None:
        migration_path = _child(path, "migration")
        migration_obj = _object(flag["migration"], migration_path)
        migration = Migration(check_ratio=_opt_int(migration_obj, "checkRatio", migration_path))
    decoded = Flag(
        key=_key(flag, path, key, deleted),
        version=_version(flag, path),
        deleted=deleted,
        on=_opt_bool(flag, "on", path),
        variations=tuple(_opt_list(flag, "variations", path)),
        off_variation=_opt_int(flag, "offVariation", path),
        fallthrough=fallthrough,
        prerequisites=tuple(
            Prerequisite(key=_req_str(item, "key", p), variation=_req_int(item, "variation", p))
            for item, p in _objects(flag, "prerequisites", path)
        ),
        targets=tuple(
            Target(
                variation=_req_int(item, "variation", p),
                values=_opt_str_list(item, "values", p),
            )
            for item, p in _objects(flag, "targets", path)
        ),
        context_targets=tuple(
            Target(
                context_kind=_opt_str(item, "contextKind", p),
                variation=_req_int(item, "variation", p),
                values=_opt_str_list(item, "values", p),
            )
            for item, p in _objects(flag, "contextTargets", path)
        ),
        rules=tuple(
            FlagRule(
                id=_opt_str(item, "id", p),
                clauses=_decode_clauses(item, p),
                variation=_opt_int(item, "variation", p),
                rollout=_opt_rollout(item, p),
                track_events=_opt_bool(item, "trackEvents", p),
            )
            for item, p in _objects(flag, "rules", path)
        ),
        salt=_opt_str(flag, "salt", path) or "",
        track_events=_opt_bool(flag, "trackEvents", path),
        track_events_fallthrough=_opt_bool(flag, "trackEventsFallthrough", path),
        debug_events_until_date=_opt_number(flag, "debugEventsUntilDate", path),
        client_side=bool(client_side),
        client_side_availability=availability,
        sampling_ratio=_opt_int(flag, "samplingRatio", path),
        exclude_from_summaries=_opt_bool(flag, "excludeFromSummaries", path),
        migration=migration,
    )
    compiled_flag(decoded)  # compiling is part of decoding: evaluation then only reads
    return decoded


def _decode_segment_targets(obj: dict[str, Any], name: str, path: str) -> tuple[SegmentTarget, ...]:
    return tuple(
        SegmentTarget(
            context_kind=_opt_str(item, "contextKind", p), values=_opt_str_list(item, "values", p)
        )
        for item, p in _objects(obj, name, path)
    )


def decode_segment(obj: object, *, key: str | None = None, path: str = "$") -> Segment:
    """A Segment from its SDK JSON; `key` is the map key it was stored under, if any."""
    segment = _object(obj, path)
    deleted = _opt_bool(segment, "deleted", path)
    decoded = Segment(
        key=_key(segment, path, key, deleted),
        version=_version(segment, path),
        deleted=deleted,
        included=_opt_str_list(segment, "included", path),
        excluded=_opt_str_list(segment, "excluded", path),
        included_contexts=_decode_segment_targets(segment, "includedContexts", path),
        excluded_contexts=_decode_segment_targets(segment, "excludedContexts", path),
        rules=tuple(
            SegmentRule(
                id=_opt_str(item, "id", p),
                clauses=_decode_clauses(item, p),
                weight=_opt_int(item, "weight", p),
                bucket_by=_opt_str(item, "bucketBy", p),
                rollout_context_kind=_opt_str(item, "rolloutContextKind", p),
            )
            for item, p in _objects(segment, "rules", path)
        ),
        salt=_opt_str(segment, "salt", path) or "",
        unbounded=_opt_bool(segment, "unbounded", path),
        unbounded_context_kind=_opt_str(segment, "unboundedContextKind", path),
        generation=_opt_int(segment, "generation", path),
    )
    compiled_segment(decoded)  # compiling is part of decoding: evaluation then only reads
    return decoded


def decode_data(obj: object) -> FlagData:
    """FlagData from `{"flags": {...}, "segments": {...}}` (either part may be absent)."""
    data = _object(obj, "$")
    flags_obj = data.get("flags")
    segments_obj = data.get("segments")
    flags = {}
    if flags_obj is not None:
        for key, item in _object(flags_obj, "$.flags").items():
            flags[key] = decode_flag(item, key=key, path=_child("$.flags", key))
    segments = {}
    if segments_obj is not None:
        for key, item in _object(segments_obj, "$.segments").items():
            segments[key] = decode_segment(item, key=key, path=_child("$.segments", key))
    return FlagData(flags=flags, segments=segments)
