"""How an evaluation result is named outside LaunchDarkly's vocabulary: the reason and error
categories OpenFeature defines and OpenTelemetry's feature-flag conventions reuse
(`feature_flag.result.reason`, `error.type`). Pure; shared by the OpenFeature provider and the
OpenTelemetry hook, so both name the same result the same way.

Reasons: TARGET_MATCH and RULE_MATCH are `targeting_match`, or `split` when the rule served a
percentage rollout; FALLTHROUGH is `default`, or `split` for a rollout; OFF is `disabled`;
PREREQUISITE_FAILED is `disabled` too (the flag serves its off variation because a flag it
depends on is not as required); ERROR is `error`. Experiments (`inExperiment`) are `split`.
"""

from __future__ import annotations

from flagstaff_core import ErrorKind, EvaluationDetail, Flag, ReasonKind

ERROR_TYPES = {
    ErrorKind.CLIENT_NOT_READY: "provider_not_ready",
    ErrorKind.FLAG_NOT_FOUND: "flag_not_found",
    ErrorKind.MALFORMED_FLAG: "parse_error",
    ErrorKind.USER_NOT_SPECIFIED: "invalid_context",
    ErrorKind.WRONG_TYPE: "type_mismatch",
    ErrorKind.EXCEPTION: "general",
}
"""OpenFeature's error codes, lower case, as `error.type` carries them."""


def result_reason(detail: EvaluationDetail, flag: Flag | None) -> str:
    """The lower-case reason category of `detail`; `flag` (when known) tells a rollout apart."""
    reason = detail.reason
    kind = reason.kind
    if kind is ReasonKind.ERROR:
        return "error"
    if kind is ReasonKind.OFF or kind is ReasonKind.PREREQUISITE_FAILED:
        return "disabled"
    if reason.in_experiment or _served_a_rollout(detail, flag):
        return "split"
    if kind is ReasonKind.FALLTHROUGH:
        return "default"
    return "targeting_match"


def error_type(detail: EvaluationDetail) -> str | None:
    kind = detail.reason.error_kind
    return None if kind is None else ERROR_TYPES[kind]


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
