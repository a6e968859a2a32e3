"""The `region` block of `/status`: this process's region and where its database stands in
replication (role, timeline, lag, standbys, epoch, which region holds the primary).

The database is asked at most once per `max_age` however often `/status` is, off the event loop;
an unanswered probe shows as an error, never a hung `/status`. In a process that serves the API
the probe also keeps the record of the primary's region current: finding its database promoted
(by `flagstaff dr promote` or any other tool), it records its own region there.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

from flagstaff_server.errors import FlagstaffError
from flagstaff_server.services.ports import Clock, DatabaseState, Replication

log = logging.getLogger(__name__)

MAX_AGE_SECONDS = 1.0
TIMEOUT_SECONDS = 2.0


class RegionStatus:
    def __init__(
        self,
        *,
        region: str,
        replication: Replication,
        clock: Clock,
        records_primary: bool,
        max_age: float = MAX_AGE_SECONDS,
        timeout: float = TIMEOUT_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.region = region
        self._replication = replication
        self._clock = clock
        self._records_primary = records_primary
        self._max_age = max_age
        self._timeout = timeout
        self._monotonic = monotonic
        self._cached: tuple[float, DatabaseState | str] | None = None
        self._probe: asyncio.Future[DatabaseState | str] | None = None

    async def state(self) -> DatabaseState | str:
        """The database's state, or why it could not be read; at most `max_age` old."""
        cached = self._cached
        if cached is not None and self._monotonic() - cached[0] <= self._max_age:
            return cached[1]
        if self._probe is None:
            self._probe = asyncio.ensure_future(asyncio.to_thread(self._read))
            self._probe.add_done_callback(self._keep)
        try:
            async with asyncio.timeout(self._timeout):
                # shielded: a caller timing out leaves the probe to finish for the next one
                return await asyncio.shield(self._probe)
        except TimeoutError:
            return f"the database did not answer within {self._timeout}s"

    def _keep(self, probe: asyncio.Future[DatabaseState | str]) -> None:
        self._probe = None
        if not probe.cancelled():
            self._cached = (self._monotonic(), probe.result())

    def _read(self) -> DatabaseState | str:
        try:
            state = self._replication.state()
        except FlagstaffError as exc:
            return exc.message
        mine = state.primary_region == self.region
        if self._records_primary and state.role == "primary" and not mine:
            state = self._record(state)
        return state

    def _record(self, state: DatabaseState) -> DatabaseState:
        try:
            self._replication.record_primary_region(
                self.region, timeline=state.timeline, at=self._clock()
            )
        except FlagstaffError as exc:
            log.warning("could not record region %s as the primary's: %s", self.region, exc)
            return state
        log.info("recorded region %s as holding the primary database", self.region)
        return dataclasses.replace(state, primary_region=self.region)

    async def block(self) -> dict[str, Any]:
        """The `region` object of `/status`."""
        return render(self.region, await self.state())


def render(region: str, state: DatabaseState | str) -> dict[str, Any]:
    if isinstance(state, str):
        return {
            "name": region,
            "primaryRegion": None,
            "readOnly": None,
            "database": {"role": "unknown", "error": state},
        }
    primary = region if state.role == "embedded" else state.primary_region
    return {
        "name": region,
        "primaryRegion": primary,
        "readOnly": state.role == "standby",
        "database": render_database(state),
    }


def render_database(state: DatabaseState) -> dict[str, Any]:
    """The database's part of the block; `flagstaff dr` prints the same object."""
    database: dict[str, Any] = {
        "role": state.role,
        "replicationLagSeconds": state.replication_lag_seconds,
        "timeline": state.timeline,
        "epoch": state.epoch,
    }
    if state.role == "standby":
        database["receiving"] = state.receiving
        database["upstream"] = state.upstream
    if state.role == "primary":
        database["standbys"] = [
            {
                "name": standby.name,
                "address": standby.address,
                "state": standby.state,
                "replayLagSeconds": standby.replay_lag_seconds,
                "lagBytes": standby.lag_bytes,
            }
            for standby in state.standbys
        ]
    return database
