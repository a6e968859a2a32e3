"""Evaluation reasons and details: what was chosen and why, in LaunchDarkly's vocabulary.

Plain immutable values; must not know how flags are evaluated.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any


class ReasonKind(enum.Enum):
    OFF = "OFF"
    FALLTHROUGH = "FALLTHROUGH"
    TARGET_MATCH = "TARGET_MATCH"
    RULE_MATCH = "RULE_MATCH"
    PREREQUISITE_FAILED = "PREREQUISITE_FAILED"
    ERROR = "ERROR"


class ErrorKind(enum.Enum):
    CLIENT_NOT_READY = "CLIENT_NOT_READY"
    FLAG_NOT_FOUND = "FLAG_NOT_FOUND"
    MALFORMED_FLAG = "MALFORMED_FLAG"
    USER_NOT_SPECIFIED = "USER_NOT_SPECIFIED"
    WRONG_TYPE = "WRONG_TYPE"
    EXCEPTION = "EXCEPTION"


class BigSegmentsStatus(enum.Enum):
    HEALTHY = "HEALTHY"
    STALE = "STALE"
    STORE_ERROR = "STORE_ERROR"
    NOT_CONFIGURED = "NOT_CONFIGURED"


@dataclass(frozen=True, slots=True, kw_only=True)
class Reason:
    """Why an evaluation produced its result."""

    kind: ReasonKind
    rule_index: int | None = None
    rule_id: str | None = None
    prerequisite_key: str | None = None
    error_kind: ErrorKind | None = None
    in_experiment: bool = False
    big_segments_status: BigSegmentsStatus | None = None

    @classmethod
    def error(cls, error_kind: ErrorKind) -> Reason:
        return cls(kind=ReasonKind.ERROR, error_kind=error_kind)

    def to_json(self) -> dict[str, Any]:
        """LaunchDarkly's JSON shape, e.g. `{"kind": "RULE_MATCH", "ruleIndex": 0, ...}`."""
        out: dict[str, Any] = {"kind": self.kind.value}
        if self.kind is ReasonKind.RULE_MATCH:
            out["ruleIndex"] = self.rule_index
            # The official Python SDK writes `ruleId` even when the rule has none (as null).
            out["ruleId"] = self.rule_id
        elif self.kind is ReasonKind.PREREQUISITE_FAILED:
            out["prerequisiteKey"] = self.prerequisite_key
        elif self.kind is ReasonKind.ERROR and self.error_kind is not None:
            out["errorKind"] = self.error_kind.value
        if self.in_experiment:
            out["inExperiment"] = True
        if self.big_segments_status is not None:
            out["bigSegmentsStatus"] = self.big_segments_status.value
        return out


@dataclass(frozen=True, slots=True)
class EvaluationDetail:
    """The chosen value (None when no variation was chosen), its index, and the reason."""

    value: Any
    variation_index: int | None
    reason: Reason
