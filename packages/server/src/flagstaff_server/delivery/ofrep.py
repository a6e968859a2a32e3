"""OpenFeature Remote Evaluation Protocol (OFREP v1) over LaunchDarkly evaluation: the request
context's mapping to a LaunchDarkly context, the reason and error mapping, and response bodies.

Pure: no I/O. The mapping tables are documented in docs/client-delivery.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from flagstaff_core import (
    ContextError,
    ErrorKind,
    Evaluation,
    Flag,
    ReasonKind,
    decode_context,
)

from flagstaff_server.context_limits import check_context
from flagstaff_server.delivery.client_context import ClientContext, fingerprint_of
from flagstaff_server.errors import ValidationError

ErrorCode = Literal[
    "PARSE_ERROR", "TARGETING_KEY_MISSING", "INVALID_CONTEXT", "FLAG_NOT_FOUND", "GENERAL"
]

RESERVED = ("targetingKey", "kind")
"""OFREP context fields that become the LaunchDarkly context's key and kind, not attributes."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """An OFREP error answer: HTTP status, `errorCode` and `errorDetails`."""

    status: int
    code: ErrorCode
    details: str

    def body(self, key: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"errorCode": self.code, "errorDetails": self.details}
        return out if key is None else {"key": key, **out}


def context_of(request: Any) -> ClientContext | Failure:
    """`{"context": {"targetingKey": k, "kind"?: kind, ...attributes}}` as a LaunchDarkly context
    `{"kind": kind or "user", "key": k, ...attributes}`."""
    if not isinstance(request, dict):
        return Failure(status=400, code="PARSE_ERROR", details="the body must be a JSON object")
    context = request.get("context")
    if context is None:
        return Failure(
            status=400, code="TARGETING_KEY_MISSING", details="the request has no context"
        )
    if not isinstance(context, dict):
        return Failure(status=400, code="INVALID_CONTEXT", details="context must be an object")
    try:
        check_context(context, at="/context")
    except ValidationError as exc:
        return Failure(status=400, code="INVALID_CONTEXT", details=f"{exc.path}: {exc.message}")
    key = context.get("targetingKey")
    if key is None or key == "":
        return Failure(
            status=400,
            code="TARGETING_KEY_MISSING",
            details="context.targetingKey is required (it becomes the LaunchDarkly context key)",
        )
    if not isinstance(key, str):
        return Failure(
            status=400, code="INVALID_CONTEXT", details="context.targetingKey must be a string"
        )
    kind = context.get("kind", "user")
    if not isinstance(kind, str) or kind == "multi":
        return Failure(
            status=400,
            code="INVALID_CONTEXT",
            details="context.kind must be a single context kind name (default user)",
        )
    mapped = {name: value for name, value in context.items() if name not in RESERVED}
    mapped.update(kind=kind, key=key)
    try:
        decoded = decode_context(mapped)
    except ContextError as exc:
        return Failure(status=400, code="INVALID_CONTEXT", details=f"invalid context: {exc}")
    return ClientContext(context=decoded, fingerprint=fingerprint_of(mapped))


def reason_of(flag: Flag, evaluation: Evaluation) -> str:
    """The OpenFeature reason for a LaunchDarkly result (never called for ERROR results)."""
    reason = evaluation.detail.reason
    kind = reason.kind
    if kind in (ReasonKind.OFF, ReasonKind.PREREQUISITE_FAILED):
        return "DISABLED"
    if kind is ReasonKind.TARGET_MATCH:
        return "TARGETING_MATCH"
    if kind is ReasonKind.RULE_MATCH:
        index = reason.rule_index
        rule = flag.rules[index] if index is not None and index < len(flag.rules) else None
        return "SPLIT" if rule is not None and rule.rollout is not None else "TARGETING_MATCH"
    if kind is ReasonKind.FALLTHROUGH:
        return "SPLIT" if flag.fallthrough.rollout is not None else "STATIC"
    return "UNKNOWN"


def failure_of(evaluation: Evaluation) -> Failure | None:
    """The OFREP error for an ERROR result; None for a result with a value to report."""
    reason = evaluation.detail.reason
    if reason.kind is not ReasonKind.ERROR:
        return None
    error = reason.error_kind
    if error is ErrorKind.FLAG_NOT_FOUND:
        return Failure(status=404, code="FLAG_NOT_FOUND", details="flag not found")
    if error is ErrorKind.USER_NOT_SPECIFIED:
        return Failure(status=400, code="TARGETING_KEY_MISSING", details="no context key")
    name = error.value if error is not None else "unknown"
    return Failure(status=400, code="GENERAL", details=f"evaluation failed: {name}")


def success(key: str, flag: Flag, evaluation: Evaluation) -> dict[str, Any]:
    """An OFREP success body. A result without a variation carries no `value` (OFREP's "use the
    code default") and no `variant`."""
    detail = evaluation.detail
    reason = detail.reason
    metadata: dict[str, Any] = {"flagVersion": flag.version, "ldReason": reason.kind.value}
    out: dict[str, Any] = {"key": key, "reason": reason_of(flag, evaluation)}
    if detail.variation_index is not None:
        out["value"] = detail.value
        out["variant"] = str(detail.variation_index)
        metadata["variationIndex"] = detail.variation_index
    if reason.rule_id:
        metadata["ruleId"] = reason.rule_id
    if reason.prerequisite_key:
        metadata["prerequisiteKey"] = reason.prerequisite_key
    if reason.in_experiment:
        metadata["inExperiment"] = True
    out["metadata"] = metadata
    return out


def result_of(key: str, flag: Flag, evaluation: Evaluation) -> dict[str, Any]:
    """One entry of a bulk response: a success, or `{"key", "errorCode", "errorDetails"}`."""
    failure = failure_of(evaluation)
    return success(key, flag, evaluation) if failure is None else failure.body(key)
