"""Prometheus lines for the worker role, appended to the process's `/metrics`: per job, runs,
items done, errors, whether this worker leads it, how much is due and how late. Renders the
worker's job states it is handed; reads no state itself."""

from __future__ import annotations

from collections.abc import Mapping

from flagstaff_server.delivery.prometheus import Exposition, label_value
from flagstaff_server.worker.runner import JobState

PREFIX = "flagstaff_worker_"


def render(states: Mapping[str, JobState]) -> list[str]:
    exposition = Exposition(PREFIX)
    jobs = sorted(states.items())

    def labels(name: str) -> str:
        return f'{{job="{label_value(name)}"}}'

    exposition.metric(
        "job_runs_total",
        "counter",
        "Runs of the job by this worker.",
        [(labels(name), state.runs) for name, state in jobs],
    )
    exposition.metric(
        "job_items_total",
        "counter",
        "Items the job completed in this worker.",
        [(labels(name), state.items) for name, state in jobs],
    )
    exposition.metric(
        "job_errors_total",
        "counter",
        "Failed attempts (lease, backlog or run) in this worker.",
        [(labels(name), state.errors) for name, state in jobs],
    )
    exposition.metric(
        "job_leader",
        "gauge",
        "1 while this worker holds the job's lease.",
        [(labels(name), 1 if state.leader else 0) for name, state in jobs],
    )
    exposition.metric(
        "job_due",
        "gauge",
        "Items due now, as last read.",
        [(labels(name), state.backlog.due) for name, state in jobs],
    )
    exposition.metric(
        "job_lag_seconds",
        "gauge",
        "How late the oldest due item is.",
        [(labels(name), state.lag_seconds()) for name, state in jobs],
    )
    return exposition.lines
