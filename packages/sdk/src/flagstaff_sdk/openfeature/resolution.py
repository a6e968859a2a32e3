"""Flagstaff evaluation results in OpenFeature's terms: reasons, error codes, variant and flag
metadata. Pure; must not evaluate.

Reasons: TARGET_MATCH and RULE_MATCH are TARGETING_MATCH, or SPLIT when the rule served a
percentage rollout; FALLTHROUGH is DEFAULT, or SPLIT for a rollout; OFF is DISABLED;
PREREQUISITE_FAILED is DISABLED too (the flag serves its off variation because a flag it depends
on is not as required; `flag_metadata["prerequisiteKey"]` says which); ERROR is ERROR with an
error code. Experiments (`inExperiment`) are SPLIT.
"""

from __future__ import annotations

from typing import Any

from flagstaff_core import ErrorKind, EvaluationDetail, Flag, ReasonKind
from openfeature.exception import ErrorCode
from openfeature.flag_evaluation import FlagMetadata, FlagResolutionDetails, Reason

_ERROR_CODES = {
    ErrorKind.CLIENT_NOT_READY: ErrorCode.PROVIDER_NOT_READY,
    ErrorKind.FLAG_NOT_FOUND: ErrorCode.FLAG_NOT_FOUND,
    ErrorKind.MALFORMED_FLAG: ErrorCode.PARSE_ERROR,
    ErrorKind.USER_NOT_SPECIFIED: ErrorCode.INVALID_CONTEXT,
    ErrorKind.WRONG_TYPE: ErrorCode.TYPE_MISMATCH,
    ErrorKind.EXCEPTION: ErrorCode.GENERAL,
}


def reason_of(detail: EvaluationDetail, flag: Flag | None) -> Reason:
    reason = detail.reason
    kind = reason.kind
    if kind is ReasonKind.ERROR:
        return Reason.ERROR
    if kind is ReasonKind.OFF or kind is ReasonKind.PREREQUISITE_FAILED:
        return Reason.DISABLED
    if reason.in_experiment or _served_a_rollout(detail, flag):
        return Reason.SPLIT
    if kind is ReasonKind.FALLTHROUGH:
        return Reason.DEFAULT
    return Reason.TARGETING_MATCH


def _served_a_rollout(detail: EvaluationDetail, flag: Flag | None) -> bool:
    if flag is None:
        return False
    reason = detail.reason
    if reason.kind is ReasonKind.FALLTHROUGH:
        return flag.fallthrough.rollout is not None
    if reason.kind is ReasonKind.RULE_MATCH and reason.rule_index is not None:
        rules = flag.rules
        return 0 <= reason.rule_index < len(rules) and rules[reason.rule_index].rollout is not None
    return False


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
