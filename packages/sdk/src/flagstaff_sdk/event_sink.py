"""The seam for analytics events: what a client reports per evaluation, custom event and
identify. The per-evaluation call must be cheap (an enqueue or a counter update) and never block.
The real processor lives in `flagstaff_sdk.events`; this module must not depend on it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from flagstaff_core import Context, Evaluation, EvaluationDetail

if TYPE_CHECKING:
    from flagstaff_sdk.config import Config


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


EventSinkFactory = Callable[["Config"], EventSink]


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


def create_event_sink(config: Config) -> EventSink:
    """The sink a client uses: none when events are off or offline; the configured factory; else
    the processor in `flagstaff_sdk.events` (its `create_event_sink(config)`), when installed."""
    if not config.send_events or config.offline:
        return NullEventSink()
    if config.event_sink is not None:
        return config.event_sink(config)
    try:
        events = importlib.import_module("flagstaff_sdk.events")
    except ImportError:
        return NullEventSink()
    factory = getattr(events, "create_event_sink", None)
    if factory is None:
        return NullEventSink()
    sink: EventSink = factory(config)
    return sink
