"""The worker job that steps progressive and guarded rollouts (`services.automated_release_runs`):
every in-progress release is looked at once per run, and a step it takes is its own transaction;
it stops at once when its lease is lost."""

from __future__ import annotations

from datetime import datetime, timedelta

from flagstaff_server.services import automated_release_runs
from flagstaff_server.services.experiment_results import Aggregator
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.worker.job import Backlog, Job, JobRun

NAME = "automated-releases"


def automated_release_job(
    plane: ControlPlane, aggregate: Aggregator, *, every: timedelta = timedelta(seconds=1)
) -> Job:
    def run(job_run: JobRun) -> int:
        done = 0
        for record in automated_release_runs.in_progress(plane):
            try:
                step = automated_release_runs.run_step(
                    plane, aggregate, record, job_run.holds_lease
                )
            except automated_release_runs.NotLeader:
                break
            if step is not None:
                done += 1
        return done

    def backlog(now: datetime) -> Backlog:
        count, oldest = automated_release_runs.backlog(plane, now)
        return Backlog(due=count, oldest=oldest)

    return Job(name=NAME, run=run, backlog=backlog, every=every)
