"""The event processor: callers append small tuples to a bounded queue (never blocking); one
actor thread owns every piece of event state (the `EventBuffer`: summary, context index, buffered
events; the `DiagnosticRecord`; the timers), drains the queue into the buffer (the common
evaluation is counted inline) and hands finished batches to the courier.

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
from typing import Any

import httpx
from flagstaff_core import Context, Evaluation, EvaluationDetail

from flagstaff_sdk.config import USER_AGENT, Config
from flagstaff_sdk.events.buffer import EventBuffer
from flagstaff_sdk.events.control import Control, Flush, Stop, StreamInit, Sync
from flagstaff_sdk.events.courier import Barrier, Courier, Diagnostic
from flagstaff_sdk.events.diagnostic_record import DiagnosticRecord
from flagstaff_sdk.events.options import EventOptions
from flagstaff_sdk.events.spool import Batch, DiskSpool, MemorySpool, Spool
from flagstaff_sdk.events.stats import DropReason, EventStats, StatsCounter
from flagstaff_sdk.status import DataSourceStatus

log = logging.getLogger(__name__)

# The first item of every queued tuple says what it is.
_EVALUATION = 0
_CUSTOM = 1
_IDENTIFY = 2


def _encode(events: list[dict[str, Any]]) -> bytes:
    # `default=str`: a caller's odd default value must not cost the whole batch
    return json.dumps(events, separators=(",", ":"), default=str).encode()


class EventProcessor:
    """An `EventSink` that delivers LaunchDarkly analytics events; see `EventOptions`."""

    def __init__(self, config: Config, options: EventOptions | None = None) -> None:
        options = options if options is not None else EventOptions()
        self._options = options
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
        self._control: queue.SimpleQueue[Control] = queue.SimpleQueue()
        self._stats = StatsCounter()
        self._closed = False
        self._close_lock = threading.Lock()
        # actor state: the queue's consumer, the events it builds, the next diagnostic ---------
        self._last_indexed: Context | None = None
        self._next_flush = self._next_index_reset = self._next_diagnostic = 0.0
        self._buffer = EventBuffer(
            options,
            self._stats,
            now_ms=self._now_ms,
            server_time_ms=lambda: self._courier.last_server_time_ms,
        )
        self._diagnostics = DiagnosticRecord(config, options, now_ms=self._now_ms())
        spool: Spool = (
            MemorySpool(options.spool_max_bytes)
            if options.spool_dir is None
            else DiskSpool(options.spool_dir, options.spool_max_bytes)
        )
        timing = config.timing
        self._courier = Courier(
            endpoints=config.endpoints,
            timing=timing,
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
        self._control.put(StreamInit(timestamp_ms, duration_ms, failed))

    def report_data_source(self, status: Callable[[], DataSourceStatus]) -> None:
        """`status()` (the client's data-source status) goes into every periodic diagnostic
        event as `dataSource`; call before the first one is due."""
        self._diagnostics.report_data_source(status)

    def _refuse(self) -> None:
        self._stats.drop(DropReason.CLOSED if self._closed else DropReason.QUEUE_FULL)
        self._wake.set()

    def flush(self) -> None:
        self._control.put(Flush())
        self._wake.set()

    def sync(self, timeout: float, *, flush: bool = True) -> bool:
        """Flush and wait until the courier has attempted everything recorded so far (tests).
        With `flush=False`, wait only until the actor has summarised everything recorded so far
        (what a benchmark must count) and the courier has finished what it already had."""
        done = threading.Event()
        if flush:
            self._control.put(Flush())
        self._control.put(Sync(done))
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
        self._control.put(Stop(self._options.close_timeout))
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
            self._courier.submit(Diagnostic(self._diagnostics.init_payload(self._now_ms())))
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
                    if isinstance(control, Stop):
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
            self._buffer.reset_index()
            self._last_indexed = None
        if now >= self._next_diagnostic and not options.diagnostic_opt_out:
            self._next_diagnostic = now + options.diagnostic_interval
            self._send_diagnostic()

    def _obey(self, control: Control) -> None:
        # timers first: whatever a test or caller did to the clock before asking is seen
        self._tick()
        if isinstance(control, Flush):
            self._drain()
            self._flush()
        elif isinstance(control, Sync):
            self._courier.submit(Barrier(control.done))
        elif isinstance(control, StreamInit):
            self._diagnostics.stream_init(control)
            if not self._diagnostics.reported:
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
        buffer = self._buffer
        summary = buffer.summary
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
                    buffer.custom(*item[1:])
                else:
                    buffer.identify(*item[1:])
                last_context = None
                continue
            _, at, key, context, evaluation, detail, default, with_reason = item
            if context is last_context:
                deduplicated += 1
            else:
                buffer.index_context(context, at)
                last_context = context
            flag = evaluation.flag
            if (
                flag is None
                or evaluation.track_events
                or evaluation.prerequisites
                or flag.debug_events_until_date is not None
                or flag.exclude_from_summaries
            ):
                buffer.evaluation(at, key, context, evaluation, detail, default, with_reason)
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
        buffer.count_deduplicated(deduplicated)

    def _flush(self) -> None:
        events = self._buffer.take()
        if not events:
            return
        if self._stats.disabled:
            self._stats.drop(DropReason.DISABLED, len(events))
            return
        self._diagnostics.events_in_last_batch = len(events)
        self._courier.submit(Batch(str(uuid.uuid4()), _encode(events), len(events)))

    def _send_diagnostic(self, *, closing: bool = False) -> None:
        buffer = self._buffer
        payload = self._diagnostics.periodic_payload(
            self._now_ms(), self._stats, deduplicated=buffer.deduplicated, closing=closing
        )
        buffer.deduplicated = 0
        self._courier.submit(Diagnostic(payload))
