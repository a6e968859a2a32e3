"""Storage ports of experimentation: metrics (per project) and experiments (per project and
environment), each a keyed JSON document with a version for optimistic concurrency. Pure
declarations, like `services.ports`; the memory and SQL adapters implement them."""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

JsonObject = dict[str, Any]

PROJECT_WIDE = ""
"""The `environment` of a record kept per project (a metric)."""
ACCOUNT_WIDE = ""
"""The `project` of an account-wide record (a custom role, a team)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyedRecord:
    """A metric or an experiment: `key` is unique in (`project`, `environment`); `doc` holds
    every field of its LaunchDarkly representation that is not derived when it is read."""

    id: str
    project: str
    environment: str = PROJECT_WIDE
    key: str
    version: int = 1
    created: datetime
    doc: JsonObject


class KeyedRepository(Protocol):
    def get(self, project: str, environment: str, key: str) -> KeyedRecord | None: ...
    def add(self, record: KeyedRecord) -> None:
        """Raises `AlreadyExists` when the key is taken."""
        ...

    def replace(self, record: KeyedRecord, expected_version: int) -> None:
        """Store `record` if the stored version is still `expected_version`, else raise
        `VersionConflict` (`NotFound` when it is gone)."""
        ...

    def delete(self, project: str, environment: str, key: str) -> None:
        """Raises `NotFound` for a missing record."""
        ...

    def list(self, project: str, environment: str) -> list[KeyedRecord]:
        """The records of the project (and environment), oldest first."""
        ...

    def everywhere(self) -> builtins.list[KeyedRecord]:
        """Every record of every project and environment, oldest first."""
        ...


__all__ = ["ACCOUNT_WIDE", "PROJECT_WIDE", "JsonObject", "KeyedRecord", "KeyedRepository"]
