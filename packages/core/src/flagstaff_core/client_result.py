"""Reads pre-evaluated flag results as a client-side or mobile SDK holds them (protocol §2.3).

The reason is kept as the JSON the server sent, because clients pass it through unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flagstaff_core.errors import DecodeError

_NOT_FOUND_REASON = {"kind": "ERROR", "errorKind": "FLAG_NOT_FOUND"}


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientResult:
    value: Any
    variation: int | None = None
    version: int | None = None
    reason: Mapping[str, Any] | None = None
    track_events: bool = False
    track_reason: bool = False
    debug_events_until_date: int | float | None = None
    prerequisites: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ClientDetail:
    """What a client-side SDK's `variationDetail` returns: the default when nothing was chosen."""

    value: Any
    variation_index: int | None
    reason: Mapping[str, Any] | None


def decode_client_results(obj: object) -> dict[str, ClientResult]:
    """`{KEY: {value, variation, version, reason, ...}}` as received by client SDKs."""
    if not isinstance(obj, dict):
        raise DecodeError("$", "expected an object of flag results")
    results = {}
    for key, item in obj.items():
        path = f"$[{key!r}]"
        if not isinstance(item, dict):
            raise DecodeError(path, "expected an object")
        variation = item.get("variation")
        if variation is not None and (
            not isinstance(variation, int) or isinstance(variation, bool)
        ):
            raise DecodeError(f"{path}.variation", "expected an integer")
        version = item.get("flagVersion", item.get("version"))
        if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
            raise DecodeError(f"{path}.version", "expected an integer")
        reason = item.get("reason")
        if reason is not None and not isinstance(reason, dict):
            raise DecodeError(f"{path}.reason", "expected an object")
        prerequisites = item.get("prerequisites") or []
        if not isinstance(prerequisites, list) or not all(
            isinstance(p, str) for p in prerequisites
        ):
            raise DecodeError(f"{path}.prerequisites", "expected an array of strings")
        results[key] = ClientResult(
            value=item.get("value"),
            variation=variation,
            version=version,
            reason=reason,
            track_events=item.get("trackEvents") is True,
            track_reason=item.get("trackReason") is True,
            debug_events_until_date=item.get("debugEventsUntilDate"),
            prerequisites=tuple(prerequisites),
        )
    return results


def read_client_result(results: Mapping[str, ClientResult], key: str, default: Any) -> ClientDetail:
    """The detail for `key`; a missing flag gives the default with ERROR/FLAG_NOT_FOUND."""
    result = results.get(key)
    if result is None:
        return ClientDetail(default, None, dict(_NOT_FOUND_REASON))
    value = default if result.value is None else result.value
    return ClientDetail(value, result.variation, result.reason)
