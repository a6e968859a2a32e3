"""Prometheus lines for the worker role, appended to the process's `/metrics`: per job, runs,
items done, errors, whether this worker leads it, how much is due and how late. Renders the
worker's job states it is handed; reads no state itself."""

from __future__ import annotations

from collections.abc import Mapping

from flagstaff_server.asgi import Receive, Scope, Send
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


class MetricsApp:
    """`/metrics` of a worker-only process (elsewhere delivery's `/metrics` carries these lines)."""

    def __init__(self, states: Mapping[str, JobState]) -> None:
        self.states = states

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = ("\n".join(render(self.states)) + "\n").encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/plain; version=0.0.4; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
