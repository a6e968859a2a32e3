"""Storage ports of the flag workflows the worker and the trigger URLs run: scheduled changes
and flag triggers (docs/workflows.md). Pure declarations; `services.ports` gathers them into the
unit of work (webhooks are in `services.webhook_ports`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from flagstaff_server.services.port_types import JsonObject

ScheduledChangeStatus = Literal["pending", "executed", "failed"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScheduledChangeRecord:
    """Semantic-patch instructions to apply to a flag's environment at `execution`
    (docs/workflows.md, "Scheduled changes"). Pending until the worker applies them once
    ("executed") or finds they no longer apply ("failed"); `version` is the compare-and-set
    token of edits and of that transition."""

    id: str
    project: str
    flag: str
    environment: str
    execution: datetime
    status: ScheduledChangeStatus = "pending"
    version: int = 1
    created: datetime
    doc: JsonObject
    """Everything else: instructions, comment, who scheduled it (and with which access), and once
    run, when, how late and what came of it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerRecord:
    """A flag trigger: a URL that turns the flag on or off in one environment when called
    (docs/workflows.md, "Flag triggers"). Only a hash of the URL's secret is kept."""

    id: str
    project: str
    flag: str
    environment: str
    secret_hash: str
    enabled: bool = True
    version: int = 1
    created: datetime
    doc: JsonObject
    """Its integration, instruction, comment, author, and the record of its calls."""


class ScheduledChangeRepository(Protocol):
    def get(self, change_id: str) -> ScheduledChangeRecord | None: ...
    def due(self, now: datetime, limit: int) -> list[ScheduledChangeRecord]:
        """Pending changes whose execution time is at or before `now`, oldest first, at most
        `limit`."""
        ...

    def backlog(self, now: datetime) -> tuple[int, datetime | None]:
        """How many pending changes are due at `now`, and the execution time of the oldest."""
        ...

    def claim(self, change_id: str) -> ScheduledChangeRecord | None:
        """The pending change, its row held until commit; None when it is not pending or another
        transaction holds it now (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite's writers run
        one at a time)."""
        ...

    def add(self, record: ScheduledChangeRecord) -> None: ...
    def replace(self, record: ScheduledChangeRecord, expected_version: int) -> None:
        """Store `record` if the stored version is still `expected_version`, else raise
        `VersionConflict` (`NotFound` when it is gone)."""
        ...

    def delete(self, change_id: str) -> None:
        """Raises `NotFound` for a missing change."""
        ...

    def delete_pending(self, project: str, flag: str) -> int:
        """Remove the flag's pending changes (the flag is being deleted); returns how many."""
        ...

    def list(
        self,
        project: str,
        flag: str,
        *,
        environment: str | None = None,
        status: ScheduledChangeStatus | None = "pending",
    ) -> list[ScheduledChangeRecord]:
        """The flag's scheduled changes (in one environment, of one status; None: all), ordered
        by execution time then id."""
        ...


class TriggerRepository(Protocol):
    def get(self, trigger_id: str) -> TriggerRecord | None: ...
    def add(self, record: TriggerRecord) -> None: ...
    def replace(self, record: TriggerRecord, expected_version: int) -> None:
        """Store `record` if the stored version is still `expected_version`, else raise
        `VersionConflict` (`NotFound` when it is gone)."""
        ...

    def delete(self, trigger_id: str) -> None:
        """Raises `NotFound` for a missing trigger."""
        ...

    def delete_for_flag(self, project: str, flag: str) -> int:
        """Remove the flag's triggers (the flag is being deleted); returns how many."""
        ...

    def list(self, project: str, flag: str, environment: str) -> list[TriggerRecord]:
        """The flag's triggers in the environment, oldest first."""
        ...


__all__ = [
    "ScheduledChangeRecord",
    "ScheduledChangeRepository",
    "ScheduledChangeStatus",
    "TriggerRecord",
    "TriggerRepository",
]
