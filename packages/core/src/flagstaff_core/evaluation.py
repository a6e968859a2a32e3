"""The result of evaluating a flag, with what analytics events need to know about it.

Values only; whether an event is due is decided by the evaluator, never again by callers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flagstaff_core.reason import EvaluationDetail, Reason

if TYPE_CHECKING:
    from flagstaff_core.model import Flag


@dataclass(frozen=True, slots=True, kw_only=True)
class Evaluation:
    """One flag's result for one context.

    `track_events`: a full feature event is due (the flag's trackEvents, or the result is an
    experiment: inExperiment, a rule with trackEvents, or fallthrough with trackEventsFallthrough).
    `force_reason`: the result is an experiment, so events must carry the reason.
    `prerequisites`: every prerequisite evaluated on the way, deepest first, each with `prereq_of`.
    `prerequisite_keys`: keys of the direct prerequisites that were checked (client results).
    """

    flag: Flag | None
    detail: EvaluationDetail
    track_events: bool = False
    force_reason: bool = False
    prerequisites: tuple[PrerequisiteEvaluation, ...] = ()
    prerequisite_keys: tuple[str, ...] = ()

    @property
    def value(self) -> Any:
        return self.detail.value

    @property
    def variation_index(self) -> int | None:
        return self.detail.variation_index

    @property
    def reason(self) -> Reason:
        return self.detail.reason

    @property
    def debug_events_until_date(self) -> int | float | None:
        """Until when (ms epoch) debug events are wanted; the caller compares it with its clock."""
        return None if self.flag is None else self.flag.debug_events_until_date


@dataclass(frozen=True, slots=True)
class PrerequisiteEvaluation:
    """A prerequisite's evaluation, recorded for a feature event with `prereqOf`."""

    prereq_of: str
    evaluation: Evaluation

    @property
    def flag(self) -> Flag:
        flag = self.evaluation.flag
        assert flag is not None  # prerequisites are only recorded for flags that exist
        return flag

    @property
    def detail(self) -> EvaluationDetail:
        return self.evaluation.detail

    @property
    def track_events(self) -> bool:
        return self.evaluation.track_events

    @property
    def force_reason(self) -> bool:
        return self.evaluation.force_reason


# Building frozen dataclasses through their slot descriptors skips the per-field
# `object.__setattr__` of the generated __init__; evaluation builds these on its hot path.
_new = object.__new__
_set_flag = getattr(Evaluation, "flag").__set__  # noqa: B009 - the slot descriptor, not a value
_set_detail = getattr(Evaluation, "detail").__set__  # noqa: B009
_set_track_events = getattr(Evaluation, "track_events").__set__  # noqa: B009
_set_force_reason = getattr(Evaluation, "force_reason").__set__  # noqa: B009
_set_prerequisites = getattr(Evaluation, "prerequisites").__set__  # noqa: B009
_set_prerequisite_keys = getattr(Evaluation, "prerequisite_keys").__set__  # noqa: B009
_set_prereq_of = getattr(PrerequisiteEvaluation, "prereq_of").__set__  # noqa: B009
_set_evaluation = getattr(PrerequisiteEvaluation, "evaluation").__set__  # noqa: B009


def build_evaluation(
    flag: Flag | None,
    detail: EvaluationDetail,
    track_events: bool,
    force_reason: bool,
    prerequisites: tuple[PrerequisiteEvaluation, ...],
    prerequisite_keys: tuple[str, ...],
) -> Evaluation:
    """`Evaluation(...)` for hot paths."""
    evaluation: Evaluation = _new(Evaluation)
    _set_flag(evaluation, flag)
    _set_detail(evaluation, detail)
    _set_track_events(evaluation, track_events)
    _set_force_reason(evaluation, force_reason)
    _set_prerequisites(evaluation, prerequisites)
    _set_prerequisite_keys(evaluation, prerequisite_keys)
    return evaluation


def build_prerequisite_evaluation(prereq_of: str, evaluation: Evaluation) -> PrerequisiteEvaluation:
    """`PrerequisiteEvaluation(...)` for hot paths."""
    prerequisite: PrerequisiteEvaluation = _new(PrerequisiteEvaluation)
    _set_prereq_of(prerequisite, prereq_of)
    _set_evaluation(prerequisite, evaluation)
    return prerequisite
