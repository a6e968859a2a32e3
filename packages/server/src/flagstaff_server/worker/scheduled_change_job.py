"""The worker job that applies due scheduled changes (`services.scheduled_change_runs`), a batch
per run, oldest first; it stops at once when its lease is lost."""

from __future__ import annotations

from datetime import datetime, timedelta

from flagstaff_server.services import scheduled_change_runs
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.worker.job import Backlog, Job, JobRun

NAME = "scheduled-changes"
BATCH = 50
"""Changes applied in one run at most: each is its own transaction, and the lease is renewed
between runs."""


def scheduled_change_job(plane: ControlPlane, *, every: timedelta = timedelta(seconds=1)) -> Job:
    def run(job_run: JobRun) -> int:
        done = 0
        for change_id in scheduled_change_runs.due(plane, job_run.now, BATCH):
            try:
                outcome = scheduled_change_runs.execute(
                    plane, change_id, holds_lease=job_run.holds_lease
                )
            except scheduled_change_runs.NotLeader:
                break
            if outcome is not None:
                done += 1
        return done

    def backlog(now: datetime) -> Backlog:
        count, oldest = scheduled_change_runs.backlog(plane, now)
        return Backlog(due=count, oldest=oldest)

    return Job(name=NAME, run=run, backlog=backlog, every=every)
