"""What a worker job is: a name (also its lease's), a blocking `run` that does the work that is
due, and a `backlog` that says how much is due. Values only; running them is `runner`'s."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from flagstaff_server.services.ports import LeaseRecord, UnitOfWork


@dataclass(frozen=True, slots=True, kw_only=True)
class Backlog:
    """Work due now: how many items, and when the oldest of them fell due (None: nothing due)."""

    due: int = 0
    oldest: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class JobRun:
    """One run of a job by the worker that holds its lease."""

    now: datetime
    """The worker's clock at the start of the run; the job's "now" for what is due."""
    lease: LeaseRecord

    def holds_lease(self, uow: UnitOfWork, at: datetime | None = None) -> bool:
        """Whether this run's lease is still current, asked inside the job's own write
        transaction: a run that lost its lease (it was paused past the lease's end and another
        worker took over) must not commit. `at` is the transaction's time (default: the start
        of the run). The unique keys a job writes guard the rest."""
        lease = self.lease
        return uow.leases.holds(lease.name, lease.holder, lease.fence, at or self.now)


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """A job of the worker role. `run` does what is due at `JobRun.now` in transactions of its own
    (small ones: a lease is held for `Worker.lease_ttl` at a time) and returns how many items it
    completed; it must be idempotent, since a run killed midway is run again by the next holder.
    `backlog` answers from a read-only transaction and is asked by every worker, leader or not,
    so that each one's `/status` shows the queue."""

    name: str
    run: Callable[[JobRun], int]
    backlog: Callable[[datetime], Backlog]
    every: timedelta = timedelta(seconds=1)
    """The pause between two runs; the worker runs no job more often than it polls."""
