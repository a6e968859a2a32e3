"""The storage contract for operator notices: memory, SQLite and PostgreSQL keep them the same
way (round trip, newest first, taken ids, deletion, rollback)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from flagstaff_server.errors import AlreadyExists, NotFound
from flagstaff_server.services.ports import NoticeRecord, Store

T0 = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)


def notice(notice_id: str, *, minutes: int = 0, expires: bool = False) -> NoticeRecord:
    created = T0 + timedelta(minutes=minutes)
    return NoticeRecord(
        id=notice_id,
        created=created,
        expires=created + timedelta(hours=2) if expires else None,
        doc={"title": f"notice {notice_id}", "severity": "warning", "regions": ["eu"]},
    )


def test_notices_round_trip_and_list_newest_first(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.notices.add(notice("b", minutes=1, expires=True))
        uow.notices.add(notice("a", minutes=1))
        uow.notices.add(notice("c", minutes=0))
    with store.unit_of_work(read_only=True) as uow:
        assert uow.notices.get("b") == notice("b", minutes=1, expires=True)
        assert uow.notices.get("missing") is None
        # newest first; the same millisecond ordered by id
        assert [record.id for record in uow.notices.list()] == ["a", "b", "c"]


def test_a_taken_notice_id_is_refused_and_a_deletion_is_kept(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.notices.add(notice("a"))
    with pytest.raises(AlreadyExists), store.unit_of_work() as uow:
        uow.notices.add(notice("a", minutes=5))
    with store.unit_of_work() as uow:
        uow.notices.delete("a")
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.notices.delete("a")
    with store.unit_of_work(read_only=True) as uow:
        assert uow.notices.list() == []


def add_then_fail(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.notices.add(notice("a"))
        raise RuntimeError("abort")


def test_a_rolled_back_notice_is_not_kept(store: Store) -> None:
    with pytest.raises(RuntimeError):
        add_then_fail(store)
    with store.unit_of_work(read_only=True) as uow:
        assert uow.notices.get("a") is None
