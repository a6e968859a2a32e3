"""Delivering the webhook outbox (`services.webhook_delivery`) on a fake clock with a fake sender,
run by the worker's `tick`: the body is the audit entry, signed; deliveries go out in outbox
order and in order per flag; a failure waits out its backoff; a receiver that keeps failing opens
its circuit (one probe per interval), and its first success sends the rest at once; a delivery
too old is given up; attempts are logged; a deleted webhook or a lost lease records nothing."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from hashlib import sha256
from typing import Any

import orjson
import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.domain.notification import Message
from flagstaff_server.services import audit, webhooks
from flagstaff_server.services.access import SYSTEM
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.webhook_delivery import RetryPolicy, WebhookDelivery
from flagstaff_server.services.webhook_ports import DeliveryRecord, Outcome
from flagstaff_server.worker import Worker
from flagstaff_server.worker.webhook_job import webhook_job
from support.clock import FakeClock
from support.in_process import control_plane

OK = Outcome(status_code=200, latency_ms=3, error=None)
DOWN = Outcome(status_code=None, latency_ms=1, error="ConnectError: connection refused")
POLICY = RetryPolicy(
    delays=(timedelta(seconds=1), timedelta(seconds=4), timedelta(seconds=10)),
    give_up_after=timedelta(minutes=5),
    circuit_after=3,
)


@dataclass
class FakeSender:
    """Answers each message with `answer(message)` and keeps what it was sent."""

    answer: Callable[[Message], Outcome] = lambda message: OK
    sent: list[Message] = field(default_factory=list)

    def send(self, message: Message) -> Outcome:
        self.sent.append(message)
        return self.answer(message)

    def entries(self) -> list[str]:
        return [orjson.loads(message.body)["_id"] for message in self.sent]


@dataclass
class Setup:
    store: InMemoryStore
    clock: FakeClock
    plane: ControlPlane
    sender: FakeSender
    worker: Worker

    def change(self, flag: str, env: str = "production") -> str:
        """An audited change of `flag` (through the one write path); its entry's id."""
        with self.plane.write(SYSTEM) as tx:
            return tx.audit(
                kind="flag", resource=f"proj/shop:env/{env}:flag/{flag}", action="updateFlag"
            ).id

    def deliveries(self, webhook_id: str) -> list[DeliveryRecord]:
        with self.store.unit_of_work(read_only=True) as uow:
            return list(reversed(uow.deliveries.recent(webhook_id, limit=1000)))

    def tick(self, seconds: float = 0) -> None:
        self.clock.advance(seconds=seconds)
        self.worker.tick()


@pytest.fixture
def setup() -> Setup:
    store, clock, sender = InMemoryStore(), FakeClock(), FakeSender()
    plane = control_plane(store, clock=clock)
    delivery = WebhookDelivery(store, sender, clock=clock, policy=POLICY)
    # no pause between runs: each tick runs the job (the clock moves only when the test says so)
    job = webhook_job(delivery, every=timedelta(0))
    worker = Worker(store, [job], clock=clock, holder="w")
    return Setup(store=store, clock=clock, plane=plane, sender=sender, worker=worker)


def add_webhook(setup: Setup, **fields: Any) -> str:
    request = webhooks.WebhookRequest(
        url=fields.pop("url", "http://127.0.0.1:9/hook"),
        sign=fields.pop("sign", True),
        on=fields.pop("on", True),
        secret=fields.pop("secret", "the-secret"),
        statements=[{"effect": "allow", "actions": ["*"], "resources": ["proj/*:env/*:flag/*"]}],
    )
    webhook_id: str = webhooks.create_webhook(setup.plane, SYSTEM, request)["_id"]
    return webhook_id


def test_the_body_is_the_audit_entry_signed_with_the_secret(setup: Setup) -> None:
    webhook_id = add_webhook(setup)
    entry_id = setup.change("checkout")
    setup.tick()
    (message,) = setup.sender.sent
    assert message.url == "http://127.0.0.1:9/hook"
    headers = dict(message.headers)
    expected = hmac.new(b"the-secret", message.body, sha256).hexdigest()
    assert headers["X-LD-Signature"] == expected
    assert headers["Content-Type"] == "application/json"
    (delivery,) = setup.deliveries(webhook_id)
    assert headers["X-Flagstaff-Delivery"] == str(delivery.id)
    assert headers["X-Flagstaff-Attempt"] == "1"
    assert orjson.loads(message.body) == audit.get_entry(setup.plane, SYSTEM, entry_id)
    assert (delivery.status, delivery.attempts, delivery.finished) == (
        "delivered",
        1,
        setup.clock.now,
    )
    with setup.store.unit_of_work(read_only=True) as uow:
        (attempt,) = uow.deliveries.attempts([delivery.id])[delivery.id]
        health = uow.webhooks.health(webhook_id)
    assert (attempt.status_code, attempt.latency_ms, attempt.error) == (200, 3, None)
    assert (health.success_count, health.last_success) == (1, setup.clock.now)


def test_an_unsigned_webhook_sends_no_signature(setup: Setup) -> None:
    add_webhook(setup, sign=False, secret=None)
    setup.change("checkout")
    setup.tick()
    (message,) = setup.sender.sent
    assert "X-LD-Signature" not in dict(message.headers)


def test_deliveries_go_out_in_outbox_order(setup: Setup) -> None:
    add_webhook(setup)
    entries = [setup.change(flag) for flag in ("a", "b", "a", "c", "b")]
    setup.tick()
    assert setup.sender.entries() == entries


def test_a_failed_delivery_waits_out_its_backoff_and_holds_back_its_flag(setup: Setup) -> None:
    webhook_id = add_webhook(setup)
    first_a = setup.change("a")
    failing = {first_a}
    setup.sender.answer = lambda m: DOWN if orjson.loads(m.body)["_id"] in failing else OK
    b = setup.change("b")
    second_a = setup.change("a")
    setup.tick()
    # the receiver stops at the failure; the next tick sends b, but a's second change waits
    assert setup.sender.entries() == [first_a]
    setup.tick()
    assert setup.sender.entries() == [first_a, b]
    setup.tick(0.9)
    assert setup.sender.entries() == [first_a, b]
    failing.clear()
    setup.tick(0.1)
    assert setup.sender.entries() == [first_a, b, first_a, second_a]
    first = setup.deliveries(webhook_id)[0]
    assert (first.status, first.attempts) == ("delivered", 2)
    with setup.store.unit_of_work(read_only=True) as uow:
        log = uow.deliveries.attempts([first.id])[first.id]
    assert [(a.status_code, a.error) for a in log] == [(None, DOWN.error), (200, None)]


def test_a_receiver_that_keeps_failing_opens_its_circuit_until_a_probe_succeeds(
    setup: Setup,
) -> None:
    webhook_id = add_webhook(setup)
    down = [True]
    setup.sender.answer = lambda message: DOWN if down[0] else OK
    entries = [setup.change(flag) for flag in ("a", "b", "c", "d")]
    setup.tick()  # a fails (1), then waits 1 s
    setup.tick()  # b fails (2)
    setup.tick()  # c fails (3): the circuit opens for 1 s
    assert len(setup.sender.sent) == 3
    with setup.store.unit_of_work(read_only=True) as uow:
        health = uow.webhooks.health(webhook_id)
    assert health.failures == 3
    assert health.open_until == setup.clock.now + timedelta(seconds=1)
    setup.tick()
    setup.tick(0.5)
    assert len(setup.sender.sent) == 3  # nothing while it is open, d included
    setup.tick(0.5)  # one probe (a), failing: open for 4 s now
    assert len(setup.sender.sent) == 4
    setup.tick(3.9)
    assert len(setup.sender.sent) == 4
    down[0] = False
    setup.tick(0.1)  # the probe succeeds and everything else follows, in order
    assert setup.sender.entries()[4:] == entries
    assert {d.status for d in setup.deliveries(webhook_id)} == {"delivered"}
    with setup.store.unit_of_work(read_only=True) as uow:
        healed = uow.webhooks.health(webhook_id)
    assert (healed.failures, healed.open_until, healed.error_count) == (0, None, 4)


def test_a_delivery_still_failing_after_the_give_up_time_is_given_up(setup: Setup) -> None:
    webhook_id = add_webhook(setup)
    old = setup.change("a")
    setup.sender.answer = lambda message: DOWN
    setup.tick()
    setup.clock.advance(minutes=4)
    newer = setup.change("a")
    setup.tick(61)  # past five minutes since `old`: it is given up at this failure
    states = {d.entry: d.status for d in setup.deliveries(webhook_id)}
    assert states == {old: "failed", newer: "pending"}
    setup.sender.answer = lambda message: OK
    setup.tick(60)
    assert setup.sender.entries()[-1] == newer
    assert {d.entry: d.status for d in setup.deliveries(webhook_id)}[newer] == "delivered"


def test_a_webhook_deleted_during_a_send_records_nothing(setup: Setup) -> None:
    webhook_id = add_webhook(setup)
    setup.change("a")

    def delete_then_answer(message: Message) -> Outcome:
        webhooks.delete_webhook(setup.plane, SYSTEM, webhook_id)
        return OK

    setup.sender.answer = delete_then_answer
    setup.tick()
    assert len(setup.sender.sent) == 1
    assert setup.worker.states["webhook-delivery"].errors == 0
    with setup.store.unit_of_work(read_only=True) as uow:
        assert uow.deliveries.summaries(setup.clock.now + timedelta(days=1)) == []


def test_a_switched_off_webhook_keeps_its_deliveries_until_it_is_on_again(setup: Setup) -> None:
    webhook_id = add_webhook(setup)
    entry = setup.change("a")
    webhooks.patch_webhook(
        setup.plane, SYSTEM, webhook_id, [{"op": "replace", "path": "/on", "value": False}]
    )
    setup.tick()
    assert setup.sender.sent == []
    assert setup.worker.states["webhook-delivery"].backlog.due == 0  # not late: paused
    webhooks.patch_webhook(
        setup.plane, SYSTEM, webhook_id, [{"op": "replace", "path": "/on", "value": True}]
    )
    setup.tick()
    assert entry in setup.sender.entries()


def test_a_run_that_lost_its_lease_records_nothing(setup: Setup) -> None:
    webhook_id = add_webhook(setup)
    setup.change("a")

    def lose_the_lease(message: Message) -> Outcome:
        # another worker took the job over meanwhile (this one was paused past its lease)
        with setup.store.unit_of_work() as uow:
            uow.leases.release("webhook-delivery", "w")
            uow.leases.acquire(
                "webhook-delivery",
                "other",
                now=setup.clock.now,
                until=setup.clock.now + timedelta(minutes=1),
            )
        return OK

    setup.sender.answer = lose_the_lease
    setup.tick()
    state = setup.worker.states["webhook-delivery"]
    assert state.errors == 1
    assert "lease" in (state.last_error or "")
    (delivery,) = setup.deliveries(webhook_id)
    assert (delivery.status, delivery.attempts) == ("pending", 0)
