"""Flagstaff evaluation results in OpenFeature's terms: reasons, error codes, variant and flag
metadata. Pure; must not evaluate.

Reasons are `flagstaff_sdk.result_reason`'s categories as OpenFeature's `Reason` (a
prerequisite that failed is DISABLED; `flag_metadata["prerequisiteKey"]` says which).
"""

from __future__ import annotations

from typing import Any

from flagstaff_core import ErrorKind, EvaluationDetail, Flag
from openfeature.exception import ErrorCode
from openfeature.flag_evaluation import FlagMetadata, FlagResolutionDetails, Reason

from flagstaff_sdk.result_reason import result_reason

_ERROR_CODES = {
    ErrorKind.CLIENT_NOT_READY: ErrorCode.PROVIDER_NOT_READY,
    ErrorKind.FLAG_NOT_FOUND: ErrorCode.FLAG_NOT_FOUND,
    ErrorKind.MALFORMED_FLAG: ErrorCode.PARSE_ERROR,
    ErrorKind.USER_NOT_SPECIFIED: ErrorCode.INVALID_CONTEXT,
    ErrorKind.WRONG_TYPE: ErrorCode.TYPE_MISMATCH,
    ErrorKind.EXCEPTION: ErrorCode.GENERAL,
}


def reason_of(detail: EvaluationDetail, flag: Flag | None) -> Reason:
    return Reason(result_reason(detail, flag).upper())


def metadata_of(detail: EvaluationDetail, flag: Flag | None) -> FlagMetadata:
    """What LaunchDarkly's reason says, flattened: the OpenFeature metadata values are scalars."""
    reason = detail.reason
    out: dict[str, bool | int | float | str] = {"reasonKind": reason.kind.value}
    optional: dict[str, Any] = {
        "variationIndex": detail.variation_index,
        "ruleIndex": reason.rule_index,
        "ruleId": reason.rule_id,
        "prerequisiteKey": reason.prerequisite_key,
        "errorKind": None if reason.error_kind is None else reason.error_kind.value,
        "flagVersion": None if flag is None else flag.version,
    }
    out.update({name: value for name, value in optional.items() if value is not None})
    if reason.in_experiment:
        out["inExperiment"] = True
    if reason.big_segments_status is not None:
        out["bigSegmentsStatus"] = reason.big_segments_status.value
    return out


def resolution_of(
    detail: EvaluationDetail, flag: Flag | None, value: Any
) -> FlagResolutionDetails[Any]:
    """`value` is the detail's value already converted to the requested type."""
    error_kind = detail.reason.error_kind
    return FlagResolutionDetails(
        value=value,
        error_code=None if error_kind is None else _ERROR_CODES[error_kind],
        error_message=None if error_kind is None else _message(error_kind),
        reason=reason_of(detail, flag),
        variant=None if detail.variation_index is None else str(detail.variation_index),
        flag_metadata=metadata_of(detail, flag),
    )


def _message(error_kind: ErrorKind) -> str:
    return {
        ErrorKind.CLIENT_NOT_READY: "the Flagstaff client has no flag data yet",
        ErrorKind.FLAG_NOT_FOUND: "no flag with this key",
        ErrorKind.MALFORMED_FLAG: "the flag's configuration is malformed",
        ErrorKind.USER_NOT_SPECIFIED: "no valid context",
        ErrorKind.WRONG_TYPE: "the flag's value has another type than requested",
        ErrorKind.EXCEPTION: "unexpected error while evaluating",
    }[error_kind]
