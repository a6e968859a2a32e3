"""What the data sources report and the status derived from it: which synchronizer is VALID, the
region answering, the last error, whether the SDK key was refused. Every report refreshes the
`DataSourceStatus` and listeners hear when its state or source changes.

Reports come from the actor's loop (and from the initializers before it starts); only `set_state`
is called from other threads, so publishing takes a lock. Must not talk to the network.
"""

from __future__ import annotations

import asyncio
import logging
import threading

import httpx

from flagstaff_sdk.change_set import ChangeSet
from flagstaff_sdk.clock import Clock
from flagstaff_sdk.errors import HttpStatusError, PayloadError
from flagstaff_sdk.notifier import Notifier
from flagstaff_sdk.region import Region, RegionSet
from flagstaff_sdk.status import DataSourceState, DataSourceStatus, ErrorInfo
from flagstaff_sdk.store import Store

log = logging.getLogger("flagstaff_sdk")


def error_info(exc: BaseException, at: float) -> ErrorInfo:
    if isinstance(exc, HttpStatusError):
        return ErrorInfo(kind="http", message=str(exc), status=exc.status, at=at)
    if isinstance(exc, httpx.TimeoutException):
        return ErrorInfo(kind="timeout", message=type(exc).__name__, at=at)
    if isinstance(exc, httpx.TransportError):
        return ErrorInfo(kind="network", message=f"{type(exc).__name__}: {exc}", at=at)
    if isinstance(exc, PayloadError):
        return ErrorInfo(kind="payload", message=str(exc), at=at)
    return ErrorInfo(kind="source", message=f"{type(exc).__name__}: {exc}", at=at)


class StatusBoard:
    """`settled` is set once the first network answer arrived or every endpoint failed once
    (the client stops waiting then). `replacing` names the source standing in for the network
    (`file` or a custom source's name), None when the network sources run; `offline` is
    `offline=True` with nothing standing in."""

    def __init__(
        self,
        store: Store,
        notifier: Notifier,
        clock: Clock,
        regions: RegionSet,
        *,
        replacing: str | None,
        offline: bool,
    ) -> None:
        self.store = store
        self.clock = clock
        self._notifier = notifier
        self._regions = regions
        self._replacing = replacing
        self._offline = offline
        self.settled = threading.Event()
        self._lock = threading.Lock()
        self._status = DataSourceStatus(state=DataSourceState.INITIALIZING, since=clock.wall())
        self._last_error: ErrorInfo | None = None
        self.stream_valid = False
        self.stream_ever_valid = False
        self.stream_down_since = clock.monotonic()
        self.polling = False
        self._poll_valid = False
        self._source_valid = False
        self.network_region: Region | None = None
        self._unauthorized = False
        self.changed = asyncio.Event()
        """Set (and replaced) when the stream turns VALID or stops being VALID: the poller's
        cue to reconsider."""

    @property
    def status(self) -> DataSourceStatus:
        return self._status

    # the initializers (before the loop: no release of a waiting constructor) ------------------

    def note_source_valid(self) -> None:
        self._source_valid = True

    def note_error(self, error: ErrorInfo) -> None:
        self._last_error = error

    # the network synchronizers -----------------------------------------------------------------

    def set_stream_valid(self, valid: bool, region: Region) -> None:
        if valid == self.stream_valid:
            return
        self.stream_valid = valid
        if valid:
            self.stream_ever_valid = True
            self.network_region = region
        else:
            self.stream_down_since = self.clock.monotonic()
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()
        self.refresh()

    def set_polling(self, polling: bool) -> None:
        if polling == self.polling:
            return
        self.polling = polling
        if not polling:
            self._poll_valid = False
        self.refresh()

    def confirm_poll(self) -> None:
        """A poll answered: while polling that makes polling VALID. Set before its data is
        applied, as for streams, so whoever sees the data also sees a VALID status; applying the
        data refreshes the status."""
        if self.polling:
            self._poll_valid = True

    def poll_round_ended(self, region: Region | None) -> None:
        """A polling round ended: answered by `region`, or by none when every region failed."""
        self._poll_valid = region is not None
        if region is not None:
            self.network_region = region
        self.refresh()

    def apply_network(self, change: ChangeSet, region: Region) -> None:
        self.store.apply(change)
        self.network_region = region
        self.network_answered()

    # Each of these refreshes the status before releasing a waiting constructor, so the first
    # status a caller reads already reflects what released it.

    def network_answered(self) -> None:
        self._unauthorized = False
        self.refresh()
        self.settled.set()

    def record_error(self, error: BaseException) -> None:
        info = error_info(error, self.clock.wall())
        self._last_error = info
        self._unauthorized = info.status in (401, 403)
        log.warning("Flagstaff data source error: %s", info.message)
        self.refresh()
        if self._regions.all_tried_and_failing or self._unauthorized:
            self.settled.set()

    # sources standing in for the network -------------------------------------------------------

    def source_applied(self, change: ChangeSet) -> None:
        self.store.apply(change)
        self.refresh()
        self.settled.set()

    def source_valid(self, valid: bool, error: ErrorInfo | None = None) -> None:
        self._source_valid = valid
        if error is not None:
            self._last_error = error
        self.refresh()
        self.settled.set()

    # the status --------------------------------------------------------------------------------

    def refresh(self) -> None:
        has_data = self.store.data is not None
        if self._offline:
            state = DataSourceState.OFF
            source = "cache" if has_data else "none"
        elif self._replacing is not None:
            source = self._replacing
            if self._source_valid:
                state = DataSourceState.VALID
            elif has_data:
                state = DataSourceState.INTERRUPTED
            else:
                state = DataSourceState.INITIALIZING
        else:
            polled = self.polling and self._poll_valid
            if self.stream_valid and self.polling:
                source = "stream+poll"
            elif self.stream_valid:
                source = "stream"
            elif polled:
                source = "poll"
            elif has_data:
                source = "cache" if self.network_region is None else "stale"
            else:
                source = "none"
            if self.stream_valid or polled:
                state = DataSourceState.VALID
            elif self._unauthorized:
                state = DataSourceState.OFF
            elif has_data:
                state = DataSourceState.INTERRUPTED
            else:
                state = DataSourceState.INITIALIZING
        self.set_state(state, source)

    def set_state(self, state: DataSourceState, source: str | None = None) -> None:
        with self._lock:
            old = self._status
            region = self.network_region
            status = DataSourceStatus(
                state=state,
                since=old.since if old.state is state else self.clock.wall(),
                last_error=self._last_error,
                source=old.source if source is None else source,
                endpoint=None if region is None else region.name,
            )
            if status == old:
                return
            self._status = status
        if status.state is not old.state or status.source != old.source:
            self._notifier.status_changed(status)
