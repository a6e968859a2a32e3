"""The storage contract for worker leases: memory, SQLite and PostgreSQL hand a job's lease to one
holder at a time, renew it for that holder, hand it over once it expires (with the next fence),
and give it up on release; on the real databases, takers racing in threads get one lease."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.services.ports import LeaseRecord, Store

T0 = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)
TTL = timedelta(seconds=30)


def acquire(store: Store, holder: str, now: datetime, name: str = "job") -> LeaseRecord | None:
    with store.unit_of_work() as uow:
        return uow.leases.acquire(name, holder, now=now, until=now + TTL)


def test_a_lease_goes_to_one_holder_until_it_expires(store: Store) -> None:
    first = acquire(store, "a", T0)
    assert first == LeaseRecord(name="job", holder="a", expires=T0 + TTL, fence=1, acquired=T0)
    assert acquire(store, "b", T0 + timedelta(seconds=29)) is None
    # another job's lease is another row
    assert acquire(store, "b", T0, name="other") is not None
    later = T0 + TTL
    taken = acquire(store, "b", later)
    assert taken is not None
    assert (taken.holder, taken.fence, taken.acquired) == ("b", 2, later)
    with store.unit_of_work(read_only=True) as uow:
        assert [lease.name for lease in uow.leases.list()] == ["job", "other"]
        assert uow.leases.holds("job", "b", 2, later)
        assert not uow.leases.holds("job", "a", 1, later)


def test_renewing_keeps_the_fence_and_moves_the_end(store: Store) -> None:
    acquire(store, "a", T0)
    renewed = acquire(store, "a", T0 + timedelta(seconds=10))
    assert renewed is not None
    assert (renewed.fence, renewed.acquired) == (1, T0)
    assert renewed.expires == T0 + timedelta(seconds=40)
    with store.unit_of_work(read_only=True) as uow:
        assert uow.leases.holds("job", "a", 1, T0 + timedelta(seconds=35))
        assert not uow.leases.holds("job", "a", 1, T0 + timedelta(seconds=40))


def test_a_released_lease_is_free_at_once_and_others_cannot_release_it(store: Store) -> None:
    acquire(store, "a", T0)
    with store.unit_of_work() as uow:
        uow.leases.release("job", "b")
    assert acquire(store, "b", T0 + timedelta(seconds=1)) is None
    with store.unit_of_work() as uow:
        uow.leases.release("job", "a")
    taken = acquire(store, "b", T0 + timedelta(seconds=1))
    assert taken is not None
    assert taken.fence == 2


def acquire_then_fail(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.leases.acquire("job", "a", now=T0, until=T0 + TTL)
        raise RuntimeError("abort")


def test_a_rolled_back_acquisition_leaves_the_lease_free(store: Store) -> None:
    with pytest.raises(RuntimeError):
        acquire_then_fail(store)
    assert acquire(store, "b", T0) is not None


def test_takers_racing_in_threads_get_one_lease(sql_url: str) -> None:
    # (the memory store runs units of work one at a time by construction)
    store = SqlStore(sql_url)
    try:
        race(store)
    finally:
        store.close()


def race(store: Store) -> None:
    for round_number in range(10):
        name = f"race-{round_number}"
        barrier = threading.Barrier(4)
        winners: list[str] = []

        def take(
            holder: str,
            name: str = name,
            barrier: threading.Barrier = barrier,
            winners: list[str] = winners,
        ) -> None:
            barrier.wait()
            if acquire(store, holder, T0, name=name) is not None:
                winners.append(holder)

        threads = [threading.Thread(target=take, args=(f"h{i}",)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert len(winners) == 1, winners
        with store.unit_of_work(read_only=True) as uow:
            assert uow.leases.holds(name, winners[0], 1, T0)
