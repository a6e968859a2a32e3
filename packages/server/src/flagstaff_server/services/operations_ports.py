"""Ports of running the control plane: the worker's leases, operator notices, and the database's
replication (its role, timeline, lag and standbys, and promotion). Pure declarations;
`services.ports` gathers them into the unit of work and the store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from flagstaff_server.services.port_types import JsonObject

DatabaseRole = Literal["primary", "standby", "embedded"]
"""A PostgreSQL server writing (primary) or replaying one (hot standby); SQLite or memory:
embedded, with no replication at all."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaseRecord:
    """Who runs the worker job `name` now: `holder` until `expires`. `fence` grows by one each
    time the lease changes hands, so work begun under an older holding is told from the current
    one's (docs/workflows.md, "The worker")."""

    name: str
    holder: str
    expires: datetime
    fence: int
    acquired: datetime
    """When `holder` took it (renewals keep this)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NoticeRecord:
    """An operator notice posted through the API (`flagstaff_server.notice`)."""

    id: str
    created: datetime
    expires: datetime | None = None
    doc: JsonObject
    """Its other fields: title, message, severity, regions."""


class LeaseRepository(Protocol):
    def acquire(
        self, name: str, holder: str, *, now: datetime, until: datetime
    ) -> LeaseRecord | None:
        """Take the lease `name` for `holder` until `until`, or renew it when `holder` has it
        already. None when another holder's lease is still valid at `now`, or when another
        worker is taking it in a transaction of its own this moment (PostgreSQL skips the
        row it has locked instead of waiting: `SELECT ... FOR UPDATE SKIP LOCKED`; SQLite's
        writers run one at a time). A lease that changes hands gets the next `fence`."""
        ...

    def holds(self, name: str, holder: str, fence: int, now: datetime) -> bool:
        """Whether `holder` still has lease `name`, taken with `fence`, at `now`. A job asks this
        inside the transaction that does its work, so work done by a holder that lost its lease
        (paused past `expires`) is rolled back instead of committed."""
        ...

    def release(self, name: str, holder: str) -> None:
        """Give the lease up (it expires now) if `holder` has it; otherwise nothing."""
        ...

    def list(self) -> list[LeaseRecord]:
        """Every lease, ordered by name."""
        ...


class NoticeRepository(Protocol):
    def get(self, notice_id: str) -> NoticeRecord | None: ...
    def list(self) -> list[NoticeRecord]:
        """Every notice, expired ones included, newest first."""
        ...

    def add(self, record: NoticeRecord) -> None:
        """Raises `AlreadyExists` for a taken id."""
        ...

    def delete(self, notice_id: str) -> None:
        """Raises `NotFound` for a missing notice."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class StandbyState:
    """A standby streaming from this primary, as the primary sees it (pg_stat_replication)."""

    name: str
    """Its `application_name` (the harness and the runbook set it to the region's name)."""
    address: str | None
    state: str
    """"streaming", "catchup", "startup", ..."""
    replay_lag_seconds: float | None
    """How long the newest replayed commit took to be replayed there; None: nothing to measure."""
    lag_bytes: int | None
    """WAL written here and not yet replayed there."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DatabaseState:
    """Where the control plane's database stands in replication: what `/status` and
    `flagstaff dr status` report."""

    role: DatabaseRole
    timeline: int | None = None
    """The PostgreSQL timeline written (primary) or replayed (standby); it grows by one at each
    promotion. None when embedded."""
    replication_lag_seconds: float | None = None
    """A standby's staleness: 0 when it is streaming and has replayed all it received, else the
    age of the newest commit it replayed. None on a primary or embedded."""
    upstream: str | None = None
    """A standby's primary as `host:port`, while its WAL receiver runs (None otherwise)."""
    receiving: bool | None = None
    """A standby's WAL receiver is streaming from its primary now."""
    standbys: tuple[StandbyState, ...] = ()
    epoch: int = 1
    primary_region: str | None = None
    """The region recorded as holding the primary (by the primary region's API, or by
    `flagstaff dr promote`); None when nobody recorded one yet."""


class Replication(Protocol):
    """The control plane database's replication, read and acted on. Implementations: the SQL
    store's (PostgreSQL; SQLite answers "embedded") and an embedded one for the memory store."""

    def state(self) -> DatabaseState:
        """Raises `StoreUnavailable` when the database does not answer."""
        ...

    def promote(self, wait_seconds: float) -> bool:
        """End recovery on a standby (pg_promote); whether it finished within `wait_seconds`."""
        ...

    def record_primary_region(self, region: str, *, timeline: int | None, at: datetime) -> None:
        """Record that `region` holds the primary (a write: only on the primary)."""
        ...


__all__ = [
    "DatabaseRole",
    "DatabaseState",
    "LeaseRecord",
    "LeaseRepository",
    "NoticeRecord",
    "NoticeRepository",
    "Replication",
    "StandbyState",
]
