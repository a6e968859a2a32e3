"""The worker role's job runner: each job runs in the one worker process that holds its lease
in the database, at most every `Job.every`, on the injected clock.

`tick` is one blocking pass over the jobs (tests call it with a clock of their own, no sleep);
`start` runs it in a loop on a thread beside the event loop until `stop`, which gives the leases
up so a peer takes over at once. Errors are caught, counted and logged here, at the top of the
loop, and the job backs off; nowhere else.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from flagstaff_server.adapters.millis import to_millis
from flagstaff_server.services.ports import Clock, Store
from flagstaff_server.worker.job import Backlog, Job, JobRun

log = logging.getLogger(__name__)

DEFAULT_LEASE_TTL = timedelta(seconds=30)
"""Long enough for any one run (jobs work in small batches); after a crash a peer takes over
this much later at most."""
DEFAULT_POLL = timedelta(seconds=1)
MAX_BACKOFF = timedelta(seconds=60)


def default_holder() -> str:
    """Names this process in leases and `/status`: host, pid and a random part (a restarted
    process with a reused pid is another holder)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


@dataclass(slots=True)
class JobState:
    """What this worker knows of one job, for `/status` and `/metrics`."""

    leader: bool = False
    """Whether this worker held the job's lease at its last attempt."""
    backlog: Backlog = field(default_factory=Backlog)
    observed: datetime | None = None
    """When `backlog` was read."""
    next_run: datetime | None = None
    last_run: datetime | None = None
    last_items: int = 0
    runs: int = 0
    items: int = 0
    errors: int = 0
    consecutive_errors: int = 0
    last_error: str | None = None

    def lag_seconds(self) -> float:
        """How late the oldest due item is (0 when nothing is due)."""
        if self.backlog.oldest is None or self.observed is None or self.backlog.due == 0:
            return 0.0
        return max((to_millis(self.observed) - to_millis(self.backlog.oldest)) / 1000, 0.0)


class Worker:
    def __init__(
        self,
        store: Store,
        jobs: Sequence[Job],
        *,
        clock: Clock,
        holder: str | None = None,
        lease_ttl: timedelta = DEFAULT_LEASE_TTL,
        poll: timedelta = DEFAULT_POLL,
    ) -> None:
        names = [job.name for job in jobs]
        if len(set(names)) != len(names):
            raise ValueError(f"job names must be unique: {names}")
        self.store = store
        self.jobs = tuple(jobs)
        self.clock = clock
        self.holder = holder or default_holder()
        self.lease_ttl = lease_ttl
        self.poll = poll
        self.states = {job.name: JobState() for job in self.jobs}
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    # one pass ----------------------------------------------------------------------------------

    def tick(self) -> None:
        """Read every job's backlog, then run each job whose turn it is and whose lease this
        worker gets. Blocking."""
        for job in self.jobs:
            now = self.clock()
            self.observe(job, now)
            state = self.states[job.name]
            if state.next_run is None or now >= state.next_run:
                self.attempt(job, now)

    def observe(self, job: Job, now: datetime) -> None:
        state = self.states[job.name]
        try:
            state.backlog = job.backlog(now)
            state.observed = now
        except Exception as exc:
            self.failed(job, now, exc, during="reading its backlog")

    def attempt(self, job: Job, now: datetime) -> None:
        state = self.states[job.name]
        try:
            with self.store.unit_of_work() as uow:
                lease = uow.leases.acquire(
                    job.name, self.holder, now=now, until=now + self.lease_ttl
                )
        except Exception as exc:
            self.failed(job, now, exc, during="taking its lease")
            return
        state.leader = lease is not None
        state.next_run = now + job.every
        if lease is None:
            return
        try:
            done = job.run(JobRun(now=now, lease=lease))
        except Exception as exc:
            self.failed(job, now, exc, during="running")
            return
        state.runs += 1
        state.items += done
        state.last_items = done
        state.last_run = now
        state.consecutive_errors = 0
        state.last_error = None

    def failed(self, job: Job, now: datetime, exc: Exception, *, during: str) -> None:
        state = self.states[job.name]
        state.errors += 1
        state.consecutive_errors += 1
        state.last_error = f"{during}: {getattr(exc, 'message', None) or exc}"
        backoff = min(job.every * 2**state.consecutive_errors, MAX_BACKOFF)
        state.next_run = now + max(backoff, job.every)
        log.warning("worker job %s failed %s: %s", job.name, during, exc, exc_info=exc)

    def release(self) -> None:
        """Give every lease this worker holds up, so a peer takes its jobs over at once."""
        try:
            with self.store.unit_of_work() as uow:
                for job in self.jobs:
                    uow.leases.release(job.name, self.holder)
        except Exception as exc:  # the leases expire anyway
            log.warning("worker could not release its leases: %s", exc)
        for state in self.states.values():
            state.leader = False

    # the loop ----------------------------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping.clear()
        self._task = asyncio.create_task(self._run(), name="worker")

    async def _run(self) -> None:
        while not self._stopping.is_set():
            await asyncio.to_thread(self.tick)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll.total_seconds())
            self._wake.clear()

    def wake(self) -> None:
        """Run a pass now rather than at the next poll (thread-safe); a job whose pause is not
        over still waits for it."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake.set)

    async def stop(self) -> None:
        if self._task is None:
            return
        self._stopping.set()
        self._wake.set()
        await self._task
        self._task = None
        await asyncio.to_thread(self.release)

    # reporting ---------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """The worker's part of `/status`: "ok" unless a job's last attempt failed."""
        jobs = {name: job_status(state) for name, state in self.states.items()}
        failing = any(state.consecutive_errors for state in self.states.values())
        return {
            "status": "degraded" if failing else "ok",
            "holder": self.holder,
            "leaseSeconds": self.lease_ttl.total_seconds(),
            "jobs": jobs,
        }


def job_status(state: JobState) -> dict[str, Any]:
    return {
        "leader": state.leader,
        "due": state.backlog.due,
        "lagSeconds": round(state.lag_seconds(), 3),
        "lastRun": None if state.last_run is None else state.last_run.isoformat(),
        "lastRunItems": state.last_items,
        "runs": state.runs,
        "items": state.items,
        "errors": state.errors,
        "lastError": state.last_error,
    }
