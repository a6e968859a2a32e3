"""Evaluation hooks: code a client runs before and after each flag evaluation, in LaunchDarkly's
"evaluation series" shape (each stage receives what the previous stage of the same hook returned).
Holds the hook interface and the runner; must not import a telemetry library (the OpenTelemetry
hook lives in `flagstaff_sdk.otel`).

A hook that raises is logged and skipped: a hook can never change or break an evaluation.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flagstaff_core import Context, EvaluationDetail, Flag

log = logging.getLogger("flagstaff_sdk")

SeriesData = Mapping[str, Any]
"""What one hook hands from `before_evaluation` to its own `after_evaluation`."""

_EMPTY: SeriesData = {}


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluationSeriesContext:
    """The evaluation a series is about, as the caller asked for it."""

    key: str
    context: Context | None
    """None when the caller's context was invalid (the result is then an error)."""
    default_value: Any
    method: str
    """The client method called: `variation`, `bool_variation`, `variation_detail`, ..."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluationOutcome:
    """What the evaluation returned, and the flag it read (None when there was none)."""

    detail: EvaluationDetail
    flag: Flag | None


class Hook:
    """Subclass and override the stages you need; both default to passing `data` on."""

    name: str = "hook"

    def before_evaluation(self, series: EvaluationSeriesContext, data: SeriesData) -> SeriesData:
        return data

    def after_evaluation(
        self, series: EvaluationSeriesContext, data: SeriesData, outcome: EvaluationOutcome
    ) -> SeriesData:
        return data


def run_before(hooks: Sequence[Hook], series: EvaluationSeriesContext) -> list[SeriesData]:
    """Each hook's `before_evaluation`, in order; the data each returned (empty if it raised)."""
    out: list[SeriesData] = []
    for hook in hooks:
        try:
            out.append(hook.before_evaluation(series, _EMPTY))
        except Exception:
            log.warning("hook %r failed before evaluating %r", hook.name, series.key, exc_info=True)
            out.append(_EMPTY)
    return out


def run_after(
    hooks: Sequence[Hook],
    series: EvaluationSeriesContext,
    data: Sequence[SeriesData],
    outcome: EvaluationOutcome,
) -> None:
    """Each hook's `after_evaluation`, in reverse order (the first hook opens and closes the
    series around the others, as LaunchDarkly's SDKs run them)."""
    for hook, own in zip(reversed(hooks), reversed(data), strict=True):
        try:
            hook.after_evaluation(series, own, outcome)
        except Exception:
            log.warning("hook %r failed after evaluating %r", hook.name, series.key, exc_info=True)
