"""Flagstaff evaluation core: LaunchDarkly flag and segment semantics, with no I/O.

Decode LaunchDarkly SDK JSON once (it is compiled then), evaluate many times.
"""

from flagstaff_core.big_segment import BigSegmentMembership
from flagstaff_core.client_result import (
    ClientDetail,
    ClientResult,
    decode_client_results,
    read_client_result,
)
from flagstaff_core.context import Context, decode_context
from flagstaff_core.decoder import decode_data, decode_flag, decode_segment
from flagstaff_core.encoder import encode_data, encode_flag, encode_segment
from flagstaff_core.errors import ContextError, CoreError, DecodeError, Stopped
from flagstaff_core.evaluation import Evaluation, PrerequisiteEvaluation
from flagstaff_core.evaluator import evaluate, evaluate_key
from flagstaff_core.flag_state import (
    Availability,
    all_flags_state,
    client_result,
    evaluate_for_client,
)
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
from flagstaff_core.pattern import pattern_error
from flagstaff_core.reason import (
    BigSegmentsStatus,
    ErrorKind,
    EvaluationDetail,
    Reason,
    ReasonKind,
)
from flagstaff_core.secure_mode import secure_mode_hash
from flagstaff_core.value_type import ValueType, has_value_type, typed_detail

__all__ = [
    "Availability",
    "BigSegmentMembership",
    "BigSegmentsStatus",
    "Clause",
    "ClientDetail",
    "ClientResult",
    "ClientSideAvailability",
    "Context",
    "ContextError",
    "CoreError",
    "DecodeError",
    "ErrorKind",
    "Evaluation",
    "EvaluationDetail",
    "Flag",
    "FlagData",
    "FlagRule",
    "Migration",
    "Prerequisite",
    "PrerequisiteEvaluation",
    "Reason",
    "ReasonKind",
    "Rollout",
    "Segment",
    "SegmentRule",
    "SegmentTarget",
    "Stopped",
    "Target",
    "ValueType",
    "VariationOrRollout",
    "WeightedVariation",
    "all_flags_state",
    "client_result",
    "decode_client_results",
    "decode_context",
    "decode_data",
    "decode_flag",
    "decode_segment",
    "encode_data",
    "encode_flag",
    "encode_segment",
    "evaluate",
    "evaluate_for_client",
    "evaluate_key",
    "has_value_type",
    "pattern_error",
    "read_client_result",
    "secure_mode_hash",
    "typed_detail",
]
