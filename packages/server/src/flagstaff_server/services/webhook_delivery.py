"""Delivering the webhook outbox: the worker job's work (docs/workflows.md, "Delivery").

Each run takes, per receiver that has deliveries due, its pending deliveries in outbox order and
sends them one after the other, skipping a flag whose earlier delivery is not made yet (order
per flag); receivers are served side by side. Each attempt is recorded in a transaction of its
own (status, latency, error), asked under the run's lease. A failure stops that receiver's run:
the delivery is retried after its backoff (`RetryPolicy.delays`, the last one repeating) and,
after `circuit_after` failures in a row, the receiver's **circuit** opens: all its deliveries
wait until one probe at the circuit's end; a success closes it and sends the rest at once. A
delivery still failing `give_up_after` past its change is given up. Delivery is at least once:
a worker killed between the answer and its record sends that delivery again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from flagstaff_server.domain.notification import Message, webhook_message
from flagstaff_server.services import audit
from flagstaff_server.services.ports import Clock, Store, UnitOfWork
from flagstaff_server.services.webhook_ports import (
    AttemptRecord,
    DeliveryRecord,
    Outcome,
    Sender,
    WebhookHealth,
    WebhookRecord,
)

log = logging.getLogger(__name__)

JOB_NAME = "webhook-delivery"
DEFAULT_DELAYS = tuple(timedelta(seconds=seconds) for seconds in (1, 5, 30, 120, 600, 1800, 3600))
BATCH = 100
"""Pending deliveries of one receiver read at a time."""
PARALLEL_RECEIVERS = 4
KEEP_FINISHED = timedelta(days=7)
"""Delivered and given-up deliveries (with their attempts) stay in the log this long."""
PRUNE_BATCH = 500


class LeaseLost(Exception):
    """The run's lease ended (another worker holds the job now): record nothing more."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    delays: tuple[timedelta, ...] = DEFAULT_DELAYS
    """The wait after the 1st, 2nd, ... failure of a delivery (or of a receiver, for its
    circuit); the last one repeats."""
    give_up_after: timedelta = timedelta(hours=24)
    circuit_after: int = 3
    """Failures in a row that open a receiver's circuit."""

    def delay(self, failures: int) -> timedelta:
        return self.delays[min(max(failures, 1), len(self.delays)) - 1]


Render = Callable[[UnitOfWork, WebhookRecord, DeliveryRecord], Message | None]
"""The request for one delivery (None: its audit entry is gone)."""
HoldsLease = Callable[[UnitOfWork], bool]
"""Whether the run's lease is still current, asked inside each of its write transactions."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunLease:
    """One run: the moment it started (what is due) and how to ask for its lease."""

    now: datetime
    holds_lease: HoldsLease


class WebhookDelivery:
    def __init__(
        self,
        store: Store,
        sender: Sender,
        *,
        clock: Clock,
        policy: RetryPolicy | None = None,
        render: Render | None = None,
        run_budget: timedelta = timedelta(seconds=10),
    ) -> None:
        self.store = store
        self.sender = sender
        self.clock = clock
        self.policy = policy or RetryPolicy()
        self.render = render or render_webhook
        self.run_budget = run_budget

    def backlog(self, now: datetime) -> tuple[int, datetime | None]:
        """How many deliveries are due at `now`, and since when the oldest of them is (those of
        receivers that are off wait for them and are not counted)."""
        with self.store.unit_of_work(read_only=True) as uow:
            on = {record.id for record in uow.webhooks.list() if record.on}
            summaries = [s for s in uow.deliveries.summaries(now) if s.webhook in on]
        oldest = [s.oldest for s in summaries if s.oldest is not None]
        return sum(s.due for s in summaries), min(oldest, default=None)

    def run(self, now: datetime, holds_lease: HoldsLease) -> int:
        """Send what is due at `now`; how many deliveries were made."""
        deadline = time.monotonic() + self.run_budget.total_seconds()
        run = RunLease(now=now, holds_lease=holds_lease)
        with self.store.unit_of_work(read_only=True) as uow:
            due = [s.webhook for s in uow.deliveries.summaries(now)]
            receivers = [
                record
                for record in map(uow.webhooks.get, due)
                if record is not None and record.on and not circuit_open(uow, record, now)
            ]
        if len(receivers) <= 1:
            delivered = sum(self.serve(run, record, deadline) for record in receivers)
        else:
            with ThreadPoolExecutor(
                max_workers=min(PARALLEL_RECEIVERS, len(receivers)),
                thread_name_prefix="webhook-delivery",
            ) as pool:
                futures = [pool.submit(self.serve, run, record, deadline) for record in receivers]
                delivered = sum(future.result() for future in futures)
        self.prune(run)
        return delivered

    def serve(self, run: RunLease, record: WebhookRecord, deadline: float) -> int:
        """Send the receiver's due deliveries in outbox order until one fails, the batch ends
        or the run's time is up; a flag whose earlier delivery is not made waits."""
        with self.store.unit_of_work(read_only=True) as uow:
            pending = uow.deliveries.pending(record.id, limit=BATCH)
        waiting: set[str] = set()
        delivered = 0
        for delivery in pending:
            if time.monotonic() >= deadline:
                break
            now = self.clock()
            if delivery.order_key in waiting or delivery.next_at > now:
                waiting.add(delivery.order_key)
                continue
            with self.store.unit_of_work(read_only=True) as uow:
                message = self.render(uow, record, delivery)
            if message is None:
                self.record(
                    run,
                    record,
                    delivery,
                    Outcome(status_code=None, latency_ms=0, error="its audit entry is gone"),
                    final=True,
                )
                continue
            outcome = self.sender.send(message)
            self.record(run, record, delivery, outcome)
            if not outcome.delivered:
                break
            delivered += 1
        return delivered

    def record(
        self,
        run: RunLease,
        record: WebhookRecord,
        delivery: DeliveryRecord,
        outcome: Outcome,
        *,
        final: bool = False,
    ) -> None:
        """The attempt, the delivery's new state and the receiver's health, in one transaction
        under the run's lease. A delivery gone meanwhile (its receiver deleted) is left alone."""
        now = self.clock()
        with self.store.unit_of_work() as uow:
            if not run.holds_lease(uow):
                raise LeaseLost(f"the {JOB_NAME} lease ended during a run")
            current = uow.deliveries.get(delivery.id)
            if current is None or current.status != "pending":
                return
            uow.deliveries.add_attempt(
                AttemptRecord(
                    delivery=delivery.id,
                    webhook=record.id,
                    at=now,
                    status_code=outcome.status_code,
                    latency_ms=outcome.latency_ms,
                    error=outcome.error,
                )
            )
            health = uow.webhooks.health(record.id)
            attempts = current.attempts + 1
            if outcome.delivered:
                uow.deliveries.update(
                    replace(current, status="delivered", attempts=attempts, finished=now)
                )
                self.succeeded(uow, health, now)
            elif final:
                uow.deliveries.update(
                    replace(current, status="failed", attempts=attempts, finished=now)
                )
            else:
                retry = now + self.policy.delay(attempts)
                uow.deliveries.update(replace(current, attempts=attempts, next_at=retry))
                self.failed(uow, health, now, outcome)

    def succeeded(self, uow: UnitOfWork, health: WebhookHealth, now: datetime) -> None:
        if health.open_until is not None:
            # its deliveries were waiting for the receiver, not for themselves
            uow.deliveries.reschedule(health.webhook, now)
        uow.webhooks.record_health(
            replace(
                health,
                failures=0,
                open_until=None,
                success_count=health.success_count + 1,
                last_success=now,
            )
        )

    def failed(
        self, uow: UnitOfWork, health: WebhookHealth, now: datetime, outcome: Outcome
    ) -> None:
        failures = health.failures + 1
        open_until = health.open_until
        if failures >= self.policy.circuit_after:
            open_until = now + self.policy.delay(failures - self.policy.circuit_after + 1)
            uow.deliveries.reschedule(health.webhook, open_until)
        given_up = uow.deliveries.give_up(
            health.webhook, created_before=now - self.policy.give_up_after, at=now
        )
        if given_up:
            log.warning("webhook %s: gave %d deliveries up", health.webhook, given_up)
        uow.webhooks.record_health(
            replace(
                health,
                failures=failures,
                open_until=open_until,
                error_count=health.error_count + 1,
                last_error=now,
                last_error_message=outcome.error,
            )
        )

    def prune(self, run: RunLease) -> None:
        with self.store.unit_of_work() as uow:
            if run.holds_lease(uow):
                uow.deliveries.prune(finished_before=run.now - KEEP_FINISHED, limit=PRUNE_BATCH)


def circuit_open(uow: UnitOfWork, record: WebhookRecord, now: datetime) -> bool:
    """Whether the receiver's circuit holds every delivery back now, those queued since it
    opened included."""
    open_until = uow.webhooks.health(record.id).open_until
    return open_until is not None and open_until > now


def render_webhook(
    uow: UnitOfWork, record: WebhookRecord, delivery: DeliveryRecord
) -> Message | None:
    """A webhook's request: the audit entry in LaunchDarkly's shape (the same as
    `GET /api/v2/auditlog/{id}`), signed when the webhook signs."""
    entry = uow.audit.get(delivery.entry)
    if entry is None:
        return None
    body = audit.represent(entry, audit.token_names(uow), audit.environment_names(uow))
    return webhook_message(record.doc, body, delivery=delivery.id, attempt=delivery.attempts + 1)
