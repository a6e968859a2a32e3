"""Storage ports of what happened: the audit trail, the outbox of committed changes numbered in
database epochs, and the change feed that carries the outbox to subscribers. Pure declarations;
`services.ports` gathers them into the unit of work."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from flagstaff_server.services.port_types import JsonObject

ChangeKind = Literal["flag", "segment", "environment", "epoch", "notice"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEntry:
    id: str
    at: datetime
    actor: str
    kind: str
    """The resource kind: "project", "environment", "flag", "segment", "token"."""
    resource: str
    """LaunchDarkly-style resource path, e.g. `proj/p:env/e:flag/k`."""
    action: str
    comment: str | None = None
    patch: Any = None
    """The JSON Patch or semantic patch as received (parsed JSON), if any."""
    before: JsonObject | None = None
    after: JsonObject | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One committed change, in the outbox and on the feed. `item` is the SDK-format JSON of the
    flag or segment for `environment` (for kind "environment": its delivery view, credentials
    included); None means deleted. Kind "epoch" marks the start of epoch `epoch` (project and
    environment empty, `item` the epoch's description: see `services.epochs`). Kind "notice"
    carries an operator notice (project and environment empty, `key` its id, `item` its public
    JSON: `flagstaff_server.notice`; None means deleted)."""

    seq: int
    project: str
    environment: str
    kind: ChangeKind
    key: str
    version: int
    item: JsonObject | None
    at: datetime
    epoch: int = 1
    """The database epoch the change was committed in; (epoch, seq) is a feed position."""


ChangeRecord = Change


@dataclass(frozen=True, slots=True, kw_only=True)
class EpochRecord:
    """One epoch of the database's history: a stretch in which seqs and versions were handed out
    by one primary (docs/storage.md, "Epochs"). Epoch 1 starts after seq 0."""

    epoch: int
    started_after_seq: int
    """The counter's seq when the epoch began: changes of earlier epochs are at or below it."""
    timeline: int | None = None
    """The PostgreSQL timeline the epoch began on (None: SQLite, or not known)."""
    system_id: str | None = None
    """The PostgreSQL cluster's system identifier (None: SQLite, or not readable)."""
    at: datetime
    reason: str
    """Why it began: "initial", "promote", "restore", "timeline", or an operator's word."""


@dataclass(frozen=True, slots=True)
class DatabaseTimeline:
    """Which history a PostgreSQL primary is writing: its timeline and cluster identity."""

    timeline: int
    system_id: str | None


class AuditRepository(Protocol):
    def append(self, entry: AuditEntry) -> None: ...
    def get(self, entry_id: str) -> AuditEntry | None: ...
    def list(
        self,
        *,
        resource_prefix: str | None = None,
        kind: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
    ) -> list[AuditEntry]:
        """Newest first; `since` is inclusive, `until` exclusive."""
        ...


class ChangeRepository(Protocol):
    def append(
        self,
        *,
        project: str,
        environment: str,
        kind: ChangeKind,
        key: str,
        version: int,
        item: JsonObject | None,
        at: datetime,
    ) -> int:
        """Record a change in the current epoch, in this transaction, and return its sequence
        number. Numbers follow each other (n, n + 1, ...) in commit order with no gaps: a
        rolled-back change leaves no number. Only an epoch start skips numbers (by its gap)."""
        ...

    def since(self, after_seq: int, limit: int = 1000) -> list[Change]:
        """Committed changes with seq > `after_seq`, ascending, at most `limit`."""
        ...

    def latest_seq(self) -> int:
        """The highest committed seq, 0 when there is none."""
        ...


class EpochRepository(Protocol):
    def list(self) -> list[EpochRecord]:
        """Every epoch, oldest first (at least epoch 1)."""
        ...

    def current(self) -> EpochRecord: ...
    def begin(
        self,
        *,
        reason: str,
        timeline: int | None,
        system_id: str | None,
        at: datetime,
        seq_gap: int,
    ) -> EpochRecord:
        """Start the next epoch: record it after the counter's current seq and move the counter
        `seq_gap` on, so the next change gets a seq above anything an old primary may have
        handed out. Holds the counter (and on PostgreSQL the flag and segment tables) until
        commit. Versions and the marker change are the caller's (`services.epochs`)."""
        ...

    def lock(self) -> None:
        """Hold the counter, the flags and the segments until commit (as `begin` does), so an
        epoch decided on after this cannot race another process's."""
        ...

    def record_timeline(self, epoch: int, timeline: int, system_id: str | None) -> None:
        """Note the database identity of an epoch that began without one known."""
        ...

    def timeline(self) -> DatabaseTimeline | None:
        """The timeline of the PostgreSQL primary this transaction runs on; None on SQLite or in
        memory (nothing to compare) and on a standby (it takes no writes)."""
        ...


class ChangeFeed(Protocol):
    """Committed changes to subscribers, in seq order, without gaps or duplicates."""

    def publish(self, seq: int) -> None:
        """Announce that changes up to `seq` are committed. Call after the commit; never raises
        (a failed announcement is repaired by subscribers catching up from the outbox)."""
        ...

    def subscribe(self, after_seq: int) -> AsyncGenerator[Change, None]:
        """Every change with seq > `after_seq`: first the backlog from the outbox, then live."""
        ...

    async def latest_seq(self) -> int: ...
    async def aclose(self) -> None: ...


__all__ = [
    "AuditEntry",
    "AuditRepository",
    "Change",
    "ChangeFeed",
    "ChangeKind",
    "ChangeRecord",
    "ChangeRepository",
    "DatabaseTimeline",
    "EpochRecord",
    "EpochRepository",
]
