"""Evaluating the flags of a LaunchDarkly data file for a context, as `flagstaff eval` shows them.

Takes parsed JSON and returns plain JSON-ready dicts; reads no files and parses no arguments.
Bad data or contexts raise `ValidationError` (with the JSON path), an unknown flag `NotFound`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flagstaff_core import (
    Context,
    ContextError,
    DecodeError,
    FlagData,
    decode_context,
    decode_data,
    evaluate,
)

from flagstaff_server.errors import NotFound, ValidationError


def decode_file_data(document: object) -> FlagData:
    """Decode a data file `{"flags": ..., "segments": ..., "flagValues": ...}`.

    Each `flagValues` entry becomes an always-on flag serving that one value, as LaunchDarkly's
    file data source does; a key defined in both `flags` and `flagValues` is an error there too.
    """
    if not isinstance(document, Mapping):
        raise ValidationError("a data file must be a JSON object", path="$")
    flags = _object_member(document, "flags")
    values = _object_member(document, "flagValues")
    for key, value in values.items():
        if key in flags:
            raise ValidationError(
                f"flag {key!r} is in both flags and flagValues", path=f"$.flagValues.{key}"
            )
        flags[key] = _constant_flag(key, value)
    segments = _object_member(document, "segments")
    try:
        return decode_data({"flags": flags, "segments": segments})
    except DecodeError as exc:
        raise ValidationError(exc.message, path=exc.path) from exc


def decode_context_json(document: object) -> Context:
    try:
        return decode_context(document)
    except ContextError as exc:
        raise ValidationError(str(exc), path="$") from exc


def evaluate_flags(
    data: FlagData, context: Context, flag_key: str | None = None
) -> dict[str, dict[str, Any]]:
    """`{key: {"value", "variationIndex", "reason"}}` for every flag in key order, or for one."""
    if flag_key is None:
        keys = sorted(data.flags)
    elif flag_key in data.flags:
        keys = [flag_key]
    else:
        raise NotFound(f"no flag {flag_key!r} in the data")
    results = {}
    for key in keys:
        detail = evaluate(data.flags[key], context, data).detail
        results[key] = {
            "value": detail.value,
            "variationIndex": detail.variation_index,
            "reason": detail.reason.to_json(),
        }
    return results


def _object_member(document: Mapping[str, Any], name: str) -> dict[str, Any]:
    member = document.get(name, {})
    if not isinstance(member, Mapping):
        raise ValidationError(f"{name} must be a JSON object", path=f"$.{name}")
    return dict(member)


def _constant_flag(key: str, value: object) -> dict[str, Any]:
    return {
        "key": key,
        "version": 1,
        "on": True,
        "variations": [value],
        "fallthrough": {"variation": 0},
        "offVariation": None,
        "prerequisites": [],
        "targets": [],
        "contextTargets": [],
        "rules": [],
        "salt": "",
        "trackEvents": False,
        "trackEventsFallthrough": False,
        "debugEventsUntilDate": None,
        "clientSide": False,
        "clientSideAvailability": {"usingMobileKey": False, "usingEnvironmentId": False},
        "deleted": False,
    }
