"""Storage ports of the catalog: projects, their environments (with their SDK credentials),
flags and segments, as records and the repositories that keep them. Pure declarations;
`services.ports` gathers them into the unit of work."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from flagstaff_server.services.port_types import JsonObject

CredentialKind = Literal["sdk", "mobile", "client_side"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectRecord:
    key: str
    name: str
    tags: tuple[str, ...] = ()
    doc: JsonObject
    """Every other REST field of the project (description, defaultClientSideAvailability, ...)."""
    created: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class RetiredCredential:
    """A key replaced by a reset, still accepted until `expires` (the grace period)."""

    kind: CredentialKind
    value: str
    expires: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class EnvironmentRecord:
    project: str
    key: str
    name: str
    sdk_key: str
    mobile_key: str
    client_side_id: str
    """24 lowercase hex digits; the REST `_id`."""
    retired: tuple[RetiredCredential, ...] = ()
    secure_mode: bool = False
    doc: JsonObject
    """Every other REST field (color, defaultTtl, tags, confirmChanges, ...)."""
    created: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class FlagRecord:
    """One flag of a project as its REST document, per-environment configurations included."""

    project: str
    key: str
    version: int
    """The REST `_version`; the compare-and-set token."""
    doc: JsonObject


@dataclass(frozen=True, slots=True, kw_only=True)
class SegmentRecord:
    project: str
    environment: str
    key: str
    version: int
    doc: JsonObject


class ProjectRepository(Protocol):
    def get(self, key: str) -> ProjectRecord | None: ...
    def list(self) -> list[ProjectRecord]:
        """All projects, ordered by key."""
        ...

    def add(self, record: ProjectRecord) -> None: ...
    def replace(self, record: ProjectRecord) -> None: ...
    def delete(self, key: str) -> None:
        """Remove the project with its environments, flags, segments and chat integrations (not
        audit or changes)."""
        ...


class EnvironmentRepository(Protocol):
    def get(self, project: str, key: str) -> EnvironmentRecord | None: ...
    def list(self, project: str | None = None) -> list[EnvironmentRecord]:
        """Environments of `project` (of every project when None), ordered by project, key."""
        ...

    def add(self, record: EnvironmentRecord) -> None:
        """Raises `NotFound` when the project is missing, `AlreadyExists` for a taken key or
        a credential already in use."""
        ...

    def replace(self, record: EnvironmentRecord) -> None: ...
    def delete(self, project: str, key: str) -> None:
        """Remove the environment and its segments."""
        ...

    def find_by_credential(
        self, kind: CredentialKind, value: str, now: datetime
    ) -> EnvironmentRecord | None:
        """The environment whose current key of `kind` is `value`, or whose retired key of that
        kind is `value` and expires after `now`."""
        ...


class FlagRepository(Protocol):
    def get(self, project: str, key: str, *, for_update: bool = False) -> FlagRecord | None:
        """`for_update=True` in a writing unit of work holds the row until commit, so a
        read-modify-write cannot lose a race: a concurrent writer waits, then reads this
        one's result (PostgreSQL `SELECT ... FOR UPDATE`; SQLite and memory already run
        writers one at a time)."""
        ...

    def list(self, project: str) -> list[FlagRecord]:
        """Flags of the project, ordered by key."""
        ...

    def add(self, record: FlagRecord) -> None: ...
    def replace(self, record: FlagRecord, expected_version: int) -> None:
        """Store `record` if the stored version is still `expected_version`; otherwise raise
        `VersionConflict` and change nothing."""
        ...

    def delete(self, project: str, key: str, expected_version: int | None = None) -> None: ...


class SegmentRepository(Protocol):
    def get(
        self, project: str, environment: str, key: str, *, for_update: bool = False
    ) -> SegmentRecord | None:
        """`for_update` as for flags."""
        ...

    def list(self, project: str, environment: str) -> list[SegmentRecord]:
        """Segments of the environment, ordered by key."""
        ...

    def add(self, record: SegmentRecord) -> None: ...
    def replace(self, record: SegmentRecord, expected_version: int) -> None: ...
    def delete(
        self, project: str, environment: str, key: str, expected_version: int | None = None
    ) -> None: ...


__all__ = [
    "CredentialKind",
    "EnvironmentRecord",
    "EnvironmentRepository",
    "FlagRecord",
    "FlagRepository",
    "ProjectRecord",
    "ProjectRepository",
    "RetiredCredential",
    "SegmentRecord",
    "SegmentRepository",
]
