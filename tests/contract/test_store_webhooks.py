"""The storage contract for webhooks and their outbox: memory, SQLite and PostgreSQL keep
receivers, deliveries (ids in enqueue order), attempts and health the same way; a receiver's
deletion takes its deliveries, attempts and health along, a project's deletion its
integrations; a rolled-back change enqueues nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from flagstaff_server.errors import AlreadyExists, NotFound
from flagstaff_server.services.ports import ProjectRecord, Store, UnitOfWork
from flagstaff_server.services.webhook_ports import (
    AttemptRecord,
    DeliveryRecord,
    PendingSummary,
    WebhookHealth,
    WebhookRecord,
)

T0 = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)


def webhook(webhook_id: str, *, minutes: int = 0, **fields: object) -> WebhookRecord:
    values: dict[str, object] = {
        "id": webhook_id,
        "on": True,
        "created": T0 + timedelta(minutes=minutes),
        "doc": {"url": f"http://127.0.0.1:9/{webhook_id}", "tags": ["a"], "statements": []},
        **fields,
    }
    return WebhookRecord(**values)  # type: ignore[arg-type]


def add_project(uow: UnitOfWork, key: str) -> None:
    uow.projects.add(ProjectRecord(key=key, name=key, doc={}, created=T0))


def enqueue(uow: UnitOfWork, webhook_id: str, entry: str, key: str = "f", at: datetime = T0) -> int:
    return uow.deliveries.enqueue(webhook=webhook_id, entry=entry, order_key=key, at=at)


def test_receivers_round_trip_and_list_oldest_first(store: Store) -> None:
    with store.unit_of_work() as uow:
        add_project(uow, "shop")
        uow.webhooks.add(webhook("b", minutes=1))
        uow.webhooks.add(webhook("a", minutes=1, on=False))
        uow.webhooks.add(
            webhook("c", integration="slack", project="shop", doc={"config": {"url": "x"}})
        )
    with store.unit_of_work(read_only=True) as uow:
        assert uow.webhooks.get("a") == webhook("a", minutes=1, on=False)
        assert uow.webhooks.get("missing") is None
        assert [record.id for record in uow.webhooks.list()] == ["c", "a", "b"]
    with pytest.raises(AlreadyExists), store.unit_of_work() as uow:
        uow.webhooks.add(webhook("a"))
    with store.unit_of_work() as uow:
        uow.webhooks.replace(webhook("a", minutes=1, doc={"url": "http://127.0.0.1:9/new"}))
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.webhooks.replace(webhook("zz"))
    with store.unit_of_work(read_only=True) as uow:
        record = uow.webhooks.get("a")
        assert record is not None
        assert record.doc == {"url": "http://127.0.0.1:9/new"}
        assert record.on is True


def test_deliveries_get_growing_ids_and_pending_lists_them_in_order(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.webhooks.add(webhook("w"))
        uow.webhooks.add(webhook("v"))
        first = enqueue(uow, "w", "e1", key="f1")
        second = enqueue(uow, "w", "e2", key="f2", at=T0 + timedelta(seconds=5))
        other = enqueue(uow, "v", "e1")
    assert first < second < other
    with store.unit_of_work(read_only=True) as uow:
        pending = uow.deliveries.pending("w", limit=10)
        assert [(d.id, d.entry, d.order_key) for d in pending] == [
            (first, "e1", "f1"),
            (second, "e2", "f2"),
        ]
        assert pending[0] == DeliveryRecord(
            id=first, webhook="w", entry="e1", order_key="f1", created=T0, next_at=T0
        )
        assert [d.id for d in uow.deliveries.pending("w", limit=1)] == [first]
        assert uow.deliveries.summaries(T0) == [
            PendingSummary(webhook="v", due=1, oldest=T0),
            PendingSummary(webhook="w", due=1, oldest=T0),
        ]
        assert uow.deliveries.summaries(T0 + timedelta(seconds=5))[1].due == 2
    with pytest.raises(AlreadyExists), store.unit_of_work() as uow:
        enqueue(uow, "w", "e1")


def test_an_updated_delivery_leaves_pending_and_keeps_its_attempts(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.webhooks.add(webhook("w"))
        delivery_id = enqueue(uow, "w", "e1")
        later = enqueue(uow, "w", "e2")
    attempt = AttemptRecord(
        delivery=delivery_id, webhook="w", at=T0, status_code=503, latency_ms=12, error="503"
    )
    with store.unit_of_work() as uow:
        record = uow.deliveries.get(delivery_id)
        assert record is not None
        uow.deliveries.add_attempt(attempt)
        uow.deliveries.update(
            DeliveryRecord(
                id=delivery_id,
                webhook="w",
                entry="e1",
                order_key="f",
                attempts=1,
                created=T0,
                next_at=T0 + timedelta(seconds=1),
            )
        )
        ok = AttemptRecord(delivery=delivery_id, webhook="w", at=T0, status_code=200, latency_ms=3)
        uow.deliveries.add_attempt(ok)
        done = T0 + timedelta(seconds=2)
        uow.deliveries.update(
            DeliveryRecord(
                id=delivery_id,
                webhook="w",
                entry="e1",
                order_key="f",
                status="delivered",
                attempts=2,
                created=T0,
                next_at=T0 + timedelta(seconds=1),
                finished=done,
            )
        )
    with store.unit_of_work(read_only=True) as uow:
        assert [d.id for d in uow.deliveries.pending("w", limit=10)] == [later]
        assert uow.deliveries.attempts([delivery_id, later]) == {delivery_id: [attempt, ok]}
        assert uow.deliveries.count("w") == 2
        assert uow.deliveries.count("w", status="delivered") == 1
        assert [d.id for d in uow.deliveries.recent("w", limit=10)] == [later, delivery_id]
        assert [d.id for d in uow.deliveries.recent("w", limit=1, offset=1)] == [delivery_id]
        assert [d.id for d in uow.deliveries.recent("w", status="pending", limit=5)] == [later]
    with store.unit_of_work() as uow:
        assert uow.deliveries.prune(finished_before=done, limit=10) == 0
        assert uow.deliveries.prune(finished_before=done + timedelta(milliseconds=1), limit=10) == 1
    with store.unit_of_work(read_only=True) as uow:
        assert uow.deliveries.get(delivery_id) is None
        assert uow.deliveries.attempts([delivery_id]) == {}


def test_rescheduling_and_giving_up_touch_only_pending_deliveries_of_one_receiver(
    store: Store,
) -> None:
    with store.unit_of_work() as uow:
        uow.webhooks.add(webhook("w"))
        uow.webhooks.add(webhook("v"))
        old = enqueue(uow, "w", "e1", at=T0)
        new = enqueue(uow, "w", "e2", at=T0 + timedelta(hours=2))
        elsewhere = enqueue(uow, "v", "e1", at=T0)
    soon = T0 + timedelta(hours=3)
    with store.unit_of_work() as uow:
        uow.deliveries.reschedule("w", soon)
        given_up = uow.deliveries.give_up("w", created_before=T0 + timedelta(hours=1), at=soon)
    assert given_up == 1
    with store.unit_of_work(read_only=True) as uow:
        gone, kept, other = (uow.deliveries.get(i) for i in (old, new, elsewhere))
        assert gone is not None
        assert (gone.status, gone.finished) == ("failed", soon)
        assert kept is not None
        assert (kept.status, kept.next_at) == ("pending", soon)
        assert other is not None
        assert (other.status, other.next_at) == ("pending", T0)


def test_health_is_fresh_until_recorded(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.webhooks.add(webhook("w"))
        assert uow.webhooks.health("w") == WebhookHealth(webhook="w")
        failing = WebhookHealth(
            webhook="w",
            failures=3,
            open_until=T0 + timedelta(seconds=5),
            error_count=3,
            last_error=T0,
            last_error_message="connection refused",
        )
        uow.webhooks.record_health(failing)
    with store.unit_of_work() as uow:
        assert uow.webhooks.health("w") == failing
        healed = WebhookHealth(webhook="w", success_count=1, error_count=3, last_success=T0)
        uow.webhooks.record_health(healed)
    with store.unit_of_work(read_only=True) as uow:
        assert uow.webhooks.health("w") == healed


def test_a_deleted_receiver_takes_its_deliveries_attempts_and_health(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.webhooks.add(webhook("w"))
        delivery_id = enqueue(uow, "w", "e1")
        uow.deliveries.add_attempt(
            AttemptRecord(delivery=delivery_id, webhook="w", at=T0, latency_ms=1, error="x")
        )
        uow.webhooks.record_health(WebhookHealth(webhook="w", failures=1))
    with store.unit_of_work() as uow:
        uow.webhooks.delete("w")
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.webhooks.delete("w")
    with store.unit_of_work(read_only=True) as uow:
        assert uow.deliveries.get(delivery_id) is None
        assert uow.deliveries.attempts([delivery_id]) == {}
        assert uow.deliveries.summaries(T0) == []
        assert uow.webhooks.health("w") == WebhookHealth(webhook="w")
    # a worker that still held the delivery finds it gone
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.deliveries.update(
            DeliveryRecord(
                id=delivery_id, webhook="w", entry="e1", order_key="f", created=T0, next_at=T0
            )
        )


def test_a_deleted_project_takes_its_integrations(store: Store) -> None:
    with store.unit_of_work() as uow:
        add_project(uow, "shop")
        add_project(uow, "blog")
        uow.webhooks.add(webhook("s", integration="slack", project="shop"))
        uow.webhooks.add(webhook("b", integration="generic", project="blog"))
        uow.webhooks.add(webhook("w"))
        enqueue(uow, "s", "e1")
    with store.unit_of_work() as uow:
        uow.projects.delete("shop")
    with store.unit_of_work(read_only=True) as uow:
        assert [record.id for record in uow.webhooks.list()] == ["b", "w"]
        assert uow.deliveries.summaries(T0) == []


def enqueue_then_fail(store: Store) -> None:
    with store.unit_of_work() as uow:
        enqueue(uow, "w", "e1")
        raise RuntimeError("abort")


def test_a_rolled_back_delivery_is_not_kept(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.webhooks.add(webhook("w"))
    with pytest.raises(RuntimeError):
        enqueue_then_fail(store)
    with store.unit_of_work(read_only=True) as uow:
        assert uow.deliveries.pending("w", limit=10) == []
