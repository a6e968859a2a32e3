"""Worker processes on a shared database, for the exactly-once tests: the database (a SQLite
file or a throwaway PostgreSQL database) with a project `p` and flags made through the services
in this process, `flagstaff serve --role worker` processes polling fast with a short lease, and
reading back what ran (scheduled changes, execution audit entries, flag versions)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from flagstaff_server.adapters.clock import system_clock
from flagstaff_server.adapters.sql.engine import sqlite_url
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.services import flags, scheduled_changes
from flagstaff_server.services.access import Actor
from flagstaff_server.services.plane import ControlPlane, epoch_millis
from flagstaff_server.services.projects import ProjectRequest, create_project
from flagstaff_server.services.scheduled_change_runs import execution_entry_id
from support.in_process import control_plane
from support.processes import ServeProcess
from support.services import postgres_database

PROJECT = "p"
ACTOR = Actor(token_id="exactly-once-test", name="exactly-once test", role="admin")
SCHEDULING_SLACK = timedelta(seconds=1)
"""How far behind the real time the test's own control plane reads the clock: a change made
due at once is then not in the past by the time its creation checks it (a busy machine can stall
a thread between the two for longer than the change's lead)."""
POLL_SECONDS = "0.05"
LEASE_SECONDS = "0.5"


@contextmanager
def shared_database(kind: str, tmp_path: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield sqlite_url(tmp_path / "shared.db")
        return
    with postgres_database("flagstaff_worker") as url:
        yield url


@dataclass
class Cluster:
    url: str
    store: SqlStore
    plane: ControlPlane

    def add_flag(self, key: str) -> None:
        flags.create_flag(self.plane, ACTOR, PROJECT, {"key": key, "name": key})

    def schedule_on(self, key: str, *, in_seconds: float) -> str:
        """A scheduled change turning the flag on in production `in_seconds` from now."""
        at = epoch_millis(system_clock() + timedelta(seconds=in_seconds))
        created = scheduled_changes.create_scheduled_change(
            self.plane,
            ACTOR,
            PROJECT,
            key,
            "production",
            {"executionDate": at, "instructions": [{"kind": "turnFlagOn"}]},
        )
        change_id: str = created["_id"]
        return change_id

    def status_of(self, change_id: str) -> str:
        with self.store.unit_of_work(read_only=True) as uow:
            record = uow.scheduled_changes.get(change_id)
        assert record is not None
        return record.status

    def executions(self, change_id: str) -> int:
        """Audit entries recording the change's execution: its unique key allows at most one,
        so also count the flag edits it made."""
        with self.store.unit_of_work(read_only=True) as uow:
            entry = uow.audit.get(execution_entry_id(change_id))
            return 0 if entry is None else 1

    def flag_edits(self, key: str) -> list[Any]:
        """The flag's `updateFlag` audit entries (each application of a change writes one)."""
        with self.store.unit_of_work(read_only=True) as uow:
            return [
                entry
                for entry in uow.audit.list(resource_prefix=f"proj/{PROJECT}:env/", limit=10_000)
                if entry.action == "updateFlag" and entry.resource.endswith(f":flag/{key}")
            ]

    def lease_fence(self, job: str = "scheduled-changes") -> int:
        """How many times the job's lease was taken by a new holder."""
        with self.store.unit_of_work(read_only=True) as uow:
            fences = [lease.fence for lease in uow.leases.list() if lease.name == job]
        return fences[0] if fences else 0

    def flag_version(self, key: str) -> int:
        with self.store.unit_of_work(read_only=True) as uow:
            record = uow.flags.get(PROJECT, key)
        assert record is not None
        return record.version


@contextmanager
def cluster(url: str) -> Iterator[Cluster]:
    store = SqlStore(url)
    try:
        plane = control_plane(store, clock=lambda: system_clock() - SCHEDULING_SLACK)
        create_project(plane, ACTOR, ProjectRequest(key=PROJECT, name="P"))
        yield Cluster(url=url, store=store, plane=plane)
    finally:
        store.close()


def worker_process(url: str, data_dir: Path, name: str) -> ServeProcess:
    return ServeProcess(
        data_dir=data_dir / name,
        name=name,
        args=["--role", "worker", "--database", url],
        env={
            "FLAGSTAFF_WORKER_POLL_SECONDS": POLL_SECONDS,
            "FLAGSTAFF_WORKER_LEASE_SECONDS": LEASE_SECONDS,
        },
    )
