"""The worker role: jobs run under a lease in the database (`runner`), what a job is (`job`), and
its Prometheus lines (`metrics`)."""

from flagstaff_server.worker.job import Backlog, Job, JobRun
from flagstaff_server.worker.runner import Worker

__all__ = ["Backlog", "Job", "JobRun", "Worker"]
