"""`FlagstaffProvider`: the Flagstaff SDK client behind OpenFeature's provider interface.

Evaluation goes through the client's one evaluation path (so analytics events are recorded as
for `variation_detail`); data-source status and flag changes become provider events. Must not
evaluate flags itself or keep flag data of its own.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flagstaff_core import Flag, ValueType
from openfeature.evaluation_context import EvaluationContext
from openfeature.event import ProviderEvent, ProviderEventDetails
from openfeature.exception import ErrorCode, ProviderNotReadyError
from openfeature.flag_evaluation import FlagResolutionDetails, FlagValueType, Reason
from openfeature.provider import AbstractProvider, FeatureProvider, Metadata, ProviderStatus
from openfeature.track import TrackingEventDetails

from flagstaff_sdk.client import AsyncClient, Client
from flagstaff_sdk.notifier import FlagChange
from flagstaff_sdk.openfeature.context_mapping import ContextMappingError, to_context
from flagstaff_sdk.openfeature.resolution import resolution_of
from flagstaff_sdk.status import DataSourceState, DataSourceStatus

log = logging.getLogger(__name__)

PROVIDER_NAME = "flagstaff"
STALE_AFTER_READY_TIMEOUT = 5.0
"""How long the STALE that follows an initialization from cached data waits for OpenFeature's
registry to have announced READY (it does so right after `initialize` returns)."""

_Emit = Callable[[FeatureProvider, ProviderEvent, ProviderEventDetails], None]

_Convert = Callable[[Any], tuple[bool, Any]]
"""A value of the requested type (True, value), or (False, None) when it has another type."""


def _as_is(value: Any) -> tuple[bool, Any]:
    return True, value


def _as_int(value: Any) -> tuple[bool, Any]:
    # JSON has one number type: 3.0 is the integer 3, but 3.5 is not an integer
    if isinstance(value, float):
        return (True, int(value)) if value.is_integer() else (False, None)
    return True, value


def _as_float(value: Any) -> tuple[bool, Any]:
    return True, float(value)


def _as_object(value: Any) -> tuple[bool, Any]:
    return (True, value) if isinstance(value, (dict, list)) else (False, None)


class FlagstaffProvider(AbstractProvider):
    """`api.set_provider(FlagstaffProvider(client))`.

    `initialize` waits up to `init_timeout` seconds for flag data (a `Client` usually has it
    already) and fails with PROVIDER_NOT_READY otherwise; READY follows when data arrives.
    Afterwards: data-source INTERRUPTED emits STALE, OFF emits ERROR, VALID again emits READY,
    and every changed flag emits CONFIGURATION_CHANGED with `flags_changed=[key]`.
    Initialized while the client is INTERRUPTED (serving cached data), the READY that OpenFeature
    announces is followed at once by STALE. `shutdown` closes a `Client` when `close_client` is
    true (it is by default).
    """

    def __init__(
        self,
        client: Client | AsyncClient,
        *,
        init_timeout: float = 5.0,
        close_client: bool = True,
    ) -> None:
        super().__init__()
        self._client = client
        self._init_timeout = init_timeout
        self._close_client = close_client
        self._lock = threading.Lock()
        self._initializing = False
        self._shut_down = False
        self._state = DataSourceState.INITIALIZING
        """The state the last provider event stood for (INITIALIZING: no event yet)."""
        self._registry_status: Callable[[FeatureProvider], ProviderStatus] | None = None

    def get_metadata(self) -> Metadata:
        return Metadata(name=PROVIDER_NAME)

    # lifecycle and events ---------------------------------------------------------------------

    def attach(self, on_emit: _Emit) -> None:
        super().attach(on_emit)
        # OpenFeature's registry attaches its own dispatcher; its status lets a STALE wait
        # until the registry has announced the READY that follows `initialize`.
        self._registry_status = getattr(
            getattr(on_emit, "__self__", None), "get_provider_status", None
        )

    def initialize(self, evaluation_context: EvaluationContext) -> None:
        with self._lock:
            self._initializing = True
            self._shut_down = False
        self._client.add_status_listener(self._on_status)
        self._client.add_flag_change_listener(self._on_flag_change)
        try:
            if not self._client.is_initialized() and isinstance(self._client, Client):
                self._client.wait_for_initialization(self._init_timeout)
            ready = self._client.is_initialized()
        finally:
            with self._lock:
                self._initializing = False
                # what OpenFeature's registry is about to announce for us
                self._state = DataSourceState.VALID if ready else DataSourceState.OFF
        if not ready:
            raise ProviderNotReadyError("the Flagstaff client has no flag data yet")
        if self._client.data_source_status().state is DataSourceState.INTERRUPTED:
            threading.Thread(
                target=self._stale_after_ready, name="flagstaff-openfeature-stale", daemon=True
            ).start()

    def _stale_after_ready(self) -> None:
        """Emit STALE once the registry shows READY, unless the status moved on meanwhile."""
        read = self._registry_status
        deadline = time.monotonic() + STALE_AFTER_READY_TIMEOUT
        while read is not None and read(self) is not ProviderStatus.READY:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.005)
        status = self._client.data_source_status()
        with self._lock:
            if self._shut_down or self._state is not DataSourceState.VALID:
                return
            if status.state is not DataSourceState.INTERRUPTED:
                return
            self._state = DataSourceState.INTERRUPTED
        message = None if status.last_error is None else status.last_error.message
        self.emit_provider_stale(
            ProviderEventDetails(message=message or "serving cached flag data")
        )

    def shutdown(self) -> None:
        with self._lock:
            self._shut_down = True
        self._client.remove_listener(self._on_status)
        self._client.remove_listener(self._on_flag_change)
        if self._close_client and isinstance(self._client, Client):
            self._client.close()

    def _on_status(self, status: DataSourceStatus) -> None:
        state = status.state
        with self._lock:
            if self._initializing or self._shut_down or state is DataSourceState.INITIALIZING:
                return
            if state is self._state:
                return
            self._state = state
        message = None if status.last_error is None else status.last_error.message
        if state is DataSourceState.VALID:
            self.emit_provider_ready(ProviderEventDetails(message=message))
        elif state is DataSourceState.INTERRUPTED:
            self.emit_provider_stale(ProviderEventDetails(message=message))
        else:
            self.emit_provider_error(
                ProviderEventDetails(
                    message=message or "the Flagstaff data source is off",
                    error_code=ErrorCode.GENERAL,
                )
            )

    def _on_flag_change(self, change: FlagChange) -> None:
        with self._lock:
            if self._initializing or self._shut_down:
                return
        self.emit_provider_configuration_changed(ProviderEventDetails(flags_changed=[change.key]))

    # evaluation -------------------------------------------------------------------------------

    def _resolve(
        self,
        key: str,
        default: Any,
        evaluation_context: EvaluationContext | None,
        value_type: ValueType,
        convert: _Convert,
    ) -> FlagResolutionDetails[Any]:
        """The one resolution path; the typed methods are one-line wrappers."""
        try:
            context = to_context(evaluation_context)
        except ContextMappingError as exc:
            return FlagResolutionDetails(
                value=default,
                error_code=exc.error_code,
                error_message=exc.message,
                reason=Reason.ERROR,
            )
        detail = self._client.evaluate(key, context, default, value_type, with_reason=True)
        flag = self._flag(key)
        if detail.reason.error_kind is not None:
            return resolution_of(detail, flag, default)
        fits, value = convert(detail.value)
        if not fits:
            return FlagResolutionDetails(
                value=default,
                error_code=ErrorCode.TYPE_MISMATCH,
                error_message=f"flag {key!r} has a value of type {type(detail.value).__name__}",
                reason=Reason.ERROR,
            )
        return resolution_of(detail, flag, value)

    def _flag(self, key: str) -> Flag | None:
        """The flag as the client holds it now, for rollout reasons and metadata."""
        return self._client.flag(key)

    def resolve_boolean_details(
        self,
        flag_key: str,
        default_value: bool,
        evaluation_context: EvaluationContext | None = None,
    ) -> FlagResolutionDetails[bool]:
        return self._resolve(flag_key, default_value, evaluation_context, ValueType.BOOL, _as_is)

    def resolve_string_details(
        self,
        flag_key: str,
        default_value: str,
        evaluation_context: EvaluationContext | None = None,
    ) -> FlagResolutionDetails[str]:
        return self._resolve(flag_key, default_value, evaluation_context, ValueType.STRING, _as_is)

    def resolve_integer_details(
        self,
        flag_key: str,
        default_value: int,
        evaluation_context: EvaluationContext | None = None,
    ) -> FlagResolutionDetails[int]:
        return self._resolve(flag_key, default_value, evaluation_context, ValueType.INT, _as_int)

    def resolve_float_details(
        self,
        flag_key: str,
        default_value: float,
        evaluation_context: EvaluationContext | None = None,
    ) -> FlagResolutionDetails[float]:
        return self._resolve(
            flag_key, default_value, evaluation_context, ValueType.DOUBLE, _as_float
        )

    def resolve_object_details(
        self,
        flag_key: str,
        default_value: Sequence[FlagValueType] | Mapping[str, FlagValueType],
        evaluation_context: EvaluationContext | None = None,
    ) -> FlagResolutionDetails[Sequence[FlagValueType] | Mapping[str, FlagValueType]]:
        return self._resolve(flag_key, default_value, evaluation_context, ValueType.ANY, _as_object)

    # tracking -----------------------------------------------------------------------------------

    def track(
        self,
        tracking_event_name: str,
        evaluation_context: EvaluationContext | None = None,
        tracking_event_details: TrackingEventDetails | None = None,
    ) -> None:
        """A custom event: the details' attributes are its `data`, its value the `metricValue`."""
        try:
            context = to_context(evaluation_context)
        except ContextMappingError as exc:
            log.warning("OpenFeature track(%r) dropped: %s", tracking_event_name, exc.message)
            return
        data: dict[str, Any] | None = None
        metric: float | None = None
        if tracking_event_details is not None:
            data = dict(tracking_event_details.attributes) or None
            metric = tracking_event_details.value
        self._client.track(tracking_event_name, context, data, metric)
