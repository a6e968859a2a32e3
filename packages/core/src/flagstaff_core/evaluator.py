"""Evaluates one flag for one context: LaunchDarkly's algorithm run over compiled flags.

Never raises for a valid flag and context: every failure is an ERROR reason.
"""

from __future__ import annotations

from dataclasses import replace

from flagstaff_core.big_segment import BigSegmentMembership
from flagstaff_core.context import Context
from flagstaff_core.evaluation import Evaluation, build_evaluation
from flagstaff_core.flag_program import CompiledFlag, compiled_flag
from flagstaff_core.model import Flag, FlagData
from flagstaff_core.reason import ErrorKind, EvaluationDetail, Reason
from flagstaff_core.scope import MalformedFlagError, Scope

_NO_CONTEXT = Evaluation(
    flag=None, detail=EvaluationDetail(None, None, Reason.error(ErrorKind.USER_NOT_SPECIFIED))
)
_EXCEPTION_DETAIL = EvaluationDetail(None, None, Reason.error(ErrorKind.EXCEPTION))
_NOT_FOUND = Evaluation(
    flag=None, detail=EvaluationDetail(None, None, Reason.error(ErrorKind.FLAG_NOT_FOUND))
)


def evaluate(
    flag: Flag,
    context: Context | None,
    data: FlagData,
    *,
    big_segments: BigSegmentMembership | None = None,
) -> Evaluation:
    """Evaluate `flag` for `context`; `data` resolves prerequisites and segments.

    `context=None` (missing or invalid) gives ERROR/USER_NOT_SPECIFIED. When the result has no
    variation, `detail.value` is None and the caller substitutes its default.
    """
    compiled: CompiledFlag | None = flag._compiled
    if compiled is None:
        compiled = compiled_flag(flag)
    if context is None:
        return compiled.no_context
    constant = compiled.constant
    if constant is not None:
        return constant
    if not compiled.needs_scope:
        try:
            return compiled.run(context, None)
        except MalformedFlagError:
            return compiled.malformed
    scope = Scope(data._live_flags, data._live_segments, big_segments)
    try:
        evaluation = compiled.run(context, scope)
    except MalformedFlagError:
        evaluation = compiled.malformed
        scope.big_segments_status = None  # as the official SDKs: an error carries no status
    except RecursionError:
        # Prerequisite or segment chains deeper than Python's stack: the SDKs' EXCEPTION error.
        return build_evaluation(flag, _EXCEPTION_DETAIL, flag.track_events, False, (), ())
    status = scope.big_segments_status
    prerequisites = scope.prerequisites
    if prerequisites is None and status is None:
        return evaluation
    detail = evaluation.detail
    if status is not None:
        reason = replace(detail.reason, big_segments_status=status)
        detail = EvaluationDetail(detail.value, detail.variation_index, reason)
    return build_evaluation(
        flag,
        detail,
        evaluation.track_events,
        evaluation.force_reason,
        () if prerequisites is None else tuple(prerequisites),
        () if scope.prerequisite_keys is None else tuple(scope.prerequisite_keys),
    )


def evaluate_key(
    data: FlagData,
    key: str,
    context: Context | None,
    *,
    big_segments: BigSegmentMembership | None = None,
) -> Evaluation:
    """Evaluate the flag stored under `key`; a missing or deleted flag gives FLAG_NOT_FOUND."""
    flag = data._live_flags.get(key)
    if flag is None:
        # An invalid context is reported before a missing flag, as the official SDKs do.
        return _NOT_FOUND if context is not None else _NO_CONTEXT
    return evaluate(flag, context, data, big_segments=big_segments)
