"""The event processor: callers append small tuples to a bounded queue (never blocking); one
actor thread owns every piece of event state (summary, context index, buffered events, timers),
turns the queue into LaunchDarkly events and hands finished batches to the courier.

Must not decide what an evaluation needs: the core's `Evaluation` says (track_events,
force_reason, prerequisites, the flag's sampling and summary fields).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
from flagstaff_core import Context, Evaluation, EvaluationDetail

from flagstaff_sdk.config import USER_AGENT, Config
from flagstaff_sdk.events import diagnostic
from flagstaff_sdk.events.context_index import ContextIndex
from flagstaff_sdk.events.courier import Barrier, Courier, Diagnostic
from flagstaff_sdk.events.options import EventOptions
from flagstaff_sdk.events.redaction import ContextFormatter, without_anonymous
from flagstaff_sdk.events.spool import Batch, DiskSpool, MemorySpool, Spool
from flagstaff_sdk.events.stats import DropReason, EventStats, StatsCounter
from flagstaff_sdk.events.summary import Summary
from flagstaff_sdk.status import DataSourceStatus

log = logging.getLogger(__name__)

# The first item of every queued tuple says what it is.
_EVALUATION = 0
_CUSTOM = 1
_IDENTIFY = 2


@dataclass(frozen=True, slots=True)
class _Flush:
    pass


@dataclass(frozen=True, slots=True)
class _Sync:
    done: threading.Event


@dataclass(frozen=True, slots=True)
class _StreamInit:
    timestamp_ms: int
    duration_ms: int
    failed: bool


@dataclass(frozen=True, slots=True)
class _Stop:
    timeout: float


_Control = _Flush | _Sync | _StreamInit | _Stop


def _encode(events: list[dict[str, Any]]) -> bytes:
    # `default=str`: a caller's odd default value must not cost the whole batch
    return json.dumps(events, separators=(",", ":"), default=str).encode()


class EventProcessor:
    """An `EventSink` that delivers LaunchDarkly analytics events; see `EventOptions`."""

    def __init__(self, config: Config, options: EventOptions | None = None) -> None:
        options = options if options is not None else EventOptions()
        self._options = options
        self._config = config
        self._clock = config.clock
        self._wall = config.clock.wall
        self._now = self._wall()
        """The wall clock as the actor last read it: evaluations are stamped with this (at most
        `drain_interval` old) because reading the clock would double the cost of a call."""
        self._queue: deque[tuple[Any, ...]] = deque()
        self._capacity = options.queue_capacity
        # wake the actor early, long before callers could find the queue full
        self._wake_at = max(1, min(options.queue_capacity // 2, 2_000))
        self._wake = threading.Event()
        self._control: queue.SimpleQueue[_Control] = queue.SimpleQueue()
        self._stats = StatsCounter()
        self._closed = False
        self._close_lock = threading.Lock()
        # actor state ---------------------------------------------------------------------------
        self._formatter = ContextFormatter(
            private_attributes=options.private_attributes,
            all_private=options.all_attributes_private,
        )
        self._summary = Summary()
        self._index = ContextIndex(options.context_keys_capacity)
        self._buffer: list[dict[str, Any]] = []
        self._formatted: dict[tuple[int, bool], tuple[Context, dict[str, Any]]] = {}
        self._random = options.random
        self._identity = diagnostic.diagnostic_id(config.sdk_key)
        self._data_since_ms = self._now_ms()
        self._events_in_last_batch = 0
        self._stream_inits: list[dict[str, Any]] = []
        self._data_source: Callable[[], DataSourceStatus] | None = None
        self._reported = False
        """Whether a periodic diagnostic went out (the first goes when a stream attempt ends)."""
        self._deduplicated = 0
        """Contexts already indexed, since the last diagnostic event."""
        self._deduplicated_unpublished = 0
        """The same, not yet added to the stats (they are published at each flush)."""
        self._last_indexed: Context | None = None
        self._next_flush = self._next_index_reset = self._next_diagnostic = 0.0
        spool: Spool = (
            MemorySpool(options.spool_max_bytes)
            if options.spool_dir is None
            else DiskSpool(options.spool_dir, options.spool_max_bytes)
        )
        timing = config.timing
        self._courier = Courier(
            events_uri=config.endpoints[0].events_uri,
            headers=config.headers(USER_AGENT),
            options=options,
            spool=spool,
            stats=self._stats,
            clock=config.clock,
            timeout=httpx.Timeout(timing.read_timeout, connect=timing.connect_timeout),
        )
        self._thread = threading.Thread(target=self._run, name="flagstaff-events", daemon=True)
        self._courier.start()
        self._thread.start()

    # the callers' side: cheap, never blocking ----------------------------------------------------

    def record_evaluation(
        self,
        key: str,
        context: Context,
        evaluation: Evaluation,
        detail: EvaluationDetail,
        default: Any,
        with_reason: bool,
    ) -> None:
        size = len(self._queue)
        if size >= self._capacity:
            self._refuse()
            return
        self._queue.append(
            (_EVALUATION, self._now, key, context, evaluation, detail, default, with_reason)
        )
        if size == self._wake_at:
            self._wake.set()

    def record_custom(
        self, key: str, context: Context, data: Any, metric_value: float | None
    ) -> None:
        if len(self._queue) >= self._capacity:
            self._refuse()
            return
        self._queue.append((_CUSTOM, self._wall(), key, context, data, metric_value))

    def record_identify(self, context: Context) -> None:
        if len(self._queue) >= self._capacity:
            self._refuse()
            return
        self._queue.append((_IDENTIFY, self._wall(), context))

    def record_stream_init(self, timestamp_ms: int, duration_ms: int, failed: bool) -> None:
        """A stream connection attempt, for the next periodic diagnostic event."""
        self._control.put(_StreamInit(timestamp_ms, duration_ms, failed))

    def report_data_source(self, status: Callable[[], DataSourceStatus]) -> None:
        """`status()` (the client's data-source status) goes into every periodic diagnostic
        event as `dataSource`; call before the first one is due."""
        self._data_source = status

    def _refuse(self) -> None:
        self._stats.drop(DropReason.CLOSED if self._closed else DropReason.QUEUE_FULL)
        self._wake.set()

    def flush(self) -> None:
        self._control.put(_Flush())
        self._wake.set()

    def sync(self, timeout: float, *, flush: bool = True) -> bool:
        """Flush and wait until the courier has attempted everything recorded so far (tests).
        With `flush=False`, wait only until the actor has summarised everything recorded so far
        (what a benchmark must count) and the courier has finished what it already had."""
        done = threading.Event()
        if flush:
            self._control.put(_Flush())
        self._control.put(_Sync(done))
        self._wake.set()
        return done.wait(timeout)

    def stats(self) -> EventStats:
        return self._stats.snapshot()

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            # every later record_* call now takes the refusal path and counts as CLOSED
            self._capacity = -1
        self._control.put(_Stop(self._options.close_timeout))
        self._wake.set()
        self._thread.join(self._options.close_timeout + 2.0)

    # the actor -----------------------------------------------------------------------------------

    def _now_ms(self) -> int:
        return int(self._wall() * 1000)

    def _run(self) -> None:
        options = self._options
        now = self._clock.monotonic()
        self._next_flush = now + options.flush_interval
        self._next_index_reset = now + options.context_keys_flush_interval
        self._next_diagnostic = now + options.diagnostic_interval
        if not options.diagnostic_opt_out:
            init = diagnostic.init_event(self._now_ms(), self._identity, self._config, options)
            self._courier.submit(Diagnostic(_encode([init])[1:-1]))
        while True:
            self._wake.wait(options.drain_interval)
            self._wake.clear()
            try:
                self._drain()
                self._now = self._wall()
                self._tick()
                while True:
                    try:
                        control = self._control.get_nowait()
                    except queue.Empty:
                        break
                    if isinstance(control, _Stop):
                        self._drain()
                        self._flush()
                        if not options.diagnostic_opt_out:
                            # the fleet view sees this instance stop now, not two intervals later
                            self._send_diagnostic(closing=True)
                        self._courier.stop(control.timeout)
                        return
                    self._obey(control)
            except Exception:
                # one bad event must not stop the actor; what it was building is lost and logged
                log.exception("Flagstaff event processing failed unexpectedly")

    def _tick(self) -> None:
        """Run the timers that are due by the injected clock."""
        options = self._options
        now = self._clock.monotonic()
        if now >= self._next_flush:
            self._next_flush = now + options.flush_interval
            self._flush()
        if now >= self._next_index_reset:
            self._next_index_reset = now + options.context_keys_flush_interval
            self._index.clear()
            self._last_indexed = None
        if now >= self._next_diagnostic and not options.diagnostic_opt_out:
            self._next_diagnostic = now + options.diagnostic_interval
            self._send_diagnostic()

    def _read_data_source(self) -> DataSourceStatus | None:
        status = self._data_source
        if status is None:
            return None
        try:
            return status()
        except Exception:
            # diagnostics must never stop the actor; the event goes without it
            log.exception("reading the data-source status for a diagnostic event failed")
            return None

    def _obey(self, control: _Control) -> None:
        # timers first: whatever a test or caller did to the clock before asking is seen
        self._tick()
        if isinstance(control, _Flush):
            self._drain()
            self._flush()
        elif isinstance(control, _Sync):
            self._courier.submit(Barrier(control.done))
        elif isinstance(control, _StreamInit):
            self._stream_inits.append(
                {
                    "timestamp": control.timestamp_ms,
                    "durationMillis": control.duration_ms,
                    "failed": control.failed,
                }
            )
            if not self._reported:
                # the first periodic event goes out once the first stream attempt has ended,
                # so the fleet view knows how this instance is fed within seconds of its start
                # instead of one diagnostic interval (15 minutes) later
                self._next_diagnostic = self._clock.monotonic()
                self._wake.set()

    def _drain(self) -> None:
        """Turn everything queued into summary counts and buffered events.

        The common evaluation (no feature, debug or prerequisite events; the same context as the
        one before) is counted inline: the actor must keep up with a client evaluating in a loop.
        """
        pop = self._queue.popleft
        summary = self._summary
        counters = summary.counters
        last_context = self._last_indexed
        deduplicated = 0
        while True:
            try:
                item = pop()
            except IndexError:
                break
            kind = item[0]
            if kind != _EVALUATION:
                if kind == _CUSTOM:
                    self._custom(*item[1:])
                else:
                    self._identify(*item[1:])
                last_context = None
                continue
            _, at, key, context, evaluation, detail, default, with_reason = item
            if context is last_context:
                deduplicated += 1
            else:
                self._index_context(context, at)
                last_context = context
            flag = evaluation.flag
            if (
                flag is None
                or evaluation.track_events
                or evaluation.prerequisites
                or flag.debug_events_until_date is not None
                or flag.exclude_from_summaries
            ):
                self._evaluation(at, key, context, evaluation, detail, default, with_reason)
                continue
            kinds = context.kinds
            counter = counters.get((key, detail.variation_index, flag.version))
            if counter is None:
                summary.add_counter(
                    key, kinds, detail.variation_index, flag.version, detail.value, default, at
                )
                continue
            counter[0] += 1
            if counter[2] is not kinds:
                summary.merge_kinds(key, kinds, counter)
            if at > summary.end:
                summary.end = at
            elif at < summary.start:
                summary.start = at
        self._last_indexed = last_context
        self._deduplicated += deduplicated
        self._deduplicated_unpublished += deduplicated

    def _evaluation(
        self,
        at: float,
        key: str,
        context: Context,
        evaluation: Evaluation,
        detail: EvaluationDetail,
        default: Any,
        with_reason: bool,
    ) -> None:
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
            self._summary.count(
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
            and debug_until > self._courier.last_server_time_ms
            and debug_until > self._now_ms()
        )
        if not full and not debug:
            return
        ratio = 1 if flag.sampling_ratio is None else flag.sampling_ratio
        full = full and self._sampled(ratio)
        debug = debug and self._sampled(ratio)
        wanted = int(full) + int(debug)
        room = self._options.capacity - len(self._buffer)
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

    def _custom(
        self, at: float, key: str, context: Context, data: Any, metric_value: float | None
    ) -> None:
        timestamp = int(at * 1000)
        self._index_context(context, at)
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

    def _identify(self, at: float, context: Context) -> None:
        kept, _ = self._notice(context)
        if kept is not None:
            self._add(
                {"kind": "identify", "creationDate": int(at * 1000)}, kept, redact_anonymous=False
            )

    def _index_context(self, context: Context, at: float) -> None:
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
            self._deduplicated += 1
            self._deduplicated_unpublished += 1
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
        if len(self._buffer) >= self._options.capacity:
            self._stats.drop(DropReason.CAPACITY)
            return
        event["context"] = self._format(context, redact_anonymous=redact_anonymous)
        self._buffer.append(event)

    def _flush(self) -> None:
        if self._deduplicated_unpublished:
            self._stats.add("deduplicated_contexts", self._deduplicated_unpublished)
            self._deduplicated_unpublished = 0
        events = self._buffer
        if self._summary:
            events.append(self._summary.to_event())
        self._buffer = []
        self._summary.clear()
        self._formatted = {}
        if not events:
            return
        if self._stats.disabled:
            self._stats.drop(DropReason.DISABLED, len(events))
            return
        self._events_in_last_batch = len(events)
        self._courier.submit(Batch(str(uuid.uuid4()), _encode(events), len(events)))

    def _send_diagnostic(self, *, closing: bool = False) -> None:
        now = self._now_ms()
        dropped_by_reason = {r.value: n for r, n in self._stats.snapshot().dropped.items() if n}
        event = diagnostic.periodic_event(
            now,
            self._identity,
            data_since_ms=self._data_since_ms,
            dropped=self._stats.take_dropped_since_diagnostic(),
            dropped_by_reason=dropped_by_reason,
            deduplicated_contexts=self._deduplicated,
            events_in_last_batch=self._events_in_last_batch,
            stream_inits=self._stream_inits,
            data_source=self._read_data_source(),
            closing=closing,
        )
        self._reported = True
        self._data_since_ms = now
        self._deduplicated = 0
        self._events_in_last_batch = 0
        self._stream_inits = []
        self._courier.submit(Diagnostic(_encode([event])[1:-1]))
