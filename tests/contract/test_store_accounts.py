"""The storage contract for web UI accounts and sessions: memory, SQLite and PostgreSQL behave
the same (round trips, unique emails, copies, rollback, session sweeps)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from flagstaff_server.errors import AlreadyExists, NotFound
from flagstaff_server.services.ports import AccountRecord, SessionRecord, Store

T0 = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)


def account(account_id: str = "a1", email: str = "ada@example.com") -> AccountRecord:
    return AccountRecord(
        id=account_id,
        email=email,
        role="writer",
        password_hash="scrypt$16384$8$1$00$11",
        created=T0,
        doc={"name": "Ada"},
    )


def session(id_hash: str = "h1", subject: str = "account:a1", hours: int = 12) -> SessionRecord:
    return SessionRecord(
        id_hash=id_hash,
        subject=subject,
        csrf_token="csrf-" + id_hash,
        created=T0,
        expires=T0 + timedelta(hours=hours),
    )


def test_account_round_trips_and_is_found_by_email(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.accounts.add(account())
    with store.unit_of_work(read_only=True) as uow:
        assert uow.accounts.get("a1") == account()
        assert uow.accounts.find_by_email("ada@example.com") == account()
        assert uow.accounts.find_by_email("bob@example.com") is None
        assert uow.accounts.get("missing") is None


def test_accounts_list_by_email_and_replace_and_delete(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.accounts.add(account("a2", "zed@example.com"))
        uow.accounts.add(account("a1", "ada@example.com"))
        uow.accounts.replace(replace(account("a2", "zed@example.com"), role="admin"))
    with store.unit_of_work() as uow:
        assert [a.email for a in uow.accounts.list()] == ["ada@example.com", "zed@example.com"]
        changed = uow.accounts.get("a2")
        assert changed is not None
        assert changed.role == "admin"
        uow.accounts.delete("a1")
    with store.unit_of_work(read_only=True) as uow:
        assert [a.id for a in uow.accounts.list()] == ["a2"]


def test_taken_email_or_id_is_already_exists(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.accounts.add(account())
    with pytest.raises(AlreadyExists), store.unit_of_work() as uow:
        uow.accounts.add(account("a2", "ada@example.com"))
    with pytest.raises(AlreadyExists), store.unit_of_work() as uow:
        uow.accounts.add(account("a1", "other@example.com"))


def test_missing_account_cannot_be_replaced_or_deleted(store: Store) -> None:
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.accounts.replace(account())
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.accounts.delete("a1")


def test_failed_unit_of_work_leaves_no_account_or_session(store: Store) -> None:
    def fail_after_writing() -> None:
        with store.unit_of_work() as uow:
            uow.accounts.add(account())
            uow.sessions.add(session())
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        fail_after_writing()
    with store.unit_of_work(read_only=True) as uow:
        assert uow.accounts.list() == []
        assert uow.sessions.get("h1") is None


def test_session_round_trips_and_deletes_by_id_subject_and_expiry(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.sessions.add(session("h1", "account:a1", hours=1))
        uow.sessions.add(session("h2", "account:a1", hours=24))
        uow.sessions.add(session("h3", "token:t1", hours=24))
        uow.sessions.add(session("h4", "token:t1", hours=48))
    with store.unit_of_work(read_only=True) as uow:
        assert uow.sessions.get("h1") == session("h1", "account:a1", hours=1)
    with store.unit_of_work() as uow:
        uow.sessions.delete("h4")
        uow.sessions.delete("h4")  # signing out twice is harmless
        uow.sessions.delete_expired(T0 + timedelta(hours=1))
    with store.unit_of_work(read_only=True) as uow:
        assert [uow.sessions.get(h) is not None for h in ("h1", "h2", "h3", "h4")] == [
            False,
            True,
            True,
            False,
        ]
    with store.unit_of_work() as uow:
        uow.sessions.delete_subject("account:a1")
    with store.unit_of_work(read_only=True) as uow:
        assert uow.sessions.get("h2") is None
        assert uow.sessions.get("h3") is not None


def test_session_id_hash_is_unique(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.sessions.add(session())
    with pytest.raises(AlreadyExists), store.unit_of_work() as uow:
        uow.sessions.add(session())


def test_account_records_handed_out_are_copies(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.accounts.add(account())
    with store.unit_of_work(read_only=True) as uow:
        got = uow.accounts.get("a1")
        assert got is not None
        got.doc["name"] = "changed"
    with store.unit_of_work(read_only=True) as uow:
        assert uow.accounts.get("a1") == account()
