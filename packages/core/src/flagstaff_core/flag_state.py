"""All flags for one context, in the two shapes clients consume.

`all_flags_state`: the server SDK bootstrap shape (`all_flags_state().to_json_dict()`).
`evaluate_for_client`: the client-side/mobile poll result shape (protocol §2.3).
Evaluating creates no events here; callers must not need to decide anything again.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from flagstaff_core.big_segment import BigSegmentMembership
from flagstaff_core.context import Context
from flagstaff_core.errors import Stopped
from flagstaff_core.evaluation import Evaluation
from flagstaff_core.evaluator import evaluate
from flagstaff_core.model import Flag, FlagData


class Availability(enum.Enum):
    """Which flags a client may see: browser (client-side id), mobile key, or all (SDK key)."""

    CLIENT_SIDE = "client-side"
    MOBILE = "mobile"
    ALL = "all"


def _available(flag: Flag, availability: Availability) -> bool:
    if availability is Availability.CLIENT_SIDE:
        return flag.client_side_availability.using_environment_id
    if availability is Availability.MOBILE:
        return flag.client_side_availability.using_mobile_key
    return True


def all_flags_state(
    data: FlagData,
    context: Context | None,
    *,
    client_side_only: bool = False,
    with_reasons: bool = False,
    details_only_for_tracked_flags: bool = False,
    now_ms: int | float | None = None,
    big_segments: BigSegmentMembership | None = None,
) -> dict[str, Any]:
    """`{KEY: value, ..., "$flagsState": {KEY: {...}}, "$valid": bool}`.

    `client_side_only` filters on the flag's `clientSide` (as the official SDK does).
    `details_only_for_tracked_flags` drops version and reason unless tracked, an experiment, or
    debugging; whether debugging is still on needs `now_ms` (when None, a set
    debugEventsUntilDate counts as active).
    """
    if context is None:
        return {"$flagsState": {}, "$valid": False}
    values: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for key, flag in data._live_flags.items():
        if client_side_only and not flag.client_side:
            continue
        evaluation = evaluate(flag, context, data, big_segments=big_segments)
        detail = evaluation.detail
        values[key] = detail.value
        debug_until = flag.debug_events_until_date
        meta: dict[str, Any] = {}
        omit_details = (
            details_only_for_tracked_flags
            and not evaluation.track_events
            and not evaluation.force_reason
            and not (debug_until is not None and (now_ms is None or debug_until > now_ms))
        )
        if not omit_details:
            if with_reasons or evaluation.force_reason:
                meta["reason"] = detail.reason.to_json()
            meta["version"] = flag.version
        if evaluation.prerequisite_keys:
            meta["prerequisites"] = list(evaluation.prerequisite_keys)
        if detail.variation_index is not None:
            meta["variation"] = detail.variation_index
        if evaluation.track_events:
            meta["trackEvents"] = True
        if evaluation.force_reason:
            meta["trackReason"] = True
        if debug_until is not None:
            meta["debugEventsUntilDate"] = debug_until
        metadata[key] = meta
    values["$flagsState"] = metadata
    values["$valid"] = True
    return values


def client_result(evaluation: Evaluation, *, with_reasons: bool = False) -> dict[str, Any]:
    """One flag's evaluated result as client-side and mobile SDKs receive it."""
    flag = evaluation.flag
    assert flag is not None  # only existing flags are sent to clients
    detail = evaluation.detail
    out: dict[str, Any] = {
        "value": detail.value,
        "variation": detail.variation_index,
        "version": flag.version,
        "flagVersion": flag.version,
    }
    if evaluation.track_events:
        out["trackEvents"] = True
    if evaluation.force_reason:
        out["trackReason"] = True
    if with_reasons or evaluation.force_reason:
        out["reason"] = detail.reason.to_json()
    if flag.debug_events_until_date is not None:
        out["debugEventsUntilDate"] = flag.debug_events_until_date
    if evaluation.prerequisite_keys:
        out["prerequisites"] = list(evaluation.prerequisite_keys)
    return out


KEEP_GOING_STRIDE = 16
"""Flags `evaluate_for_client` evaluates between two questions to its `keep_going`."""


def evaluate_for_client(
    data: FlagData,
    context: Context,
    *,
    availability: Availability = Availability.CLIENT_SIDE,
    with_reasons: bool = False,
    big_segments: BigSegmentMembership | None = None,
    keep_going: Callable[[], bool] | None = None,
) -> dict[str, dict[str, Any]]:
    """Every flag available to this kind of client, evaluated for `context`, keyed by flag key.

    `keep_going` bounds the work: it is asked before the first flag and every
    `KEEP_GOING_STRIDE` flags after, and when it answers False the evaluation raises `Stopped`
    (a server's CPU budget per request: the core reads no clock, and a CPU clock is a system
    call, so it is not asked for every flag)."""
    if keep_going is None:
        return {
            key: client_result(
                evaluate(flag, context, data, big_segments=big_segments), with_reasons=with_reasons
            )
            for key, flag in data._live_flags.items()
            if _available(flag, availability)
        }
    results: dict[str, dict[str, Any]] = {}
    countdown = 0
    for key, flag in data._live_flags.items():
        if not _available(flag, availability):
            continue
        if countdown == 0:
            if not keep_going():
                raise Stopped(f"stopped before flag {key!r}, {len(results)} flags evaluated")
            countdown = KEEP_GOING_STRIDE
        countdown -= 1
        evaluation = evaluate(flag, context, data, big_segments=big_segments)
        results[key] = client_result(evaluation, with_reasons=with_reasons)
    return results
