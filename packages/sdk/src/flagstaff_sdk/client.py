"""The public clients: `Client` (blocking lifecycle) and `AsyncClient` (awaitable lifecycle)
share one shell; evaluation is the core's `evaluate_key` on the Store's current data, plus a
default, a type check and one call to the event sink. Must not do I/O on an evaluation.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any

from flagstaff_core import (
    Context,
    ContextError,
    ErrorKind,
    Evaluation,
    EvaluationDetail,
    Flag,
    Reason,
    ValueType,
    all_flags_state,
    decode_context,
    evaluate_key,
    secure_mode_hash,
    typed_detail,
)

from flagstaff_sdk import events
from flagstaff_sdk.config import Config
from flagstaff_sdk.data_system import DataSystem
from flagstaff_sdk.event_sink import EventSink, NullEventSink
from flagstaff_sdk.flags_state import FeatureFlagsState
from flagstaff_sdk.hook import EvaluationOutcome, EvaluationSeriesContext, run_after, run_before
from flagstaff_sdk.notifier import FlagChangeListener, FlagValueListener, Notifier, StatusListener
from flagstaff_sdk.status import DataSourceStatus
from flagstaff_sdk.store import Store

if TYPE_CHECKING:
    from flagstaff_sdk.events.stats import EventStats

_NOT_READY = Evaluation(
    flag=None, detail=EvaluationDetail(None, None, Reason.error(ErrorKind.CLIENT_NOT_READY))
)
_ANY = ValueType.ANY
_METHODS = {
    ValueType.BOOL: "bool_variation",
    ValueType.INT: "int_variation",
    ValueType.DOUBLE: "float_variation",
    ValueType.STRING: "str_variation",
}


def _as_context(context: object) -> Context | None:
    """A Context from a Context or its JSON (dict); None (USER_NOT_SPECIFIED) when invalid."""
    if isinstance(context, Context):
        return context
    if isinstance(context, Mapping):
        try:
            return decode_context(dict(context))
        except ContextError:
            return None
    return None


def create_event_sink(config: Config) -> EventSink:
    """The sink a client uses: none when events are off or offline; the configured factory; else
    the processor in `flagstaff_sdk.events`."""
    if not config.send_events or config.offline:
        return NullEventSink()
    if config.event_sink is not None:
        return config.event_sink(config)
    return events.create_event_sink(config)


class _Shell:
    """Everything but the lifecycle, shared by Client and AsyncClient."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._notifier = Notifier()
        self._store = Store(config.clock, self._notifier)
        self._system = DataSystem(config, self._store, self._notifier)
        self._system.initialize()
        self._events: EventSink = create_event_sink(config)
        self._events_on = not isinstance(self._events, NullEventSink)
        self._hooks = config.hooks
        # a processor that keeps diagnostics hears of every stream attempt, and reports the
        # data-source status in each periodic diagnostic event
        self._system.report_stream_inits(getattr(self._events, "record_stream_init", None))
        report = getattr(self._events, "report_data_source", None)
        if report is not None:
            report(self.data_source_status)
        self._closed = False
        self._system.start()

    # evaluation --------------------------------------------------------------------------------

    def evaluate(
        self,
        key: str,
        context: Context | Mapping[str, Any],
        default: Any,
        value_type: ValueType = _ANY,
        *,
        with_reason: bool = False,
    ) -> EvaluationDetail:
        """The one evaluation path: every variation method is a wrapper around this."""
        resolved = context if type(context) is Context else _as_context(context)
        if not self._hooks:
            return self._evaluate(key, resolved, default, value_type, with_reason)[1]
        method = _METHODS.get(value_type) or ("variation_detail" if with_reason else "variation")
        series = EvaluationSeriesContext(
            key=key, context=resolved, default_value=default, method=method
        )
        data = run_before(self._hooks, series)
        flag, detail = self._evaluate(key, resolved, default, value_type, with_reason)
        run_after(self._hooks, series, data, EvaluationOutcome(detail=detail, flag=flag))
        return detail

    def _evaluate(
        self,
        key: str,
        context: Context | None,
        default: Any,
        value_type: ValueType,
        with_reason: bool,
    ) -> tuple[Flag | None, EvaluationDetail]:
        """The flag read (None when absent) and the detail the caller gets."""
        data = self._store.data
        evaluation = _NOT_READY if data is None else evaluate_key(data, key, context)
        detail = evaluation.detail
        if value_type is _ANY:
            if detail.value is None:
                detail = EvaluationDetail(default, detail.variation_index, detail.reason)
        else:
            detail = typed_detail(detail, value_type, default)
        if self._events_on and context is not None:
            self._events.record_evaluation(
                key,
                context,
                evaluation,
                detail,
                default,
                with_reason,
            )
        return evaluation.flag, detail

    def variation(self, key: str, context: Context | Mapping[str, Any], default: Any) -> Any:
        # The hottest call in an application: with events and hooks off and a Context, skip the
        # generic path's type, hook and event checks (the result is `evaluate(...).value`).
        if not self._events_on and not self._hooks and type(context) is Context:
            data = self._store.data
            if data is not None:
                value = evaluate_key(data, key, context).detail.value
                return default if value is None else value
        return self.evaluate(key, context, default).value

    def variation_detail(
        self, key: str, context: Context | Mapping[str, Any], default: Any
    ) -> EvaluationDetail:
        return self.evaluate(key, context, default, with_reason=True)

    def bool_variation(self, key: str, context: Context | Mapping[str, Any], default: bool) -> bool:
        value: bool = self.evaluate(key, context, default, ValueType.BOOL).value
        return value

    def str_variation(self, key: str, context: Context | Mapping[str, Any], default: str) -> str:
        value: str = self.evaluate(key, context, default, ValueType.STRING).value
        return value

    def int_variation(self, key: str, context: Context | Mapping[str, Any], default: int) -> int:
        # JSON numbers: 3.0 and 3 are both an int here, as in LaunchDarkly's SDKs
        return int(self.evaluate(key, context, default, ValueType.INT).value)

    def float_variation(
        self, key: str, context: Context | Mapping[str, Any], default: float
    ) -> float:
        return float(self.evaluate(key, context, default, ValueType.DOUBLE).value)

    def json_variation(self, key: str, context: Context | Mapping[str, Any], default: Any) -> Any:
        return self.evaluate(key, context, default).value

    def all_flags_state(
        self,
        context: Context | Mapping[str, Any],
        *,
        client_side_only: bool = False,
        with_reasons: bool = False,
        details_only_for_tracked_flags: bool = False,
    ) -> FeatureFlagsState:
        """Every flag evaluated for `context`, as `ldclient`'s `all_flags_state` answers:
        `valid` is False when there is no data or the context is invalid;
        `to_json_dict()` is the bootstrap JSON. `client_side_only`: only flags marked for
        client-side SDKs; `with_reasons`: keep every reason; `details_only_for_tracked_flags`:
        version and reason only for flags that track events, are an experiment or debug.
        No analytics events are recorded."""
        data = self._store.data
        resolved = _as_context(context)
        if data is None or resolved is None:
            return FeatureFlagsState(False)
        state = all_flags_state(
            data,
            resolved,
            client_side_only=client_side_only,
            with_reasons=with_reasons,
            details_only_for_tracked_flags=details_only_for_tracked_flags,
            now_ms=time.time() * 1000,
        )
        return FeatureFlagsState.from_json_dict(state)

    # events ------------------------------------------------------------------------------------

    def track(
        self,
        event_key: str,
        context: Context | Mapping[str, Any],
        data: Any = None,
        metric_value: float | None = None,
    ) -> None:
        resolved = _as_context(context)
        if resolved is not None:
            self._events.record_custom(event_key, resolved, data, metric_value)

    def identify(self, context: Context | Mapping[str, Any]) -> None:
        resolved = _as_context(context)
        if resolved is not None:
            self._events.record_identify(resolved)

    def event_stats(self) -> EventStats | None:
        """The event processor's counters (delivered, dropped by reason, spooled, disabled);
        None when events are off or the configured sink keeps no counters."""
        read = getattr(self._events, "stats", None)
        if read is None:
            return None
        stats: EventStats = read()
        return stats

    def secure_mode_hash(self, context: Context) -> str:
        return secure_mode_hash(self._config.sdk_key, context)

    # state and listeners -----------------------------------------------------------------------

    def flag(self, key: str) -> Flag | None:
        """The flag as the client holds it now (None when absent or there is no data yet); for
        integrations such as the OpenFeature provider that explain a result from its rules."""
        data = self._store.data
        return None if data is None else data.flag(key)

    def is_initialized(self) -> bool:
        """Whether there is data to evaluate (from the network, the disk cache, files or test
        data); `data_source_status()` says how current it is."""
        return self._store.data is not None

    def data_source_status(self) -> DataSourceStatus:
        status = self._system.status
        confirmed = self._store.confirmed_at
        if confirmed is None:
            return status
        age = max(0.0, self._config.clock.monotonic() - confirmed)
        return replace(status, data_age=age)

    def add_flag_change_listener(self, listener: FlagChangeListener) -> None:
        """`listener(FlagChange(key))` after a flag, or anything it depends on, changed."""
        self._notifier.add_flag_listener(listener)

    def add_flag_value_listener(
        self,
        key: str,
        context: Context,
        listener: FlagValueListener,
        default: Any = None,
    ) -> None:
        """`listener(FlagValueChange(key, old, new))` when the value for `context` changes."""
        self._notifier.add_value_listener(key, context, listener, default)

    def add_status_listener(self, listener: StatusListener) -> None:
        self._notifier.add_status_listener(listener)

    def remove_listener(self, listener: Callable[..., None]) -> None:
        self._notifier.remove_listener(listener)

    def _shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._events.close()
        finally:
            self._system.stop()
            self._notifier.close()


class Client(_Shell):
    """`Client(config)` blocks up to `config.init_timeout` for data, then evaluates locally.

    With no network it starts at once from the disk cache (or data files); with nothing at all
    every evaluation returns its default with reason ERROR/CLIENT_NOT_READY.
    """

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self._system.settled.wait(config.init_timeout)

    def wait_for_initialization(self, timeout: float) -> bool:
        self._system.settled.wait(timeout)
        return self.is_initialized()

    def flush(self) -> None:
        self._events.flush()

    def close(self) -> None:
        """Flush events, stop the network actor and write the disk cache."""
        self._shutdown()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class AsyncClient(_Shell):
    """The same client for asyncio code: construction never blocks; `await start()` (or
    `async with`) waits up to `config.init_timeout`. Evaluation methods are plain calls (they
    never do I/O); flush and close are awaitable and run off the event loop."""

    @classmethod
    async def open(cls, config: Config) -> AsyncClient:
        """Build the client off the event loop (reading the disk cache or data files can take a
        while for many flags), then wait for data as `start()` does."""
        client = await asyncio.to_thread(cls, config)
        await client.start()
        return client

    async def start(self) -> bool:
        await asyncio.to_thread(self._system.settled.wait, self._config.init_timeout)
        return self.is_initialized()

    async def flush(self) -> None:
        await asyncio.to_thread(self._events.flush)

    async def aclose(self) -> None:
        await asyncio.to_thread(self._shutdown)

    async def __aenter__(self) -> AsyncClient:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
