"""Reads the store's change outbox for the feeds, off the event loop. The outbox is the source of
truth every feed falls back to; nothing here writes."""

from __future__ import annotations

import asyncio

from flagstaff_server.services.ports import Change, EpochRecord, Store


def read_changes(store: Store, after_seq: int, limit: int) -> list[Change]:
    with store.unit_of_work(read_only=True) as uow:
        return uow.changes.since(after_seq, limit)


def read_latest_seq(store: Store) -> int:
    with store.unit_of_work(read_only=True) as uow:
        return uow.changes.latest_seq()


def read_epochs(store: Store) -> list[EpochRecord]:
    with store.unit_of_work(read_only=True) as uow:
        return uow.epochs.list()


async def fetch_epochs(store: Store) -> list[EpochRecord]:
    return await asyncio.to_thread(read_epochs, store)


async def fetch_changes(store: Store, after_seq: int, limit: int) -> list[Change]:
    return await asyncio.to_thread(read_changes, store, after_seq, limit)


async def fetch_latest_seq(store: Store) -> int:
    return await asyncio.to_thread(read_latest_seq, store)
