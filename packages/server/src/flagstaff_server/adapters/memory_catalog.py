"""The in-memory store's catalog: projects, environments (and the credentials that find them),
flags and segments. Keeps no references to callers' objects."""

from __future__ import annotations

import copy
from datetime import datetime

from flagstaff_server.adapters.memory_journal import (
    UndoJournal,
    check_version,
    stored,
    stored_environment,
)
from flagstaff_server.adapters.memory_state import MemoryState
from flagstaff_server.errors import AlreadyExists, NotFound
from flagstaff_server.services.ports import (
    CredentialKind,
    EnvironmentRecord,
    FlagRecord,
    ProjectRecord,
    SegmentRecord,
)


class InMemoryProjects:
    def __init__(self, state: MemoryState, journal: UndoJournal) -> None:
        self._state, self._journal = state, journal

    def get(self, key: str) -> ProjectRecord | None:
        found = self._state.projects.get(key)
        return copy.deepcopy(found)

    def list(self) -> list[ProjectRecord]:
        return [copy.deepcopy(p) for _, p in sorted(self._state.projects.items())]

    def add(self, record: ProjectRecord) -> None:
        if record.key in self._state.projects:
            raise AlreadyExists(f"project {record.key!r} already exists")
        self._journal.put(self._state.projects, record.key, stored(record))

    def replace(self, record: ProjectRecord) -> None:
        if record.key not in self._state.projects:
            raise NotFound(f"project {record.key!r} not found")
        self._journal.put(self._state.projects, record.key, stored(record))

    def delete(self, key: str) -> None:
        if key not in self._state.projects:
            raise NotFound(f"project {key!r} not found")
        state, journal = self._state, self._journal
        for env_key in [k for k in state.environments if k[0] == key]:
            InMemoryEnvironments(state, journal).delete(*env_key)
        for flag_key in [k for k in state.flags if k[0] == key]:
            journal.remove(state.flags, flag_key)
        state.webhooks.remove_project(key, journal)
        journal.remove(state.projects, key)


_CREDENTIAL_FIELD: dict[CredentialKind, str] = {
    "sdk": "sdk_key",
    "mobile": "mobile_key",
    "client_side": "client_side_id",
}


class InMemoryEnvironments:
    def __init__(self, state: MemoryState, journal: UndoJournal) -> None:
        self._state, self._journal = state, journal

    def get(self, project: str, key: str) -> EnvironmentRecord | None:
        return copy.deepcopy(self._state.environments.get((project, key)))

    def list(self, project: str | None = None) -> list[EnvironmentRecord]:
        return [
            copy.deepcopy(env)
            for (p, _), env in sorted(self._state.environments.items())
            if project is None or p == project
        ]

    def add(self, record: EnvironmentRecord) -> None:
        if record.project not in self._state.projects:
            raise NotFound(f"project {record.project!r} not found")
        ident = (record.project, record.key)
        if ident in self._state.environments:
            raise AlreadyExists(f"environment {record.key!r} already exists")
        self._check_credentials_free(record)
        self._journal.put(self._state.environments, ident, stored_environment(record))

    def replace(self, record: EnvironmentRecord) -> None:
        ident = (record.project, record.key)
        if ident not in self._state.environments:
            raise NotFound(f"environment {record.key!r} not found")
        self._check_credentials_free(record)
        self._journal.put(self._state.environments, ident, stored_environment(record))

    def delete(self, project: str, key: str) -> None:
        state = self._state
        if (project, key) not in state.environments:
            raise NotFound(f"environment {key!r} not found")
        for seg_key in [k for k in state.segments if k[:2] == (project, key)]:
            self._journal.remove(state.segments, seg_key)
        self._journal.remove(state.environments, (project, key))

    def find_by_credential(
        self, kind: CredentialKind, value: str, now: datetime
    ) -> EnvironmentRecord | None:
        attribute = _CREDENTIAL_FIELD[kind]
        for env in self._state.environments.values():
            if getattr(env, attribute) == value:
                return copy.deepcopy(env)
        for env in self._state.environments.values():
            for retired in env.retired:
                if retired.kind == kind and retired.value == value and retired.expires > now:
                    return copy.deepcopy(env)
        return None

    def _check_credentials_free(self, record: EnvironmentRecord) -> None:
        ident = (record.project, record.key)
        for other_ident, other in self._state.environments.items():
            if other_ident == ident:
                continue
            for attribute in _CREDENTIAL_FIELD.values():
                if getattr(other, attribute) == getattr(record, attribute):
                    raise AlreadyExists(f"{attribute} is already used by another environment")


class InMemoryFlags:
    def __init__(self, state: MemoryState, journal: UndoJournal) -> None:
        self._state, self._journal = state, journal

    def get(self, project: str, key: str, *, for_update: bool = False) -> FlagRecord | None:
        # units of work run one at a time here: every read is already as good as locked
        return copy.deepcopy(self._state.flags.get((project, key)))

    def list(self, project: str) -> list[FlagRecord]:
        return [
            copy.deepcopy(flag)
            for (p, _), flag in sorted(self._state.flags.items())
            if p == project
        ]

    def add(self, record: FlagRecord) -> None:
        if record.project not in self._state.projects:
            raise NotFound(f"project {record.project!r} not found")
        if (record.project, record.key) in self._state.flags:
            raise AlreadyExists(f"flag {record.key!r} already exists")
        self._journal.put(self._state.flags, (record.project, record.key), stored(record))

    def replace(self, record: FlagRecord, expected_version: int) -> None:
        ident = (record.project, record.key)
        check_version(self._state.flags.get(ident), f"flag {record.key!r}", expected_version)
        self._journal.put(self._state.flags, ident, stored(record))

    def delete(self, project: str, key: str, expected_version: int | None = None) -> None:
        current = self._state.flags.get((project, key))
        check_version(current, f"flag {key!r}", expected_version)
        self._journal.remove(self._state.flags, (project, key))


class InMemorySegments:
    def __init__(self, state: MemoryState, journal: UndoJournal) -> None:
        self._state, self._journal = state, journal

    def get(
        self, project: str, environment: str, key: str, *, for_update: bool = False
    ) -> SegmentRecord | None:
        return copy.deepcopy(self._state.segments.get((project, environment, key)))

    def list(self, project: str, environment: str) -> list[SegmentRecord]:
        return [
            copy.deepcopy(segment)
            for (p, e, _), segment in sorted(self._state.segments.items())
            if (p, e) == (project, environment)
        ]

    def add(self, record: SegmentRecord) -> None:
        if (record.project, record.environment) not in self._state.environments:
            raise NotFound(f"environment {record.environment!r} not found")
        ident = (record.project, record.environment, record.key)
        if ident in self._state.segments:
            raise AlreadyExists(f"segment {record.key!r} already exists")
        self._journal.put(self._state.segments, ident, stored(record))

    def replace(self, record: SegmentRecord, expected_version: int) -> None:
        ident = (record.project, record.environment, record.key)
        current = self._state.segments.get(ident)
        check_version(current, f"segment {record.key!r}", expected_version)
        self._journal.put(self._state.segments, ident, stored(record))

    def delete(
        self, project: str, environment: str, key: str, expected_version: int | None = None
    ) -> None:
        ident = (project, environment, key)
        check_version(self._state.segments.get(ident), f"segment {key!r}", expected_version)
        self._journal.remove(self._state.segments, ident)
