"""The worker job that delivers the webhook outbox (`services.webhook_delivery`): its name, its
runs under the job's lease, and its backlog for `/status`."""

from __future__ import annotations

from datetime import datetime, timedelta

from flagstaff_server.services.webhook_delivery import JOB_NAME, WebhookDelivery
from flagstaff_server.worker.job import Backlog, Job, JobRun


def webhook_job(delivery: WebhookDelivery, *, every: timedelta) -> Job:
    def run(job_run: JobRun) -> int:
        return delivery.run(job_run.now, job_run.holds_lease)

    def backlog(now: datetime) -> Backlog:
        due, oldest = delivery.backlog(now)
        return Backlog(due=due, oldest=oldest)

    return Job(name=JOB_NAME, run=run, backlog=backlog, every=every)
