"""The seam for analytics events: what a client reports per evaluation, custom event and
identify. The per-evaluation call must be cheap (an enqueue or a counter update) and never block.
The real processor lives in `flagstaff_sdk.events` and the choice of sink in `client`; this module
must depend on neither (nor on `config`, which names `EventSink` in `EventSinkFactory`).
"""

from __future__ import annotations

from typing import Any, Protocol

from flagstaff_core import Context, Evaluation, EvaluationDetail


class EventSink(Protocol):
    def record_evaluation(
        self,
        key: str,
        context: Context,
        evaluation: Evaluation,
        detail: EvaluationDetail,
        default: Any,
        with_reason: bool,
    ) -> None:
        """One flag evaluation. `evaluation.flag` is None when the flag was not found;
        `detail` is what the caller got (default substituted, WRONG_TYPE applied)."""

    def record_custom(
        self, key: str, context: Context, data: Any, metric_value: float | None
    ) -> None: ...

    def record_identify(self, context: Context) -> None: ...

    def flush(self) -> None:
        """Start delivering what is buffered; must not block for the network."""

    def close(self) -> None:
        """Deliver what is buffered (bounded by the processor's own timeout) and stop."""


class NullEventSink:
    """Drops everything: events off, offline mode, or no processor configured."""

    def record_evaluation(
        self,
        key: str,
        context: Context,
        evaluation: Evaluation,
        detail: EvaluationDetail,
        default: Any,
        with_reason: bool,
    ) -> None:
        return None

    def record_custom(
        self, key: str, context: Context, data: Any, metric_value: float | None
    ) -> None:
        return None

    def record_identify(self, context: Context) -> None:
        return None

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None
