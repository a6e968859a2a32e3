"""The events a flush will send, built on the event actor's thread: the summary, index events
for contexts the context index has not seen, feature and debug events (sampled, within the
buffer's capacity), custom and identify events, each with its context formatted and redacted.
Drops are counted, never silent. Must not send anything or read the queue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flagstaff_core import Context, Evaluation, EvaluationDetail

from flagstaff_sdk.events.context_index import ContextIndex
from flagstaff_sdk.events.options import EventOptions
from flagstaff_sdk.events.redaction import ContextFormatter, without_anonymous
from flagstaff_sdk.events.stats import DropReason, StatsCounter
from flagstaff_sdk.events.summary import Summary


class EventBuffer:
    """`server_time_ms()` is the last time the events service reported (debug events stop at
    the earlier of it and the wall clock `now_ms()`)."""

    def __init__(
        self,
        options: EventOptions,
        stats: StatsCounter,
        *,
        now_ms: Callable[[], int],
        server_time_ms: Callable[[], int],
    ) -> None:
        self._options = options
        self._stats = stats
        self._now_ms = now_ms
        self._server_time_ms = server_time_ms
        self._random = options.random
        self._formatter = ContextFormatter(
            private_attributes=options.private_attributes,
            all_private=options.all_attributes_private,
        )
        self.summary = Summary()
        self._index = ContextIndex(options.context_keys_capacity)
        self._events: list[dict[str, Any]] = []
        self._formatted: dict[tuple[int, bool], tuple[Context, dict[str, Any]]] = {}
        self.deduplicated = 0
        """Contexts already indexed, since the last diagnostic event."""
        self._deduplicated_unpublished = 0
        """The same, not yet added to the stats (they are published at each flush)."""

    def count_deduplicated(self, count: int) -> None:
        self.deduplicated += count
        self._deduplicated_unpublished += count

    def reset_index(self) -> None:
        self._index.clear()

    def take(self) -> list[dict[str, Any]]:
        """Everything a flush sends (the summary last); the buffer starts over empty."""
        if self._deduplicated_unpublished:
            self._stats.add("deduplicated_contexts", self._deduplicated_unpublished)
            self._deduplicated_unpublished = 0
        events = self._events
        if self.summary:
            events.append(self.summary.to_event())
        self._events = []
        self.summary.clear()
        self._formatted = {}
        return events

    def evaluation(
        self,
        at: float,
        key: str,
        context: Context,
        evaluation: Evaluation,
        detail: EvaluationDetail,
        default: Any,
        with_reason: bool,
    ) -> None:
        """An evaluation that needs more than a summary count: its prerequisites first."""
        for prerequisite in evaluation.prerequisites:
            self._evaluated(
                prerequisite.flag.key,
                context,
                prerequisite.evaluation,
                prerequisite.detail,
                None,
                with_reason,
                at,
                prerequisite.prereq_of,
            )
        self._evaluated(key, context, evaluation, detail, default, with_reason, at, None)

    def _evaluated(
        self,
        key: str,
        context: Context,
        evaluation: Evaluation,
        detail: EvaluationDetail,
        default: Any,
        with_reason: bool,
        at: float,
        prereq_of: str | None,
    ) -> None:
        flag = evaluation.flag
        if flag is None or not flag.exclude_from_summaries:
            self.summary.count(
                key,
                context.kinds,
                detail.variation_index,
                None if flag is None else flag.version,
                detail.value,
                default,
                at,
            )
        if flag is None:
            return
        full = evaluation.track_events
        debug_until = flag.debug_events_until_date
        debug = (
            debug_until is not None
            and debug_until > self._server_time_ms()
            and debug_until > self._now_ms()
        )
        if not full and not debug:
            return
        ratio = 1 if flag.sampling_ratio is None else flag.sampling_ratio
        full = full and self._sampled(ratio)
        debug = debug and self._sampled(ratio)
        wanted = int(full) + int(debug)
        room = self._options.capacity - len(self._events)
        if wanted > room:
            # counted before anything is built: a full buffer must stay cheap to hit
            self._stats.drop(DropReason.CAPACITY, wanted - max(room, 0))
            if room <= 0:
                return
            debug = debug and not full
        event: dict[str, Any] = {
            "kind": "feature",
            "creationDate": int(at * 1000),
            "key": key,
            "value": detail.value,
            "default": default,
            "version": flag.version,
        }
        if detail.variation_index is not None:
            event["variation"] = detail.variation_index
        if with_reason or evaluation.force_reason:
            event["reason"] = detail.reason.to_json()
        if prereq_of is not None:
            event["prereqOf"] = prereq_of
        if ratio != 1:
            event["samplingRatio"] = ratio
        if full:
            self._add({**event}, context, redact_anonymous=True)
        if debug:
            event["kind"] = "debug"
            self._add(event, context, redact_anonymous=False)

    def custom(
        self, at: float, key: str, context: Context, data: Any, metric_value: float | None
    ) -> None:
        timestamp = int(at * 1000)
        self.index_context(context, at)
        event: dict[str, Any] = {
            "kind": "custom",
            "creationDate": timestamp,
            "key": key,
        }
        if data is not None:
            event["data"] = data
        if metric_value is not None:
            event["metricValue"] = metric_value
        self._add(event, context, redact_anonymous=True)

    def identify(self, at: float, context: Context) -> None:
        kept, _ = self._notice(context)
        if kept is not None:
            self._add(
                {"kind": "identify", "creationDate": int(at * 1000)}, kept, redact_anonymous=False
            )

    def index_context(self, context: Context, at: float) -> None:
        kept, seen = self._notice(context)
        if kept is not None and not seen:
            self._add(
                {"kind": "index", "creationDate": int(at * 1000)}, kept, redact_anonymous=False
            )

    def _notice(self, context: Context) -> tuple[Context | None, bool]:
        """The context as events carry it (None when anonymous contexts are omitted and nothing
        is left) and whether the context index had seen it already, counted as deduplicated."""
        if self._options.omit_anonymous_contexts:
            kept = without_anonymous(context)
            if kept is None:
                return None, False
            context = kept
        seen = self._index.notice(context.fully_qualified_key)
        if seen:
            self.count_deduplicated(1)
        return context, seen

    def _sampled(self, ratio: int) -> bool:
        if ratio == 1:
            return True
        if ratio > 1 and self._random() < 1.0 / ratio:
            return True
        self._stats.add("sampled_out")
        return False

    def _format(self, context: Context, *, redact_anonymous: bool) -> dict[str, Any]:
        # Most evaluations between two flushes reuse a few context objects; the cache holds the
        # context itself so its id cannot be reused while the entry lives.
        cache_key = (id(context), redact_anonymous)
        hit = self._formatted.get(cache_key)
        if hit is not None:
            return hit[1]
        formatted = self._formatter.format(context, redact_anonymous=redact_anonymous)
        self._formatted[cache_key] = (context, formatted)
        return formatted

    def _add(self, event: dict[str, Any], context: Context, *, redact_anonymous: bool) -> None:
        """Buffer `event` with its context formatted, unless the buffer is full (then the
        context is not even formatted: the format cache must not grow past the buffer)."""
        if len(self._events) >= self._options.capacity:
            self._stats.drop(DropReason.CAPACITY)
            return
        event["context"] = self._format(context, redact_anonymous=redact_anonymous)
        self._events.append(event)
